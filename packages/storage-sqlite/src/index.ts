/**
 * `@ratchet/storage-sqlite` — Ratchet's default store: the storage services over one SQLite file
 * in `$RATCHET_HOME`, with blobs as files beside it.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as SqliteStore from "./SqliteStore.js"
