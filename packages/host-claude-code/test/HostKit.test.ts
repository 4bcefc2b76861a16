/** The host adapter test kit of @ratchet/testkit, run against this adapter and its fixtures. */
import { HostKit } from "@ratchet/testkit/vitest"
import * as path from "node:path"
import * as ClaudeCode from "../src/ClaudeCode.js"

HostKit.suite("claude-code adapter: the host kit", {
  adapter: ClaudeCode.adapter,
  fixtures: path.join(import.meta.dirname, "fixtures"),
  expected: {
    "PreToolUse.Edit.json": "ToolCallRequested:Write",
    "PreToolUse.Bash.ratchet-approve.json": "ToolCallRequested:Shell",
    "PermissionRequest.Bash.json": "ToolCallRequested:Shell",
    "PostToolUse.Edit.json": "ToolCallCompleted:Write",
    "Stop.stop_hook_active-false.json": "StopRequested",
    "SessionStart.startup.json": "SessionStarted"
  },
  toolEvents: ["PreToolUse", "PermissionRequest"]
})
