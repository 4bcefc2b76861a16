/**
 * `@ratchet/storage` — the store every other package writes through: the `EventStore`,
 * `ReadModels`, `LeaseStore`, `LessonStore` and `BlobStore` services, the one infrastructure error `StorageError`, the
 * migrations, and the SQL implementation over `@effect/sql` that the engine packages bind.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as BlobStore from "./BlobStore.js"
/** @since 0.1.0 */
export * as EventStore from "./EventStore.js"
/** @since 0.1.0 */
export * as FileBlobStore from "./FileBlobStore.js"
/** @since 0.1.0 */
export * as LeaseStore from "./LeaseStore.js"
/** @since 0.3.0 */
export * as LessonStore from "./LessonStore.js"
/** @since 0.3.0 */
export * as MemoryLessonStore from "./MemoryLessonStore.js"
/** @since 0.1.0 */
export * as Migrations from "./Migrations.js"
/** @since 0.1.0 */
export * as ReadModel from "./ReadModel.js"
/** @since 0.1.0 */
export * as SqlAppend from "./SqlAppend.js"
/** @since 0.1.0 */
export * as SqlAppendOnce from "./SqlAppendOnce.js"
/** @since 0.1.0 */
export * as SqlBlobStore from "./SqlBlobStore.js"
/** @since 0.1.0 */
export * as SqlDialect from "./SqlDialect.js"
/** @since 0.3.0 */
export * as SqlLessonStore from "./SqlLessonStore.js"
/** @since 0.1.0 */
export * as SqlStore from "./SqlStore.js"
/** @since 0.1.0 */
export * as StorageError from "./StorageError.js"
/** @since 0.4.0 */
export * as StoreSpan from "./StoreSpan.js"
/** @since 0.5.0 */
export * as TaskClaims from "./TaskClaims.js"
