/**
 * Whether a transport colours what it writes to a stream: one rule for the `ratchet` CLI and the
 * runner it starts, so `ratchet run --no-color` and `NO_COLOR` mean the same in both.
 *
 * In order, the first that applies decides:
 * 1. `--no-color` on the command line: no colour;
 * 2. `NO_COLOR` set to anything but the empty string: no colour (https://no-color.org: "when present
 *    and not an empty string"; an empty one is as good as unset);
 * 3. `FORCE_COLOR`: `0` or `false` means no colour, any other non-empty value colour, even in a pipe
 *    or a file (an empty one is ignored);
 * 4. otherwise colour exactly when the stream is a terminal that is not `TERM=dumb`.
 *
 * @since 0.3.0
 */

/**
 * What the decision reads: the flag, the three variables (as the environment has them) and whether
 * the stream is a terminal.
 *
 * @since 0.3.0
 * @category models
 */
export interface Inputs {
  readonly noColorFlag: boolean
  readonly env: { readonly NO_COLOR?: string | undefined; readonly FORCE_COLOR?: string | undefined; readonly TERM?: string | undefined }
  readonly isTTY: boolean
}

/**
 * Whether to colour, by the rule above.
 *
 * @since 0.3.0
 * @category decisions
 */
export const decide = ({ env, isTTY, noColorFlag }: Inputs): boolean => {
  if (noColorFlag) return false
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false
  const force = env.FORCE_COLOR
  if (force !== undefined && force !== "") return force !== "0" && force.toLowerCase() !== "false"
  return isTTY && env.TERM !== "dumb"
}

/**
 * The decision for `stream` in this process's environment.
 *
 * @since 0.3.0
 * @category decisions
 */
export const forStream = (stream: { readonly isTTY?: boolean | undefined }, noColorFlag = false): boolean =>
  decide({
    noColorFlag,
    env: { NO_COLOR: process.env["NO_COLOR"], FORCE_COLOR: process.env["FORCE_COLOR"], TERM: process.env["TERM"] },
    isTTY: stream.isTTY === true
  })
