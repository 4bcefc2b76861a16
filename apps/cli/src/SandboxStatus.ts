/**
 * The warnings `ratchet status` gives when a host session in this project would run without the
 * host's own sandbox keeping the agent out of Ratchet's store, the approval key and `.ratchet/`
 * (ADR 0017): for each host whose Ratchet hooks are installed (in the project's settings or the
 * user's), the settings files that host would read are read and checked by the host's adapter.
 *
 * What can be known is what the settings say: a session started with a flag that overrides them
 * (`codex --sandbox danger-full-access`, `claude --settings …`) or a host whose sandbox cannot
 * start on this machine is not seen here, and no hook payload of either host says whether its
 * session is sandboxed (ADR 0017).
 *
 * Loaded with a dynamic `import()` by `ratchet status` alone, and the TOML reader only when Codex
 * hooks are installed; the files are read together, and a file that cannot be read or parsed is
 * itself a warning, never a failure of `status`.
 *
 * @since 0.1.0
 */
import * as ClaudeSandbox from "@ratchet/host-claude-code/Sandbox"
import * as CodexSettings from "@ratchet/host-codex/Settings"
import type * as HostSandbox from "@ratchet/host/HostSandbox"
import * as Effect from "effect/Effect"
import * as HostFiles from "./HostFiles.js"

interface Read {
  readonly file: string
  readonly text: string | undefined
  readonly error: string | undefined
}

const read = (file: string): Promise<Read> =>
  HostFiles.readText(file).then(
    (text) => ({ file, text, error: undefined }),
    (error: unknown) => ({ file, text: undefined, error: error instanceof Error ? error.message : String(error) })
  )

const parsed = (read: Read): { readonly settings: unknown; readonly error: string | undefined } => {
  if (read.error !== undefined || read.text === undefined || read.text.trim() === "") return { settings: undefined, error: read.error }
  try {
    return { settings: JSON.parse(read.text) as unknown, error: undefined }
  } catch (error) {
    return { settings: undefined, error: `it is not valid JSON (${error instanceof Error ? error.message.slice(0, 120) : "unreadable"})` }
  }
}

/**
 * The warnings for the project at `root`.
 *
 * @since 0.1.0
 * @category getters
 */
export const warnings = (root: string): Effect.Effect<ReadonlyArray<HostSandbox.Warning>> =>
  Effect.promise(async () => {
    const claude = HostFiles.files["claude-code"]
    const codex = HostFiles.files.codex
    const [local, project, user, codexHooks, codexUserHooks, codexConfig, codexUserConfig] = await Promise.all([
      read(claude.local(root)),
      read(claude.settings.project(root)),
      read(claude.settings.user()),
      read(codex.hooks.project(root)),
      read(codex.hooks.user()),
      read(codex.config.project(root)),
      read(codex.config.user())
    ])
    const targets = HostFiles.targets(root)
    const layers: ReadonlyArray<ClaudeSandbox.Layer> = ([["local", local], ["project", project], ["user", user]] as const).map(([scope, file]) => ({
      scope,
      file: file.file,
      ...parsed(file)
    }))
    const hooksInstalled = [codexHooks, codexUserHooks].some((file) => CodexSettings.countOurs(parsed(file).settings) > 0)
    const claudeWarnings = ClaudeSandbox.check(layers, targets, HostFiles.claudeSessionTemp())
    if (!hooksInstalled) return claudeWarnings
    const CodexSandbox = await import("@ratchet/host-codex/Sandbox")
    return [
      ...claudeWarnings,
      ...CodexSandbox.check(
        [
          { scope: "project", file: codexConfig.file, text: codexConfig.text, error: codexConfig.error },
          { scope: "user", file: codexUserConfig.file, text: codexUserConfig.text, error: codexUserConfig.error }
        ],
        hooksInstalled,
        targets,
        HostFiles.codexTemporary()
      )
    ]
  })
