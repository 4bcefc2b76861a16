/** The host adapter test kit of @ratchet/testkit, run against this adapter and its fixtures. */
import { HostKit } from "@ratchet/testkit/vitest"
import * as path from "node:path"
import * as Codex from "../src/Codex.js"

HostKit.suite("codex adapter: the host kit", {
  adapter: Codex.adapter,
  fixtures: path.join(import.meta.dirname, "fixtures"),
  expected: {
    "PreToolUse.apply_patch.json": "ToolCallRequested:Write",
    "PreToolUse.bash-ratchet-approve.json": "ToolCallRequested:Shell",
    "PermissionRequest.bash.json": "ToolCallRequested:Shell",
    "PostToolUse.apply_patch.json": "ToolCallCompleted:Write",
    "Stop.first.json": "StopRequested",
    "SessionStart.startup.json": "SessionStarted"
  },
  toolEvents: ["PreToolUse", "PermissionRequest"]
})
