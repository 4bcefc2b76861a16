/**
 * Golden lines of Claude Code's stream-json, typed by the Agent SDK's published `SDKMessage`
 * (`@anthropic-ai/claude-agent-sdk`, pinned in this package's devDependencies): a line that drifts
 * from the published type fails this project's typecheck. `StandInStream.test.ts` holds every line
 * the test kit's stand-in `claude` writes to the shape (keys and value types, recursively) of one of
 * these of the same kind, and this package's decoder to reading each of them as known.
 *
 * One line of each kind the stand-in writes: each content block, each stream event, a success and
 * an error result, a result with a denial (the stand-in's tool calls through the hooks).
 */
import type { ModelUsage, NonNullableUsage, SDKAssistantMessage, SDKMessage, SDKResultSuccess } from "@anthropic-ai/claude-agent-sdk"

type Message = SDKAssistantMessage["message"]

const session_id = "0f6c1d9e-7a51-4f0a-9d3b-2b8e4c1a7f10"
const model = "claude-sonnet-4-5-20250929"

/** A streamed assistant message's usage: the Messages API's, its optional parts null. */
const usage: Message["usage"] = {
  input_tokens: 3,
  output_tokens: 1,
  cache_creation: null,
  cache_creation_input_tokens: null,
  cache_read_input_tokens: null,
  fallback_credit: null,
  inference_geo: null,
  iterations: null,
  output_tokens_details: null,
  server_tool_use: null,
  service_tier: "standard",
  speed: null
}

const message = (id: string, content: Message["content"]): Message => ({
  id,
  type: "message",
  role: "assistant",
  model,
  content,
  container: null,
  context_management: null,
  diagnostics: null,
  stop_details: null,
  stop_reason: null,
  stop_sequence: null,
  usage
})

/** A result's usage: non-null throughout (`NonNullableUsage`). */
const resultUsage: NonNullableUsage = {
  input_tokens: 1200,
  output_tokens: 340,
  cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 5000 },
  cache_creation_input_tokens: 5000,
  cache_read_input_tokens: 9000,
  fallback_credit: null,
  inference_geo: "",
  iterations: [],
  output_tokens_details: { thinking_tokens: 0 },
  server_tool_use: { web_fetch_requests: 0, web_search_requests: 0 },
  service_tier: "standard",
  speed: "standard"
}

const modelUsage: Record<string, ModelUsage> = {
  [model]: {
    inputTokens: 1200,
    outputTokens: 340,
    cacheReadInputTokens: 9000,
    cacheCreationInputTokens: 5000,
    webSearchRequests: 0,
    costUSD: 0.0421,
    contextWindow: 200000,
    maxOutputTokens: 64000
  }
}

const resultSuccess: SDKResultSuccess = {
  type: "result",
  subtype: "success",
  is_error: false,
  duration_ms: 5321,
  duration_api_ms: 4870,
  num_turns: 3,
  result: "Added the --json flag in src/flag.txt; the tests pass.",
  stop_reason: "end_turn",
  session_id,
  total_cost_usd: 0.0421,
  usage: resultUsage,
  modelUsage,
  permission_denials: [],
  uuid: "6d1f7a0e-3c1b-4b8e-9f41-0c2d5e7a9b30"
}

export const lines: ReadonlyArray<SDKMessage> = [
  {
    type: "system",
    subtype: "init",
    session_id,
    uuid: "1b2c3d4e-0000-4000-8000-000000000000",
    model,
    cwd: "/home/dev/project",
    tools: ["Bash", "Edit", "Read", "Write"],
    mcp_servers: [],
    permissionMode: "acceptEdits",
    apiKeySource: "none",
    claude_code_version: "2.1.0",
    slash_commands: [],
    output_style: "default",
    skills: [],
    plugins: []
  },
  {
    type: "stream_event",
    event: { type: "message_start", message: message("msg_1", []) },
    parent_tool_use_id: null,
    session_id,
    uuid: "1b2c3d4e-0000-4000-8000-000000000001"
  },
  {
    type: "stream_event",
    event: { type: "content_block_start", index: 0, content_block: { type: "text", text: "", citations: null } },
    parent_tool_use_id: null,
    session_id,
    uuid: "1b2c3d4e-0000-4000-8000-000000000002"
  },
  {
    type: "stream_event",
    event: { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_2", name: "Bash", input: {} } },
    parent_tool_use_id: null,
    session_id,
    uuid: "1b2c3d4e-0000-4000-8000-000000000003"
  },
  {
    type: "stream_event",
    event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "I will add the flag." } },
    parent_tool_use_id: null,
    session_id,
    uuid: "1b2c3d4e-0000-4000-8000-000000000004"
  },
  {
    type: "stream_event",
    event: { type: "content_block_stop", index: 0 },
    parent_tool_use_id: null,
    session_id,
    uuid: "1b2c3d4e-0000-4000-8000-000000000005"
  },
  {
    type: "stream_event",
    event: {
      type: "message_delta",
      delta: { container: null, stop_details: null, stop_reason: "end_turn", stop_sequence: null },
      usage: {
        input_tokens: null,
        output_tokens: 2,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: null,
        fallback_credit: null,
        iterations: null,
        output_tokens_details: null,
        server_tool_use: null
      },
      context_management: null
    },
    parent_tool_use_id: null,
    session_id,
    uuid: "1b2c3d4e-0000-4000-8000-000000000006"
  },
  {
    type: "stream_event",
    event: { type: "message_stop" },
    parent_tool_use_id: null,
    session_id,
    uuid: "1b2c3d4e-0000-4000-8000-000000000007"
  },
  {
    type: "assistant",
    message: message("msg_1", [{ type: "text", text: "I will add the flag.", citations: null }]),
    parent_tool_use_id: null,
    session_id,
    uuid: "1b2c3d4e-0000-4000-8000-000000000008"
  },
  {
    type: "assistant",
    message: message("msg_1", [{ type: "tool_use", id: "toolu_1", name: "Write", input: { file_path: "/home/dev/project/src/flag.txt", content: "--json\n" } }]),
    parent_tool_use_id: null,
    session_id,
    uuid: "1b2c3d4e-0000-4000-8000-000000000009"
  },
  {
    type: "assistant",
    message: message("msg_2", [{ type: "tool_use", id: "toolu_2", name: "Bash", input: { command: "npm test", description: "Run the tests" } }]),
    parent_tool_use_id: null,
    session_id,
    uuid: "1b2c3d4e-0000-4000-8000-000000000010"
  },
  {
    type: "user",
    message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "File created successfully at: /home/dev/project/src/flag.txt", is_error: false }] },
    parent_tool_use_id: null,
    session_id,
    uuid: "1b2c3d4e-0000-4000-8000-000000000011"
  },
  resultSuccess,
  {
    ...resultSuccess,
    permission_denials: [{ tool_name: "Write", tool_use_id: "toolu_standin_1", tool_input: { file_path: "/home/dev/project/src/flag.txt", content: "--json\n" } }]
  },
  {
    type: "result",
    subtype: "error_during_execution",
    is_error: true,
    duration_ms: 812,
    duration_api_ms: 640,
    num_turns: 1,
    stop_reason: null,
    session_id,
    total_cost_usd: 0.0031,
    usage: resultUsage,
    modelUsage,
    permission_denials: [],
    errors: ["The stand-in was asked to fail."],
    uuid: "6d1f7a0e-3c1b-4b8e-9f41-0c2d5e7a9b31"
  }
]
