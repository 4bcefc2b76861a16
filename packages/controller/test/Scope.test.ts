/**
 * Scope: which changed paths a run may make. `matches` against hand-written tables of (pattern,
 * path, expected) for every glob form the module documents, the accepted and the rejected cases
 * side by side, with regular-expression metacharacters in names and unbalanced brackets and
 * braces; `violations` (forbidden wins, an empty allowed list allows all, `.ratchet/` is exempt).
 * Patterns come from a spec anyone may write, so hostile ones (long, many `*`, malformed sets,
 * deep braces) must neither throw nor hang: their inputs are bounded so that a backtracking
 * matcher would fail by the test's timeout, never by a wall-clock assertion.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Scope from "../src/Scope.js"

/** (pattern, path, expected), by hand. */
type Row = readonly [string, string, boolean]

const check = (rows: ReadonlyArray<Row>) => {
  for (const [pattern, path, expected] of rows) {
    expect(Scope.matches(pattern, path), `${JSON.stringify(pattern)} against ${JSON.stringify(path)}`).toBe(expected)
  }
}

describe("Scope.matches", () => {
  it("a plain path covers itself and everything under it", () => {
    check([
      ["src", "src", true],
      ["src", "src/a.ts", true],
      ["src", "src/a/b/c.ts", true],
      ["src/", "src/a/b.ts", true],
      ["src/", "src", true],
      ["./src", "src/a.ts", true],
      ["./src/", "src/a.ts", true],
      ["src", "./src/a.ts", true],
      ["src", "src/", true],
      ["src/a.ts", "src/a.ts", true],
      ["src//", "src/a", true],
      // Rejected: a longer name, a prefix that is not a whole segment, another directory.
      ["src", "srcx", false],
      ["src", "src.ts", false],
      ["src", "lib/src", false],
      ["src", "sr", false],
      ["src/a", "src/ab", false],
      ["src/a.ts", "src/a.tsx", false],
      ["src/a.ts", "src", false]
    ])
  })

  it("`*` matches within one segment and never crosses `/`", () => {
    check([
      ["*.ts", "a.ts", true],
      ["*.ts", ".ts", true],
      ["src/*.ts", "src/a.ts", true],
      ["src/*", "src/a/b.ts", true], // `src/a` is named; what is below it is covered
      ["a*", "abc", true],
      ["*", "a", true],
      ["*c", "abc", true],
      ["a*c", "ac", true],
      ["*.ts", "src/a.ts", false],
      ["src/*.ts", "src/a/b.ts", false],
      ["a*c", "a/c", false],
      ["a*c", "ab/c", false],
      ["*.ts", "a.js", false],
      ["src/*/x", "src/x", false]
    ])
  })

  it("`**` crosses segments, zero of them included", () => {
    check([
      ["src/**", "src/a.ts", true],
      ["src/**", "src/a/b/c.ts", true],
      ["a/**/b", "a/b", true],
      ["a/**/b", "a/x/b", true],
      ["a/**/b", "a/x/y/z/b", true],
      ["a/**/b", "a/x/b/c", true],
      ["**/*.ts", "a.ts", true],
      ["**/*.ts", "x/y/a.ts", true],
      ["**", "anything/at/all", true],
      ["**/test", "a/b/test/c.ts", true],
      ["a/**/b", "a/xb", false],
      ["a/**/b", "ab", false],
      ["a/**/b", "a/b2", false],
      ["a/**/b", "x/a/b", false],
      ["**/*.ts", "a.js", false],
      ["**/*.ts", "x/a.tsx", false],
      ["src/**", "lib/a.ts", false],
      ["src/**", "srcs/a.ts", false]
    ])
  })

  it("`?` is one character of a segment", () => {
    check([
      ["?.ts", "a.ts", true],
      ["a?c", "abc", true],
      ["??", "ab", true],
      ["?.ts", "ab.ts", false],
      ["?.ts", ".ts", false],
      ["a?c", "a/c", false],
      ["a?c", "ac", false],
      ["??", "a", false]
    ])
  })

  it("`[abc]` is one of a set, `[!a]` one not in it, and neither matches `/`", () => {
    check([
      ["[abc].ts", "a.ts", true],
      ["[abc].ts", "c.ts", true],
      ["[a-z].ts", "q.ts", true],
      ["[!a].ts", "b.ts", true],
      ["[^a].ts", "b.ts", true],
      ["file[0-9]", "file7", true],
      ["[abc].ts", "d.ts", false],
      ["[abc].ts", "ab.ts", false],
      ["[abc].ts", "A.ts", false],
      ["[!a].ts", "a.ts", false],
      ["[^a].ts", "a.ts", false],
      ["x[!a]y", "x/y", false],
      ["x[!b]", "x/", false], // the trailing `/` is dropped: `x` alone is one character short
      ["x[!b]y", "x/y/z", false],
      ["file[0-9]", "filex", false]
    ])
  })

  it("`{a,b}` is either alternative, nested ones too", () => {
    check([
      ["{a,b}.ts", "a.ts", true],
      ["{a,b}.ts", "b.ts", true],
      ["src/{lib,bin}/x", "src/bin/x", true],
      ["src/{lib,bin}/x", "src/lib/x/y", true],
      ["{a,{b,c}}.ts", "c.ts", true],
      ["{src,test}/**/*.ts", "test/a/b.ts", true],
      ["x{,y}", "x", true],
      ["x{,y}", "xy", true],
      ["{a,b}.ts", "c.ts", false],
      ["{a,b}.ts", "ab.ts", false],
      ["{a,b}.ts", "{a,b}.ts", false],
      ["src/{lib,bin}/x", "src/sbin/x", false],
      ["{a,{b,c}}.ts", "d.ts", false],
      ["x{,y}", "xyy", false]
    ])
  })

  it("regular-expression metacharacters in names are literal", () => {
    check([
      ["a+b.c", "a+b.c", true],
      ["a+b.c", "aab.c", false],
      ["a+b.c", "a+bxc", false],
      ["a+b.c", "ab.c", false],
      ["(x)", "(x)", true],
      ["(x)", "x", false],
      ["$", "$", true],
      ["$", "", false],
      ["a$b", "a$b", true],
      ["^a", "^a", true],
      ["^a", "a", false],
      ["a|b", "a|b", true],
      ["a|b", "a", false],
      ["a|b", "b", false],
      ["a.b", "axb", false],
      ["a\\b", "a\\b", true],
      ["a\\b", "ab", false],
      ["a}", "a}", true],
      ["a,b", "a,b", true],
      ["a,b", "a", false],
      ["x\\d", "x5", false],
      ["x\\d", "x\\d", true]
    ])
  })

  it("an unbalanced `[` is literal; an unbalanced `{` runs to the end of the pattern", () => {
    check([
      ["[abc", "[abc", true],
      ["[abc", "a", false],
      ["[abc", "abc", false],
      ["a[", "a[", true],
      ["a[", "a", false],
      ["a]", "a]", true],
      ["{a,b", "a", true],
      ["{a,b", "b", true],
      ["{a,b", "{a,b", false],
      ["{a,b", "c", false],
      ["x/{a", "x/a", true],
      ["x/{a", "x/b", false]
    ])
  })

  it("an empty pattern or `.` covers the whole repository", () => {
    check([
      ["", "a", true],
      [".", "a/b", true],
      ["./", "a", true],
      ["/", "a", true]
    ])
  })

  it("a set JavaScript cannot express is literal, never a thrown error", () => {
    check([
      ["[z-a]", "x", false],
      ["[z-a]", "[z-a]", true],
      ["[a-\\]", "b", false],
      ["[]", "x", false]
    ])
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

describe("Scope: hostile patterns and paths", { timeout: 20_000 }, () => {
  it("many `*` against a long name that almost matches does not hang", () => {
    // Sized so that a backtracking matcher takes tens of seconds on each (ten `*a`, then a `b`
    // that is missing) and fails by the timeout, yet ends: a synchronous hang cannot be timed out.
    check([
      ["*a".repeat(10) + "b", "a".repeat(44), false],
      ["*a".repeat(10) + "b", "a".repeat(44) + "b", true],
      ["**a".repeat(10) + "b", "a".repeat(44), false],
      ["{*a,*a}".repeat(8) + "b", "a".repeat(30), false],
      ["*".repeat(1000), "a".repeat(1000), true],
      ["*".repeat(1000) + "b", "a".repeat(1000) + "b", true]
    ])
  })

  it("long patterns and paths", () => {
    const long = "d/".repeat(2000) + "file.ts"
    check([
      [long, long, true],
      ["d/**/file.ts", long, true],
      ["**/*.ts", long, true],
      ["?".repeat(4000), "x".repeat(4000), true],
      ["?".repeat(4000), "x".repeat(3999), false],
      ["x".repeat(100_000), "x".repeat(100_000), true],
      ["x".repeat(100_000), "x".repeat(99_999) + "y", false]
    ])
  })

  it("deeply nested and unclosed braces, and a flood of brackets, neither throw nor hang", () => {
    expect(typeof Scope.matches("{".repeat(10_000), "a")).toBe("boolean")
    expect(typeof Scope.matches("{a,".repeat(5_000), "a")).toBe("boolean")
    expect(typeof Scope.matches("[".repeat(10_000), "[[[")).toBe("boolean")
    expect(typeof Scope.matches("[z-a]".repeat(1_000), "x")).toBe("boolean")
    expect(typeof Scope.matches("}".repeat(10_000), "}")).toBe("boolean")
  })

  it("control characters, NUL and lone surrogates in patterns and paths", () => {
    check([
      ["a\u0000b", "a\u0000b", true],
      ["a\nb", "a\nb", true],
      ["a*", "a\nb", true],
      ["?", "\uD800", true],
      ["\uD800", "\uD800/x", true],
      ["\uD800", "\uDC00", false],
      ["*", "\u0001\u0002", true]
    ])
  })

  it("property: arbitrary patterns and paths never throw", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40, unit: "binary" }), fc.string({ maxLength: 40, unit: "binary" }), (pattern, path) => {
        expect(typeof Scope.matches(pattern, path)).toBe("boolean")
      }),
      { numRuns: 2_000 }
    )
  })

  it("property: a name without glob characters matches exactly itself and what is below it", () => {
    const name = fc.stringMatching(/^[a-zA-Z0-9._+()$^|\\-]{1,12}$/).filter((text) => text !== "." && !text.startsWith("./"))
    fc.assert(
      fc.property(name, name, (left, right) => {
        expect(Scope.matches(left, left)).toBe(true)
        expect(Scope.matches(left, `${left}/${right}`)).toBe(true)
        expect(Scope.matches(left, right)).toBe(left === right)
      })
    )
  })
})
