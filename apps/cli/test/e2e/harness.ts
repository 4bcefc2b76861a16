/**
 * The end-to-end harness: a temporary git repository and `RATCHET_HOME` per test (a "world"), the
 * bundled `ratchet` run in it as a child process, and the store engine it runs against (SQLite in
 * the world's home, or PostgreSQL in a schema of its own).
 *
 * Approvals need an interactive terminal; {@link World.tty} runs the CLI under `script`, which
 * gives it a pseudo-terminal, and types the input there, as a person would. Every person-only act
 * is also signed with the person's approval key: each world's `ratchet init` is followed by
 * `ratchet approver init`, which makes a key sealed under {@link passphrase} and registers it as
 * the project's first approver, and the tests type that passphrase where a person would. (The key
 * uses the lowest scrypt cost the key file accepts, to keep a hundred approvals quick.)
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { testSchemaName, testUrl } from "@ratchet/testkit/Postgres"
import Database from "better-sqlite3"
import pg from "pg"
import { it } from "vitest"
import { helpers, helpersDir } from "./build.js"

/** The CLI package (`apps/cli`). */
export const cliRoot = fileURLToPath(new URL("../..", import.meta.url))

/** The `ratchet` bin: it loads the bundle the global setup built. */
export const bin = path.join(cliRoot, "bin", "ratchet.mjs")

/** How long one CLI call may take before the test fails: generous, the machine is shared. */
const callTimeoutMs = 60_000

/**
 * The result of one CLI call. `json` is the one JSON document on stdout (with `--json`), or
 * `null` when stdout is not one.
 */
export interface Result {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document, read by the tests field by field
  readonly json: any
}

/** The JSON document on stdout: the whole of it, or (under a terminal) the last line that is one. */
/**
 * The JSON document on stdout. A plain run must print exactly one document with `--json` (or none
 * without it), so anything else parses as `null` and fails the test that reads it. Through a
 * pseudo-terminal (`lenient`) the prompt shares the stream, so the last JSON line is taken.
 */
const jsonOf = (stdout: string, lenient: boolean): unknown => {
  try {
    return JSON.parse(stdout)
  } catch {
    if (!lenient) return null
    const lines = stdout.split(/\r?\n/).filter((line) => line.startsWith("{"))
    const last = lines[lines.length - 1]
    if (last === undefined) return null
    try {
      return JSON.parse(last)
    } catch {
      return null
    }
  }
}

/**
 * Collects what `child` prints until it ends, killing it past the call timeout. `onStdout` sees
 * standard output so far after each chunk (a terminal's prompts); never rejects on a non-zero exit.
 */
const collect = (
  child: ChildProcessWithoutNullStreams,
  described: string,
  lenient: boolean,
  onStdout: (soFar: () => string) => void = () => {},
  timeoutMs: number = callTimeoutMs
): Promise<Result> =>
  new Promise((resolve, reject) => {
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`timed out after ${timeoutMs} ms: ${described}`))
    }, timeoutMs)
    child.stdout.on("data", (chunk: Buffer) => {
      out.push(chunk)
      onStdout(() => Buffer.concat(out).toString("utf8"))
    })
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      const stdout = Buffer.concat(out).toString("utf8")
      resolve({ code: code ?? (signal === null ? -1 : 128), stdout, stderr: Buffer.concat(err).toString("utf8"), json: jsonOf(stdout, lenient) })
    })
    child.stdin.on("error", () => {
      // A child that exits without reading all its input: its exit code says what happened.
    })
  })

/** Runs `file args` and collects its output; never rejects on a non-zero exit. */
export const exec = (
  file: string,
  args: ReadonlyArray<string>,
  options: {
    readonly cwd: string
    readonly env: NodeJS.ProcessEnv
    readonly input?: string | undefined
    readonly lenient?: boolean
    /** How long the call may take before it is killed (a minute unless said; an install takes longer). */
    readonly timeoutMs?: number
  }
): Promise<Result> => {
  const child = spawn(file, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] })
  const result = collect(child, [file, ...args].join(" "), options.lenient === true, undefined, options.timeoutMs)
  child.stdin.end(options.input ?? "")
  return result
}

/**
 * Runs `command` (a shell command line) under `script`, which gives it a pseudo-terminal, and
 * types `input` there one line per prompt, as a person would: a line goes in only once the
 * terminal's output ends in a prompt (`…: `), and input ends (`script` then sends the terminal's
 * end-of-file) only at a prompt no line is left for.
 *
 * Typing everything at once and closing at once is not the same: `script` sends its end-of-file as
 * soon as it has passed the input on, and if the program has not yet put the terminal in raw mode
 * (a slow start on a loaded machine) the end-of-file is taken by the line discipline and lost when
 * the mode changes, and a prompt that never sees it waits for ever.
 */
export const execTty = (
  command: string,
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv; readonly input: string }
): Promise<Result> => {
  const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] })
  const lines = options.input.split("\n")
  // "a\nb\n" is two lines, not two and an empty third.
  if (lines.at(-1) === "") lines.pop()
  let seen = 0
  let ended = false
  return collect(child, `under a terminal: ${command}`, true, (soFar) => {
    const text = soFar()
    if (text.length === seen || !/: $/.test(text)) return
    seen = text.length
    const line = lines.shift()
    if (line !== undefined) child.stdin.write(`${line}\n`)
    else if (!ended) {
      ended = true
      child.stdin.end()
    }
  })
}

/**
 * `f` over `items`, at most `limit` at a time, results in order. Concurrent CLI calls each open the
 * store (SQLite takes its write lock to check the migrations), so a table of refusals is run a few
 * at a time rather than all at once.
 */
export const mapLimit = async <A, B>(items: ReadonlyArray<A>, limit: number, f: (item: A) => Promise<B>): Promise<Array<B>> => {
  const results: Array<B> = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await f(items[index] as A)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}

/**
 * The passphrase of every world's approval key, typed by the tests as a person types theirs. It is
 * a test fixture, never a secret: a real key's passphrase is the person's own.
 */
export const passphrase = "e2e passphrase, typed by the tests"

/** The approver id every world registers (`ratchet approver init --id`). */
export const approverId = "e2e-approver"

/** A word for `sh -c`: single-quoted. */
const shellWord = (word: string): string => `'${word.replace(/'/g, "'\\''")}'`

// ---------------------------------------------------------------------------------------------
// Engines
// ---------------------------------------------------------------------------------------------

/**
 * A store engine the scenarios run against.
 */
export interface Engine {
  readonly name: "sqlite" | "postgres"
  /** The variables that select this engine for a world whose home is `home`. */
  readonly storeEnv: (home: string) => Promise<Record<string, string>>
  /** Raises the store's recorded schema version past this build's (as a newer Ratchet would). */
  readonly raiseSchemaVersion: (world: World) => Promise<void>
  /** Everything the store holds, as one digest: equal before and after means nothing was written. */
  readonly fingerprint: (world: World) => Promise<string>
  /** Takes blob `ref` out of the store (as a lost file or row would); the result puts it back. */
  readonly removeBlob: (world: World, ref: string) => Promise<() => Promise<void>>
  /**
   * Whether no other process holds the store in the middle of a transaction (a writer could start
   * one now): a process stopped (SIGSTOP) inside one would hold every writer out until it goes on.
   */
  readonly quiet: (world: World) => Promise<boolean>
  /** Drops what the engine created for the worlds of this file. */
  readonly cleanup: () => Promise<void>
}

const sha256 = (bytes: Buffer | string): string => createHash("sha256").update(bytes).digest("hex")

/** SQLite: the store is `$RATCHET_HOME/ratchet.db`. */
export const sqlite: Engine = {
  name: "sqlite",
  storeEnv: (home) => Promise.resolve({ RATCHET_HOME: home }),
  raiseSchemaVersion: (world) => {
    const db = new Database(path.join(world.home, "ratchet.db"))
    try {
      // packages/storage/src/SqlStore.ts records the schema version in ratchet_schema (id 1).
      const changed = db.prepare("UPDATE ratchet_schema SET version = version + 1 WHERE id = 1").run().changes
      if (changed !== 1) throw new Error("no recorded schema version to raise")
    } finally {
      db.close()
    }
    return Promise.resolve()
  },
  fingerprint: (world) => {
    const file = path.join(world.home, "ratchet.db")
    const db = new Database(file, { readonly: true })
    let rows: string
    try {
      rows = JSON.stringify([
        db.prepare("SELECT version FROM ratchet_schema").all(),
        db.prepare("SELECT lsn, stream_id, type FROM ratchet_events ORDER BY lsn").all()
      ])
    } finally {
      db.close()
    }
    return Promise.resolve(`${sha256(fs.readFileSync(file))}:${sha256(rows)}`)
  },
  removeBlob: (world, ref) => {
    // packages/storage/src/FileBlobStore.ts: blobs/<first two hex digits>/<the rest>
    const hex = ref.slice("sha256:".length)
    const file = path.join(world.home, "blobs", hex.slice(0, 2), hex.slice(2))
    const bytes = fs.readFileSync(file)
    fs.rmSync(file)
    return Promise.resolve(() => Promise.resolve(fs.writeFileSync(file, bytes)))
  },
  quiet: (world) => {
    // A write transaction of our own that cannot wait: SQLITE_BUSY means another holds the lock.
    const db = new Database(path.join(world.home, "ratchet.db"), { timeout: 0 })
    try {
      db.exec("BEGIN IMMEDIATE")
      db.exec("ROLLBACK")
      return Promise.resolve(true)
    } catch (error) {
      if ((error as { code?: unknown }).code === "SQLITE_BUSY") return Promise.resolve(false)
      throw error
    } finally {
      db.close()
    }
  },
  cleanup: () => Promise.resolve()
}

/** PostgreSQL: the test server, one fresh schema per world, dropped by {@link Engine.cleanup}. */
export const postgres = (): Engine => {
  const url = testUrl()
  const schemas: Array<string> = []
  const withClient = async <A>(f: (client: pg.Client) => Promise<A>): Promise<A> => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return await f(client)
    } finally {
      await client.end()
    }
  }
  return {
    name: "postgres",
    storeEnv: (home) => {
      const schema = testSchemaName("ratchet_e2e")
      schemas.push(schema)
      return Promise.resolve({ RATCHET_HOME: home, RATCHET_DATABASE_URL: url, RATCHET_DATABASE_SCHEMA: schema })
    },
    raiseSchemaVersion: (world) =>
      withClient(async (client) => {
        const schema = world.env["RATCHET_DATABASE_SCHEMA"] ?? ""
        const result = await client.query(`UPDATE "${schema}".ratchet_schema SET version = version + 1 WHERE id = 1`)
        if (result.rowCount !== 1) throw new Error("no recorded schema version to raise")
      }),
    removeBlob: (world, ref) =>
      withClient(async (client) => {
        // packages/storage/src/SqlBlobStore.ts: ratchet_blobs (digest, size, bytes), keyed by the ref
        const schema = world.env["RATCHET_DATABASE_SCHEMA"] ?? ""
        const removed = await client.query<{ size: string; bytes: Buffer }>(`DELETE FROM "${schema}".ratchet_blobs WHERE digest = $1 RETURNING size, bytes`, [ref])
        const row = removed.rows[0]
        if (row === undefined) throw new Error(`no blob ${ref} to remove`)
        return () =>
          withClient(async (again) => {
            await again.query(`INSERT INTO "${schema}".ratchet_blobs (digest, size, bytes) VALUES ($1, $2, $3)`, [ref, row.size, row.bytes])
          })
      }),
    fingerprint: (world) =>
      withClient(async (client) => {
        const schema = world.env["RATCHET_DATABASE_SCHEMA"] ?? ""
        const tables = await client.query<{ table_name: string }>(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
          [schema]
        )
        const parts: Array<unknown> = [tables.rows.map((row) => row.table_name)]
        for (const { table_name } of tables.rows) {
          const rows = await client.query(`SELECT * FROM "${schema}"."${table_name}"`)
          parts.push(rows.rows.map((row) => JSON.stringify(row)).sort())
        }
        return sha256(JSON.stringify(parts))
      }),
    quiet: (world) =>
      withClient(async (client) => {
        // Locks on the world's tables are held only inside a transaction (a statement's own ends
        // with it): another backend holding one is in a transaction now.
        const held = await client.query<{ count: string }>(
          `SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = $1 AND l.pid <> pg_backend_pid()`,
          [world.env["RATCHET_DATABASE_SCHEMA"] ?? ""]
        )
        return Number(held.rows[0]?.count ?? "0") === 0
      }),
    cleanup: async () => {
      const dropping = schemas.splice(0)
      if (dropping.length === 0) return
      if (process.env["RATCHET_E2E_KEEP_WORLDS"] === "1") {
        process.stderr.write(`kept ${dropping.length} PostgreSQL schemas (RATCHET_E2E_KEEP_WORLDS=1; drop them with DROP SCHEMA … CASCADE):\n${dropping.map((schema) => `  ${schema}\n`).join("")}`)
        return
      }
      await withClient(async (client) => {
        for (const schema of dropping) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      })
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Worlds
// ---------------------------------------------------------------------------------------------

/** A temporary repository and home, with the CLI to run in them. */
export interface World {
  readonly engine: Engine
  /** The temporary directory holding everything below. */
  readonly root: string
  /** The git repository (`ratchet init` was run in it unless asked otherwise). */
  readonly repo: string
  /** `RATCHET_HOME`. */
  readonly home: string
  /** The environment every call runs with. */
  readonly env: NodeJS.ProcessEnv
  /** Runs `ratchet args` in the repository (or `cwd`), stdin from `input` (not a terminal). */
  readonly run: (
    args: ReadonlyArray<string>,
    options?: {
      readonly cwd?: string
      readonly input?: string
      readonly env?: Record<string, string>
      /** How long the call may take (a minute unless said; a loop of many rounds takes longer). */
      readonly timeoutMs?: number
    }
  ) => Promise<Result>
  /** {@link run}, failing the test unless it exits 0. */
  readonly ok: (args: ReadonlyArray<string>, options?: { readonly env?: Record<string, string> }) => Promise<Result>
  /** Runs `ratchet args` on a pseudo-terminal (through `script`), typing `input`. */
  readonly tty: (args: ReadonlyArray<string>, input: string, extraEnv?: Record<string, string>) => Promise<Result>
  /**
   * `ratchet verify <task> …args` on a pseudo-terminal as the world's approver: types the key's
   * passphrase (the pass is signed), then `input` (a manual criterion's answers).
   */
  readonly verify: (taskId: string, args?: ReadonlyArray<string>, input?: string, extraEnv?: Record<string, string>) => Promise<Result>
  /** Writes a file outside the repository (specs, plans) and returns its path. */
  readonly file: (name: string, content: string | Uint8Array) => string
}

const roots: Array<string> = []

/**
 * Removes every world's directory made by this file; with `RATCHET_E2E_KEEP_WORLDS=1` keeps them and
 * names them on standard error, for a failure to be read in its store, repository and logs.
 */
export const removeWorlds = (): void => {
  const made = roots.splice(0)
  if (process.env["RATCHET_E2E_KEEP_WORLDS"] === "1") {
    if (made.length > 0) process.stderr.write(`kept ${made.length} worlds (RATCHET_E2E_KEEP_WORLDS=1):\n${made.map((root) => `  ${root}\n`).join("")}`)
    return
  }
  for (const root of made) fs.rmSync(root, { recursive: true, force: true })
}

/**
 * The environment of the test process, without what would point a child elsewhere (a test run
 * inside an agent host must not hand its project directory to the hooks under test).
 */
const baseEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    // OTEL_* and a trace context would make the CLI export traces (or warn) where a test does not expect it.
    if (
      key.startsWith("RATCHET_") || key.startsWith("GIT_") || key.startsWith("OTEL_") ||
      ["NO_COLOR", "FORCE_COLOR", "CLAUDE_PROJECT_DIR", "TRACEPARENT", "TRACESTATE"].includes(key)
    ) continue
    env[key] = value
  }
  return { ...env, NO_COLOR: "1", SHELL: "/bin/sh" }
}

const git = async (cwd: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) => {
  const result = await exec("git", args, { cwd, env })
  if (result.code !== 0) throw new Error(`git ${args.join(" ")} failed (${result.code}): ${result.stderr}`)
}

/**
 * A world: a git repository with one commit (a README and `test/date.test.js`, so `test/**` is a
 * valid scope), a home, the engine's store, and `ratchet init` run in it unless `init` is false.
 */
export const makeWorld = async (
  engine: Engine,
  options: {
    readonly init?: boolean
    /** Make the approval key and register it as the project's first approver (default: with `init`). */
    readonly approver?: boolean
  } = {}
): Promise<World> => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `ratchet-e2e-${engine.name}-`)))
  roots.push(root)
  const repo = path.join(root, "repo")
  const home = path.join(root, "home")
  const files = path.join(root, "files")
  for (const dir of [repo, files, path.join(repo, "test")]) fs.mkdirSync(dir, { recursive: true })
  const env: NodeJS.ProcessEnv = { ...baseEnv(), ...(await engine.storeEnv(home)) }
  fs.writeFileSync(path.join(repo, "README.md"), "# A repository for the end-to-end tests\n")
  fs.writeFileSync(path.join(repo, "test", "date.test.js"), "// a flaky date test\n")
  await git(repo, ["init", "-q"], env)
  await git(repo, ["config", "user.name", "Ratchet E2E"], env)
  await git(repo, ["config", "user.email", "e2e@ratchet.invalid"], env)
  await git(repo, ["config", "commit.gpgsign", "false"], env)
  await git(repo, ["add", "."], env)
  await git(repo, ["commit", "-q", "-m", "initial commit"], env)

  const run: World["run"] = (args, runOptions = {}) =>
    exec(process.execPath, [bin, ...args], {
      cwd: runOptions.cwd ?? repo,
      env: { ...env, ...runOptions.env },
      input: runOptions.input,
      ...(runOptions.timeoutMs === undefined ? {} : { timeoutMs: runOptions.timeoutMs })
    })
  const ok: World["ok"] = async (args, okOptions = {}) => {
    const result = await run(args, okOptions)
    if (result.code !== 0) {
      throw new Error(`ratchet ${args.join(" ")} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`)
    }
    return result
  }
  const tty: World["tty"] = (args, input, extraEnv = {}) =>
    execTty([process.execPath, bin, ...args].map(shellWord).join(" "), { cwd: repo, env: { ...env, ...extraEnv }, input })
  const file: World["file"] = (name, content) => {
    const target = path.join(files, name)
    fs.writeFileSync(target, content)
    return target
  }
  const verify: World["verify"] = (taskId, args = [], input = "", extraEnv = {}) =>
    tty(["verify", taskId, ...args, "--json"], `${passphrase}\n${input}`, extraEnv)
  const world: World = { engine, root, repo, home, env, run, ok, tty, verify, file }
  if (options.init !== false) {
    await ok(["init"])
    if (options.approver !== false) await registerApprover(world)
  }
  return world
}

// ---------------------------------------------------------------------------------------------
// Tasks
// ---------------------------------------------------------------------------------------------

/**
 * `ratchet approver init` on a terminal: the world's key (typed passphrase, twice) and its
 * registration as the project's first approver.
 */
export const registerApprover = async (world: World): Promise<Result> => {
  const made = await world.tty(["approver", "init", "--id", approverId, "--kdf-cost", "14", "--json"], `${passphrase}\n${passphrase}\n`)
  if (made.code !== 0 || made.json?.registered !== true) {
    throw new Error(`ratchet approver init exited ${made.code}\n${made.stdout}\n${made.stderr}`)
  }
  return made
}

/**
 * A second person: their own approval key (`<root>/<id>-key.json`, sealed under the same test
 * {@link passphrase}), made with `ratchet approver init`, which the project refuses to register
 * (it has an approver already), then signed in by the world's approver (`ratchet approver add`,
 * typing their passphrase). Returns the environment that makes a call use the newcomer's key.
 * `keyPassphrase` seals the newcomer's key under another passphrase than the world's.
 */
export const addApprover = async (world: World, id: string, keyPassphrase: string = passphrase): Promise<Record<string, string>> => {
  const env = { RATCHET_APPROVER_KEY: path.join(world.root, `${id}-key.json`) }
  const made = await world.tty(["approver", "init", "--id", id, "--kdf-cost", "14", "--json"], `${keyPassphrase}\n${keyPassphrase}\n`, env)
  if (made.code !== 2 || !String(made.json?.error?.message).includes(`ratchet approver add ${id} `)) {
    throw new Error(`ratchet approver init --id ${id} in a project with an approver exited ${made.code}\n${made.stdout}`)
  }
  const shown = await world.ok(["approver", "show", "--json"], { env })
  const added = await world.tty(["approver", "add", id, shown.json.key as string, "--json"], `${passphrase}\n`)
  if (added.code !== 0 || added.json?.added?.id !== id) throw new Error(`ratchet approver add ${id} exited ${added.code}\n${added.stdout}`)
  return env
}

/** `ratchet task create`, returning the new task's id. */
export const createTask = async (world: World, goal: string): Promise<string> => {
  const created = await world.ok(["task", "create", "--goal", goal, "--json"])
  return created.json.taskId as string
}

/** `ratchet status <task> --json`: the task view. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document
export const status = async (world: World, taskId: string): Promise<any> => (await world.ok(["status", taskId, "--json"])).json.task

/** One record of `ratchet log <task> --json`. */
export interface LogRecord {
  readonly lsn: number
  readonly at: string
  readonly type: string
  readonly actor: { readonly kind: string; readonly id: string }
  readonly epoch: number | null
  /** The append it was written by: events of one transaction share it. */
  readonly operationId: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the event, read field by field
  readonly event: any
}

/** `ratchet log <task> --json`, one record per NDJSON line. */
export const events = async (world: World, taskId: string): Promise<ReadonlyArray<LogRecord>> => {
  const result = await world.ok(["log", taskId, "--json"])
  return result.stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as LogRecord)
}

/** The first 8 hex characters after `sha256:`, as a person types them. */
export const confirmationOf = (digest: string): string => {
  const match = /^sha256:([0-9a-f]{64})$/.exec(digest)
  if (match === null) throw new Error(`not a digest: ${digest}`)
  return (match[1] as string).slice(0, 8)
}

/** Eight hex characters that are certainly not `confirmation`: each digit moved by one. */
export const wrongConfirmation = (confirmation: string): string =>
  [...confirmation].map((c) => ((parseInt(c, 16) + 1) % 16).toString(16)).join("")

/** Which digest of `status` an approval (or a reopen out of FAILED) confirms. */
const digestFor = { restatement: "restatement", spec: "spec", plan: "plan" } as const

/**
 * `ratchet approve <task> <subject>` on a terminal, typing the first 8 hex characters of the
 * digest `status --json` shows (or `typed`), then the approval key's passphrase (or `secret`).
 */
export const approve = async (
  world: World,
  taskId: string,
  subject: "restatement" | "spec" | "plan",
  typed?: string,
  secret: string = passphrase
): Promise<Result> => {
  const view = await status(world, taskId)
  const digest = view.digests[digestFor[subject]] as string | null
  if (digest === null) throw new Error(`task ${taskId} has no ${subject} digest to approve`)
  return world.tty(["approve", taskId, subject, "--json"], `${typed ?? confirmationOf(digest)}\n${secret}\n`)
}

/** {@link approve}, failing the test unless it exits 0. */
export const approveOk = async (world: World, taskId: string, subject: "restatement" | "spec" | "plan"): Promise<Result> => {
  const result = await approve(world, taskId, subject)
  if (result.code !== 0) throw new Error(`approve ${taskId} ${subject} exited ${result.code}\n${result.stdout}\n${result.stderr}`)
  return result
}

/** What {@link personalAct} saw: the refused first call, the digest it showed, and the act. */
export interface PersonalAct {
  /** The first call, answered with an empty line: refused, nothing written. */
  readonly shown: Result
  /** The digest the prompt showed. */
  readonly digest: string
  /** The second call, typing the digest's first 8 hex characters and the passphrase. */
  readonly result: Result
}

/**
 * A person-only act whose digest the test does not compute (a rewind, an unblock of a scope
 * violation or of a decision a run asked for), done as a person does it: `ratchet args` on a
 * terminal, answering the confirmation with an empty line, which shows what is decided and its
 * digest and refuses it (exit 2, `confirmation`), leaving the store exactly as it was (checked
 * here); then again, typing the first 8 hex characters of the digest shown and the approval key's
 * passphrase. Fails the test when the first call does not refuse that way.
 */
export const personalAct = async (world: World, args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}): Promise<PersonalAct> => {
  const before = await world.engine.fingerprint(world)
  const shown = await world.tty([...args, "--json"], "\n", extraEnv)
  const digest = /\ndigest (sha256:[0-9a-f]{64})\r?\n/.exec(shown.stdout)?.[1]
  if (shown.code !== 2 || shown.json?.error?.field !== "confirmation" || digest === undefined) {
    throw new Error(`ratchet ${args.join(" ")} answered with an empty line did not show a digest and refuse (exit ${shown.code})\n${shown.stdout}`)
  }
  if ((await world.engine.fingerprint(world)) !== before) throw new Error(`ratchet ${args.join(" ")} refused at its prompt, yet the store changed`)
  const result = await world.tty([...args, "--json"], `${confirmationOf(digest)}\n${passphrase}\n`, extraEnv)
  return { shown, digest, result }
}

// ---------------------------------------------------------------------------------------------
// Contract files
// ---------------------------------------------------------------------------------------------

/** The parts of a spec file the scenarios vary. */
export interface SpecParts {
  readonly goal?: string
  readonly constraints?: ReadonlyArray<string>
  readonly relevantPaths?: ReadonlyArray<string>
  readonly allowedScope?: ReadonlyArray<string>
  readonly body?: string
}

/** A spec file's text: YAML front matter (the contract) and a Markdown body (editorial). */
export const specText = (parts: SpecParts = {}): string => {
  const list = (items: ReadonlyArray<string>, indent: string) => items.map((item) => `${indent}- ${JSON.stringify(item)}`).join("\n")
  return [
    "---",
    `goal: ${JSON.stringify(parts.goal ?? "Make the flaky date test deterministic")}`,
    "nonGoals:",
    list(["Rewrite the date library"], "  "),
    "constraints:",
    list(parts.constraints ?? ["No new runtime dependencies"], "  "),
    "context:",
    "  relevantPaths:",
    list(parts.relevantPaths ?? ["test/date.test.js"], "    "),
    "acceptanceCriteria:",
    "  - id: AC-001",
    "    outcome: The date test passes in every timezone",
    "    required: true",
    "    verify:",
    "      command: node --version",
    "execution:",
    "  allowedScope:",
    list(parts.allowedScope ?? ["test/**"], "    "),
    "---",
    parts.body ?? "# The date test\n\nIt fails at midnight UTC; freeze the clock.\n"
  ].join("\n")
}

/** A plan file covering AC-001 with one step. */
export const planText = (title = "Freeze the clock in the date test"): string =>
  [
    "steps:",
    "  - id: freeze-clock",
    `    title: ${JSON.stringify(title)}`,
    "    acRefs: [AC-001]",
    "    run:",
    "      command: node --version",
    ""
  ].join("\n")

/** Brief: restate, approve the restatement on a terminal, close. The task stays INTERVIEWING. */
export const closeBrief = async (world: World, taskId: string): Promise<void> => {
  await world.ok(["brief", taskId, "restate", "Freeze the clock in the date test so it passes in any timezone."])
  await approveOk(world, taskId, "restatement")
  await world.ok(["brief", taskId, "close"])
}

/** A new task driven to SPEC_READY with `spec` (default {@link specText}). */
export const toSpecReady = async (world: World, goal: string, spec: string = specText()): Promise<string> => {
  const taskId = await createTask(world, goal)
  await closeBrief(world, taskId)
  await world.ok(["spec", taskId, "--file", world.file(`${taskId}-spec.md`, spec)])
  return taskId
}

/** A new task driven to PLAN_APPROVED: brief, spec (approved), preflight, plan (approved). */
export const toPlanApproved = async (world: World, goal: string, spec: string = specText(), plan: string = planText()): Promise<string> => {
  const taskId = await toSpecReady(world, goal, spec)
  await approveOk(world, taskId, "spec")
  await world.ok(["preflight", taskId])
  await world.ok(["plan", taskId, "--file", world.file(`${taskId}-plan.yaml`, plan)])
  await approveOk(world, taskId, "plan")
  return taskId
}

/**
 * Drives a PLAN_APPROVED task to FAILED through the store, as a runner would (see fail-run.ts):
 * lease + run start, fail, release.
 */
export const failThroughStore = async (world: World, taskId: string): Promise<Result> => {
  const result = await exec(process.execPath, [helper("fail-run"), world.repo, taskId], {
    cwd: cliRoot,
    env: world.env
  })
  if (result.code !== 0) throw new Error(`fail-run exited ${result.code}\n${result.stdout}\n${result.stderr}`)
  return result
}

/** What check-log.ts finds in a task's log: it decodes, folds, keeps its machines and equals its read models. */
export const checkLog = async (world: World, taskId: string): Promise<{ readonly ok: boolean; readonly state: string; readonly events: number; readonly problems: ReadonlyArray<string> }> => {
  const result = await exec(process.execPath, [helper("check-log"), taskId], { cwd: cliRoot, env: world.env })
  if (result.code !== 0) throw new Error(`check-log exited ${result.code}\n${result.stdout}\n${result.stderr}`)
  return result.json
}

/**
 * Whether a scenario's engine-independent test runs on `engine` (ADR 0046): on SQLite, and on
 * PostgreSQL too when `RATCHET_E2E_EVERY_ENGINE=1` (for a change under the store's interface that a
 * kept twin's store-specific tests may not reach).
 */
export const onThisEngine = (engine: Engine): boolean => engine.name === "sqlite" || process.env["RATCHET_E2E_EVERY_ENGINE"] === "1"

/**
 * `it` for a scenario's test that does not depend on the store's engine (ADR 0046): it runs where
 * {@link onThisEngine} says, so a PostgreSQL twin keeps only what is about the store, and the
 * storage conformance suite proves the engines alike under the rest.
 */
export const engineIndependent = (engine: Engine): ReturnType<typeof it.runIf> => it.runIf(onThisEngine(engine))

/**
 * The bundle of one of the tests' helper programs (`check-log.ts`, `fail-run.ts`, `forge.ts`,
 * `lesson-store.ts`), which the global setup (`build.ts`) builds: run it with node.
 */
export const helper = (name: (typeof helpers)[number]): string => path.join(helpersDir, `${name}.mjs`)

/**
 * Whether process `pid` is gone, or a zombie nobody reaped (a killed child whose parent has exited
 * waits for an init that may never reap it).
 */
export const gone = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }
  try {
    return /^\d+ \(.*\) [ZX] /.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return true
  }
}
