/**
 * The suite against the reference memory store: every in-process check must pass, so a failure
 * elsewhere is the other store's, not the suite's. The memory store lives in one process, so the
 * multi-process checks are skipped here (they run against the SQLite and PostgreSQL layers).
 */
import * as StorageChecks from "@ratchet/testkit/StorageChecks"
import * as StorageConformance from "@ratchet/testkit/StorageConformance"
import * as MemoryStore from "./MemoryStore.js"

StorageConformance.suite("the memory reference store", () => MemoryStore.layer(), {
  processes: {
    share: () => {
      throw new Error("the memory store cannot be shared between processes")
    }
  },
  skip: StorageChecks.processChecks.map((check) => check.id)
})
