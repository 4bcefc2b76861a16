/**
 * `@ratchet/verifier`: the episode view frozen at a log position, the verifier context and
 * contract, the built-in verifiers and one verification pass with its conclusion.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as ArtifactVerifier from "./ArtifactVerifier.js"
/** @since 0.1.0 */
export * as Builtin from "./Builtin.js"
/** @since 0.1.0 */
export * as CommandVerifier from "./CommandVerifier.js"
/** @since 0.1.0 */
export * as EpisodeView from "./EpisodeView.js"
/** @since 0.1.0 */
export * as Evidence from "./Evidence.js"
/** @since 0.1.0 */
export * as JUnit from "./JUnit.js"
/** @since 0.1.0 */
export * as JUnitVerifier from "./JUnitVerifier.js"
/** @since 0.1.0 */
export * as ManualVerifier from "./ManualVerifier.js"
/** @since 0.1.0 */
export * as Verification from "./Verification.js"
/** @since 0.1.0 */
export * as Verifier from "./Verifier.js"
