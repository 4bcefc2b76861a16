/**
 * The guard's bypass table of @ratchet/testkit, replayed through Codex's payloads (its Bash and
 * apply_patch tool calls, from the fixtures): every wrapper and padding form is denied in Codex's
 * own answer (`permissionDecision: "deny"`), and ordinary commands stay allowed.
 */
import * as Guard from "@ratchet/host/Guard"
import type * as HostEvent from "@ratchet/host/HostEvent"
import { GuardKit } from "@ratchet/testkit/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Codex from "../src/Codex.js"

const fixture = (file: string) => JSON.parse(fs.readFileSync(path.join(import.meta.dirname, "fixtures", file), "utf8")) as { readonly tool_input: object }

const bash = fixture("PreToolUse.bash-npm-test.json")
const patch = fixture("PreToolUse.apply_patch.json")

GuardKit.suite("codex adapter: the guard's bypass table", {
  adapter: Codex.adapter,
  shell: (command, cwd) => JSON.stringify({ ...bash, cwd, tool_input: { ...bash.tool_input, command } }),
  write: (file, cwd) => JSON.stringify({ ...patch, cwd, tool_input: { command: `*** Begin Patch\n*** Update File: ${file}\n@@\n-a\n+b\n*** End Patch\n` } }),
  judge: (event: HostEvent.HostEvent, state) => (event._tag === "ToolCallRequested" ? Guard.decide(event.call, GuardKit.context(event.session.cwd, state)) : { _tag: "Allow" }),
  isDenial: (reply) => reply.exitCode === 0 && JSON.parse(reply.stdout).hookSpecificOutput?.permissionDecision === "deny"
})
