/**
 * The guard's bypass table of @ratchet/testkit, replayed through Claude Code's payloads (its Bash
 * and Edit tool calls, from the fixtures): every wrapper and padding form is denied in Claude Code's
 * own answer (`permissionDecision: "deny"`, never an ask), and ordinary commands stay allowed.
 */
import * as Guard from "@ratchet/host/Guard"
import type * as HostEvent from "@ratchet/host/HostEvent"
import { GuardKit } from "@ratchet/testkit/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ClaudeCode from "../src/ClaudeCode.js"

const fixture = (file: string) => JSON.parse(fs.readFileSync(path.join(import.meta.dirname, "fixtures", file), "utf8")) as { readonly tool_input: object }

const bash = fixture("PreToolUse.Bash.npm-test.json")
const edit = fixture("PreToolUse.Edit.json")

GuardKit.suite("claude-code adapter: the guard's bypass table", {
  adapter: ClaudeCode.adapter,
  shell: (command, cwd) => JSON.stringify({ ...bash, cwd, tool_input: { ...bash.tool_input, command } }),
  write: (file, cwd) => JSON.stringify({ ...edit, cwd, tool_input: { ...edit.tool_input, file_path: file } }),
  judge: (event: HostEvent.HostEvent, state) => (event._tag === "ToolCallRequested" ? Guard.decide(event.call, GuardKit.context(event.session.cwd, state)) : { _tag: "Allow" }),
  isDenial: (reply) => reply.exitCode === 0 && JSON.parse(reply.stdout).hookSpecificOutput?.permissionDecision === "deny"
})
