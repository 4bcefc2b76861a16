/**
 * What reading a command line collects (person-only acts, writes, destructive effects, the parts
 * Ratchet cannot read, the places handed to programs, the programs), and the state one line keeps
 * while it is read (where it `cd`'d, which files it wrote). Shared by the walk (`Shell`) and the
 * readers of particular programs (`shellCommands`), which call back into the walk through `Walk`.
 *
 * @internal
 */
import * as path from "node:path"
import * as Programs from "./shellPrograms.js"
import type * as Syntax from "./shellSyntax.js"

/** How deep `sh -c`, `$(…)`, backquotes and programs that run programs nest before the rest is opaque. */
export const maxDepth = 4

/** A person-only act a command would do or names, and the words that do it. */
export interface PersonOnly {
  readonly act: Programs.Act
  readonly text: string
}

/** The state of one command line as it is read: where `cd` went, which files it wrote. */
export interface Line {
  directory: string
  readonly written: Set<string>
}

/** How one simple command is being judged. */
export interface Judging {
  /** Words read precisely (a followed command line, `ratchet`'s own arguments): not judged by mention. */
  readonly consumed: Set<Syntax.Word>
  /** Here-documents a shell read as its commands. */
  readonly inputs: Set<Syntax.Input>
  /** The command's operands come from elsewhere too (`xargs`, `find -exec`). */
  readonly fed: boolean
}

/** The walk, as the readers of particular programs call back into it. */
export interface Walk {
  /** Reads text as a command line one level deeper (or, past the bound, judges it by its words). */
  readonly follow: (text: string, depth: number) => void
  /** Reads a command line given as one word (`sh -c`, `eval`), when its text is known. */
  readonly runText: (word: Syntax.Word, runner: string, depth: number) => void
  /** Judges words as one simple command. */
  readonly judge: (words: ReadonlyArray<Syntax.Word>, simple: Syntax.Command, line: Line, depth: number, judging: Judging) => void
}

const devices = /^\/dev\/(null|stdout|stderr|tty|fd\/[0-9]+)$/

/** A path relative to where the line has `cd`'d to. */
export const relativeTo = (line: Line) => (target: string): string =>
  line.directory === "" || target.startsWith("/") || target.startsWith("~") || target.startsWith("$") ? target : `${line.directory}/${target}`

/** Words as one line of text; a substitution's word (no text of its own) shown as what it is. */
export const joined = (words: ReadonlyArray<Syntax.Word>): string => words.map((word) => (word.text === "" && word.computed ? "$(…)" : word.text)).join(" ")

/** At most this many reasons of each kind are kept: the first decides. */
const kept = 16

/** What any token naming `ratchet` (`Programs.isRatchetName`) contains. */
const namesRatchet = /ratchet|apps\/cli\//i

const shown = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, 160)

/** A reading in progress, and what it found. */
export const makeReading = () => {
  const personOnly: Array<PersonOnly> = []
  const paths: Array<string> = []
  const destructive: Array<string> = []
  const opaque: Array<string> = []
  const touches = new Set<string>()
  const programs: Array<string> = []
  const trees: Array<string> = []
  const scripts: Array<string> = []
  const state = { unknown: false }
  const act = (found: Programs.Act, text: string) => {
    if (personOnly.length < kept) personOnly.push({ act: found, text: shown(text) })
  }
  return {
    personOnly,
    paths,
    destructive,
    opaque,
    touches,
    programs,
    trees,
    scripts,
    state,
    act,
    /** A part of the command Ratchet cannot read, and why. */
    cannotRead: (text: string, why: string) => {
      if (opaque.length < kept) opaque.push(`\`${shown(text)}\` ${why}`)
    },
    /** Text judged by its words alone: the person-only acts it names, and (with `places`) the places it hands over. */
    mention: (texts: ReadonlyArray<string>, places: boolean, at: (target: string) => string) => {
      // Only a text that names ratchet at all is split into tokens to find the act it names.
      const found = texts.some((text) => namesRatchet.test(text)) ? Programs.mentionedAct(texts.flatMap(Programs.nameTokens)) : null
      if (found !== null) act(found, texts.join(" "))
      if (!places) return
      for (const text of texts) {
        for (const token of Programs.pathTokens(text)) {
          const place = at(token)
          if (Programs.isPlaceLike(place)) touches.add(place)
        }
      }
    },
    /**
     * The value of an assignment (`d=.claude`, `env F=x`, `export F=x`): a later `"$d"` names it,
     * so it counts as a place handed over, relative to where the line has `cd`'d.
     */
    assigned: (text: string, line: Line) => {
      const value = /^[A-Za-z_][A-Za-z0-9_]*\+?=(.*)$/s.exec(text)?.[1]
      if (value !== undefined && value !== "") touches.add(relativeTo(line)(value))
    },
    /** A file the line writes (devices aside), relative to where it has `cd`'d. */
    write: (target: string, line: Line) => {
      if (devices.test(target)) return
      const file = relativeTo(line)(target)
      paths.push(file)
      line.written.add(path.posix.normalize(file))
    },
    /** A directory the line writes anything below, relative to where it has `cd`'d. */
    tree: (target: string, line: Line) => {
      trees.push(relativeTo(line)(target))
    },
    /** A script run from a file: what it writes is unknown. */
    script: (text: string) => {
      if (scripts.length < kept) scripts.push(shown(text))
    },
    /** Whether a word names a file this line has written (to run it is to run what the text does not show). */
    wrote: (word: Syntax.Word, line: Line): boolean => !word.computed && line.written.has(path.posix.normalize(relativeTo(line)(word.text)))
  }
}

/** A reading in progress. */
export type Reading = ReturnType<typeof makeReading>
