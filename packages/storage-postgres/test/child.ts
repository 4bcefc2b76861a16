/**
 * The child process of the conformance suite's multi-process checks: opens the PostgreSQL store
 * that the parent named through the environment (`RATCHET_TEST_DATABASE_URL`,
 * `RATCHET_TEST_SCHEMA`) and follows the parent's orders on stdin.
 */
import { runChild } from "@ratchet/testkit/StorageChild"
import { PostgresStore } from "../src/index.js"

void runChild(
  PostgresStore.layer({
    url: process.env["RATCHET_TEST_DATABASE_URL"] ?? "",
    schema: process.env["RATCHET_TEST_SCHEMA"],
    maxConnections: 2
  })
)
