/**
 * The interactive terminal an approval needs. An approval is typed by a person: both standard
 * input and standard error (where the prompt goes, so `--json` keeps stdout one document) must be
 * a terminal. Anything else (a pipe, a file, an agent's tool call) is not a channel an approval can
 * come from, and the kernel's gate says HOLD `approval_requires_terminal`.
 *
 * This is a guard against an agent approving by accident or on instruction, not against a hostile
 * process of the same user, which can fake a terminal (see the threat model in the docs).
 *
 * @since 0.1.0
 */
import * as readline from "node:readline"
import * as Effect from "effect/Effect"

/**
 * The receipt channel of this process: `terminal` when a person can be asked, else `non-interactive`.
 *
 * @since 0.1.0
 * @category models
 */
export const channel = (): "terminal" | "non-interactive" =>
  process.stdin.isTTY === true && process.stderr.isTTY === true ? "terminal" : "non-interactive"

/**
 * Asks one line on the terminal (prompt on stderr); `null` when input ends first.
 *
 * @since 0.1.0
 * @category prompts
 */
export const ask = (prompt: string): Effect.Effect<string | null> =>
  Effect.async<string | null>((resume) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true })
    let answered = false
    rl.question(prompt, (line) => {
      answered = true
      rl.close()
      resume(Effect.succeed(line))
    })
    rl.on("close", () => {
      if (!answered) resume(Effect.succeed(null))
    })
    return Effect.sync(() => rl.close())
  })

/**
 * Asks several lines in a row on one terminal session, so what a person typed ahead is not lost
 * between the prompts. `next` sees each answer and gives the following prompt, or `null` to stop.
 * Resolves to the answers given (fewer when input ends first, or `next` stopped).
 *
 * @since 0.1.0
 * @category prompts
 */
export const askSeries = (first: string, next: (answer: string, index: number) => string | null): Effect.Effect<ReadonlyArray<string>> =>
  Effect.async<ReadonlyArray<string>>((resume) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true })
    const answers: Array<string> = []
    let done = false
    const finish = () => {
      if (done) return
      done = true
      rl.close()
      resume(Effect.succeed(answers))
    }
    const ask = (prompt: string) =>
      rl.question(prompt, (line) => {
        answers.push(line)
        const following = next(line, answers.length - 1)
        if (following === null) finish()
        else ask(following)
      })
    rl.on("close", finish)
    ask(first)
    return Effect.sync(() => rl.close())
  })
