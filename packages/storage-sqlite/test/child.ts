/** A child process of the storage conformance suite: opens the SQLite store the parent shares. */
import { SqliteStore } from "@ratchet/storage-sqlite"
import { runChild } from "@ratchet/testkit/StorageChild"

// The process checks assert what several processes end with (all open, exactly one wins), not how
// fast: on a loaded machine a process holding the write lock can be descheduled for seconds, so
// the children wait for it far longer than the interactive default of 5 s.
void runChild(SqliteStore.layer({ directory: process.env["RATCHET_CONFORMANCE_DIRECTORY"] ?? "", busyTimeoutMs: 60_000 }))
