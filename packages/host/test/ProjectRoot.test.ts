/**
 * Where a hook call's project is looked for, from tables written by hand: the host's project
 * variable when it is set (refused when it is not an absolute, printable path), else the hook's own
 * working directory; and when the host's reported `cwd` may be used below that start.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ProjectRoot from "../src/ProjectRoot.js"

describe("ProjectRoot.start", () => {
  const cases: ReadonlyArray<readonly [string, string | undefined, Record<string, string | undefined>, string, ProjectRoot.Start["_tag"], string]> = [
    ["the variable when set", "CLAUDE_PROJECT_DIR", { CLAUDE_PROJECT_DIR: "/home/dev/project" }, "/", "Start", "/home/dev/project"],
    ["the variable, normalised", "CLAUDE_PROJECT_DIR", { CLAUDE_PROJECT_DIR: "/home/dev/project/./src/.." }, "/", "Start", "/home/dev/project"],
    ["the hook's directory when the variable is unset", "CLAUDE_PROJECT_DIR", {}, "/home/dev/project", "Start", "/home/dev/project"],
    ["the hook's directory when the variable is empty", "CLAUDE_PROJECT_DIR", { CLAUDE_PROJECT_DIR: "" }, "/home/dev/project", "Start", "/home/dev/project"],
    ["the hook's directory for a host with no variable", undefined, { CLAUDE_PROJECT_DIR: "/elsewhere" }, "/home/dev/project", "Start", "/home/dev/project"],
    ["a relative variable is refused", "CLAUDE_PROJECT_DIR", { CLAUDE_PROJECT_DIR: "project" }, "/home/dev/project", "Invalid", "CLAUDE_PROJECT_DIR"],
    ["a variable with NUL is refused", "CLAUDE_PROJECT_DIR", { CLAUDE_PROJECT_DIR: "/home/dev/project\u0000x" }, "/home/dev/project", "Invalid", "control characters"],
    ["a variable with a line end is refused", "CLAUDE_PROJECT_DIR", { CLAUDE_PROJECT_DIR: "/home/dev/project\n" }, "/home/dev/project", "Invalid", "control characters"],
    ["a relative hook directory is refused", undefined, {}, "project", "Invalid", "working directory"],
    ["a hook directory with an escape is refused", undefined, {}, "/home/\u001bdev", "Invalid", "working directory"]
  ]
  for (const [name, variable, environment, directory, tag, expected] of cases) {
    it(`${name}: ${tag}`, () => {
      const found = ProjectRoot.start({ variable, environment, directory })
      expect(found._tag).toBe(tag)
      if (found._tag === "Start") expect(found.directory).toBe(expected)
      else expect(found.reason).toContain(expected)
    })
  }
})

describe("ProjectRoot.below", () => {
  const cases: ReadonlyArray<readonly [string, string, boolean]> = [
    ["/home/dev", "/home/dev/project", true],
    ["/home/dev", "/home/dev", true],
    ["/home/dev", "/home/dev/project/../other", true],
    ["/home/dev", "/", false],
    ["/home/dev", "/home", false],
    ["/home/dev", "/home/devious", false],
    ["/home/dev", "/home/dev/../x", false],
    ["/home/dev", "project", false],
    ["/home/dev", "", false],
    ["/home/dev", "/home/dev/pro\u0000ject", false],
    ["/", "/anything", true]
  ]
  for (const [start, reported, expected] of cases) {
    it(`${JSON.stringify(reported)} below ${start}: ${expected}`, () => {
      expect(ProjectRoot.below(start, reported)).toBe(expected)
    })
  }
})
