/**
 * git's settings watched (ADR 0045): a hand-written table of what a child of the loop may do to a
 * real git repository, each run against a fresh one — accepted (nothing changed; a commit, which
 * changes the index, objects and refs; a branch) and rejected (the configuration edited, a hook
 * added, `info/attributes` changed, `.git` renamed and made again, `.git` replaced by a `gitdir:`
 * file, a `commondir` written, a `~/.gitconfig` created, an included file changed, a file under
 * `$XDG_CONFIG_HOME/git/` created) — and the key each rejection names.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import * as GitSettings from "../src/GitSettings.js"
import { tempDirFactory } from "./tempDirs.js"

const tempDir = tempDirFactory("ratchet-git-settings-")

interface World {
  readonly root: string
  readonly home: string
  readonly env: Readonly<Record<string, string>>
  readonly git: (...args: ReadonlyArray<string>) => string
}

/** A repository with one commit, a home of its own (an include in its `~/.gitconfig` when asked). */
const world = (options: { readonly userConfig?: boolean } = {}): World => {
  const base = tempDir()
  const root = path.join(base, "repo")
  const home = path.join(base, "home")
  fs.mkdirSync(root)
  fs.mkdirSync(home)
  const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, ".config") }
  if (options.userConfig === true) {
    fs.writeFileSync(path.join(home, "extra.inc"), "[core]\n\tautocrlf = false\n")
    fs.writeFileSync(path.join(home, ".gitconfig"), "[include]\n\tpath = ~/extra.inc\n")
  }
  const git = (...args: ReadonlyArray<string>) =>
    execFileSync("git", [...args], {
      cwd: root,
      encoding: "utf8",
      env: { PATH: process.env["PATH"] ?? "", ...env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" }
    })
  git("init", "-q", "-b", "main")
  fs.writeFileSync(path.join(root, "a.txt"), "one\n")
  git("add", "a.txt")
  git("commit", "-q", "-m", "first")
  return { root, home, env, git }
}

const plantConfig = (gitDir: string) => {
  fs.mkdirSync(path.join(gitDir, "info"), { recursive: true })
  fs.appendFileSync(path.join(gitDir, "config"), "[filter \"x\"]\n\tclean = /tmp/evil\n")
}

// what the child does → whether the settings are unchanged, and a key a change must name
/** A submodule `sub` added and committed (its git directory under `.git/modules/sub`). */
const withSubmodule = ({ git, root }: World) => {
  const upstream = path.join(path.dirname(root), "upstream")
  fs.mkdirSync(upstream)
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: upstream })
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "u"], { cwd: upstream })
  git("-c", "protocol.file.allow=always", "submodule", "add", "-q", upstream, "sub")
  git("commit", "-q", "-m", "submodule")
}

/** A linked worktree `../linked` on a new branch (its git directory under `.git/worktrees/linked`). */
const withWorktree = ({ git, root }: World) => void git("worktree", "add", "-q", "-b", "side", path.join(path.dirname(root), "linked"))

const table: ReadonlyArray<{
  readonly name: string
  readonly userConfig?: boolean
  /** What is there before the snapshot. */
  readonly given?: (world: World) => void
  /** The work tree the snapshot is of (the repository's by default). */
  readonly at?: (world: World) => string
  readonly act: (world: World) => void
  readonly accepted: boolean
  readonly names?: RegExp
}> = [
  { name: "nothing", act: () => {}, accepted: true },
  {
    name: "a commit (the index, objects and refs change)",
    act: ({ git, root }) => {
      fs.writeFileSync(path.join(root, "b.txt"), "two\n")
      git("add", "b.txt")
      git("commit", "-q", "-m", "second")
    },
    accepted: true
  },
  { name: "a branch and a checkout", act: ({ git }) => void git("checkout", "-q", "-b", "work"), accepted: true },
  { name: "the same included file rewritten as it was", userConfig: true, act: ({ home }) => fs.writeFileSync(path.join(home, "extra.inc"), "[core]\n\tautocrlf = false\n"), accepted: true },
  {
    name: "the configuration edited",
    act: ({ git }) => void git("config", "filter.x.clean", "cat"),
    accepted: false,
    names: /^the repository's configuration .*\.git\/config$/
  },
  {
    name: "a hook added",
    act: ({ root }) => fs.writeFileSync(path.join(root, ".git", "hooks", "pre-commit"), "#!/bin/sh\n", { mode: 0o755 }),
    accepted: false,
    names: /^the repository's hooks .*hooks\/pre-commit$/
  },
  {
    name: "info/attributes changed",
    act: ({ root }) => {
      fs.mkdirSync(path.join(root, ".git", "info"), { recursive: true })
      fs.appendFileSync(path.join(root, ".git", "info", "attributes"), "* filter=x\n")
    },
    accepted: false,
    names: /^the repository's info .*info\/attributes$/
  },
  {
    name: ".git renamed and made again from a copy",
    act: ({ root }) => {
      fs.renameSync(path.join(root, ".git"), path.join(root, ".git-old"))
      fs.cpSync(path.join(root, ".git-old"), path.join(root, ".git"), { recursive: true })
      plantConfig(path.join(root, ".git"))
    },
    accepted: false,
    names: /^the \.git entry /
  },
  {
    name: ".git renamed and made again, byte for byte the same",
    act: ({ root }) => {
      fs.renameSync(path.join(root, ".git"), path.join(root, ".git-old"))
      fs.cpSync(path.join(root, ".git-old"), path.join(root, ".git"), { recursive: true })
    },
    accepted: false,
    names: /^the \.git entry /
  },
  {
    name: ".git replaced by a gitdir: file",
    act: ({ root }) => {
      const elsewhere = path.join(path.dirname(root), "elsewhere")
      fs.renameSync(path.join(root, ".git"), elsewhere)
      plantConfig(elsewhere)
      fs.writeFileSync(path.join(root, ".git"), `gitdir: ${elsewhere}\n`)
    },
    accepted: false,
    names: /^the git directory of /
  },
  {
    name: "a commondir file written into the git directory",
    act: ({ root }) => {
      const common = path.join(path.dirname(root), "common")
      fs.cpSync(path.join(root, ".git"), common, { recursive: true })
      plantConfig(common)
      fs.writeFileSync(path.join(root, ".git", "commondir"), `${common}\n`)
    },
    accepted: false,
    names: /^the common-directory pointer /
  },
  {
    name: "~/.gitconfig created",
    act: ({ home }) => fs.writeFileSync(path.join(home, ".gitconfig"), "[filter \"x\"]\n\tclean = /tmp/evil\n"),
    accepted: false,
    names: /^the user's configuration .*\.gitconfig$/
  },
  {
    name: "$XDG_CONFIG_HOME/git/attributes created",
    act: ({ home }) => {
      fs.mkdirSync(path.join(home, ".config", "git"), { recursive: true })
      fs.writeFileSync(path.join(home, ".config", "git", "attributes"), "* filter=x\n")
    },
    accepted: false,
    names: /^the user's git settings .*\.config\/git$/
  },
  {
    name: "an included file changed",
    userConfig: true,
    act: ({ home }) => fs.writeFileSync(path.join(home, "extra.inc"), "[filter \"x\"]\n\tclean = /tmp/evil\n"),
    accepted: false,
    names: /^a file a configuration includes .*extra\.inc$/
  },
  {
    name: "an included file that did not exist created",
    act: ({ git, home }) => {
      // The include is written before the snapshot (see below); its target appears later.
      void git
      fs.writeFileSync(path.join(home, "later.inc"), "[filter \"x\"]\n\tclean = /tmp/evil\n")
    },
    accepted: false,
    names: /^a file a configuration includes .*later\.inc$/
  },
  // A submodule's settings: `git status` of the parent runs git in it with them.
  { name: "a commit in a submodule", given: withSubmodule, act: ({ root }) => void execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "s"], { cwd: path.join(root, "sub") }), accepted: true },
  {
    name: "a submodule's configuration edited",
    given: withSubmodule,
    act: ({ root }) => plantConfig(path.join(root, ".git", "modules", "sub")),
    accepted: false,
    names: /^a submodule's configuration .*\.git\/modules\/sub\/config$/
  },
  {
    name: "a submodule's info/attributes created",
    given: withSubmodule,
    act: ({ root }) => fs.writeFileSync(path.join(root, ".git", "modules", "sub", "info", "attributes"), "* filter=x\n"),
    accepted: false,
    names: /^a submodule's info .*modules\/sub\/info\/attributes$/
  },
  {
    name: "a submodule's hook added",
    given: withSubmodule,
    act: ({ root }) => fs.writeFileSync(path.join(root, ".git", "modules", "sub", "hooks", "post-checkout"), "#!/bin/sh\n", { mode: 0o755 }),
    accepted: false,
    names: /^a submodule's hooks .*modules\/sub\/hooks\/post-checkout$/
  },
  // Linked worktrees: their pointers and settings in the common directory.
  { name: "a checkout in a linked worktree", given: withWorktree, act: ({ root }) => void execFileSync("git", ["checkout", "-q", "-b", "other"], { cwd: path.join(path.dirname(root), "linked") }), accepted: true },
  {
    name: "a linked worktree's config.worktree written",
    given: withWorktree,
    act: ({ root }) => fs.writeFileSync(path.join(root, ".git", "worktrees", "linked", "config.worktree"), "[filter \"x\"]\n\tclean = /tmp/evil\n"),
    accepted: false,
    names: /^a linked worktree's configuration .*worktrees\/linked\/config\.worktree$/
  },
  {
    name: "a linked worktree's commondir rewritten",
    given: withWorktree,
    act: ({ root }) => fs.writeFileSync(path.join(root, ".git", "worktrees", "linked", "commondir"), "/elsewhere\n"),
    accepted: false,
    names: /^a linked worktree's common-directory pointer .*worktrees\/linked\/commondir$/
  },
  {
    name: "a commondir written into the common directory, seen from a linked worktree",
    given: withWorktree,
    at: ({ root }) => path.join(path.dirname(root), "linked"),
    act: ({ root }) => fs.writeFileSync(path.join(root, ".git", "commondir"), "/elsewhere\n"),
    accepted: false,
    names: /^the common-directory pointer .*repo\/\.git\/commondir$/
  },
  // A relative core.hooksPath is from the top of the work tree, as git runs the hooks.
  {
    name: "a hook added where a relative core.hooksPath names",
    given: ({ git }) => void git("config", "core.hooksPath", "myhooks"),
    act: ({ root }) => {
      fs.mkdirSync(path.join(root, "myhooks"))
      fs.writeFileSync(path.join(root, "myhooks", "pre-commit"), "#!/bin/sh\n", { mode: 0o755 })
    },
    accepted: false,
    names: /^the hooks a configuration names .*repo\/myhooks\/pre-commit$/
  },
  // Settings read through links, as git reads them.
  {
    name: "a file included by a ~/.gitconfig that is a link changed",
    given: ({ home }) => {
      fs.mkdirSync(path.join(home, "dotfiles"))
      fs.writeFileSync(path.join(home, "dotfiles", "gitconfig"), "[include]\n\tpath = ~/dotfiles/extra.inc\n")
      fs.writeFileSync(path.join(home, "dotfiles", "extra.inc"), "[core]\n\tautocrlf = false\n")
      fs.symlinkSync("dotfiles/gitconfig", path.join(home, ".gitconfig"))
    },
    act: ({ home }) => fs.writeFileSync(path.join(home, "dotfiles", "extra.inc"), "[filter \"x\"]\n\tclean = /tmp/evil\n"),
    accepted: false,
    names: /^a file a configuration includes .*dotfiles\/extra\.inc$/
  },
  {
    name: "the target of an included link changed",
    given: ({ git, home }) => {
      fs.writeFileSync(path.join(home, "real.inc"), "[core]\n\tautocrlf = false\n")
      fs.symlinkSync("real.inc", path.join(home, "link.inc"))
      git("config", "include.path", path.join(home, "link.inc"))
    },
    act: ({ home }) => fs.writeFileSync(path.join(home, "real.inc"), "[filter \"x\"]\n\tclean = /tmp/evil\n"),
    accepted: false,
    names: /^a file a configuration includes .*link\.inc$/
  },
  { name: "the target of an included link rewritten as it was", given: ({ git, home }) => {
    fs.writeFileSync(path.join(home, "real.inc"), "[core]\n\tautocrlf = false\n")
    fs.symlinkSync("real.inc", path.join(home, "link.inc"))
    git("config", "include.path", path.join(home, "link.inc"))
  }, act: ({ home }) => fs.writeFileSync(path.join(home, "real.inc"), "[core]\n\tautocrlf = false\n"), accepted: true }
]

describe("GitSettings.snapshot and compare, against a real repository", () => {
  for (const row of table) {
    it(`${row.accepted ? "accepted" : "rejected"}: ${row.name}`, () => {
      const w = world({ userConfig: row.userConfig ?? false })
      if (row.name.startsWith("an included file that did not exist")) w.git("config", "include.path", path.join(w.home, "later.inc"))
      row.given?.(w)
      const at = row.at?.(w) ?? w.root
      const before = GitSettings.snapshot(at, w.env)
      row.act(w)
      const changes = GitSettings.compare(before, GitSettings.snapshot(at, w.env))
      if (row.accepted) {
        expect(changes).toEqual([])
      } else {
        expect(changes.length).toBeGreaterThan(0)
        expect(changes.map((change) => change.key)).toContainEqual(expect.stringMatching(row.names!))
      }
    })
  }
})

describe("GitSettings.namedBy", () => {
  // a configuration's text → the includes and hooks directories it names
  const table: ReadonlyArray<readonly [string, ReadonlyArray<string>, ReadonlyArray<string>]> = [
    ["[include]\n\tpath = ~/a.inc\n", ["/home/u/a.inc"], []],
    ["[includeIf \"gitdir:/w/\"]\n  path = rel.inc ; a comment\n", ["/etc/x/rel.inc"], []],
    ["[core]\n\thooksPath = \"/h\"\n[user]\n\tpath = /not-an-include\n", [], ["/h"]],
    ["[include] path = /one-line.inc\n", ["/one-line.inc"], []],
    ["[core]\n\tautocrlf = false\n", [], []],
    // A relative hooks directory is from the top of the work tree; a relative include is not.
    ["[core]\n\thooksPath = myhooks\n[include]\n\tpath = rel.inc\n", ["/etc/x/rel.inc"], ["/w/myhooks"]]
  ]
  for (const [text, includes, hooks] of table) {
    it(JSON.stringify(text), () => {
      expect(GitSettings.namedBy(text, "/etc/x/config", "/home/u", "/w")).toEqual({ includes, hooks })
    })
  }
})

describe("GitSettings.blocker", () => {
  it("names what changed, says to run no git, and how to resume", () => {
    const changes: ReadonlyArray<GitSettings.Change> = [{ key: "the .git entry /w/.git", before: "directory, dev 1 ino 2 mode 755", after: "directory, dev 1 ino 3 mode 755" }]
    const blocker = GitSettings.blocker("T-1", changes)
    expect(blocker).toMatchObject({ category: "scope_violation", owner: "user" })
    expect(blocker.requiredAction).toContain("the .git entry /w/.git")
    expect(blocker.requiredAction).toContain("Run no git in this checkout")
    expect(blocker.requiredAction).toContain("ratchet unblock T-1 --to RUNNING")
    expect(GitSettings.isBlocker(blocker)).toBe(true)
    expect(GitSettings.isBlocker({ category: "scope_violation", owner: "user", requiredAction: "other" })).toBe(false)
  })
})

describe("the blocker's action fits the event schema's bound (4096 characters)", () => {
  const bound = 4096
  const other = { category: "decision_needed", owner: "user", requiredAction: `Decide. ${"x".repeat(4080)}` } as const

  it("a hook planted as a link with a 4000-character target (the longest Linux takes): described by digest", () => {
    const w = world()
    const before = GitSettings.snapshot(w.root, w.env)
    const target = `/${"t".repeat(3999)}`
    fs.symlinkSync(target, path.join(w.root, ".git", "hooks", "pre-commit"))
    const changes = GitSettings.compare(before, GitSettings.snapshot(w.root, w.env))
    const blocker = GitSettings.blocker("T-1", changes)
    expect(blocker.requiredAction.length).toBeLessThanOrEqual(bound)
    expect(blocker.requiredAction).not.toContain(target)
    expect(blocker.requiredAction).toMatch(/hooks\/pre-commit: not looked at → link → \/t+… \(4000 characters, sha256:[0-9a-f]{32}\)/)
    expect(blocker.requiredAction).toContain("ratchet unblock T-1 --to RUNNING")
    expect(GitSettings.merged(blocker, other).requiredAction.length).toBeLessThanOrEqual(bound)
  })

  it("changes of 5000-character descriptions, eight of them, and a merged 4096-character blocker: clipped, what to do kept", () => {
    const long = `link → ${"a/".repeat(2500)}`
    const changes: ReadonlyArray<GitSettings.Change> = Array.from({ length: 9 }, (_, i) => ({ key: `the repository's hooks /w/.git/hooks/h${i}`, before: "absent", after: long }))
    const blocker = GitSettings.blocker("T-1", changes)
    expect(blocker.requiredAction.length).toBeLessThanOrEqual(bound)
    expect(blocker.requiredAction).toContain("/w/.git/hooks/h0")
    expect(blocker.requiredAction).toContain("Run no git in this checkout")
    expect(blocker.requiredAction).toContain("ratchet unblock T-1 --to RUNNING")
    const merged = GitSettings.merged(blocker, other)
    expect(merged.requiredAction.length).toBeLessThanOrEqual(bound)
    expect(merged.requiredAction.startsWith(blocker.requiredAction)).toBe(true)
    expect(merged.requiredAction).toContain("It also blocked on: Decide.")
    expect(merged.category).toBe("decision_needed")
  })
})
