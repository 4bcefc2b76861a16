/**
 * What the stand-in hosts do for the REVISE loop's tests (ADR 0041), chosen by the environment,
 * before `behave.mjs` prints its stream:
 * - `STAND_IN_REVISE_FILE`: a workspace-relative file the agent writes, whose content the test's
 *   acceptance criterion checks (`cat <file> && grep -qx fixed <file>`);
 * - `STAND_IN_REVISE`: what it writes there, by the attempt number the runner gives it
 *   (`RATCHET_ATTEMPT`):
 *   - `pass-second`: `broken` on attempt 1, `fixed` from attempt 2 on (a failing first attempt,
 *     then a passing successor);
 *   - `always-fail`: `broken <attempt>` (the tree changes every time, the check fails the same way:
 *     numbers are normalised out of a failure's fingerprint);
 *   - `fail-differently`: `broken-` and a different word each attempt (a new fingerprint each time);
 * - `STAND_IN_PROMPTS`: a directory it writes `<attempt>.prompt.txt` (the prompt, its last
 *   argument) and `<attempt>.env.json` (its whole environment) to;
 * - `STAND_IN_PROBE` and `STAND_IN_PROBE_NEEDLES`: a directory and a needles file for
 *   `probe.mjs`, which looks for the verifier's passphrase in every process it can read
 *   (`agent-<attempt>.json`); with `plantFilter` in the needles it plants a clean filter in
 *   `.git/config` (`plant-<attempt>.json`), and with `escapeGit` too it points git at settings of
 *   its own instead, a renamed `.git` or a `commondir` (`escape-<attempt>.json`).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { escapeGit, plantFilter, probe } from "./probe.mjs"

const words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]

export const revise = (args) => {
  const env = process.env
  const attempt = Number(env.RATCHET_ATTEMPT ?? "0")
  if (env.STAND_IN_PROMPTS) {
    fs.mkdirSync(env.STAND_IN_PROMPTS, { recursive: true })
    fs.writeFileSync(path.join(env.STAND_IN_PROMPTS, `${attempt}.prompt.txt`), String(args.at(-1) ?? ""))
    fs.writeFileSync(path.join(env.STAND_IN_PROMPTS, `${attempt}.env.json`), JSON.stringify(env))
  }
  if (env.STAND_IN_PROBE && env.STAND_IN_PROBE_NEEDLES) {
    probe(`agent-${attempt}`, env.STAND_IN_PROBE, env.STAND_IN_PROBE_NEEDLES)
    const needles = JSON.parse(fs.readFileSync(env.STAND_IN_PROBE_NEEDLES, "utf8"))
    if (typeof needles.escapeGit === "string") {
      let escaped
      try {
        escaped = escapeGit(needles)
      } catch (error) {
        escaped = { error: String(error?.message ?? error).slice(0, 300) }
      }
      fs.writeFileSync(path.join(env.STAND_IN_PROBE, `escape-${attempt}.json`), JSON.stringify(escaped))
    } else if (typeof needles.plantFilter === "string") {
      // Whether git's settings let it plant the filter (in the loop's sandbox they are read-only).
      let planted = { planted: true, error: null }
      try {
        plantFilter(needles)
      } catch (error) {
        planted = { planted: false, error: String(error?.message ?? error).slice(0, 300) }
      }
      fs.writeFileSync(path.join(env.STAND_IN_PROBE, `plant-${attempt}.json`), JSON.stringify(planted))
    }
  }
  if (env.STAND_IN_REVISE_FILE) {
    const content = env.STAND_IN_REVISE === "pass-second"
      ? (attempt >= 2 ? "fixed" : "broken")
      : env.STAND_IN_REVISE === "fail-differently"
      ? `broken-${words[attempt % words.length]}`
      : `broken ${attempt}`
    fs.mkdirSync(path.dirname(path.resolve(env.STAND_IN_REVISE_FILE)), { recursive: true })
    fs.writeFileSync(env.STAND_IN_REVISE_FILE, `${content}\n`)
  }
}
