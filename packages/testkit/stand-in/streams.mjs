/**
 * The stand-ins' own streams, chosen with `STAND_IN_STREAM` (a recorded stream of the test's own,
 * `STAND_IN_FIXTURE`, is printed instead when set):
 * - `success`: a finished session that edits `src/flag.txt` and runs the tests (exit 0);
 * - `error`: a session the host ends with an error (Claude Code's `error_during_execution`
 *   result, Codex's `turn.failed`; exit 1);
 * - `truncated`: the success stream cut before its end (exit 0: a host that stopped mid-answer);
 * - `crash`: the truncated stream, then the stand-in kills itself with SIGKILL;
 * - `garbage`: lines that are not the host's format (exit 0).
 * The files are `streams/<host>.<name>.jsonl` (`streams/garbage.txt` for both); each line of the
 * hosts' streams is held to the hosts' published types by the host adapters' tests.
 */
import { fileURLToPath } from "node:url"

export const names = ["success", "error", "truncated", "crash", "garbage"]

const fileOf = (host, name) =>
  fileURLToPath(new URL(name === "garbage" ? "streams/garbage.txt" : `streams/${host}.${name === "crash" ? "truncated" : name}.jsonl`, import.meta.url))

/**
 * Points `STAND_IN_FIXTURE` at the stream `STAND_IN_STREAM` names, and `STAND_IN_EXIT` at its exit
 * code unless the test chose one; refuses a name it does not know (exit 2).
 */
export const chooseStream = (host) => {
  const env = process.env
  const name = env.STAND_IN_STREAM
  if (!name || env.STAND_IN_FIXTURE) return
  if (!names.includes(name)) {
    process.stderr.write(`stand-in ${host}: STAND_IN_STREAM must be one of ${names.join(", ")}, not ${name}\n`)
    process.exit(2)
  }
  env.STAND_IN_FIXTURE = fileOf(host, name)
  if (env.STAND_IN_EXIT === undefined && name === "error") env.STAND_IN_EXIT = "1"
}

/** Whether the chosen stream ends in a crash: the stand-in kills itself once it is written. */
export const crashes = () => process.env.STAND_IN_STREAM === "crash"
