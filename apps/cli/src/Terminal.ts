/**
 * The interactive terminal a person's acts need. An approval, a settlement, a rewind or a manual
 * observation is typed by a person: both standard input and standard error (where the prompts go,
 * so `--json` keeps stdout one document) must be a terminal. Anything else (a pipe, a file, an
 * agent's tool call) is not a channel such an act can come from, and the kernel's gate says HOLD
 * `approval_requires_terminal`.
 *
 * A terminal alone proves little: a process of the same user can fake one (`script` gives it a
 * pseudo-terminal). What makes the act the person's is the signature made with their approval key,
 * whose passphrase is asked here with the echo off ({@link askSecret}) and never kept.
 *
 * Every prompt of a process reads from one line reader, opened on first use and closed by
 * {@link close}, so what a person typed ahead (the digest's characters, then the passphrase) is
 * never lost between two prompts. The reader echoes only while a prompt that is not a secret waits
 * for its line: a line typed ahead may be the passphrase, so it is not shown as it arrives, and a
 * typed-ahead answer to an ordinary prompt is shown when that prompt takes it.
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

interface Session {
  readonly rl: readline.Interface
  /** Lines typed before anyone asked for them. */
  readonly queued: Array<string>
  waiting: ((line: string | null) => void) | null
  closed: boolean
  /** Nothing the reader would echo is written: always, except while an ordinary prompt waits. */
  muted: boolean
}

let session: Session | null = null

const open = (): Session => {
  if (session !== null) return session
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true })
  const opened: Session = { rl, queued: [], waiting: null, closed: false, muted: true }
  // readline echoes what it reads through this method; a secret is read with it silenced.
  const write = (rl as unknown as { _writeToOutput: (text: string) => void })._writeToOutput.bind(rl)
  ;(rl as unknown as { _writeToOutput: (text: string) => void })._writeToOutput = (text: string) => {
    if (!opened.muted) write(text)
  }
  rl.on("line", (line) => {
    const waiting = opened.waiting
    if (waiting === null) opened.queued.push(line)
    else {
      opened.waiting = null
      waiting(line)
    }
  })
  rl.on("close", () => {
    opened.closed = true
    const waiting = opened.waiting
    opened.waiting = null
    waiting?.(null)
  })
  session = opened
  return opened
}

const nextLine = (prompt: string, secret: boolean): Effect.Effect<string | null> =>
  Effect.async<string | null>((resume) => {
    const current = open()
    process.stderr.write(prompt)
    const queued = current.queued.shift()
    if (queued !== undefined) {
      // It was not echoed as it arrived: show an ordinary answer now, never a secret.
      process.stderr.write(secret ? "\n" : `${queued}\n`)
      resume(Effect.succeed(queued))
      return
    }
    if (current.closed) {
      resume(Effect.succeed(null))
      return
    }
    current.muted = secret
    current.waiting = (line) => {
      // Muted again at once: the rest of what arrived with this line is typed ahead.
      current.muted = true
      if (secret) process.stderr.write("\n")
      resume(Effect.succeed(line))
    }
    return Effect.sync(() => {
      current.muted = true
      current.waiting = null
    })
  })

/**
 * Asks one line on the terminal (prompt on stderr); `null` when input ends first.
 *
 * @since 0.1.0
 * @category prompts
 */
export const ask = (prompt: string): Effect.Effect<string | null> => nextLine(prompt, false)

/**
 * Asks one line without showing what is typed (a passphrase); `null` when input ends first.
 *
 * @since 0.2.0
 * @category prompts
 */
export const askSecret = (prompt: string): Effect.Effect<string | null> => nextLine(prompt, true)

/**
 * Asks several lines in a row. `next` sees each answer and gives the following prompt, or `null`
 * to stop. Resolves to the answers given (fewer when input ends first, or `next` stopped).
 *
 * @since 0.1.0
 * @category prompts
 */
export const askSeries = (first: string, next: (answer: string, index: number) => string | null): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    const answers: Array<string> = []
    let prompt: string | null = first
    while (prompt !== null) {
      const line: string | null = yield* ask(prompt)
      if (line === null) break
      answers.push(line)
      prompt = next(line, answers.length - 1)
    }
    return answers
  })

/**
 * Closes the line reader, if a prompt opened it, so the process can end.
 *
 * @since 0.2.0
 * @category prompts
 */
export const close = (): void => {
  if (session === null) return
  session.rl.close()
  session = null
}
