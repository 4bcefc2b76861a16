/**
 * Globs: `matches` against hand-written tables of (pattern, path, expected) for every glob form the
 * module documents, the accepted and the rejected cases side by side, with regular-expression
 * metacharacters in names and unbalanced brackets and braces; `problem` for patterns that leave
 * the repository. Patterns come from files anyone may write (a spec, a lesson), so hostile ones
 * (long, many `*`, malformed sets, deep braces) must neither throw nor hang: their inputs are
 * bounded so that a backtracking matcher would fail by the test's timeout, never by a wall-clock
 * assertion.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Glob from "../src/Glob.js"

/** (pattern, path, expected), by hand. */
type Row = readonly [string, string, boolean]

const check = (rows: ReadonlyArray<Row>) => {
  for (const [pattern, path, expected] of rows) {
    expect(Glob.matches(pattern, path), `${JSON.stringify(pattern)} against ${JSON.stringify(path)}`).toBe(expected)
  }
}

describe("Glob.matches", () => {
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
      ["src/a.ts", "src", false],
      // Only a leading `./` is dropped.
      ["a/b", "a/./b", false],
      // An unclosed `[` is itself.
      ["a[", "ab", false],
      ["a[", "a[", true],
      // A `**` between names crosses segments.
      ["a**b", "ax/yb", true],
      ["a*b", "ax/yb", false]
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
      // `!` elsewhere in a set is itself; a backslash in a set is a backslash.
      ["[a!]", "!", true],
      ["[a!]", "b", false],
      ["[\\]", "\\", true],
      ["[\\]", "a", false],
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

describe("Glob: hostile patterns and paths", { timeout: 20_000 }, () => {
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
    expect(typeof Glob.matches("{".repeat(10_000), "a")).toBe("boolean")
    expect(typeof Glob.matches("{a,".repeat(5_000), "a")).toBe("boolean")
    expect(typeof Glob.matches("[".repeat(10_000), "[[[")).toBe("boolean")
    expect(typeof Glob.matches("[z-a]".repeat(1_000), "x")).toBe("boolean")
    expect(typeof Glob.matches("}".repeat(10_000), "}")).toBe("boolean")
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
        expect(typeof Glob.matches(pattern, path)).toBe("boolean")
      }),
      { numRuns: 2_000 }
    )
  })

  it("property: a name without glob characters matches exactly itself and what is below it", () => {
    const name = fc.stringMatching(/^[a-zA-Z0-9._+()$^|\\-]{1,12}$/).filter((text) => text !== "." && !text.startsWith("./"))
    fc.assert(
      fc.property(name, name, (left, right) => {
        expect(Glob.matches(left, left)).toBe(true)
        expect(Glob.matches(left, `${left}/${right}`)).toBe(true)
        expect(Glob.matches(left, right)).toBe(left === right)
      })
    )
  })
})

describe("Glob.problem", () => {
  const table: ReadonlyArray<readonly [string, string | undefined]> = [
    ["src", undefined],
    ["src/**/*.ts", undefined],
    ["./src", undefined],
    ["a..b/c", undefined],
    ["..a", undefined],
    ["", "is empty"],
    ["/etc/passwd", "is absolute (it starts with \"/\")"],
    ["a\u0000b", "contains a NUL character"],
    ["src\\a.ts", "contains a backslash (scope entries use \"/\" separators)"],
    ["..", "escapes the repository (it has a \"..\" segment)"],
    ["../../etc", "escapes the repository (it has a \"..\" segment)"],
    ["src/../../etc", "escapes the repository (it has a \"..\" segment)"],
    ["src/..", "escapes the repository (it has a \"..\" segment)"]
  ]
  it.each(table)("%j → %s", (entry, expected) => {
    expect(Glob.problem(entry)).toBe(expected)
  })
})
