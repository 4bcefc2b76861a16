/**
 * Scope: which changed paths a run may make. `violations` (forbidden wins, an empty allowed list
 * allows all, `.ratchet/` is exempt), Ratchet's own paths and the trust files. The glob matcher
 * itself is the kernel's and is tested there (`Glob.test.ts`).
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Glob from "@ratchet/kernel/Glob"
import * as Scope from "../src/Scope.js"

describe("Scope.matches", () => {
  it("is the kernel's glob matcher", () => {
    expect(Scope.matches).toBe(Glob.matches)
    expect(Scope.matches("src/*.ts", "src/a.ts")).toBe(true)
    expect(Scope.matches("src/*.ts", "src/a/b.ts")).toBe(false)
  })
})

describe("Scope.isRatchetPath", () => {
  const table: ReadonlyArray<readonly [string, boolean]> = [
    [".ratchet", true],
    [".ratchet/", true],
    [".ratchet/tasks/t-1.md", true],
    ["./.ratchet/x", true],
    [".ratchetx", false],
    [".ratchet-old/x", false],
    ["src/.ratchet/x", false],
    ["ratchet/x", false],
    ["", false],
    // The project's trust files are not Ratchet's own: they are observed, and never in scope.
    [".ratchet/approvers.json", false],
    ["./.ratchet/approvers.json", false],
    [".ratchet/project.json", false],
    [".ratchet/approvers.json.bak", true],
    [".ratchet/tasks/approvers.json", true]
  ]
  it.each(table)("%j → %s", (path, expected) => {
    expect(Scope.isRatchetPath(path)).toBe(expected)
  })
})

describe("Scope.isTrustFile", () => {
  const table: ReadonlyArray<readonly [string, boolean]> = [
    [".ratchet/approvers.json", true],
    ["./.ratchet/approvers.json", true],
    [".ratchet/project.json", true],
    ["approvers.json", false],
    [".ratchet/approvers.json/x", false],
    [".ratchet/tasks/x/project.json", false],
    ["src/.ratchet/approvers.json", false]
  ]
  it.each(table)("%j → %s", (path, expected) => {
    expect(Scope.isTrustFile(path)).toBe(expected)
  })
})

describe("Scope.violations", () => {
  it("forbidden wins over allowed, and names its pattern", () => {
    expect(Scope.violations(["src/secret.ts", "src/a.ts"], ["src"], ["src/secret.ts", "docs"])).toEqual([
      { path: "src/secret.ts", reason: "forbidden", pattern: "src/secret.ts" }
    ])
  })

  it("the first forbidden pattern that matches is the one named", () => {
    expect(Scope.violations(["a/b.ts"], [], ["*.md", "a/**", "a"])).toEqual([{ path: "a/b.ts", reason: "forbidden", pattern: "a/**" }])
  })

  it("outside every allowed pattern is a violation without a pattern", () => {
    expect(Scope.violations(["lib/x.ts", "src/a.ts", "README.md"], ["src/**", "*.md"], [])).toEqual([
      { path: "lib/x.ts", reason: "outside_allowed", pattern: null }
    ])
  })

  it("an empty allowed list allows every path", () => {
    expect(Scope.violations(["a", "b/c", "d/e/f.ts"], [], [])).toEqual([])
    expect(Scope.violations(["a", "b/c"], [], ["b"])).toEqual([{ path: "b/c", reason: "forbidden", pattern: "b" }])
  })

  it("a trust file is always a violation, even when every path is allowed or it is named in the scope", () => {
    for (const allowed of [[], ["**"], [".ratchet/**"], [".ratchet/approvers.json"]]) {
      expect(Scope.violations([".ratchet/approvers.json", ".ratchet/project.json", ".ratchet/tasks/t.md"], allowed, [])).toEqual([
        { path: ".ratchet/approvers.json", reason: "protected", pattern: null },
        { path: ".ratchet/project.json", reason: "protected", pattern: null }
      ])
    }
  })

  it("`.ratchet/` is never a violation, not even when forbidden or outside allowed", () => {
    expect(Scope.violations([".ratchet/tasks/t.md", ".ratchet"], ["src"], ["**", ".ratchet"])).toEqual([])
    expect(Scope.violations([".ratchetx/y"], ["src"], [])).toEqual([{ path: ".ratchetx/y", reason: "outside_allowed", pattern: null }])
  })

  it("every changed path is judged, in the order given", () => {
    expect(Scope.violations(["z", "y", "src/ok", "x"], ["src"], ["y"])).toEqual([
      { path: "z", reason: "outside_allowed", pattern: null },
      { path: "y", reason: "forbidden", pattern: "y" },
      { path: "x", reason: "outside_allowed", pattern: null }
    ])
  })

  it("no changed paths, no violations", () => {
    expect(Scope.violations([], ["src"], ["**"])).toEqual([])
  })

  it("property: a path is never both allowed-and-clean and reported", () => {
    const segment = fc.constantFrom("a", "b", "src", "lib", ".ratchet", "x.ts")
    const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("/"))
    const pattern = fc.array(fc.constantFrom("a", "b", "src", "*", "**", "?", "{a,b}", "[ab]", "x.ts"), { minLength: 1, maxLength: 3 })
      .map((parts) => parts.join("/"))
    fc.assert(
      fc.property(fc.array(path, { maxLength: 6 }), fc.array(pattern, { maxLength: 3 }), fc.array(pattern, { maxLength: 3 }), (changed, allowed, forbidden) => {
        const found = Scope.violations(changed, allowed, forbidden)
        for (const violation of found) {
          expect(changed).toContain(violation.path)
          expect(Scope.isRatchetPath(violation.path)).toBe(false)
          if (violation.reason === "forbidden") expect(forbidden).toContain(violation.pattern)
          else expect(allowed.some((entry) => Scope.matches(entry, violation.path))).toBe(false)
        }
        for (const entry of changed) {
          const reported = found.some((violation) => violation.path === entry)
          const expected = !Scope.isRatchetPath(entry) &&
            (forbidden.some((p) => Scope.matches(p, entry)) || (allowed.length > 0 && !allowed.some((p) => Scope.matches(p, entry))))
          expect(reported, entry).toBe(expected)
        }
      })
    )
  })
})
