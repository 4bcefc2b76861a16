/**
 * How this process starts git (ADR 0043's amendment): directly, or, while the loop runs, through
 * the loop's sandbox, and directly again after the loop however it ended.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { confined, gitArgv } from "../src/internal/gitEnvironment.js"

const wrap = (argv: { readonly file: string; readonly args: ReadonlyArray<string> }, cwd: string) => ({ file: "/usr/bin/bwrap", args: ["--chdir", cwd, "--", argv.file, ...argv.args] })

describe("gitEnvironment.confined", () => {
  it.effect("git is wrapped inside, and started directly before and after, the loop failing or not", () =>
    Effect.gen(function*() {
      expect(gitArgv(["status"], "/w")).toEqual({ file: "git", args: ["status"] })
      const inside = yield* confined(wrap, Effect.sync(() => gitArgv(["status"], "/w")))
      expect(inside).toEqual({ file: "/usr/bin/bwrap", args: ["--chdir", "/w", "--", "git", "status"] })
      expect(gitArgv(["status"], "/w")).toEqual({ file: "git", args: ["status"] })
      const failed = yield* Effect.exit(confined(wrap, Effect.fail("boom")))
      expect(Exit.isFailure(failed)).toBe(true)
      expect(gitArgv(["status"], "/w")).toEqual({ file: "git", args: ["status"] })
    }))
})
