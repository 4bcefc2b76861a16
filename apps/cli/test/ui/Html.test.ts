/**
 * The run page's escaping: every stored string is text, never markup, whatever it holds (tags,
 * quotes that would close an attribute, entities, control and bidirectional characters), and only
 * the module's own markup passes through the template unescaped.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Html from "../../src/ui/Html.js"

const hostile: ReadonlyArray<readonly [string, string, string]> = [
  ["a script tag", "<script>window.pwned=1</script>", "&lt;script&gt;window.pwned=1&lt;/script&gt;"],
  ["an attribute break-out", "\" onmouseover=\"alert(1)", "&quot; onmouseover=&quot;alert(1)"],
  ["a single-quoted break-out", "' autofocus onfocus='x", "&#39; autofocus onfocus=&#39;x"],
  ["an entity", "&lt;b&gt;", "&amp;lt;b&amp;gt;"],
  ["a backtick", "`${x}`", "&#96;${x}&#96;"],
  ["an ANSI escape", "\u001b[31mred\u001b[0m", "\\u{1b}[31mred\\u{1b}[0m"],
  ["a NUL and DEL", "a\u0000b\u007fc", "a\\u{0}b\\u{7f}c"],
  ["a right-to-left override", "safe\u202Eexe.txt", "safe\\u{202e}exe.txt"],
  ["a C1 control", "x\u009by", "x\\u{9b}y"]
]

describe("Html.escape", () => {
  for (const [name, input, expected] of hostile) {
    it(`writes ${name} as text`, () => {
      expect(Html.escape(input)).toBe(expected)
    })
  }

  it("keeps tabs, line ends and ordinary Unicode", () => {
    expect(Html.escape("a\tb\nc — é 日本")).toBe("a\tb\nc — é 日本")
  })
})

describe("Html.html", () => {
  it("escapes interpolated strings and keeps its own literal markup", () => {
    const out = Html.html`<p title="${"\"><img src=x>"}">${"<b>bold</b>"}</p>`.value
    expect(out).toBe("<p title=\"&quot;&gt;&lt;img src=x&gt;\">&lt;b&gt;bold&lt;/b&gt;</p>")
  })

  it("passes markup it made through once, and escapes text inside lists", () => {
    const inner = Html.html`<i>${"<x>"}</i>`
    expect(Html.html`<div>${inner}${["<a>", inner]}</div>`.value).toBe("<div><i>&lt;x&gt;</i>&lt;a&gt;<i>&lt;x&gt;</i></div>")
  })

  it("does not take a look-alike object for markup", () => {
    const forged = { value: "<script>1</script>" } as unknown as Html.Part
    expect(Html.html`${forged}`.value).not.toContain("<script>")
  })

  it("renders nothing for null, undefined, booleans and non-finite numbers", () => {
    expect(Html.html`[${null}${undefined}${true}${false}${Number.NaN}${Infinity}${0}]`.value).toBe("[0]")
  })
})

describe("Html.href", () => {
  it("percent-encodes every segment and query value", () => {
    expect(Html.href(["tasks", "../etc/passwd"], { after: "1&x=<y>" })).toBe("/tasks/..%2Fetc%2Fpasswd?after=1%26x%3D%3Cy%3E")
  })
})

describe("Html.command", () => {
  it("shows a command to copy as escaped text, in the code and the button's data", () => {
    const out = Html.command("ratchet cancel t-1 --reason \"<now>\"").value
    expect(out).toContain("<code>ratchet cancel t-1 --reason &quot;&lt;now&gt;&quot;</code>")
    expect(out).toContain("data-copy=\"ratchet cancel t-1 --reason &quot;&lt;now&gt;&quot;\"")
  })
})

describe("Html.page", () => {
  it("links the same-origin stylesheet and script and carries no inline script or style", () => {
    const out = Html.page({ title: "<t>", lsn: 7, crumbs: [], body: Html.html`<p>${"x"}</p>` })
    expect(out).toContain("<script src=\"/assets/ui.js\" defer></script>")
    expect(out).toContain("<link rel=\"stylesheet\" href=\"/assets/ui.css\">")
    expect(out).toContain("<title>&lt;t&gt; · ratchet ui</title>")
    expect(out).toContain("data-lsn=\"7\"")
    expect(out.match(/<script/g)?.length).toBe(1)
    expect(out).not.toMatch(/<style|style=/)
  })
})
