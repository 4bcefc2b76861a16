/**
 * Codex's config.toml read whole and edited a line at a time: each line's role is found even where
 * a multi-line string or array would fool a line-by-line reader; an edit changes only its lines
 * (every other byte stays) and is checked by parsing the result again; malformed, truncated,
 * oversized and hostile files are refused with the position named, never thrown at the caller.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import * as ConfigToml from "../src/ConfigToml.js"

const file = "/w/.codex/config.toml"

const parsed = (text: string) => Either.getOrThrow(ConfigToml.parse(file, text))

/** A config as people write them: comments, a schema line, MCP servers, a profile, a long string. */
const theirs = [
  "#:schema https://developers.openai.com/codex/config-schema.json",
  "# My Codex settings",
  "model = \"gpt-5.5\"",
  "approval_policy = \"on-request\"  # ask me",
  "developer_instructions = \"\"\"",
  "Never touch prod.",
  "[not_a_table]",
  "sandbox_mode = \"danger-full-access\"",
  "\"\"\"",
  "",
  "[mcp_servers.docs]",
  "command = \"npx\"",
  "args = [",
  "  \"-y\", # the server",
  "  \"docs-mcp\",",
  "]",
  "env = { TOKEN = \"a#b\", \"x=y\" = 'z' }",
  "",
  "[[profiles.fast.hooks]]",
  "name = \"lint\"",
  ""
].join("\n")

describe("ConfigToml.parse", () => {
  it("finds each line's role, not fooled by multi-line strings and arrays", () => {
    const document = parsed(theirs)
    const roles = document.lines.map((line) => `${line.kind}${line.kind === "key" ? `:${[...line.table, ...line.key].join(".")}` : line.kind === "header" ? `:${line.table.join(".")}` : ""}`)
    expect(roles).toEqual([
      "comment",
      "comment",
      "key:model",
      "key:approval_policy",
      "key:developer_instructions",
      "continuation",
      "continuation",
      "continuation",
      "continuation",
      "blank",
      "header:mcp_servers.docs",
      "key:mcp_servers.docs.command",
      "key:mcp_servers.docs.args",
      "continuation",
      "continuation",
      "continuation",
      "key:mcp_servers.docs.env",
      "blank",
      "header:profiles.fast.hooks",
      "key:profiles.fast.hooks.name"
    ])
    expect(document.lines[4]!.multiline).toBe(true)
    expect(document.lines[2]!.multiline).toBe(false)
    expect(document.lines[18]!.arrayTable).toBe(true)
    // The value comes from the TOML parser: the fake key inside the string is text.
    expect(document.value["sandbox_mode"]).toBeUndefined()
    expect(ConfigToml.keyLine(document, [], "sandbox_mode")).toBe(-1)
    expect(ConfigToml.text(document)).toBe(theirs)
  })

  it("keeps CRLF line ends, a byte-order mark and a missing final line break", () => {
    for (const text of ["a = 1\r\n[t]\r\nb = 2\r\n", "\uFEFFa = 1\n", "a = 1", ""]) expect(ConfigToml.text(parsed(text))).toBe(text)
    expect(parsed("a = 1\r\nb = 2\r\n").eol).toBe("\r\n")
  })

  it("reads quoted and dotted keys and headers with spaces", () => {
    const document = parsed("\"sandbox_mode\" = \"read-only\"\n[ sandbox_workspace_write ] # mine\n'exclude_slash_tmp' = true\na . \"b.c\" = 1\n")
    expect(ConfigToml.keyLine(document, [], "sandbox_mode")).toBe(0)
    expect(ConfigToml.headerLine(document, ["sandbox_workspace_write"])).toBe(1)
    expect(ConfigToml.keyLine(document, ["sandbox_workspace_write"], "exclude_slash_tmp")).toBe(2)
    expect(document.lines[3]!.key).toEqual(["a", "b.c"])
  })

  it("refuses malformed TOML with the line and column, writing nothing", () => {
    const cases: ReadonlyArray<readonly [string, number]> = [
      ["sandbox_mode = workspace-write\n", 1],
      ["a = 1\n[table\nb = 2\n", 2],
      ["a = 1\na = 2\n", 2],
      ["a = \"unterminated\n", 1],
      ["[t]\nx = 1\n[t]\ny = 2\n", 3],
      ["a = [1, 2\n", 2],
      ["= 1\n", 1]
    ]
    for (const [text, line] of cases) {
      const result = ConfigToml.parse(file, text)
      expect(Either.isLeft(result), text).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left.field).toBe(file)
        expect(result.left.reason).toContain(`is not valid TOML at line ${line}`)
        expect(result.left.fix).toContain("nothing was written")
      }
    }
  })

  it("answers every truncation of a real config without throwing", () => {
    for (let end = 0; end <= theirs.length; end++) {
      const result = ConfigToml.parse(file, theirs.slice(0, end))
      if (Either.isRight(result)) expect(ConfigToml.text(result.right)).toBe(theirs.slice(0, end))
      else expect(result.left.reason).toMatch(/is not valid TOML|cannot read/)
    }
  })

  it("refuses an oversized file and hostile nesting before parsing far", () => {
    const oversized = ConfigToml.parse(file, `a = "${"x".repeat(ConfigToml.maxBytes)}"\n`)
    expect(Either.isLeft(oversized) && oversized.left.reason).toContain("larger than")
    const deep = ConfigToml.parse(file, `a = ${"[".repeat(100_000)}${"]".repeat(100_000)}\n`)
    expect(Either.isLeft(deep)).toBe(true)
    const deepInline = ConfigToml.parse(file, `a = ${"{ b = ".repeat(5000)}1${" }".repeat(5000)}\n`)
    expect(Either.isLeft(deepInline)).toBe(true)
  })

  it("never throws on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200, unit: fc.constantFrom("a", "=", "\"", "'", "[", "]", "{", "}", "#", "\n", " ", ".", "1", "\\", "t") }), (text) => {
        const result = ConfigToml.parse(file, text)
        if (Either.isRight(result)) expect(ConfigToml.text(result.right)).toBe(text)
      }),
      { numRuns: 2000 }
    )
  })
})

const set = (table: ReadonlyArray<string>, key: string, value: unknown, comment = "ours"): ConfigToml.Change => ({
  _tag: "Set",
  table,
  key,
  value,
  literal: JSON.stringify(value),
  comment,
  headerComment: "ours"
})

const edited = (text: string, changes: ReadonlyArray<ConfigToml.Change>) => ConfigToml.edit(parsed(text), changes)

describe("ConfigToml.edit", () => {
  it("adds a root key after the root's keys, leaving every other line as it was", () => {
    const result = Either.getOrThrow(edited(theirs, [set([], "sandbox_mode", "workspace-write")]))
    const lines = ConfigToml.text(result).split("\n")
    expect(lines.slice(0, 9)).toEqual(theirs.split("\n").slice(0, 9))
    expect(lines[9]).toBe("sandbox_mode = \"workspace-write\" # ours")
    expect(lines.slice(10)).toEqual(theirs.split("\n").slice(9))
    expect(result.value["sandbox_mode"]).toBe("workspace-write")
  })

  it("puts a root key of a file with no root keys after its leading comments", () => {
    const text = "#:schema https://example/schema.json\n\n[mcp_servers.a]\ncommand = \"a\"\n"
    expect(ConfigToml.text(Either.getOrThrow(edited(text, [set([], "sandbox_mode", "read-only")])))).toBe(
      "#:schema https://example/schema.json\nsandbox_mode = \"read-only\" # ours\n\n[mcp_servers.a]\ncommand = \"a\"\n"
    )
  })

  it("replaces a key in place, keeping its quoting, its indentation and its comment after ours", () => {
    const text = "a = 1\n[sandbox_workspace_write]\n  'exclude_slash_tmp'   =   false # theirs\nnetwork_access = true\n"
    expect(ConfigToml.text(Either.getOrThrow(edited(text, [set(["sandbox_workspace_write"], "exclude_slash_tmp", true)])))).toBe(
      "a = 1\n[sandbox_workspace_write]\n  'exclude_slash_tmp' = true # ours # theirs\nnetwork_access = true\n"
    )
  })

  it("adds to an existing table after its keys, and opens a table at the end when there is none", () => {
    const inTable = "[sandbox_workspace_write]\nwritable_roots = [\n  \"/data\",\n]\n\n[other]\nx = 1\n"
    expect(ConfigToml.text(Either.getOrThrow(edited(inTable, [set(["sandbox_workspace_write"], "exclude_slash_tmp", true)])))).toBe(
      "[sandbox_workspace_write]\nwritable_roots = [\n  \"/data\",\n]\nexclude_slash_tmp = true # ours\n\n[other]\nx = 1\n"
    )
    expect(ConfigToml.text(Either.getOrThrow(edited("model = \"m\"", [set(["sandbox_workspace_write"], "exclude_slash_tmp", true)])))).toBe(
      "model = \"m\"\n\n[sandbox_workspace_write] # ours\nexclude_slash_tmp = true # ours\n"
    )
    expect(ConfigToml.text(Either.getOrThrow(edited("", [set([], "sandbox_mode", "workspace-write")])))).toBe("sandbox_mode = \"workspace-write\" # ours\n")
    // A super-table may follow its sub-table: it is opened after it.
    expect(ConfigToml.text(Either.getOrThrow(edited("[sandbox_workspace_write.nested]\nx = 1\n", [set(["sandbox_workspace_write"], "exclude_slash_tmp", true)])))).toBe(
      "[sandbox_workspace_write.nested]\nx = 1\n\n[sandbox_workspace_write] # ours\nexclude_slash_tmp = true # ours\n"
    )
  })

  it("removes and restores keys, and drops a table left with nothing in it", () => {
    const text = "a = 1\nsandbox_mode = \"workspace-write\" # ours\n\n[sandbox_workspace_write] # ours\nexclude_slash_tmp = true # ours\n"
    const result = Either.getOrThrow(edited(text, [
      { _tag: "Restore", table: [], key: "sandbox_mode", value: "danger-full-access", literal: "\"danger-full-access\"" },
      { _tag: "Remove", table: ["sandbox_workspace_write"], key: "exclude_slash_tmp" },
      { _tag: "DropTable", table: ["sandbox_workspace_write"] }
    ]))
    expect(ConfigToml.text(result)).toBe("a = 1\nsandbox_mode = \"danger-full-access\"\n")
    // A table with something else in it stays.
    const kept = Either.getOrThrow(edited("[sandbox_workspace_write]\n# mine\nexclude_slash_tmp = true\n", [
      { _tag: "Remove", table: ["sandbox_workspace_write"], key: "exclude_slash_tmp" },
      { _tag: "DropTable", table: ["sandbox_workspace_write"] }
    ]))
    expect(ConfigToml.text(kept)).toBe("[sandbox_workspace_write]\n# mine\n")
  })

  it("refuses, with nothing changed, what it cannot edit by lines: dotted keys, inline tables, multi-line values", () => {
    const cases: ReadonlyArray<readonly [string, ConfigToml.Change]> = [
      ["sandbox_workspace_write.network_access = true\n", set(["sandbox_workspace_write"], "exclude_slash_tmp", true)],
      ["sandbox_workspace_write = { network_access = true }\n", set(["sandbox_workspace_write"], "exclude_slash_tmp", true)],
      ["sandbox_mode = \"\"\"\nread-only\"\"\"\n", set([], "sandbox_mode", "workspace-write")]
    ]
    for (const [text, change] of cases) {
      const result = edited(text, [change])
      expect(Either.isLeft(result), text).toBe(true)
      if (Either.isLeft(result)) expect(result.left.fix).toContain("nothing was written")
    }
  })
})
