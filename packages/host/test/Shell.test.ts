/**
 * The shell classification, from tables written by hand: commands that approve (however quoted,
 * wrapped or nested) and look-alikes that do not; the paths commands write and the ones that only
 * look like writes; destructive commands and their harmless relatives; hostile and oversized text.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Shell from "../src/Shell.js"

describe("Shell.classify: approvals", () => {
  const approving: ReadonlyArray<readonly [string, Shell.Approval["subcommand"]]> = [
    ["ratchet approve t-1234abcd spec", "approve"],
    ["ratchet --json approve t-1234abcd plan", "approve"],
    ["'rat''chet' approve t-1 spec", "approve"],
    ["r\\atchet approve t-1 spec", "approve"],
    ["\"ratchet\" \"approve\" t-1 spec", "approve"],
    ["/usr/local/bin/ratchet approve t-1 spec", "approve"],
    ["./node_modules/.bin/ratchet approve t-1 spec", "approve"],
    ["npx ratchet approve t-1 spec", "approve"],
    ["npx -y @ratchet/cli approve t-1 spec", "approve"],
    ["npm exec ratchet -- approve t-1 spec", "approve"],
    ["node apps/cli/dist/bin.js approve t-1 spec", "approve"],
    ["RATCHET_ACTOR=user:alice ratchet approve t-1 spec", "approve"],
    ["env RATCHET_ACTOR=user:alice ratchet approve t-1 spec", "approve"],
    ["sudo -u alice ratchet approve t-1 spec", "approve"],
    ["timeout 5 ratchet approve t-1 spec", "approve"],
    ["echo y | ratchet approve t-1 spec", "approve"],
    ["cd /w && ratchet approve t-1 spec", "approve"],
    ["true; ratchet approve t-1 spec", "approve"],
    ["false || ratchet approve t-1 spec", "approve"],
    ["(ratchet approve t-1 spec)", "approve"],
    ["{ ratchet approve t-1 spec; }", "approve"],
    ["sh -c 'ratchet approve t-1 spec'", "approve"],
    ["bash -lc \"ratchet approve t-1 spec\"", "approve"],
    ["bash -c \"sh -c 'ratchet approve t-1 spec'\"", "approve"],
    ["echo $(ratchet approve t-1 spec)", "approve"],
    ["echo `ratchet approve t-1 spec`", "approve"],
    ["x=\"$(ratchet approve t-1 spec)\"", "approve"],
    ["eval ratchet approve t-1 spec", "approve"],
    ["$(echo ratchet) approve t-1 spec", "approve"],
    ["$RATCHET approve t-1 spec", "approve"],
    ["ratchet \\\n approve t-1 spec", "approve"],
    ["ratchet reopen t-1 --reason again", "reopen"],
    ["ratchet unblock t-1 --resolve succeeded", "unblock --resolve"],
    ["ratchet unblock t-1 --resolve=failed", "unblock --resolve"],
    // found in review: reserved words, ANSI-C quoting, brace expansion, shells reading stdin,
    // options between -c and its script, launchers and wrappers
    ["! ratchet approve t-1 spec", "approve"],
    ["if ratchet approve t-1 spec; then :; fi", "approve"],
    ["for i in 1; do ratchet approve t-1 spec; done", "approve"],
    ["while ratchet approve t-1 spec; do break; done", "approve"],
    ["ratchet $'approve' t-1 spec", "approve"],
    ["$'ratchet' approve t-1 spec", "approve"],
    ["ratchet $\"approve\" t-1 spec", "approve"],
    ["{ratchet,} approve t-1 spec", "approve"],
    ["ratchet {approve,} t-1 spec", "approve"],
    ["echo 'ratchet approve t-1 spec' | sh", "approve"],
    ["bash <<< 'ratchet approve t-1 spec'", "approve"],
    ["sh -c -- 'ratchet approve t-1 spec'", "approve"],
    ["bash -c -e 'ratchet approve t-1 spec'", "approve"],
    ["echo \"$(echo \"it's\")\"; ratchet approve t-1 spec", "approve"],
    ["cat <<'EOF' > notes.txt\nit's fine\nEOF\nratchet approve t-1 spec", "approve"],
    ["npx -p @ratchet/cli ratchet approve t-1 spec", "approve"],
    ["pnpm dlx @ratchet/cli approve t-1 spec", "approve"],
    ["yarn ratchet approve t-1 spec", "approve"],
    ["npm x ratchet approve t-1 spec", "approve"],
    ["setsid ratchet approve t-1 spec", "approve"],
    ["flock /tmp/lock ratchet approve t-1 spec", "approve"],
    ["xargs -a /dev/null ratchet approve t-1 spec", "approve"]
  ]
  for (const [command, subcommand] of approving) {
    it(`finds ${subcommand} in ${JSON.stringify(command)}`, () => {
      expect(Shell.classify(command).approvals.map((approval) => approval.subcommand)).toEqual([subcommand])
    })
  }

  const harmless: ReadonlyArray<string> = [
    "ratchet status t-1",
    "ratchet verify t-1",
    "ratchet unblock t-1 --to VERIFYING --resolution fixed",
    "ratchet approve --help" // still an approval by its words: see below
  ].slice(0, 3).concat([
    "echo ratchet approve t-1 spec",
    "echo 'ratchet approve t-1 spec'",
    "grep -r \"ratchet approve\" docs",
    "git commit -m 'ratchet approve is for people'",
    "# ratchet approve t-1 spec",
    "cat <<< 'ratchet approve t-1'",
    "npm test",
    "npx vitest run approve.test.ts",
    "node scripts/approve.js"
  ])
  for (const command of harmless) {
    it(`finds no approval in ${JSON.stringify(command)}`, () => {
      expect(Shell.classify(command).approvals).toEqual([])
    })
  }
})

describe("Shell.classify: writes", () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, boolean]> = [
    ["echo hi > out.txt", ["out.txt"], false],
    ["echo hi >> log/out.txt", ["log/out.txt"], false],
    ["echo hi >| out.txt", ["out.txt"], false],
    ["make 2> errors.txt", ["errors.txt"], false],
    ["npm test &> all.txt", ["all.txt"], false],
    ["echo hi 1>'quoted name.txt'", ["quoted name.txt"], false],
    ["echo hi >&2", [], false],
    ["echo hi 2>&1 > /dev/null", [], false],
    ["cat < input.txt", [], false],
    ["cat <<EOF > generated.ts", ["generated.ts"], false],
    ["tee a.txt b.txt < in", ["a.txt", "b.txt"], false],
    ["rm -f src/a.ts src/b.ts", ["src/a.ts", "src/b.ts"], false],
    ["rm -- -weird", ["-weird"], false],
    ["mv src/a.ts lib/a.ts", ["src/a.ts", "lib/a.ts"], false],
    ["cp -r src/ backup/", ["backup/"], false],
    ["cp --target-directory=out a b", ["out"], false],
    ["touch src/new.ts", ["src/new.ts"], false],
    ["mkdir -p src/feature", ["src/feature"], false],
    ["ln -s ../a b", ["b"], false],
    ["truncate -s 0 big.log", ["big.log"], false],
    ["chmod 755 bin/run", ["bin/run"], false],
    ["dd if=/dev/zero of=disk.img bs=1M count=1", ["disk.img"], false],
    ["sed -i 's/a/b/' src/a.ts", ["src/a.ts"], false],
    ["sed -i.bak -e 's/a/b/' src/a.ts src/b.ts", ["src/a.ts", "src/b.ts"], false],
    ["perl -pi -e 's/a/b/' src/a.ts", ["src/a.ts"], false],
    ["git rm src/old.ts", ["src/old.ts"], false],
    ["git -C /w mv a b", ["a", "b"], false],
    ["git reset --hard HEAD~1", [], true],
    ["git checkout -- .", [], true],
    ["git apply fix.patch", [], true],
    ["patch -p1 < fix.patch", [], true],
    ["tar -xzf dist.tgz", [], true],
    ["sudo tee /etc/hosts < hosts", ["/etc/hosts"], false],
    ["bash -c 'echo x > inner.txt'", ["inner.txt"], false],
    ["echo $(touch made.txt)", ["made.txt"], false],
    ["cd .ratchet && echo x > state.json", [".ratchet/state.json"], false],
    ["cd docs; touch ../src/a.ts", ["docs/../src/a.ts"], false],
    ["cd /tmp && touch scratch.txt", ["/tmp/scratch.txt"], false],
    ["cp -t .ratchet evil.json", [".ratchet"], false],
    ["echo hi 1<>.ratchet/state.json", [".ratchet/state.json"], false],
    ["if true; then rm -rf docs; fi", ["docs"], false],
    ["echo x > /dev/tty", [], false]
  ]
  for (const [command, paths, unknown] of cases) {
    it(`${JSON.stringify(command)} writes ${JSON.stringify(paths)}${unknown ? " and more" : ""}`, () => {
      expect(Shell.classify(command).writes).toEqual({ paths, unknown })
    })
  }

  const readOnly: ReadonlyArray<string> = [
    "ls -la",
    "cat src/a.ts",
    "grep -rn 'a > b' src",
    "echo 'a > b'",
    "echo a \\> b",
    "sed 's/a/b/' src/a.ts",
    "git status",
    "git diff HEAD",
    "git log --oneline",
    "tar -tzf dist.tgz",
    "find . -name '*.ts'",
    "npm test",
    "node -e 'process.stdout.write(\"x > y\")'",
    "git commit -m \"$(cat <<'EOF'\nhandle > in templates\nEOF\n)\"",
    "git stash list",
    "git stash show -p",
    "git clean -n",
    "git checkout -b feature",
    "git switch -c feature",
    "git restore --staged src/a.ts"
  ]
  for (const command of readOnly) {
    it(`${JSON.stringify(command)} writes nothing it names`, () => {
      expect(Shell.classify(command).writes).toEqual({ paths: [], unknown: false })
    })
  }
})

describe("Shell.classify: destructive", () => {
  const destructive: ReadonlyArray<string> = [
    "rm -rf build",
    "rm -fr /",
    "rm -r -f node_modules",
    "rm --recursive --force dist",
    "sudo rm -rf /var/lib/x",
    "git reset --hard",
    "git clean -fdx",
    "git push --force origin main",
    "git push -f",
    "git push origin +main",
    "git push --force-with-lease",
    "git push origin --delete feature",
    "git checkout -- src/a.ts",
    "git checkout .",
    "git restore src/a.ts",
    "git branch -D feature",
    "git stash drop",
    "find . -name '*.log' -delete",
    "find . -exec rm {} ;",
    "chmod -R 777 .",
    "dd if=/dev/zero of=/dev/sda",
    "mkfs.ext4 /dev/sdb1",
    "rsync -a --delete src/ dst/",
    "sh -c 'rm -rf build'",
    "echo $(git reset --hard)"
  ]
  for (const command of destructive) {
    it(`${JSON.stringify(command)} is destructive`, () => {
      expect(Shell.classify(command).destructive.length).toBeGreaterThan(0)
    })
  }
  const safe: ReadonlyArray<string> = [
    "rm build/a.o",
    "rm -r build",
    "rm -f a.txt",
    "git reset HEAD src/a.ts",
    "git clean -n",
    "git push origin main",
    "git checkout -b feature",
    "git branch -d merged",
    "git stash",
    "find . -name '*.log'",
    "echo rm -rf /",
    "chmod 644 a.txt"
  ]
  for (const command of safe) {
    it(`${JSON.stringify(command)} is not destructive`, () => {
      expect(Shell.classify(command).destructive).toEqual([])
    })
  }
})

describe("Shell.classify: hostile input", () => {
  it("unterminated quotes, substitutions and backquotes end the text without throwing", () => {
    for (const command of ["echo 'open", "echo \"open", "echo $(open", "echo `open", "ratchet approve 'x", "\\", "$(", "((((", "> ", "2>", "&>", "<<<"]) {
      expect(() => Shell.classify(command)).not.toThrow()
    }
    expect(Shell.classify("ratchet approve 'x").approvals).toHaveLength(1)
  })

  it("nesting is followed a few levels deep, and deeper nesting is bounded", () => {
    const nest = (levels: number) => `${"echo $(".repeat(levels)}ratchet approve t-1 spec${")".repeat(levels)}`
    expect(Shell.classify(nest(3)).approvals).toHaveLength(1)
    expect(Shell.classify(`sh -c "bash -c 'ratchet approve t-1 spec'"`).approvals).toHaveLength(1)
    // beyond the bound the body is judged by its words: nesting cannot hide an approval
    const deep = Shell.classify(nest(1_000))
    expect(deep.approvals.map((approval) => approval.subcommand)).toEqual(["approve"])
    expect(Shell.classify(`${"echo $(".repeat(1_000)}ratchet status${")".repeat(1_000)}`).approvals).toEqual([])
    expect(() => Shell.classify("echo " + "$(".repeat(10_000))).not.toThrow()
  })

  it("an oversized command (over 1 MiB) is read as a shell reads it for 64 KiB, then by its words, and may write anything", () => {
    const command = `ratchet approve t-1 spec; echo ${"x".repeat(2 * 1024 * 1024)}; ratchet approve t-2 plan`
    const classified = Shell.classify(command)
    expect(classified.approvals.map((approval) => approval.subcommand)).toEqual(["approve", "approve"])
    expect(classified.writes.unknown).toBe(true)
    expect(Shell.classify(`${" ".repeat(70_000)}; ratchet approve t-1 spec`).approvals).toHaveLength(1)
  })

  it("long runs of assignments, wrapper options or words stay linear and are still read", () => {
    expect(Shell.classify(`${"a= ".repeat(21_800)}ratchet approve t-1 spec`).approvals).toHaveLength(1)
    expect(Shell.classify(`sudo ${"- ".repeat(32_000)}ratchet approve t-1 spec`).approvals).toHaveLength(1)
    expect(() => Shell.classify(`${"'".repeat(100_000)}`)).not.toThrow()
    expect(() => Shell.classify(`${"\\".repeat(100_000)}`)).not.toThrow()
    expect(() => Shell.classify(`${"$(".repeat(50_000)}`)).not.toThrow()
  })

  it("never throws on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("a", " ", "'", "\"", "\\", "$", "(", ")", "`", ">", "<", "&", "|", ";", "\n", "#", "{", "}", "r", "-") , maxLength: 200 }), (command) => {
        const classified = Shell.classify(command)
        return Array.isArray(classified.commands) && Array.isArray(classified.writes.paths)
      }),
      { numRuns: 2000 }
    )
  })
})
