/** A child process of the storage conformance suite: opens the SQLite store the parent shares. */
import { SqliteStore } from "@ratchet/storage-sqlite"
import { runChild } from "@ratchet/testkit/StorageChild"

void runChild(SqliteStore.layer({ directory: process.env["RATCHET_CONFORMANCE_DIRECTORY"] ?? "" }))
