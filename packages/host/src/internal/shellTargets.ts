/**
 * Where programs that write files their operands do not name put them: archive extractors (`unzip`,
 * `tar -x`), downloaders (`curl`, `wget`), patchers (`patch`, `git apply`, `git am`) and links
 * (`ln`). Each is judged by the directory it writes below (a **tree**): the one its options name
 * (`unzip -d`, `tar -C`, `wget -P`, `patch -d`), or the directory it runs in. What an archive, a
 * download or a patch holds is not in the text, so anything below that directory may be written.
 *
 * A link is judged by what it points at: a write through `src/up/README.md` after `ln -s .. src/up`
 * lands in the link's target, so the target is a tree the command opens for writing.
 *
 * A tree the text cannot place (a computed directory, options read from a file, the repository's
 * top level for `git am`) is given as a word with a substitution in it, which the guard cannot
 * resolve and therefore denies under a task.
 *
 * @internal
 */
import * as path from "node:path"

/** What a program writes beyond the paths it names: the directories it writes anything below. */
export interface Targets {
  readonly paths: ReadonlyArray<string>
  readonly trees: ReadonlyArray<string>
}

const nothing: Targets = { paths: [], trees: [] }

/** A place the text does not say: the guard cannot resolve a word with a substitution in it. */
const unplaced = (what: string): string => `$(${what})`

/**
 * Reads options where they may follow operands (`curl URL -o file`): each option with its value
 * (short bundles such as `-sSLo file` or `-qO-` included), and the operands.
 */
const scan = (args: ReadonlyArray<string>, valued: ReadonlySet<string>): {
  readonly options: ReadonlyArray<readonly [string, string | null]>
  readonly operands: ReadonlyArray<string>
} => {
  const options: Array<readonly [string, string | null]> = []
  const operands: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!
    if (word === "--") {
      operands.push(...args.slice(i + 1))
      break
    }
    if (word.startsWith("--")) {
      const equals = word.indexOf("=")
      if (equals !== -1) options.push([word.slice(0, equals), word.slice(equals + 1)])
      else if (valued.has(word)) options.push([word, args[++i] ?? null])
      else options.push([word, null])
      continue
    }
    if (!word.startsWith("-") || word.length < 2) {
      operands.push(word)
      continue
    }
    for (let k = 1; k < word.length; k++) {
      const name = `-${word[k]}`
      if (!valued.has(name)) {
        options.push([name, null])
        continue
      }
      const rest = word.slice(k + 1)
      options.push([name, rest !== "" ? rest : args[++i] ?? null])
      break
    }
  }
  return { options, operands }
}

const values = (options: ReadonlyArray<readonly [string, string | null]>, ...names: ReadonlyArray<string>): ReadonlyArray<string> =>
  options.flatMap(([name, value]) => (names.includes(name) ? [value ?? unplaced(`the value of ${name}`)] : []))

const has = (options: ReadonlyArray<readonly [string, string | null]>, ...names: ReadonlyArray<string>): boolean => options.some(([name]) => names.includes(name))

/** Standard output by name: a download or an extraction there writes no file. */
const isStdout = (word: string): boolean => word === "-" || word === "/dev/stdout"

const unzip = (args: ReadonlyArray<string>): Targets => {
  const { options } = scan(args, new Set(["-d", "-x", "-P"]))
  // Listing, testing, printing to standard output: nothing is extracted.
  if (has(options, "-l", "-t", "-p", "-v", "-z", "-Z")) return nothing
  const into = values(options, "-d")
  return { paths: [], trees: into.length > 0 ? into : ["."] }
}

const tarValued = new Set(["-C", "--directory", "-f", "--file", "-T", "--files-from", "-X", "--exclude-from", "-b", "-H", "--format", "-V", "--label", "-g", "-K", "-N", "--owner", "--group", "--mode", "--transform", "--xform"])

const tar = (args: ReadonlyArray<string>): Targets => {
  // The first word of `tar xf a.tar` is a bundle without its dash.
  const words = args.length > 0 && /^[A-Za-z]+$/.test(args[0]!) ? [`-${args[0]}`, ...args.slice(1)] : args
  const { options } = scan(words, tarValued)
  if (!has(options, "-x", "--extract", "--get")) return nothing
  if (has(options, "-O", "--to-stdout", "-t", "--list")) return nothing
  // Absolute names are extracted where they say, anywhere on the disk.
  if (has(options, "-P", "--absolute-names")) return { paths: [], trees: ["/"] }
  const into = values(options, "-C", "--directory")
  return { paths: [], trees: into.length > 0 ? into : ["."] }
}

const curlValued = new Set([
  "-A", "-b", "-c", "-C", "-d", "-D", "-e", "-E", "-F", "-H", "-K", "-m", "-o", "-P", "-Q", "-r", "-t", "-T", "-u", "-U", "-w", "-x", "-X", "-y", "-Y", "-z",
  "--output", "--output-dir", "--config", "--dump-header", "--cookie-jar", "--trace", "--trace-ascii", "--stderr", "--libcurl", "--etag-save",
  "--data", "--data-raw", "--data-binary", "--header", "--user", "--request", "--url", "--user-agent", "--referer", "--cookie", "--form", "--upload-file",
  "--max-time", "--connect-timeout", "--retry", "--proxy", "--write-out", "--range"
])

const curl = (args: ReadonlyArray<string>): Targets => {
  const { options } = scan(args, curlValued)
  // Options read from a file may name any output.
  if (has(options, "-K", "--config")) return { paths: [], trees: [unplaced("curl's options from a file")] }
  const paths = [
    ...values(options, "-o", "--output").filter((word) => !isStdout(word)),
    ...values(options, "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr", "--libcurl", "--etag-save").filter((word) => !isStdout(word))
  ]
  // `-O` names the file after the URL (or the server's header with `-J`), in `--output-dir`.
  const remote = has(options, "-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name")
  const dir = values(options, "--output-dir")
  return { paths, trees: remote ? (dir.length > 0 ? dir : ["."]) : [] }
}

const wgetValued = new Set(["-O", "-o", "-a", "-P", "-e", "-i", "-t", "-T", "-w", "-Q", "-U", "-B", "-D", "-A", "-R", "-l", "-I", "-X", "--output-document", "--output-file", "--append-output", "--directory-prefix", "--execute", "--input-file", "--config", "--user-agent", "--tries", "--timeout", "--header", "--post-data", "--post-file", "--user", "--password"])

const wget = (args: ReadonlyArray<string>): Targets => {
  const { options } = scan(args, wgetValued)
  // `-e output_document=…` and a configuration file may name any output.
  if (has(options, "-e", "--execute", "--config")) return { paths: [], trees: [unplaced("wget's settings")] }
  const logs = values(options, "-o", "--output-file", "-a", "--append-output").filter((word) => !isStdout(word))
  if (has(options, "--spider")) return { paths: logs, trees: [] }
  const document = values(options, "-O", "--output-document")
  if (document.length > 0) return { paths: [...logs, ...document.filter((word) => !isStdout(word))], trees: [] }
  const prefix = values(options, "-P", "--directory-prefix")
  return { paths: logs, trees: prefix.length > 0 ? prefix : ["."] }
}

const patch = (args: ReadonlyArray<string>): Targets => {
  const { options, operands } = scan(args, new Set(["-d", "--directory", "-i", "--input", "-o", "--output", "-p", "--strip", "-r", "--reject-file", "-B", "--prefix", "-F", "--fuzz", "-V", "-z", "--suffix", "-D"]))
  if (has(options, "--dry-run", "-C", "--check")) return nothing
  const dir = values(options, "-d", "--directory")[0] ?? "."
  const at = (word: string) => (dir === "." || word.startsWith("/") || word.startsWith("~") || word.startsWith("$") ? word : `${dir}/${word}`)
  const rejects = values(options, "-r", "--reject-file").filter((word) => word !== "-").map(at)
  const output = values(options, "-o", "--output").filter((word) => !isStdout(word)).map(at)
  if (output.length > 0) return { paths: [...output, ...rejects], trees: [] }
  // `patch file < diff` patches the file it is given; otherwise the files the patch names, below its directory.
  const file = operands[0]
  return file !== undefined ? { paths: [at(file), ...rejects], trees: [] } : { paths: rejects, trees: [dir] }
}

/**
 * `git apply` and `git am`, given git's own options (`-C dir`) and the subcommand's: apply writes
 * below the directory it runs in (paths outside it are skipped), am anywhere in the repository.
 */
export const git = (dirs: ReadonlyArray<string>, subcommand: "apply" | "am", args: ReadonlyArray<string>): Targets => {
  if (subcommand === "apply") {
    // Reports and the index alone leave the work tree as it is.
    const writesTree = !args.includes("--cached") && (args.includes("--apply") || !args.some((word) => ["--check", "--stat", "--numstat", "--summary"].includes(word)))
    if (!writesTree) return nothing
    return { paths: [], trees: [dirs.length === 0 ? "." : dirs.reduce((at, dir) => (dir.startsWith("/") ? dir : path.posix.join(at, dir)))] }
  }
  if (args.some((word) => ["--abort", "--quit", "--show-current-patch"].includes(word) || word.startsWith("--show-current-patch="))) return nothing
  return { paths: [], trees: [unplaced("the repository's top level")] }
}

/**
 * `ln`: the links it makes (written) and what they point at (a tree: a write through a link lands
 * there). A symbolic link's relative target is resolved from the link's directory — or from the
 * link itself, when the name given is an existing directory the link is made in; both are taken.
 */
const ln = (args: ReadonlyArray<string>): Targets => {
  const { options, operands } = scan(args, new Set(["-t", "--target-directory", "-S", "--suffix"]))
  const symbolic = has(options, "-s", "--symbolic")
  const into = values(options, "-t", "--target-directory")[0]
  const sources = into !== undefined ? operands : operands.length > 1 ? operands.slice(0, -1) : operands
  const link = into ?? (operands.length > 1 ? operands[operands.length - 1]! : ".")
  const absolute = (word: string) => word.startsWith("/") || word.startsWith("~") || word.startsWith("$")
  const trees = sources.flatMap((source) => {
    if (!symbolic || absolute(source)) return [source]
    const from = into !== undefined ? [into] : [path.posix.dirname(link), link]
    return from.map((dir) => (absolute(dir) ? `${dir}/${source}` : path.posix.join(dir, source)))
  })
  return { paths: [link], trees }
}

/**
 * The targets of one program with its arguments (words as written), or null for a program this
 * module does not judge.
 */
export const targetsOf = (program: string, args: ReadonlyArray<string>): Targets | null => {
  switch (program) {
    case "unzip":
      return unzip(args)
    case "tar":
    case "bsdtar":
      return tar(args)
    case "curl":
      return curl(args)
    case "wget":
      return wget(args)
    case "patch":
      return patch(args)
    case "ln":
      return ln(args)
    default:
      return null
  }
}
