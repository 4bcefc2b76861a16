/**
 * Opening the store where this process may not write: `$RATCHET_HOME` (or `ratchet.db` in it)
 * without write permission, a read-only mount. Reads (`status`, `log`) must still work there, and
 * every write must fail saying why the store is read-only.
 *
 * A WAL database can only be opened read-only in place when its `-shm` and `-wal` files already
 * exist or can be created; in a directory this process cannot write, after the last writer closed
 * cleanly, neither holds. The store is then read from a snapshot of the file in memory: with no
 * `-wal` file (or an empty one) the file holds every committed transaction. The snapshot's header
 * is switched from WAL to the rollback journal (bytes 18 and 19, the file format's read and write
 * versions), the one mode SQLite opens an in-memory image in.
 *
 * @internal
 */
import Sqlite from "better-sqlite3"
import * as fs from "node:fs"

/**
 * Why this process may not write the store at `filename` in `directory`, or `null` when it may.
 * `access(2)` answers for the real user, root included, and for read-only mounts (EROFS).
 */
export const whyReadOnly = (directory: string, filename: string): string | null => {
  const denied = (file: string): string | null => {
    try {
      fs.accessSync(file, fs.constants.W_OK)
      return null
    } catch (cause) {
      const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : "unknown"
      return code === "ENOENT" ? null : code
    }
  }
  const user = typeof process.getuid === "function" ? ` (uid ${process.getuid()})` : ""
  const inDirectory = denied(directory)
  if (inDirectory !== null) return `the directory ${directory} is not writable by this user${user} (${inDirectory})`
  const inFile = denied(filename)
  if (inFile !== null) return `the file ${filename} is not writable by this user${user} (${inFile})`
  return null
}

/** Whether `filename`'s write-ahead log holds frames the main file may not have yet. */
const walHasFrames = (filename: string): boolean => {
  try {
    return fs.statSync(`${filename}-wal`).size > 0
  } catch {
    return false
  }
}

/**
 * The store cannot be read where it is: its write-ahead log holds commits the file does not, and
 * SQLite can read them only with a WAL index it cannot make in a directory this user cannot write.
 */
export class PendingWal extends Error {
  constructor(readonly filename: string, readonly why: string) {
    super(
      `the store ${filename} cannot be read here: ${why}, and its write-ahead log (${filename}-wal) holds commits that only a process able to write that directory can read; run any ratchet command once as a user who can write $RATCHET_HOME (its last connection folds the log into the file), then read again`
    )
  }
}

/**
 * A read-only connection to the existing database `filename`: in place when SQLite can (its
 * `-shm` and `-wal` files exist or can be made), else a snapshot of the file in memory when that
 * file holds every commit; `PendingWal` when it does not. `why` says why the store is read-only.
 */
export const open = (filename: string, why: string): Sqlite.Database => {
  const inPlace = new Sqlite(filename, { readonly: true, fileMustExist: true })
  try {
    // The first statement is where SQLite finds it cannot set up the WAL index.
    inPlace.prepare("PRAGMA schema_version").get()
    return inPlace
  } catch {
    inPlace.close()
    if (walHasFrames(filename)) throw new PendingWal(filename, why)
  }
  const image = fs.readFileSync(filename)
  if (image.length >= 20 && image[18] === 2 && image[19] === 2) {
    image[18] = 1
    image[19] = 1
  }
  return new Sqlite(image, { readonly: true })
}
