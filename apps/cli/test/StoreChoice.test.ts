/**
 * Which store a command uses (ADR 0029): `--home`, then the environment, then the checkout's
 * record of the store `ratchet init` opened, then `~/.ratchet`; the record's lookup (its own, a
 * linked worktree's main checkout's, a git checkout's located without git); a PostgreSQL URL
 * recorded without its password; and the refusals that keep an empty store from being created
 * where the checkout says its store is elsewhere.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, afterEach, describe, expect, it } from "@effect/vitest"
import * as StoreMark from "@ratchet/controller/StoreMark"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Store from "../src/Store.js"
import * as StoreRecord from "../src/StoreRecord.js"

const variables = ["RATCHET_HOME", "RATCHET_DATABASE_URL", "RATCHET_DATABASE_SCHEMA", "HOME"] as const
const saved = Object.fromEntries(variables.map((name) => [name, process.env[name]]))

afterEach(() => {
  for (const name of variables) {
    if (saved[name] === undefined) delete process.env[name]
    else process.env[name] = saved[name]
  }
})

const roots: Array<string> = []
afterAll(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true })
})

/** A scratch directory: `home` (HOME), `store` (a store made by "init"), `local` (a checkout's own directory). */
const scratch = () => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-store-choice-")))
  roots.push(root)
  const dirs = { root, home: path.join(root, "home"), store: path.join(root, "store"), local: path.join(root, "repo", ".git", "ratchet") }
  for (const dir of [dirs.home, dirs.store, dirs.local]) fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dirs.store, "ratchet.db"), "a store")
  for (const name of variables) delete process.env[name]
  process.env["HOME"] = dirs.home
  return dirs
}

const sqliteRecord = (home: string): StoreRecord.StoreRecord => ({ version: 1, home, database: null, recordedAt: "2026-12-05T10:00:00.000Z" })

const chosen = (localDir: string | undefined, options: Parameters<typeof Store.choose>[1] = {}) => Effect.runSync(Effect.either(Store.choose(localDir, options)))

describe("StoreRecord", () => {
  it("redacts a PostgreSQL URL's password, wherever it is, and keeps the rest", () => {
    expect(StoreRecord.redact("postgres://ana:s3cret@db.example:5433/ratchet?sslmode=require")).toEqual({
      url: "postgres://ana@db.example:5433/ratchet?sslmode=require",
      passwordOmitted: true
    })
    expect(StoreRecord.redact("postgresql://ana@db.example/ratchet?password=s3cret&application_name=r")).toEqual({
      url: "postgresql://ana@db.example/ratchet?application_name=r",
      passwordOmitted: true
    })
    expect(StoreRecord.redact("postgres://postgres@127.0.0.1:5432/test")).toEqual({ url: "postgres://postgres@127.0.0.1:5432/test", passwordOmitted: false })
    expect(StoreRecord.redact("mysql://ana:s3cret@db/ratchet")).toBeNull()
    expect(StoreRecord.redact("postgres://[bad")).toBeNull()
  })

  it("reads a checkout's own record, a linked worktree's main checkout's, and a git checkout's located without git", () => {
    const dirs = scratch()
    const repo = path.join(dirs.root, "git-repo")
    fs.mkdirSync(repo)
    const git = (cwd: string, ...args: Array<string>) => execFileSync("git", args, { cwd, stdio: "ignore" })
    git(repo, "init", "-q")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", "start")
    const main = path.join(repo, ".git", "ratchet")
    expect(StoreRecord.read(main)).toEqual(Either.right(null))
    const file = StoreRecord.write(main, sqliteRecord(dirs.store))
    expect(file).toBe(path.join(main, "store.json"))
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(StoreRecord.read(main)).toEqual(Either.right({ file, record: sqliteRecord(dirs.store) }))

    git(repo, "worktree", "add", "-q", path.join(dirs.root, "agent-tree"))
    const linked = path.join(repo, ".git", "worktrees", "agent-tree", "ratchet")
    expect(StoreRecord.read(linked)).toEqual(Either.right({ file, record: sqliteRecord(dirs.store) }))
    const own = StoreRecord.write(linked, sqliteRecord(dirs.home))
    expect(StoreRecord.read(linked)).toEqual(Either.right({ file: own, record: sqliteRecord(dirs.home) }))

    // Without git on the PATH, a checkout's own directory is .ratchet/local/: the git directory's record still counts.
    expect(StoreRecord.read(path.join(repo, ".ratchet", "local"))).toEqual(Either.right({ file, record: sqliteRecord(dirs.store) }))
    expect(StoreRecord.read(path.join(dirs.root, "agent-tree", ".ratchet", "local"))).toEqual(Either.right({ file: own, record: sqliteRecord(dirs.home) }))
  })

  it("refuses a record it cannot use, naming the file and the field, rather than skipping it", () => {
    const dirs = scratch()
    const file = StoreRecord.fileOf(dirs.local)
    for (const [content, reason] of [
      ["{", "is not a store record"],
      [JSON.stringify({ ...sqliteRecord("relative/home") }), "home: expected an absolute directory"],
      [JSON.stringify({ ...sqliteRecord(dirs.store), extra: 1 }), "extra"],
      [JSON.stringify({ ...sqliteRecord(dirs.store), database: { url: "mysql://x", schema: null, passwordOmitted: false } }), "database.url: expected a postgres:// URL"]
    ] as const) {
      fs.writeFileSync(file, content)
      const read = StoreRecord.read(dirs.local)
      expect(Either.isLeft(read), content).toBe(true)
      if (Either.isLeft(read)) {
        expect(read.left.file).toBe(file)
        expect(read.left.reason, content).toContain(reason)
      }
    }
  })
})

describe("StoreRecord in the working tree and on odd files", () => {
  const gitRepo = (root: string): string => {
    const repo = path.join(root, "git-repo")
    fs.mkdirSync(repo)
    execFileSync("git", ["init", "-q"], { cwd: repo, stdio: "ignore" })
    return repo
  }

  // A clone can bring any file with it: one under .ratchet/local/ must not choose where a
  // command's data goes (a PostgreSQL host elsewhere, another user's store).
  it("never reads nor writes a record in a git checkout's working tree; a project made outside git keeps its own there", () => {
    const dirs = scratch()
    const repo = gitRepo(dirs.root)
    const workingTree = path.join(repo, ".ratchet", "local")
    fs.mkdirSync(workingTree, { recursive: true })
    const planted = { ...sqliteRecord(dirs.home), database: { url: "postgres://collector.example/loot", schema: null, passwordOmitted: false } }
    fs.writeFileSync(path.join(workingTree, "store.json"), JSON.stringify(planted))
    expect(StoreRecord.read(workingTree)).toEqual(Either.right(null))

    const file = StoreRecord.write(workingTree, sqliteRecord(dirs.store))
    expect(file).toBe(path.join(repo, ".git", "ratchet", "store.json"))
    expect(StoreRecord.read(workingTree)).toEqual(Either.right({ file, record: sqliteRecord(dirs.store) }))
    expect(JSON.parse(fs.readFileSync(path.join(workingTree, "store.json"), "utf8"))).toEqual(planted)
    StoreRecord.remove(workingTree)
    expect(fs.existsSync(file)).toBe(false)
    expect(fs.existsSync(path.join(workingTree, "store.json"))).toBe(true)

    const outsideGit = path.join(dirs.root, "plain", ".ratchet", "local")
    fs.mkdirSync(outsideGit, { recursive: true })
    const own = StoreRecord.write(outsideGit, sqliteRecord(dirs.store))
    expect(own).toBe(path.join(outsideGit, "store.json"))
    expect(StoreRecord.read(outsideGit)).toEqual(Either.right({ file: own, record: sqliteRecord(dirs.store) }))
  })

  it("refuses a record that is a symbolic link, a FIFO, a device or a directory, without reading or waiting on it", () => {
    const dirs = scratch()
    const file = StoreRecord.fileOf(dirs.local)
    const cases: ReadonlyArray<readonly [string, () => void, string]> = [
      ["a link to /dev/zero", () => fs.symlinkSync("/dev/zero", file), "symbolic link"],
      ["a link to a good record", () => {
        const elsewhere = path.join(dirs.root, "elsewhere.json")
        fs.writeFileSync(elsewhere, JSON.stringify(sqliteRecord(dirs.store)))
        fs.symlinkSync(elsewhere, file)
      }, "symbolic link"],
      ["a FIFO", () => execFileSync("mkfifo", [file]), "not a regular file"],
      ["a directory", () => fs.mkdirSync(file), "not a regular file"],
      ["a file over 64 KiB", () => fs.writeFileSync(file, " ".repeat(64 * 1024 + 1)), "larger than 65536 bytes"]
    ]
    for (const [name, make, reason] of cases) {
      fs.rmSync(file, { recursive: true, force: true })
      make()
      const read = StoreRecord.read(dirs.local)
      expect(Either.isLeft(read), name).toBe(true)
      if (Either.isLeft(read)) expect({ name, file: read.left.file, reason: read.left.reason }).toMatchObject({ name, file, reason: expect.stringContaining(reason) })
    }
  })
})

describe("Store.choose", () => {
  it("takes --home, then RATCHET_HOME, then the checkout's record, then ~/.ratchet, and says which", () => {
    const dirs = scratch()
    fs.mkdirSync(path.join(dirs.home, ".ratchet"))
    fs.writeFileSync(path.join(dirs.home, ".ratchet", "ratchet.db"), "the default store")
    expect(chosen(dirs.local)).toEqual(Either.right({ home: path.join(dirs.home, ".ratchet"), database: null, source: "default", record: null }))
    expect(process.env["RATCHET_HOME"]).toBe(path.join(dirs.home, ".ratchet"))

    const file = StoreRecord.write(dirs.local, sqliteRecord(dirs.store))
    const record = { file, record: sqliteRecord(dirs.store) }
    delete process.env["RATCHET_HOME"]
    const fromRecord = chosen(dirs.local)
    expect(fromRecord).toEqual(Either.right({ home: dirs.store, database: null, source: "record", record }))
    expect(process.env["RATCHET_HOME"]).toBe(dirs.store)
    if (Either.isRight(fromRecord)) {
      expect(Store.describe(fromRecord.right)).toBe(`SQLite ${dirs.store}/ratchet.db`)
      expect(Store.origin(fromRecord.right)).toBe(`from this checkout's record ${file}`)
    }

    process.env["RATCHET_HOME"] = "~/elsewhere"
    expect(chosen(dirs.local)).toEqual(Either.right({ home: path.join(dirs.home, "elsewhere"), database: null, source: "RATCHET_HOME", record }))
    expect(chosen(dirs.local, { home: "~/flag" })).toEqual(Either.right({ home: path.join(dirs.home, "flag"), database: null, source: "--home", record }))
    expect(process.env["RATCHET_HOME"]).toBe(path.join(dirs.home, "flag"))
    expect(Store.current()?.source).toBe("--home")
  })

  it("brings a recorded PostgreSQL store back into the environment; an environment that names one wins", () => {
    const dirs = scratch()
    const database = { url: "postgres://ana@db.example:5433/ratchet", schema: "ratchet_work", passwordOmitted: true }
    const file = StoreRecord.write(dirs.local, { ...sqliteRecord(dirs.store), database })
    const fromRecord = chosen(dirs.local)
    expect(fromRecord).toMatchObject(Either.right({ home: dirs.store, database, source: "record" }))
    expect(process.env["RATCHET_DATABASE_URL"]).toBe(database.url)
    expect(process.env["RATCHET_DATABASE_SCHEMA"]).toBe("ratchet_work")
    expect(Store.location()).toEqual({ key: "postgres://db.example:5433/ratchet#ratchet_work", file: null })

    for (const name of variables) if (name !== "HOME") delete process.env[name]
    process.env["RATCHET_DATABASE_URL"] = "postgres://bo:pw@other.example/db"
    const fromEnvironment = chosen(dirs.local)
    // The home still comes from the record (runner logs and requests stay where they were).
    expect(fromEnvironment).toEqual(
      Either.right({ home: dirs.store, database: { url: "postgres://bo:pw@other.example/db", schema: null, passwordOmitted: false }, source: "RATCHET_DATABASE_URL", record: { file, record: { ...sqliteRecord(dirs.store), database } } })
    )
    if (Either.isRight(fromEnvironment)) expect(Store.describe(fromEnvironment.right)).toBe("PostgreSQL postgres://bo@other.example/db schema public")
    if (Either.isRight(fromEnvironment)) {
      expect(Store.recordOf(fromEnvironment.right, new Date("2026-12-05T10:00:00.000Z"))).toEqual({
        version: 1,
        home: dirs.store,
        database: { url: "postgres://bo@other.example/db", schema: null, passwordOmitted: true },
        recordedAt: "2026-12-05T10:00:00.000Z"
      })
    }
  })

  it("never creates an empty store where the checkout's record or its marks say the store is elsewhere", () => {
    const dirs = scratch()
    fs.rmSync(path.join(dirs.store, "ratchet.db"))
    const file = StoreRecord.write(dirs.local, sqliteRecord(dirs.store))
    const missing = chosen(dirs.local)
    expect(Either.isLeft(missing)).toBe(true)
    if (Either.isLeft(missing)) {
      expect(missing.left.field).toBe("store")
      expect(missing.left.message).toContain(`this checkout's record ${file} names the store ${dirs.store}/ratchet.db, which does not exist; it was not created.`)
      expect(missing.left.message).toContain("--home <dir>")
    }
    expect(Either.isRight(chosen(dirs.local, { creating: true }))).toBe(true)

    // A checkout from before the record: its marks name the store it used.
    fs.rmSync(file)
    fs.writeFileSync(path.join(dirs.store, "ratchet.db"), "a store")
    for (const name of variables) if (name !== "HOME") delete process.env[name]
    StoreMark.record(StoreMark.fileOf(dirs.local), path.join(dirs.store, "ratchet.db"), { streamId: "t-1", branch: "main", lsn: 3, operationId: "op", at: "2026-12-05T10:00:00.000Z" })
    const unnamed = chosen(dirs.local)
    expect(Either.isLeft(unnamed)).toBe(true)
    if (Either.isLeft(unnamed)) expect(unnamed.left.message).toContain(`this checkout has used ${dirs.store}/ratchet.db; nothing was created.`)
    expect(fs.existsSync(path.join(dirs.home, ".ratchet"))).toBe(false)
    // Named, it is used as named.
    process.env["RATCHET_HOME"] = dirs.store
    expect(Either.isRight(chosen(dirs.local))).toBe(true)
  })

  it("refuses a relative --home, naming the option", () => {
    const dirs = scratch()
    const refused = chosen(dirs.local, { home: "relative/store" })
    expect(Either.isLeft(refused)).toBe(true)
    if (Either.isLeft(refused)) {
      expect(refused.left.field).toBe("--home")
      expect(refused.left.message).toContain("is not an absolute path")
    }
  })
})

describe("Store.origin", () => {
  const database = { url: "postgres://ana@db.example:5433/ratchet", schema: "ratchet_work", passwordOmitted: true }
  // [source, whether PostgreSQL is named, the phrase]: written out by hand.
  const rows: ReadonlyArray<readonly [Store.Choice["source"], boolean, string]> = [
    ["RATCHET_HOME", false, "from RATCHET_HOME"],
    ["RATCHET_HOME", true, "from RATCHET_HOME and RATCHET_DATABASE_URL"],
    ["--home", false, "from --home"],
    ["--home", true, "from --home and RATCHET_DATABASE_URL"],
    ["RATCHET_DATABASE_URL", true, "from RATCHET_DATABASE_URL"],
    ["default", false, "the default: no --home, RATCHET_HOME, RATCHET_DATABASE_URL or record of this checkout names one"]
  ]
  it.each(rows)("%s (PostgreSQL: %s): %s", (source, postgres, phrase) => {
    expect(Store.origin({ home: "/h", database: postgres ? database : null, source, record: null })).toBe(phrase)
  })
})
