/**
 * Claude Code's sandbox set in its settings by `ratchet hooks install claude-code`: the sandbox on,
 * the escape hatch closed, the store, the key and `.ratchet/` denied in both of Claude Code's path
 * syntaxes; merged next to the user's own settings, idempotently, with a record that lets
 * uninstall put back exactly what was there; wrong shapes refused. The written keys are checked
 * against the documented settings (the schema's permission-rule pattern and sandbox keys, copied
 * here by hand). And the check `ratchet status` runs, over a hand-written table of settings it
 * passes and settings it warns about.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Sandbox from "../src/Sandbox.js"
import * as Settings from "../src/Settings.js"

const home = "/home/dev"
const targets = { store: ["/home/dev/.ratchet"], key: ["/home/dev/.ratchet/approver-key.json"], projectRoot: "/w/repo", home }
const elsewhere = { store: ["/srv/ratchet"], key: ["/srv/keys/approver.json"], projectRoot: undefined, home }

const theirs = {
  model: "claude-sonnet-4-5",
  permissions: { allow: ["Bash(npm test)"], deny: ["Read(./.env)"] },
  sandbox: { excludedCommands: ["docker"], filesystem: { allowWrite: ["~/.kube"] } }
}

const install = (settings: unknown, on: typeof targets | typeof elsewhere = targets, record?: Sandbox.Installed) =>
  Either.getOrThrow(Sandbox.install(settings, on, record))

describe("Sandbox.install", () => {
  it("turns the sandbox on and denies the store, the key and .ratchet/, in each syntax", () => {
    const { record, settings } = install(undefined)
    expect(settings).toEqual({
      sandbox: {
        enabled: true,
        allowUnsandboxedCommands: false,
        filesystem: { denyWrite: ["~/.ratchet", "~/.ratchet/approver-key.json", "./.ratchet"], denyRead: ["~/.ratchet", "~/.ratchet/approver-key.json"] }
      },
      permissions: {
        deny: ["Edit(~/.ratchet/**)", "Read(~/.ratchet/**)", "Edit(~/.ratchet/approver-key.json)", "Read(~/.ratchet/approver-key.json)", "Edit(/.ratchet/**)"]
      }
    })
    expect(record.set).toEqual({ enabled: { before: null }, allowUnsandboxedCommands: { before: null } })
    // Outside the home: one slash in the sandbox's syntax, two in a permission rule's; no .ratchet/ without a project.
    const user = install(undefined, elsewhere).settings as { sandbox: { filesystem: { denyWrite: unknown } }; permissions: { deny: unknown } }
    expect(user.sandbox.filesystem.denyWrite).toEqual(["/srv/ratchet", "/srv/keys/approver.json"])
    expect(user.permissions.deny).toEqual(["Edit(//srv/ratchet/**)", "Read(//srv/ratchet/**)", "Edit(//srv/keys/approver.json)", "Read(//srv/keys/approver.json)"])
  })

  it("keeps every other setting in place, is idempotent, and records only what it added", () => {
    const once = install(theirs)
    expect(once.settings["model"]).toBe("claude-sonnet-4-5")
    expect(once.settings["permissions"]).toMatchObject({ allow: ["Bash(npm test)"] })
    expect((once.settings["permissions"] as { deny: ReadonlyArray<string> }).deny[0]).toBe("Read(./.env)")
    expect(once.settings["sandbox"]).toMatchObject({ excludedCommands: ["docker"], filesystem: { allowWrite: ["~/.kube"] } })
    const twice = install(once.settings, targets, once.record)
    expect(twice).toEqual(once)
    // An entry the user already had is theirs, not recorded as ours.
    const already = install({ permissions: { deny: ["Edit(/.ratchet/**)"] }, sandbox: { enabled: true } })
    expect(already.record.added.deny).not.toContain("Edit(/.ratchet/**)")
    expect(already.record.set.enabled).toBeUndefined()
  })

  it("writes only keys Claude Code documents, and permission rules its schema accepts", () => {
    // claude-code-settings.json (SchemaStore): $defs.permissionRule, properties.sandbox
    const permissionRule = /^((Agent|Bash|Cd|Edit|ExitPlanMode|Glob|Grep|KillShell|LSP|Monitor|MultiEdit|NotebookEdit|PowerShell|Read|Skill|TaskCreate|TaskGet|TaskList|TaskOutput|TaskStop|TaskUpdate|TodoWrite|ToolSearch|WebFetch|WebSearch|Write)(\([^)]+\))?|mcp__.*)$/
    const sandboxKeys = ["network", "ignoreViolations", "excludedCommands", "autoAllowBashIfSandboxed", "enableWeakerNetworkIsolation", "enableWeakerNestedSandbox", "allowUnsandboxedCommands", "enabled", "filesystem", "ripgrep", "bwrapPath", "socatPath", "failIfUnavailable", "enabledPlatforms", "credentials", "allowAppleEvents"]
    const filesystemKeys = ["allowWrite", "denyWrite", "denyRead", "allowRead", "allowManagedReadPathsOnly", "disabled"]
    for (const on of [targets, elsewhere]) {
      const settings = install(undefined, on).settings as { sandbox: Record<string, unknown> & { filesystem: Record<string, ReadonlyArray<string>> }; permissions: { deny: ReadonlyArray<string> } }
      for (const rule of settings.permissions.deny) expect(rule).toMatch(permissionRule)
      expect(new Set(settings.permissions.deny).size).toBe(settings.permissions.deny.length)
      for (const key of Object.keys(settings.sandbox)) expect(sandboxKeys).toContain(key)
      for (const key of Object.keys(settings.sandbox.filesystem)) expect(filesystemKeys).toContain(key)
      for (const list of Object.values(settings.sandbox.filesystem)) for (const entry of list) expect(entry.length).toBeGreaterThan(0)
    }
    // A path with a parenthesis cannot be a rule's specifier: the sandbox entries alone.
    const odd = install(undefined, { ...elsewhere, store: ["/srv/a(b)"], key: [] }).settings as { permissions: { deny: ReadonlyArray<string> } }
    expect(odd.permissions.deny).toEqual([])
  })

  it("refuses settings of the wrong shape, naming the field", () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [[], "(settings)"],
      [{ sandbox: true }, "sandbox"],
      [{ sandbox: { enabled: "yes" } }, "sandbox.enabled"],
      [{ sandbox: { allowUnsandboxedCommands: 0 } }, "sandbox.allowUnsandboxedCommands"],
      [{ sandbox: { filesystem: [] } }, "sandbox.filesystem"],
      [{ sandbox: { filesystem: { denyWrite: "/x" } } }, "sandbox.filesystem.denyWrite"],
      [{ sandbox: { filesystem: { denyRead: [1] } } }, "sandbox.filesystem.denyRead"],
      [{ permissions: [] }, "permissions"],
      [{ permissions: { deny: "Edit" } }, "permissions.deny"]
    ]
    for (const [settings, field] of cases) {
      const result = Sandbox.install(settings, targets, undefined)
      expect(Either.isLeft(result), JSON.stringify(settings)).toBe(true)
      if (Either.isLeft(result)) expect(result.left.field).toBe(field)
    }
  })
})

describe("Sandbox.uninstall", () => {
  it("gives the user's settings back exactly, from the record", () => {
    const once = install(theirs)
    expect(Either.getOrThrow(Sandbox.uninstall(once.settings, once.record))).toEqual(theirs)
    const fresh = install({ model: "x" })
    expect(Either.getOrThrow(Sandbox.uninstall(fresh.settings, fresh.record))).toEqual({ model: "x" })
  })

  it("puts back the booleans it changed, unless someone changed them since", () => {
    const off = { sandbox: { enabled: false, allowUnsandboxedCommands: true } }
    const once = install(off)
    expect(once.record.set).toEqual({ enabled: { before: false }, allowUnsandboxedCommands: { before: true } })
    expect(Either.getOrThrow(Sandbox.uninstall(once.settings, once.record))).toEqual(off)
    const changed = { ...once.settings, sandbox: { ...(once.settings["sandbox"] as object), allowUnsandboxedCommands: true } }
    expect((Either.getOrThrow(Sandbox.uninstall(changed, once.record))["sandbox"] as { allowUnsandboxedCommands: boolean }).allowUnsandboxedCommands).toBe(true)
  })

  it("without a record leaves the settings as they are", () => {
    const once = install(theirs)
    expect(Either.getOrThrow(Sandbox.uninstall(once.settings, undefined))).toEqual(once.settings)
    expect(Either.getOrThrow(Sandbox.uninstall(undefined, once.record))).toEqual({})
  })

  it("reads a record back only in its own shape", () => {
    const once = install(undefined)
    expect(Either.getOrThrow(Sandbox.decodeRecord("r.json", JSON.parse(JSON.stringify(once.record))))).toEqual(once.record)
    for (const bad of [null, {}, { ...once.record, schemaVersion: 2 }, { ...once.record, added: { deny: "x" } }, { ...once.record, set: { enabled: { before: "no" } } }]) {
      const result = Sandbox.decodeRecord("r.json", bad)
      expect(Either.isLeft(result), JSON.stringify(bad)).toBe(true)
      if (Either.isLeft(result)) expect(result.left.field).toBe("r.json")
    }
  })
})

describe("Sandbox.check", () => {
  const hooks = Either.getOrThrow(Settings.install(undefined, "ratchet hook claude-code"))
  const full = { ...hooks, ...install(undefined).settings }
  const project = (settings: unknown): Sandbox.Layer => ({ scope: "project", file: "/w/repo/.claude/settings.json", settings })
  const local = (settings: unknown): Sandbox.Layer => ({ scope: "local", file: "/w/repo/.claude/settings.local.json", settings })
  const user = (settings: unknown): Sandbox.Layer => ({ scope: "user", file: "/home/dev/.claude/settings.json", settings })
  const temp = "/tmp/claude-1000"
  const check = (layers: ReadonlyArray<Sandbox.Layer>, on = targets) => Sandbox.check(layers, on, temp)

  it("passes settings that keep the agent out, wherever the pieces come from", () => {
    const accepted: ReadonlyArray<readonly [string, ReadonlyArray<Sandbox.Layer>]> = [
      ["installed", [project(full)]],
      ["hooks in the user's file, sandbox in the project's", [user(hooks), project(install(undefined).settings)]],
      ["a bare Edit and Read denial covers everything", [project({ ...hooks, sandbox: { enabled: true, allowUnsandboxedCommands: false, filesystem: { denyWrite: ["./.ratchet"] } }, permissions: { deny: ["Edit", "Read"] } })]],
      ["absolute forms", [project({ ...hooks, sandbox: { enabled: true, allowUnsandboxedCommands: false, filesystem: { denyWrite: ["/home/dev/.ratchet", "/w/repo/.ratchet"], denyRead: ["/home/dev/.ratchet"] } }, permissions: { deny: ["Edit(//home/dev/.ratchet/**)", "Read(//home/dev/.ratchet/**)", "Edit(/.ratchet/**)"] } })]]
    ]
    for (const [name, layers] of accepted) expect(check(layers), name).toEqual([])
    // Read and Edit deny rules are merged into the sandbox's own lists (Claude Code's sandboxing docs).
    const rulesOnly = project({ ...hooks, sandbox: { enabled: true, allowUnsandboxedCommands: false }, permissions: { deny: ["Edit(/.rh/**)", "Read(/.rh/**)", "Edit(/.ratchet/**)"] } })
    expect(check([rulesOnly], { ...targets, store: ["/w/repo/.rh"], key: [] })).toEqual([])
    // No hooks of ours anywhere: the project does not use Claude Code with Ratchet.
    expect(check([project({ sandbox: { enabled: false } })])).toEqual([])
  })

  it("warns about each way the settings leave the store, the key or .ratchet/ open", () => {
    const sandboxOf = (settings: unknown) => (settings as { sandbox: object }).sandbox
    const rejected: ReadonlyArray<readonly [string, ReadonlyArray<Sandbox.Layer>, ReadonlyArray<string>]> = [
      ["hooks but no sandbox", [project(hooks)], ["sandbox.enabled: true"]],
      ["the local file turns it off", [project(full), local({ sandbox: { enabled: false } })], ["sandbox.enabled: true"]],
      ["the escape hatch left open", [project({ ...full, sandbox: { ...sandboxOf(full), allowUnsandboxedCommands: true } })], ["sandbox.allowUnsandboxedCommands: false"]],
      ["allowWrite reopens the store, and no rules", [project({ ...hooks, sandbox: { enabled: true, allowUnsandboxedCommands: false, filesystem: { allowWrite: ["~/"] } } })], [
        "sandbox.filesystem.denyWrite, an Edit(…) rule in permissions.deny, sandbox.filesystem.denyRead, a Read(…) rule in permissions.deny for /home/dev/.ratchet",
        "sandbox.filesystem.denyWrite, an Edit(…) rule in permissions.deny, sandbox.filesystem.denyRead, a Read(…) rule in permissions.deny for /home/dev/.ratchet/approver-key.json",
        "sandbox.filesystem.denyWrite, an Edit(…) rule in permissions.deny for /w/repo/.ratchet"
      ]],
      ["the store inside the project, only .ratchet/ denied", [project({ ...hooks, sandbox: { enabled: true, allowUnsandboxedCommands: false, filesystem: { denyWrite: ["./.ratchet"] } }, permissions: { deny: ["Edit(/.ratchet/**)"] } })], [
        "sandbox.filesystem.denyWrite, an Edit(…) rule in permissions.deny, sandbox.filesystem.denyRead, a Read(…) rule in permissions.deny for /w/repo/.rh"
      ]]
    ]
    const inProject = { ...targets, store: ["/w/repo/.rh"], key: [] }
    for (const [name, layers, expected] of rejected) {
      const warnings = check(layers, name.startsWith("the store inside") ? inProject : targets)
      expect(warnings.map((w) => w.missing), name).toEqual(expected)
      for (const w of warnings) expect([w.host, w.fix]).toEqual(["claude-code", "ratchet hooks install claude-code"])
    }
    const unreadable = check([{ ...project(undefined), error: "it is not valid JSON" }, user(full)])
    expect(unreadable.map((w) => [w.file, w.missing])).toEqual([["/w/repo/.claude/settings.json", "a readable settings file"]])
  })
})
