/**
 * Codex's sandbox set in config.toml by `ratchet hooks install codex`: `sandbox_mode` made
 * `workspace-write` unless it is already that or narrower, `/tmp` and `$TMPDIR` excluded when the
 * store or the key is below them, every line ours marked and uninstall putting back exactly what
 * was there; wrong shapes refused untouched; and the check `ratchet status` runs, over a table of
 * configurations written here by hand, the ones it passes and the ones it warns about.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Sandbox from "../src/Sandbox.js"

const file = "/w/repo/.codex/config.toml"
const userFile = "/home/dev/.codex/config.toml"

const targets = { store: ["/home/dev/.ratchet"], key: ["/home/dev/.ratchet/approver-key.json"], projectRoot: "/w/repo", home: "/home/dev" }
const inTmp = { ...targets, store: ["/tmp/rh"], key: ["/tmp/rh/approver-key.json"] }
const environment = { slashTmp: ["/tmp"], tmpdir: [] }

const install = (text: string | undefined, on = targets, env: Sandbox.Environment = environment) => Either.getOrThrow(Sandbox.install(file, text, on, env))
const uninstall = (text: string | undefined) => Either.getOrThrow(Sandbox.uninstall(file, text))

const theirs = "# mine\nmodel = \"gpt-5.5\"\n\n[mcp_servers.docs]\ncommand = \"npx\"\n"

describe("Sandbox.install", () => {
  it("sets workspace-write, marked as ours, and keeps everything else byte for byte", () => {
    const { notes, text } = install(theirs)
    expect(text).toBe("# mine\nmodel = \"gpt-5.5\"\nsandbox_mode = \"workspace-write\" # ratchet: set by ratchet hooks install codex\n\n[mcp_servers.docs]\ncommand = \"npx\"\n")
    expect(notes).toEqual([])
    expect(install(text).text).toBe(text)
    expect(uninstall(text)).toBe(theirs)
  })

  it("replaces danger-full-access, keeps read-only and the user's own workspace-write, and restores on uninstall", () => {
    const danger = "sandbox_mode = \"danger-full-access\"\n"
    const replaced = install(danger).text
    expect(replaced).toBe("sandbox_mode = \"workspace-write\" # ratchet: set by ratchet hooks install codex; was \"danger-full-access\"\n")
    expect(uninstall(replaced)).toBe(danger)
    // The replaced line's own comment rides after ours and comes back with it.
    const commented = "  sandbox_mode = \"danger-full-access\"\t # fast, \"quoted\" # twice\n"
    const kept = install(commented).text
    expect(kept).toBe("  sandbox_mode = \"workspace-write\" # ratchet: set by ratchet hooks install codex; was \"danger-full-access\"\t # fast, \"quoted\" # twice\n")
    expect(uninstall(kept)).toBe(commented)
    for (const kept of ["sandbox_mode = \"read-only\"\n", "sandbox_mode = 'workspace-write' # mine\n"]) {
      expect(install(kept).text).toBe(kept)
      expect(uninstall(kept)).toBe(kept)
    }
  })

  it("excludes /tmp and $TMPDIR when the store or the key is below them, and only then", () => {
    const created = install(undefined, inTmp, { slashTmp: ["/tmp"], tmpdir: ["/tmp"] }).text
    expect(created).toBe([
      "sandbox_mode = \"workspace-write\" # ratchet: set by ratchet hooks install codex",
      "",
      "[sandbox_workspace_write] # ratchet: set by ratchet hooks install codex",
      "exclude_slash_tmp = true # ratchet: set by ratchet hooks install codex",
      "exclude_tmpdir_env_var = true # ratchet: set by ratchet hooks install codex",
      ""
    ].join("\n"))
    expect(uninstall(created)).toBe("")
    // A store elsewhere: neither is touched.
    expect(install(undefined, targets, { slashTmp: ["/tmp"], tmpdir: ["/var/folders/x"] }).text).toBe("sandbox_mode = \"workspace-write\" # ratchet: set by ratchet hooks install codex\n")
    // The user's own false is replaced and put back; their table and its other keys stay.
    const mine = "[sandbox_workspace_write]\nnetwork_access = true\nexclude_slash_tmp = false\n"
    const merged = install(mine, inTmp).text
    expect(merged).toBe(
      "sandbox_mode = \"workspace-write\" # ratchet: set by ratchet hooks install codex\n[sandbox_workspace_write]\nnetwork_access = true\nexclude_slash_tmp = true # ratchet: set by ratchet hooks install codex; was false\n"
    )
    expect(uninstall(merged)).toBe(mine)
    // read-only lets nothing be written: no exclusions needed.
    expect(install("sandbox_mode = \"read-only\"\n", inTmp).text).toBe("sandbox_mode = \"read-only\"\n")
  })

  it("notes what merging cannot fix: a writable root or the project holding the store", () => {
    const roots = install("[sandbox_workspace_write]\nwritable_roots = [\"/home/dev\"]\n")
    expect(roots.notes).toHaveLength(2)
    expect(roots.notes[0]).toContain("writable_roots lists /home/dev, which holds /home/dev/.ratchet")
    const inside = install(undefined, { ...targets, store: ["/w/repo/.store"], key: ["/w/repo/.store/approver-key.json"] })
    expect(inside.notes[0]).toContain("/w/repo/.store is inside the project")
  })

  it("refuses config files of the wrong shape, naming the key, and changes nothing", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["sandbox_mode = \"full\"\n", `${file}: sandbox_mode`],
      ["sandbox_mode = true\n", `${file}: sandbox_mode`],
      ["sandbox_workspace_write = 1\n", `${file}: sandbox_workspace_write`],
      ["[sandbox_workspace_write]\nwritable_roots = \"/data\"\n", `${file}: sandbox_workspace_write.writable_roots`],
      ["[sandbox_workspace_write]\nexclude_slash_tmp = \"yes\"\n", `${file}: sandbox_workspace_write.exclude_slash_tmp`],
      ["sandbox_mode = \n", file],
      ["[sandbox_workspace_write\n", file]
    ]
    for (const [text, field] of cases) {
      const result = Sandbox.install(file, text, inTmp, environment)
      expect(Either.isLeft(result), text).toBe(true)
      if (Either.isLeft(result)) expect(result.left.field).toBe(field)
    }
    // A table written inline cannot take a line of ours: refused rather than rewritten.
    const inline = Sandbox.install(file, "sandbox_workspace_write = { network_access = true }\n", inTmp, environment)
    expect(Either.isLeft(inline) && inline.left.fix).toContain("by hand")
  })
})

describe("Sandbox.uninstall", () => {
  it("touches only marked lines of the keys it sets, and refuses a marked line claiming a value it never replaces", () => {
    const foreign = "model = \"m\" # ratchet: set by ratchet hooks install codex\nnote = \"x # ratchet: set by ratchet hooks install codex\"\n"
    expect(uninstall(foreign)).toBe(foreign)
    expect(uninstall(undefined)).toBeUndefined()
    const forged = Sandbox.uninstall(file, "sandbox_mode = \"workspace-write\" # ratchet: set by ratchet hooks install codex; was \"anything\"\n")
    expect(Either.isLeft(forged) && forged.left.field).toBe(`${file}: sandbox_mode`)
    const forgedBoolean = Sandbox.uninstall(file, "[sandbox_workspace_write]\nexclude_slash_tmp = true # ratchet: set by ratchet hooks install codex; was 7\n")
    expect(Either.isLeft(forgedBoolean)).toBe(true)
  })
})

describe("Sandbox.check", () => {
  const layer = (text: string | undefined, scope: "project" | "user" = "project") => ({ scope, file: scope === "project" ? file : userFile, text })
  const check = (layers: ReadonlyArray<Sandbox.Layer>, on = targets, env: Sandbox.Environment = environment, hooks = true) => Sandbox.check(layers, hooks, on, env)

  it("passes what keeps the store and key out of the writable roots", () => {
    const accepted: ReadonlyArray<readonly [string, ReadonlyArray<Sandbox.Layer>, typeof targets]> = [
      ["workspace-write, store in the home", [layer("sandbox_mode = \"workspace-write\"\n")], targets],
      ["read-only", [layer("sandbox_mode = \"read-only\"\n")], inTmp],
      ["workspace-write from the user's config", [layer(undefined), layer("sandbox_mode = \"workspace-write\"\n", "user")], targets],
      ["store in /tmp, excluded", [layer("sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\nexclude_slash_tmp = true\n")], inTmp],
      ["the project's mode wins over the user's", [layer("sandbox_mode = \"workspace-write\"\n"), layer("sandbox_mode = \"danger-full-access\"\n", "user")], targets]
    ]
    for (const [name, layers, on] of accepted) expect(check(layers, on), name).toEqual([])
    // Without our hooks, the project does not use Codex with Ratchet: nothing to say.
    expect(check([layer("sandbox_mode = \"danger-full-access\"\n")], targets, environment, false)).toEqual([])
  })

  it("warns, naming the host, the file, what is missing and the fix, about each way it is left open", () => {
    const rejected: ReadonlyArray<readonly [string, ReadonlyArray<Sandbox.Layer>, typeof targets, Sandbox.Environment, ReadonlyArray<readonly [string, string, string]>]> = [
      ["no sandbox_mode anywhere", [layer(undefined), layer("model = \"m\"\n", "user")], targets, environment, [[file, "sandbox_mode = \"workspace-write\"", "ratchet hooks install codex"]]],
      ["danger-full-access", [layer("sandbox_mode = \"danger-full-access\"\n")], targets, environment, [[file, "sandbox_mode = \"workspace-write\"", "ratchet hooks install codex"]]],
      ["danger from the user, the project silent", [layer(""), layer("sandbox_mode = \"danger-full-access\"\n", "user")], targets, environment, [[userFile, "sandbox_mode = \"workspace-write\"", "ratchet hooks install codex"]]],
      ["store in /tmp, not excluded", [layer("sandbox_mode = \"workspace-write\"\n")], inTmp, environment, [
        [file, "exclude_slash_tmp = true (for /tmp/rh)", "ratchet hooks install codex"],
        [file, "exclude_slash_tmp = true (for /tmp/rh/approver-key.json)", "ratchet hooks install codex"]
      ]],
      ["store in $TMPDIR, not excluded", [layer("sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\nexclude_slash_tmp = true\n")], inTmp, { slashTmp: ["/tmp"], tmpdir: ["/tmp/rh"] }, [
        [file, "exclude_tmpdir_env_var = true (for /tmp/rh)", "ratchet hooks install codex"],
        [file, "exclude_tmpdir_env_var = true (for /tmp/rh/approver-key.json)", "ratchet hooks install codex"]
      ]],
      ["a writable root holding the store", [layer("sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\nwritable_roots = [\"/home/dev/.ratchet\"]\n")], { ...targets, key: [] }, environment, [
        [file, "/home/dev/.ratchet out of [sandbox_workspace_write].writable_roots (for /home/dev/.ratchet)", `remove /home/dev/.ratchet from [sandbox_workspace_write].writable_roots in ${file}`]
      ]],
      ["the store inside the project", [layer("sandbox_mode = \"workspace-write\"\n")], { ...targets, store: ["/w/repo/.rh"], key: [] }, environment, [
        [file, "the store outside the project (for /w/repo/.rh)", "set RATCHET_HOME (and RATCHET_APPROVER_KEY) to a directory outside the project"]
      ]],
      ["a config that is not TOML", [layer("sandbox_mode = \n"), layer("sandbox_mode = \"workspace-write\"\n", "user")], targets, environment, [
        [file, "a readable config.toml", "Fix the file by hand, then run the command again, then ratchet hooks install codex"]
      ]]
    ]
    for (const [name, layers, on, env, expected] of rejected) {
      const warnings = check(layers, on, env)
      expect(warnings.map((w) => [w.file, w.missing, w.fix]), name).toEqual(expected)
      for (const w of warnings) {
        expect(w.host).toBe("codex")
        expect(w.detail.length).toBeGreaterThan(20)
      }
    }
  })
})
