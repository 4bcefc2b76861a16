/**
 * Counts the SQL statements better-sqlite3 executes, by text, while a function runs: the figure
 * that explains a ratio (how many statements our append issues per raw insert) and does not vary
 * from run to run like a time does.
 *
 * It wraps the methods of better-sqlite3's `Statement` prototype (`run`, `all`, `get`, `iterate`)
 * and `Database#exec` once, in this process only; outside `count` they only test a flag.
 */
import Database from "better-sqlite3"

let counts: Map<string, number> | undefined
let installed = false

const record = (sql: string) => {
  if (counts === undefined) return
  const key = sql.replace(/\s+/g, " ").trim()
  counts.set(key, (counts.get(key) ?? 0) + 1)
}

const install = () => {
  if (installed) return
  installed = true
  const probe = new Database(":memory:")
  const prototype = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<string, (...args: Array<unknown>) => unknown>
  probe.close()
  for (const method of ["run", "all", "get", "iterate"]) {
    const original = prototype[method]
    if (original === undefined) continue
    prototype[method] = function(this: { readonly source: string }, ...args: Array<unknown>) {
      record(this.source)
      return original.apply(this, args)
    }
  }
  const exec = Database.prototype.exec
  Database.prototype.exec = function(this: Database.Database, sql: string) {
    record(sql)
    return exec.call(this, sql)
  }
}

/** The statements executed while `f` runs, by text, with how often each ran. */
export const count = async (f: () => Promise<void>): Promise<ReadonlyMap<string, number>> => {
  install()
  counts = new Map()
  try {
    await f()
    return counts
  } finally {
    counts = undefined
  }
}

/** The total of a count. */
export const total = (counted: ReadonlyMap<string, number>): number => [...counted.values()].reduce((a, b) => a + b, 0)
