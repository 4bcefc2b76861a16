/**
 * The built-in verifiers, in the order they run for a criterion: the command first (it produces
 * what the others read), then its JUnit report and its artifacts, and the manual check.
 *
 * @since 0.1.0
 */
import type * as Layer from "effect/Layer"
import * as ArtifactVerifier from "./ArtifactVerifier.js"
import * as CommandVerifier from "./CommandVerifier.js"
import * as JUnitVerifier from "./JUnitVerifier.js"
import * as ManualVerifier from "./ManualVerifier.js"
import * as Verifier from "./Verifier.js"

/**
 * @since 0.1.0
 * @category constructors
 */
export const verifiers: ReadonlyArray<Verifier.Verifier> = [
  CommandVerifier.verifier,
  JUnitVerifier.verifier,
  ArtifactVerifier.verifier,
  ManualVerifier.verifier
]

/**
 * The built-in verifiers as the {@link Verifier.Verifiers} service.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Verifier.Verifiers> = Verifier.layer(...verifiers)

/**
 * The built-in verifiers, with the command verifier's checks started by `launcher` (the
 * unattended loop's sandbox, ADR 0043).
 *
 * @since 0.5.0
 * @category layers
 */
export const layerWith = (options: { readonly launcher: CommandVerifier.Launcher }): Layer.Layer<Verifier.Verifiers> =>
  Verifier.layer(CommandVerifier.make({ launcher: options.launcher }), JUnitVerifier.verifier, ArtifactVerifier.verifier, ManualVerifier.verifier)
