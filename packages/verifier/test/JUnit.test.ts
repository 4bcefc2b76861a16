/**
 * The JUnit report parser: real reports in the shapes vitest, jest-junit, pytest, Maven Surefire
 * and gotestsum write, the verdict each supports, and hostile input (truncated, malformed,
 * oversized, deeply nested, entity bombs) that must come back as a `JUnitInvalid`, never a throw.
 *
 * Every expected value is written out by hand.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import * as JUnit from "../src/JUnit.js"

const right = (text: string): JUnit.Report => {
  const result = JUnit.parse(text)
  if (Either.isLeft(result)) throw new Error(`expected a report, got: ${result.left.message}`)
  return result.right
}

const left = (text: string): JUnit.JUnitInvalid => {
  const result = JUnit.parse(text)
  if (Either.isRight(result)) throw new Error(`expected JUnitInvalid, got ${result.right.cases.length} cases`)
  return result.left
}

const MiB = 1024 * 1024

// vitest --reporter=junit (names joined with " > ", escaped; it.skip and it.todo cases as <skipped/>).
const vitestReport = `<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="4" failures="1" errors="0" time="0.0123">
    <testsuite name="test/math.test.ts" timestamp="2025-01-14T10:00:00.000Z" hostname="ci-runner" tests="4" failures="1" errors="0" skipped="1" time="0.0051">
        <testcase classname="test/math.test.ts" name="math &gt; adds" time="0.0012">
        </testcase>
        <testcase classname="test/math.test.ts" name="math &gt; subtracts 😀" time="0.0021">
            <failure message="expected 1 to be 2 // Object.is equality" type="AssertionError">
AssertionError: expected 1 to be 2 // Object.is equality

- Expected
+ Received

- 2
+ 1

 ❯ test/math.test.ts:9:15
            </failure>
        </testcase>
        <testcase classname="test/math.test.ts" name="math &gt; divides" time="0">
            <skipped/>
        </testcase>
        <testcase classname="test/math.test.ts" name="math &gt; logs" time="0.0003">
            <system-out>
computing &lt;sum&gt;
            </system-out>
        </testcase>
    </testsuite>
</testsuites>
`

// jest-junit: no message attribute, the stack as text.
const jestReport = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="3" failures="1" errors="0" time="1.234">
  <testsuite name="Calculator" errors="0" failures="1" skipped="1" timestamp="2025-01-14T10:00:00" time="0.9" tests="3">
    <testcase classname="Calculator adds" name="Calculator adds" time="0.002">
    </testcase>
    <testcase classname="Calculator divides" name="Calculator divides" time="0.004">
      <failure>Error: expect(received).toBe(expected) // Object.is equality

Expected: 2
Received: 3
    at Object.&lt;anonymous&gt; (/app/src/calc.test.js:12:20)</failure>
    </testcase>
    <testcase classname="Calculator skips" name="Calculator skips" time="0">
      <skipped/>
    </testcase>
  </testsuite>
</testsuites>
`

// pytest --junitxml (one line, as pytest writes it).
const pytestReport = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="4" time="0.051" timestamp="2025-01-14T10:00:00.000000+00:00" hostname="ci"><testcase classname="tests.test_app" name="test_ok" time="0.001" /><testcase classname="tests.test_app" name="test_bad" time="0.002"><failure message="assert 1 == 2">def test_bad():
&gt;       assert 1 == 2
E       assert 1 == 2

tests/test_app.py:5: AssertionError</failure></testcase><testcase classname="tests.test_app" name="test_skip" time="0.000"><skipped type="pytest.skip" message="no network">/app/tests/test_app.py:8: no network</skipped></testcase><testcase classname="tests.test_app" name="test_fixture" time="0.003"><error message="failed on setup with &quot;ValueError: boom&quot;">@pytest.fixture
def db():
&gt;   raise ValueError("boom")
E   ValueError: boom</error></testcase></testsuite></testsuites>`

// Maven Surefire: a single <testsuite> root, properties, <error type=...>, CDATA, flaky reruns.
const surefireReport = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report-3.0.xsd" version="3.0" name="com.example.AppTest" time="0.042" tests="3" errors="1" skipped="0" failures="0">
  <properties>
    <property name="java.version" value="17.0.9"/>
    <property name="line.separator" value="&#10;"/>
  </properties>
  <testcase name="addsNumbers" classname="com.example.AppTest" time="0.003"/>
  <testcase name="readsConfig" classname="com.example.AppTest" time="0.011">
    <error message="config.yml (No such file or directory)" type="java.io.FileNotFoundException"><![CDATA[java.io.FileNotFoundException: config.yml (No such file or directory)
	at java.base/java.io.FileInputStream.open0(Native Method)
	at com.example.AppTest.readsConfig(AppTest.java:21)
]]></error>
    <system-out><![CDATA[loading <config.yml> & friends]]></system-out>
  </testcase>
  <testcase name="flaky" classname="com.example.AppTest" time="0.002">
    <flakyFailure message="first try" type="java.lang.AssertionError">
      <stackTrace><![CDATA[java.lang.AssertionError: first try]]></stackTrace>
    </flakyFailure>
  </testcase>
</testsuite>
`

// gotestsum --junitfile: messages with &#xA; line ends in attributes.
const gotestsumReport = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3" failures="1" errors="0" time="0.512">
	<testsuite tests="3" failures="1" time="0.501" name="example.com/pkg/calc" timestamp="2025-01-14T10:00:00Z">
		<properties>
			<property name="go.version" value="go1.22.3 linux/amd64"></property>
		</properties>
		<testcase classname="example.com/pkg/calc" name="TestAdd" time="0.000"></testcase>
		<testcase classname="example.com/pkg/calc" name="TestDiv" time="0.010">
			<failure message="Failed" type="">=== RUN   TestDiv&#xA;    calc_test.go:14: got 3, want 2&#xA;--- FAIL: TestDiv (0.01s)&#xA;</failure>
		</testcase>
		<testcase classname="example.com/pkg/calc" name="TestSkip" time="0.000">
			<skipped message="=== RUN   TestSkip&#xA;    calc_test.go:20: needs docker&#xA;--- SKIP: TestSkip (0.00s)&#xA;"></skipped>
		</testcase>
	</testsuite>
</testsuites>
`

const passingReport = `<testsuites><testsuite name="a"><testcase name="one" time="1"/><testcase name="two" time="2"/></testsuite></testsuites>`

describe("JUnit.parse: real reports", () => {
  it("reads vitest's junit reporter", () => {
    const report = right(vitestReport)
    expect(report.cases).toEqual([
      { suite: "test/math.test.ts", name: "math > adds", classname: "test/math.test.ts", status: "passed", message: null, timeSeconds: 0.0012 },
      {
        suite: "test/math.test.ts",
        name: "math > subtracts 😀",
        classname: "test/math.test.ts",
        status: "failed",
        message: "expected 1 to be 2 // Object.is equality",
        timeSeconds: 0.0021
      },
      { suite: "test/math.test.ts", name: "math > divides", classname: "test/math.test.ts", status: "skipped", message: null, timeSeconds: 0 },
      { suite: "test/math.test.ts", name: "math > logs", classname: "test/math.test.ts", status: "passed", message: null, timeSeconds: 0.0003 }
    ])
    expect(report.counts).toEqual({ passed: 2, failed: 1, errored: 0, skipped: 1 })
    expect(JUnit.verdictOf(report)).toBe("FAIL")
    expect(Schema.is(JUnit.Report)(report)).toBe(true)
  })

  it("reads jest-junit, taking the message from the failure's text", () => {
    const report = right(jestReport)
    expect(report.cases).toEqual([
      { suite: "Calculator", name: "Calculator adds", classname: "Calculator adds", status: "passed", message: null, timeSeconds: 0.002 },
      {
        suite: "Calculator",
        name: "Calculator divides",
        classname: "Calculator divides",
        status: "failed",
        message: "Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 2\nReceived: 3\n" +
          "    at Object.<anonymous> (/app/src/calc.test.js:12:20)",
        timeSeconds: 0.004
      },
      { suite: "Calculator", name: "Calculator skips", classname: "Calculator skips", status: "skipped", message: null, timeSeconds: 0 }
    ])
    expect(report.counts).toEqual({ passed: 1, failed: 1, errored: 0, skipped: 1 })
    expect(JUnit.verdictOf(report)).toBe("FAIL")
  })

  it("reads pytest --junitxml", () => {
    const report = right(pytestReport)
    expect(report.cases).toEqual([
      { suite: "pytest", name: "test_ok", classname: "tests.test_app", status: "passed", message: null, timeSeconds: 0.001 },
      { suite: "pytest", name: "test_bad", classname: "tests.test_app", status: "failed", message: "assert 1 == 2", timeSeconds: 0.002 },
      { suite: "pytest", name: "test_skip", classname: "tests.test_app", status: "skipped", message: "no network", timeSeconds: 0 },
      {
        suite: "pytest",
        name: "test_fixture",
        classname: "tests.test_app",
        status: "errored",
        message: "failed on setup with \"ValueError: boom\"",
        timeSeconds: 0.003
      }
    ])
    expect(report.counts).toEqual({ passed: 1, failed: 1, errored: 1, skipped: 1 })
    expect(JUnit.verdictOf(report)).toBe("FAIL")
  })

  it("reads Maven Surefire: a single <testsuite> root, <error type=...>, flaky reruns that passed", () => {
    const report = right(surefireReport)
    expect(report.cases).toEqual([
      { suite: "com.example.AppTest", name: "addsNumbers", classname: "com.example.AppTest", status: "passed", message: null, timeSeconds: 0.003 },
      {
        suite: "com.example.AppTest",
        name: "readsConfig",
        classname: "com.example.AppTest",
        status: "errored",
        message: "config.yml (No such file or directory)",
        timeSeconds: 0.011
      },
      { suite: "com.example.AppTest", name: "flaky", classname: "com.example.AppTest", status: "passed", message: null, timeSeconds: 0.002 }
    ])
    expect(report.counts).toEqual({ passed: 2, failed: 0, errored: 1, skipped: 0 })
    expect(JUnit.verdictOf(report)).toBe("FAIL")
  })

  it("reads gotestsum, keeping character-reference line ends in attributes", () => {
    const report = right(gotestsumReport)
    expect(report.cases).toEqual([
      { suite: "example.com/pkg/calc", name: "TestAdd", classname: "example.com/pkg/calc", status: "passed", message: null, timeSeconds: 0 },
      { suite: "example.com/pkg/calc", name: "TestDiv", classname: "example.com/pkg/calc", status: "failed", message: "Failed", timeSeconds: 0.01 },
      {
        suite: "example.com/pkg/calc",
        name: "TestSkip",
        classname: "example.com/pkg/calc",
        status: "skipped",
        message: "=== RUN   TestSkip\n    calc_test.go:20: needs docker\n--- SKIP: TestSkip (0.00s)\n",
        timeSeconds: 0
      }
    ])
    expect(report.counts).toEqual({ passed: 1, failed: 1, errored: 0, skipped: 1 })
  })

  it("passes a report whose cases all passed", () => {
    const report = right(passingReport)
    expect(report.counts).toEqual({ passed: 2, failed: 0, errored: 0, skipped: 0 })
    expect(report.cases.map((c) => c.timeSeconds)).toEqual([1, 2])
    expect(JUnit.verdictOf(report)).toBe("PASS")
  })

  it("is indeterminate when every case was skipped", () => {
    const report = right(`<testsuite name="s"><testcase name="a"><skipped/></testcase><testcase name="b"><skipped message="later"/></testcase></testsuite>`)
    expect(report.counts).toEqual({ passed: 0, failed: 0, errored: 0, skipped: 2 })
    expect(report.cases.map((c) => c.message)).toEqual([null, "later"])
    expect(JUnit.verdictOf(report)).toBe("INDETERMINATE")
  })

  it("passes when some cases passed and the rest were skipped", () => {
    const report = right(`<testsuite name="s"><testcase name="a"/><testcase name="b"><skipped/></testcase></testsuite>`)
    expect(JUnit.verdictOf(report)).toBe("PASS")
  })

  it("fails on an errored case alone", () => {
    const report = right(`<testsuite name="s"><testcase name="a"/><testcase name="b"><error/></testcase></testsuite>`)
    expect(report.counts).toEqual({ passed: 1, failed: 0, errored: 1, skipped: 0 })
    expect(JUnit.verdictOf(report)).toBe("FAIL")
  })

  it("accepts a report with no test cases, which is indeterminate", () => {
    for (const text of [`<testsuites/>`, `<testsuites name="vitest tests" tests="0"></testsuites>`, `<testsuite name="x" tests="0">\n</testsuite>\n`]) {
      const report = right(text)
      expect(report).toEqual({ cases: [], counts: { passed: 0, failed: 0, errored: 0, skipped: 0 } })
      expect(JUnit.verdictOf(report)).toBe("INDETERMINATE")
    }
  })

  it("gives each case the nearest enclosing suite's name", () => {
    const report = right(
      `<testsuites name="all"><testcase name="loose"/><testsuite name="outer"><testsuite name="inner"><testcase name="a"/></testsuite>` +
        `<testcase name="b"/></testsuite><testsuite><testcase name="c"/></testsuite></testsuites>`
    )
    expect(report.cases.map((c) => [c.suite, c.name])).toEqual([["all", "loose"], ["inner", "a"], ["outer", "b"], ["", "c"]])
  })

  it("lets the first failure or error decide, over a skip", () => {
    const report = right(
      `<testsuite name="s">` +
        `<testcase name="a"><skipped message="s"/><failure message="f1"/><error message="e"/></testcase>` +
        `<testcase name="b"><error message="e"/><failure message="f"/><skipped/></testcase>` +
        `</testsuite>`
    )
    expect(report.cases.map((c) => [c.status, c.message])).toEqual([["failed", "f1"], ["errored", "e"]])
  })

  it("ignores failure-like elements that are not direct children of a testcase", () => {
    const report = right(
      `<testsuite name="s"><failure message="stray"/><testcase name="a"><system-out><failure message="in output"/></system-out>` +
        `<properties><property name="error" value="x"/></properties></testcase></testsuite>`
    )
    expect(report.cases).toEqual([{ suite: "s", name: "a", classname: null, status: "passed", message: null, timeSeconds: null }])
  })

  it("defaults a missing name to the empty string and reads odd times as null", () => {
    const report = right(
      `<testsuite><testcase/><testcase name="b" time=""/><testcase name="c" time="1,234.5"/><testcase name="d" time="-1"/>` +
        `<testcase name="e" time=" 2.5e-1 "/><testcase name="f" time="Infinity"/><testcase name="g" time="0x10"/></testsuite>`
    )
    expect(report.cases.map((c) => [c.name, c.timeSeconds])).toEqual([
      ["", null],
      ["b", null],
      ["c", null],
      ["d", null],
      ["e", 0.25],
      ["f", null],
      ["g", null]
    ])
  })
})

describe("JUnit.parse: XML details", () => {
  it("decodes the five entities and numeric references in messages", () => {
    const report = right(
      `<testsuite name="s"><testcase name="&lt;a&gt; &amp; &quot;b&quot; &apos;c&apos;">` +
        `<failure message="expected &lt;div&gt; &amp; &quot;x&quot; &apos;y&apos; &#65;&#x42;&#x1F600;&#xe9;"/></testcase></testsuite>`
    )
    expect(report.cases[0]!.name).toBe(`<a> & "b" 'c'`)
    expect(report.cases[0]!.message).toBe(`expected <div> & "x" 'y' AB😀é`)
  })

  it("reads CDATA and mixed text as the message, trimmed", () => {
    const report = right(
      `<testsuite name="s">` +
        `<testcase name="a"><failure><![CDATA[a < b && c]]></failure></testcase>` +
        `<testcase name="b"><failure>\n  x &amp; <![CDATA[<y>]]> z  \n</failure></testcase>` +
        `<testcase name="c"><error message="">fallback<!-- not text --> text</error></testcase>` +
        `<testcase name="d"><failure>   </failure></testcase>` +
        `</testsuite>`
    )
    expect(report.cases.map((c) => c.message)).toEqual(["a < b && c", "x & <y> z", "fallback text", null])
  })

  it("keeps the first 500 characters of a long failure text, never half a surrogate pair", () => {
    const report = right(
      `<testsuite name="s"><testcase name="a"><failure>${"x".repeat(600)}</failure></testcase>` +
        `<testcase name="b"><failure>${"a".repeat(499)}😀b</failure></testcase>` +
        `<testcase name="c"><failure message="${"m".repeat(700)}"/></testcase></testsuite>`
    )
    expect(report.cases.map((c) => c.message)).toEqual(["x".repeat(500), "a".repeat(499), "m".repeat(700)])
  })

  it("normalizes line ends: CR LF in text, and literal whitespace in attributes, as XML does", () => {
    const report = right(
      `<testsuite name="s"><testcase name="a\r\nb\tc\nd"><failure>one\r\ntwo\rthree&#13;four</failure></testcase></testsuite>`
    )
    expect(report.cases[0]!.name).toBe("a b c d")
    expect(report.cases[0]!.message).toBe("one\ntwo\nthree\rfour")
  })

  it("accepts a byte-order mark, single quotes, spaces around =, comments and processing instructions", () => {
    const report = right(
      `\uFEFF<?xml version='1.0'?>\n<!-- generated -->\n<?xml-stylesheet href="x.xsl"?>\n` +
        `<testsuites ><testsuite name = 's' ><!-- c --><?pi data?><testcase name='it "works"' classname="k" /></testsuite ></testsuites>\n<!-- end -->\n`
    )
    expect(report.cases).toEqual([{ suite: "s", name: "it \"works\"", classname: "k", status: "passed", message: null, timeSeconds: null }])
  })

  it("accepts nesting 64 deep", () => {
    const text = `<testsuites>${"<a>".repeat(63)}${"</a>".repeat(63)}</testsuites>`
    expect(right(text).cases).toEqual([])
  })

  it("accepts 100 000 test cases", () => {
    const report = right(`<testsuite name="s">${`<testcase name="t"/>`.repeat(100_000)}</testsuite>`)
    expect(report.counts).toEqual({ passed: 100_000, failed: 0, errored: 0, skipped: 0 })
  })

  it("reads a 5 MiB report", () => {
    const passed = `<testcase classname="pkg.Suite" name="a test with a reasonably long descriptive name" time="0.001"/>\n`
    const failed = `<testcase classname="pkg.Suite" name="a failing test" time="0.002"><failure message="boom">at x (y.ts:1:1)</failure></testcase>\n`
    // 9 passing and 1 failing per block; 6 000 blocks is over 5 MiB.
    const block = passed.repeat(9) + failed
    const text = `<?xml version="1.0"?>\n<testsuites><testsuite name="big">\n${block.repeat(6_000)}</testsuite></testsuites>\n`
    expect(text.length).toBeGreaterThan(5 * MiB)
    const report = right(text)
    expect(report.counts).toEqual({ passed: 54_000, failed: 6_000, errored: 0, skipped: 0 })
    expect(report.cases[9]).toEqual({ suite: "big", name: "a failing test", classname: "pkg.Suite", status: "failed", message: "boom", timeSeconds: 0.002 })
  })

  it("accepts a report of exactly 16 MiB", () => {
    const head = "<testsuites>"
    const tail = "</testsuites>"
    const text = head + " ".repeat(16 * MiB - head.length - tail.length) + tail
    expect(text.length).toBe(16 * MiB)
    expect(right(text).cases).toEqual([])
  })
})

describe("JUnit.parse: malformed and hostile input", () => {
  it("refuses a DOCTYPE with an entity bomb, naming DOCTYPE", () => {
    const bomb = `<?xml version="1.0"?>
<!DOCTYPE lolz [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<testsuites><testsuite name="&lol3;"><testcase name="&lol3;"/></testsuite></testsuites>`
    const error = left(bomb)
    expect(error._tag).toBe("@ratchet/verifier/JUnitInvalid")
    expect(error.reason).toContain("DOCTYPE")
    expect(error.reason).toContain("entity-expansion")
    expect(error.offset).toBe(22)
    expect(error.message).toContain("DOCTYPE")
  })

  it("refuses DOCTYPE and ENTITY declarations anywhere, in any case", () => {
    expect(left(`<!doctype testsuites><testsuites/>`).reason).toContain("DOCTYPE")
    expect(left(`<testsuites><!DOCTYPE x></testsuites>`).reason).toContain("DOCTYPE")
    expect(left(`<testsuites/><!DOCTYPE x>`).reason).toContain("DOCTYPE")
    expect(left(`<testsuites><!ENTITY x "y"></testsuites>`).reason).toContain("ENTITY")
    expect(left(`<testsuites><!ELEMENT x ANY></testsuites>`).offset).toBe(12)
  })

  it("refuses undefined entities and malformed or invalid character references", () => {
    const inMessage = (ref: string) => `<testsuite><testcase name="a"><failure message="x${ref}y"/></testcase></testsuite>`
    expect(left(inMessage("&nbsp;")).reason).toContain("undefined entity &nbsp;")
    expect(left(inMessage("&lol;")).reason).toContain("undefined entity &lol;")
    expect(left(inMessage("&")).reason).toContain("&amp;")
    expect(left(inMessage("& ")).offset).toBe(49)
    expect(left(inMessage("&amp")).offset).toBe(49)
    expect(left(inMessage("&#;")).reason).toContain("malformed character reference")
    expect(left(inMessage("&#x;")).reason).toContain("malformed character reference")
    expect(left(inMessage("&#X41;")).reason).toContain("malformed character reference")
    expect(left(inMessage("&#65")).reason).toContain("malformed character reference")
    for (const ref of ["&#0;", "&#x0;", "&#8;", "&#xD800;", "&#xDFFF;", "&#xFFFE;", "&#xFFFF;", "&#x110000;", "&#99999999999999999999999;"]) {
      const error = left(inMessage(ref))
      expect(error.reason).toBe(`the character reference ${ref} is not a valid XML character`)
      expect(error.offset).toBe(49)
    }
    expect(left(`<testsuite>&bogus;</testsuite>`).offset).toBe(11)
  })

  it("refuses mismatched and unclosed tags", () => {
    const mismatched = left(`<testsuites><testsuite name="s"><testcase name="a"></testsuite></testsuites>`)
    expect(mismatched.reason).toBe("the end tag </testsuite> does not match the open element <testcase>")
    expect(mismatched.offset).toBe(51)
    expect(left(`<testsuites><testsuite></testsuites>`).reason).toContain("</testsuites> does not match")
    expect(left(`<testsuites>`).reason).toBe("the report ends before <testsuites> is closed (truncated?)")
    expect(left(`<testsuites><testcase`).reason).toBe("the report ends inside the tag <testcase")
    expect(left(`<testsuites></testsuites`).reason).toBe("the report ends inside the end tag </testsuites")
    expect(left(`<testsuites><!-- x </testsuites>`).reason).toContain("comment")
    expect(left(`<testsuites><testcase><failure><![CDATA[x</failure></testcase></testsuites>`).reason).toContain("CDATA")
    expect(left(`<testsuites></ testsuites>`).offset).toBe(12)
    const long = left(`<testsuites></${"x".repeat(100_000)}>`)
    expect(long.reason).toBe(`the end tag </${"x".repeat(60)}...> does not match the open element <testsuites>`)
  })

  it("refuses attributes without quotes, without values, repeated, or holding <", () => {
    const unquoted = left(`<testsuite><testcase name=adds time="1"/></testsuite>`)
    expect(unquoted.reason).toBe("the value of the attribute name of <testcase> is not in quotes")
    expect(unquoted.offset).toBe(26)
    expect(left(`<testsuite><testcase name/></testsuite>`).reason).toBe("the attribute name of <testcase> has no =\"value\"")
    expect(left(`<testsuite name="a" name="b"/>`).reason).toBe("the attribute name appears twice on <testsuite>")
    expect(left(`<testsuite name="a<b"/>`).reason).toContain("\"<\" in the value")
    expect(left(`<testsuite name="a"tests="1"/>`).reason).toContain("expected whitespace")
    expect(left(`<testsuite name="a/>`).reason).toContain("never closed")
    expect(left(`<testsuite name='a"/>`).reason).toContain("never closed")
    expect(left(`<testsuite / >`).reason).toContain("\"/>\"")
  })

  it("refuses a root that is not testsuites or testsuite, and anything after the root", () => {
    const html = left(`<?xml version="1.0"?><html><body/></html>`)
    expect(html.reason).toBe("the root element is <html>, not <testsuites> or <testsuite>; this is not a JUnit report")
    expect(html.offset).toBe(21)
    expect(left(`<testcase name="a"/>`).reason).toContain("<testcase>")
    const garbage = left(`<testsuites/>\n<testsuites/>`)
    expect(garbage.reason).toBe("content after the root element ends; a report has exactly one root element")
    expect(garbage.offset).toBe(14)
    expect(left(`<testsuites/>trailing`).offset).toBe(13)
    expect(left(`junk<testsuites/>`).reason).toBe("text before the root element")
    expect(left(``).reason).toBe("the report is empty: it has no root element")
    expect(left(` \n\t`).reason).toBe("the report is empty: it has no root element")
    expect(left(`<!-- only a comment -->`).reason).toBe("the report is empty: it has no root element")
    expect(left(`<testsuites/><?xml version="1.0"?>`).reason).toContain("XML declaration")
    expect(left(`<testsuites>`.slice(0, 1)).offset).toBe(1)
  })

  it("counts the offset in UTF-8 bytes", () => {
    // "é" is 2 bytes and "😀" 4 (two UTF-16 code units): the end tag starts at character 32, byte 35.
    const error = left(`<testsuite name="é😀"><testcase></testsuite>`)
    expect(error.offset).toBe(35)
    expect(error.message).toContain("at byte 35:")
  })

  it("refuses input over 16 MiB, naming the limit", () => {
    const text = `<testsuites>${" ".repeat(17 * MiB)}</testsuites>`
    const error = left(text)
    expect(error.reason).toContain("16 MiB")
    expect(error.offset).toBe(16 * MiB)
    expect(error.message).toContain("16 MiB")
  })

  it("measures the 16 MiB limit in UTF-8 bytes, not characters", () => {
    // 9 Mi two-byte characters: 9 Mi UTF-16 code units, 18 MiB of UTF-8.
    const text = `<testsuite name="${"é".repeat(9 * MiB)}"/>`
    expect(text.length).toBeLessThan(16 * MiB)
    expect(left(text).reason).toContain("16 MiB")
  })

  it("refuses nesting 65 deep", () => {
    const error = left(`<testsuites>${"<a>".repeat(64)}${"</a>".repeat(64)}</testsuites>`)
    expect(error.reason).toBe("elements are nested deeper than 64 levels")
    expect(error.offset).toBe(12 + 63 * 3)
    expect(left(`<testsuites>${"<testsuite>".repeat(63)}<testcase/>${"</testsuite>".repeat(63)}</testsuites>`).reason).toContain("64")
    expect(left(`<testsuites>${"<a>".repeat(100_000)}`).reason).toBe("elements are nested deeper than 64 levels")
  })

  it("refuses more than 100 000 test cases", () => {
    const error = left(`<testsuite name="s">${`<testcase name="t"/>`.repeat(100_001)}</testsuite>`)
    expect(error.reason).toBe("the report has more than 100000 test cases")
    expect(error.offset).toBe(20 + 100_000 * 20)
  })

  it("returns Left or Right for every truncation of a valid report, never throwing", () => {
    for (const report of [vitestReport, surefireReport, pytestReport]) {
      const rootEnd = report.lastIndexOf(">") + 1
      for (let end = 0; end <= report.length; end++) {
        const result = JUnit.parse(report.slice(0, end))
        // Before the root's last ">" the root is unclosed; after it only whitespace follows.
        expect(Either.isLeft(result)).toBe(end < rootEnd)
      }
    }
  })

  it("tells a person what to do", () => {
    const error = new JUnit.JUnitInvalid({ reason: "the report ends before <testsuites> is closed (truncated?)", offset: 12 })
    expect(error.message).toBe(
      "The JUnit report is not valid XML at byte 12: the report ends before <testsuites> is closed (truncated?). " +
        "Make the test command write a JUnit XML report (for example vitest --reporter=junit --outputFile=<file>, " +
        "jest with jest-junit, pytest --junitxml=<file>, Maven Surefire, gotestsum --junitfile <file>) " +
        "and point the criterion at that file."
    )
  })
})

describe("JUnit.parse: properties", () => {
  const isWellFormedResult = (result: Either.Either<JUnit.Report, JUnit.JUnitInvalid>): boolean =>
    Either.match(result, {
      onLeft: (error) => error instanceof JUnit.JUnitInvalid && Number.isInteger(error.offset) && error.offset >= 0,
      onRight: (report) =>
        Schema.is(JUnit.Report)(report) &&
        report.counts.passed + report.counts.failed + report.counts.errored + report.counts.skipped === report.cases.length
    })

  it("never throws on arbitrary strings", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => isWellFormedResult(JUnit.parse(text))),
      { numRuns: 1_000 }
    )
  })

  it("never throws on arbitrary strings of XML-ish pieces", () => {
    const piece = fc.constantFrom(
      "<", ">", "/", "/>", "</", "=", "\"", "'", " ", "\n", "&", ";", "&#", "&#x", "&amp;", "&lt;", "1F600", "65", "\uD83D",
      "<!--", "-->", "<![CDATA[", "]]>", "<?", "?>", "<?xml", "<!DOCTYPE", "testsuites", "testsuite", "testcase",
      "failure", "error", "skipped", "name", "message", "time", "0.5", "<testsuites>", "</testsuites>", "<testcase "
    )
    fc.assert(
      fc.property(fc.string({ unit: piece, maxLength: 60 }), (text) => isWellFormedResult(JUnit.parse(text))),
      { numRuns: 2_000 }
    )
  })

  it("never throws on arbitrary mutations of a valid report", () => {
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), length: fc.nat({ max: 40 }) }),
      fc.record({
        kind: fc.constant("insert" as const),
        at: fc.nat(),
        text: fc.oneof(
          fc.string({ unit: "binary", maxLength: 8 }),
          fc.constantFrom("<", ">", "&", "\"", "</testcase>", "<testcase>", "<!DOCTYPE x>", "<![CDATA[", "&#0;", "<failure>")
        )
      }),
      fc.record({ kind: fc.constant("swap" as const), at: fc.nat(), other: fc.nat() })
    )
    const apply = (text: string, m: Mutation): string => {
      const at = text.length === 0 ? 0 : m.at % (text.length + 1)
      switch (m.kind) {
        case "delete":
          return text.slice(0, at) + text.slice(at + m.length)
        case "insert":
          return text.slice(0, at) + m.text + text.slice(at)
        case "swap": {
          if (text.length < 2) return text
          const a = Math.min(at, text.length - 1)
          const b = m.other % text.length
          const chars = text.split("")
          const c = chars[a]!
          chars[a] = chars[b]!
          chars[b] = c
          return chars.join("")
        }
      }
    }
    fc.assert(
      fc.property(
        fc.constantFrom(vitestReport, jestReport, pytestReport, surefireReport, gotestsumReport),
        fc.array(mutation, { minLength: 1, maxLength: 6 }),
        (report, mutations) => isWellFormedResult(JUnit.parse(mutations.reduce(apply, report)))
      ),
      { numRuns: 1_000 }
    )
  })

  it("reads back the names, suites and messages it is given, however they are escaped", () => {
    // Hand-written escaping: the five entities, and XML's attribute whitespace as references.
    const escape = (s: string) =>
      s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;")
        .replace(/\t/g, "&#9;").replace(/\n/g, "&#10;").replace(/\r/g, "&#13;")
    const name = fc.string({ unit: "binary", maxLength: 30 })
    fc.assert(
      fc.property(name, name, fc.string({ unit: "binary", minLength: 1, maxLength: 30 }), (suite, testName, message) => {
        const text = `<testsuites><testsuite name="${escape(suite)}"><testcase name='${escape(testName)}'>` +
          `<failure message="${escape(message)}">ignored</failure></testcase></testsuite></testsuites>`
        const report = right(text)
        expect(report.cases).toEqual([{ suite, name: testName, classname: null, status: "failed", message, timeSeconds: null }])
      }),
      { numRuns: 500 }
    )
  })
})

type Mutation =
  | { readonly kind: "delete"; readonly at: number; readonly length: number }
  | { readonly kind: "insert"; readonly at: number; readonly text: string }
  | { readonly kind: "swap"; readonly at: number; readonly other: number }
