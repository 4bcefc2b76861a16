/**
 * The guard policy, from tables written by hand: for every task state, which calls pass and which
 * are denied (with a reason naming the task and a fix); scope, lease, store and temporary paths;
 * the working directory judged against the project root; person-only acts denied in every state;
 * commands Ratchet cannot read denied under a task and asked about without one; destructive
 * commands asked about; stop blocked once.
 */
import type * as Event from "@ratchet/kernel/Event"
import { describe, expect, it } from "@effect/vitest"
import * as Guard from "../src/Guard.js"
import type * as HostEvent from "../src/HostEvent.js"

const task = (state: Event.TaskState, overrides: Partial<Guard.Task> = {}): Guard.Task => ({
  taskId: "t-1234abcd",
  state,
  allowedScope: ["src/**", "test/**"],
  forbiddenScope: ["src/generated/**"],
  leaseHolder: null,
  ...overrides
})

const context = (current: Guard.Task | null): Guard.Context => ({
  root: "/home/dev/project",
  cwd: "/home/dev/project",
  storeDirectory: "/home/dev/.ratchet",
  home: "/home/dev",
  temporary: ["/tmp"],
  task: current,
  ambiguous: []
})

const edit = (file: string): HostEvent.ToolCall => ({ id: "toolu_1", tool: "Edit", action: { _tag: "Write", paths: [file] } })
const bash = (command: string): HostEvent.ToolCall => ({ id: "toolu_2", tool: "Bash", action: { _tag: "Shell", command } })
const read = (file: string): HostEvent.ToolCall => ({ id: "toolu_3", tool: "Read", action: { _tag: "Read", paths: [file] } })

const states: ReadonlyArray<Event.TaskState> = [
  "INITIALIZING",
  "INTERVIEWING",
  "SPEC_READY",
  "SPEC_APPROVED",
  "PREFLIGHT",
  "PLAN_READY",
  "PLAN_APPROVED",
  "RUNNING",
  "VERIFYING",
  "COMPLETED",
  "REOPENED",
  "PAUSED",
  "BLOCKED",
  "FAILED",
  "CANCELLED"
]

describe("Guard.decide: writes by state", () => {
  // Written by hand: the only state in which an in-scope edit is allowed.
  const allowedIn = new Set<Event.TaskState>(["RUNNING"])
  const fixes: Readonly<Record<Event.TaskState, string>> = {
    INITIALIZING: "ratchet status t-1234abcd",
    INTERVIEWING: "ratchet status t-1234abcd",
    SPEC_READY: "ratchet status t-1234abcd",
    SPEC_APPROVED: "ratchet status t-1234abcd",
    PREFLIGHT: "ratchet status t-1234abcd",
    PLAN_READY: "ratchet status t-1234abcd",
    PLAN_APPROVED: "ratchet run t-1234abcd",
    RUNNING: "",
    VERIFYING: "ratchet verify t-1234abcd",
    COMPLETED: "ratchet task create",
    REOPENED: "ratchet status t-1234abcd",
    PAUSED: "ratchet resume t-1234abcd",
    BLOCKED: "ratchet status t-1234abcd",
    FAILED: "ratchet task create",
    CANCELLED: "ratchet task create"
  }
  for (const state of states) {
    it(`an in-scope Edit while ${state} is ${allowedIn.has(state) ? "allowed" : "denied with the state and the next step"}`, () => {
      const decision = Guard.decide(edit("/home/dev/project/src/a.ts"), context(task(state)))
      if (allowedIn.has(state)) {
        expect(decision).toEqual({ _tag: "Allow" })
      } else {
        expect(decision._tag).toBe("Deny")
        if (decision._tag !== "Deny") return
        expect(decision.reason).toContain(`Task t-1234abcd is ${state}`)
        expect(decision.fix).toContain(fixes[state])
      }
    })
    it(`a shell write into the scope while ${state} follows the same rule`, () => {
      expect(Guard.decide(bash("echo x > src/a.ts"), context(task(state)))._tag).toBe(allowedIn.has(state) ? "Allow" : "Deny")
    })
    it(`a read while ${state} is allowed`, () => {
      expect(Guard.decide(read("/home/dev/project/src/a.ts"), context(task(state)))).toEqual({ _tag: "Allow" })
    })
  }
})

describe("Guard.decide: scope, lease, store, temporary files", () => {
  const running = context(task("RUNNING"))
  const cases: ReadonlyArray<readonly [string, HostEvent.ToolCall, Guard.Context, "Allow" | "Deny" | "Ask", string]> = [
    ["an edit in the allowed scope", edit("/home/dev/project/src/a.ts"), running, "Allow", ""],
    ["a relative edit in the allowed scope", edit("test/a.test.ts"), running, "Allow", ""],
    ["an edit outside the allowed scope", edit("/home/dev/project/package.json"), running, "Deny", "outside the allowed scope"],
    ["an edit in the forbidden scope", edit("/home/dev/project/src/generated/x.ts"), running, "Deny", "forbidden scope"],
    ["an edit escaping the workspace by ..", edit("/home/dev/project/src/../../other/x.ts"), running, "Deny", "outside the workspace"],
    ["an edit outside the workspace", edit("/etc/passwd"), running, "Deny", "outside the workspace"],
    ["an edit in a temporary directory", edit("/tmp/scratch.txt"), running, "Allow", ""],
    ["an out-of-scope edit in a workspace that lives in a temporary directory", edit("/tmp/w/README.md"), { ...running, root: "/tmp/w", cwd: "/tmp/w" }, "Deny", "outside the allowed scope"],
    ["an edit of .ratchet/", edit("/home/dev/project/.ratchet/tasks/x/spec.md"), running, "Deny", "Ratchet's own"],
    ["an edit of the runtime store", edit("/home/dev/.ratchet/ratchet.db"), running, "Deny", "Ratchet's own"],
    ["an edit of the store with no task", edit("/home/dev/.ratchet/ratchet.db"), context(null), "Deny", "Ratchet's own"],
    ["an edit with no task in progress", edit("/home/dev/project/anything.ts"), context(null), "Allow", ""],
    ["an edit with several tasks in progress and none named", edit("src/a.ts"), { ...context(null), ambiguous: ["t-1 RUNNING", "t-2 VERIFYING"] }, "Deny", "RATCHET_TASK"],
    ["a scratch file with several tasks in progress", edit("/tmp/x"), { ...context(null), ambiguous: ["t-1 RUNNING", "t-2 VERIFYING"] }, "Allow", ""],
    ["an edit while another owner holds the lease", edit("src/a.ts"), context(task("RUNNING", { leaseHolder: "runner 4242 on ci-1" })), "Deny", "held by runner 4242 on ci-1"],
    ["an edit with no allowed scope given", edit("package.json"), context(task("RUNNING", { allowedScope: [] })), "Allow", ""],
    ["rm -rf of the store", bash("rm -rf ~/.ratchet"), running, "Deny", "Ratchet's own"],
    ["rm -rf of the workspace root", bash("rm -rf ."), running, "Deny", "outside the allowed scope"],
    ["cp into the workspace root with no task", bash("cp /tmp/patch.diff ."), context(null), "Allow", ""],
    ["a redirect through $RATCHET_HOME", bash("echo x > $RATCHET_HOME/ratchet.db"), running, "Deny", "Ratchet's own"],
    ["a redirect through ${HOME}/.ratchet", bash("echo x > \"${HOME}/.ratchet/ratchet.db\""), context(null), "Deny", "Ratchet's own"],
    ["a write under cd .ratchet", bash("cd .ratchet && echo x > state.json"), context(null), "Deny", "Ratchet's own"],
    ["a write through an unknown variable that names ratchet", bash("echo x > $MY_RATCHET_DIR/x"), context(null), "Deny", "Ratchet's own"],
    // A write's target the text does not resolve is unreadable (ADR 0040, 2026-12-06): denied under a contract, asked about without one.
    ["a write through an unknown variable while RUNNING", bash("echo x > $OUT/x"), running, "Deny", "cannot resolve"],
    ["a write through an unknown variable with no task", bash("echo x > $OUT/x"), context(null), "Ask", "cannot resolve"],
    ["a write through an unknown variable with several tasks", bash("cp a.ts \"$OUT\""), { ...context(null), ambiguous: ["t-1 RUNNING", "t-2 VERIFYING"] }, "Deny", "cannot resolve"],
    ["a write through a resolved variable while RUNNING", bash("echo x > \"$PWD/src/a.ts\""), running, "Allow", ""],
    ["a write through an unknown variable while INTERVIEWING", bash("echo x > $OUT/x"), context(task("INTERVIEWING")), "Deny", "INTERVIEWING"],
    ["sqlite3 behind sudo", bash("sudo sqlite3 ~/.ratchet/ratchet.db 'DELETE FROM ratchet_events'"), context(null), "Deny", "database shell"],
    ["cd /tmp then a scratch file", bash("cd /tmp && touch scratch.txt"), context(task("INTERVIEWING")), "Allow", ""],
    ["a redirect into .ratchet/", bash("echo x > .ratchet/project.json"), running, "Deny", "Ratchet's own"],
    ["sqlite3 on the store", bash("sqlite3 ~/.ratchet/ratchet.db 'DELETE FROM ratchet_events'"), running, "Deny", "database shell"],
    ["a shell write outside the scope", bash("touch package.json"), running, "Deny", "outside the allowed scope"],
    ["a shell write into /tmp while INTERVIEWING", bash("echo x > /tmp/notes.txt"), context(task("INTERVIEWING")), "Allow", ""],
    ["an unknown write while INTERVIEWING", bash("git reset --hard"), context(task("INTERVIEWING")), "Deny", "INTERVIEWING"],
    ["a destructive command while RUNNING", bash("rm -rf src/old"), running, "Ask", "deletes without asking"],
    ["git push --force with no task", bash("git push --force"), context(null), "Ask", "rewrites or deletes history"],
    ["a test run", bash("npm test"), context(task("INTERVIEWING")), "Allow", ""],
    // Scripts run from files: their writes are unknown, so they count as writes anywhere.
    ["a script run by its interpreter while INTERVIEWING", bash("node scripts/report.js"), context(task("INTERVIEWING")), "Deny", "plan step"],
    ["a script run by its interpreter while RUNNING", bash("node scripts/report.js"), running, "Allow", ""],
    ["a shell script while RUNNING", bash("bash /tmp/x.sh"), running, "Allow", ""],
    ["a script with no task", bash("python3 /tmp/x.py"), context(null), "Allow", ""],
    ["a script while PLAN_APPROVED", bash("python3 /tmp/x.py"), context(task("PLAN_APPROVED")), "Deny", "ratchet run t-1234abcd"],
    ["a script while VERIFYING", bash("sh /tmp/x.sh"), context(task("VERIFYING")), "Deny", "counts as writing anywhere"],
    ["a script while another owner holds the lease", bash("perl x.pl"), context(task("RUNNING", { leaseHolder: "runner 4242 on ci-1" })), "Deny", "held by runner 4242 on ci-1"],
    ["a script with several tasks in progress", bash("ruby x.rb"), { ...context(null), ambiguous: ["t-1 RUNNING", "t-2 VERIFYING"] }, "Deny", "RATCHET_TASK"],
    ["a script handed the store while RUNNING", bash("python3 x.py ~/.ratchet/ratchet.db"), running, "Deny", "Ratchet's own"],
    ["a script handed $RATCHET_HOME while RUNNING", bash("node x.js \"$RATCHET_HOME\""), running, "Deny", "Ratchet's own"],
    // Extractors, downloaders, patchers: judged by the directory they write below.
    ["unzip into the home directory", bash("unzip -o /tmp/a.zip -d ~"), running, "Deny", "Ratchet's own"],
    ["unzip into the workspace root", bash("unzip /tmp/a.zip"), running, "Deny", "Ratchet's own"],
    ["unzip into the scope", bash("unzip -o /tmp/a.zip -d src/vendor"), running, "Allow", ""],
    ["unzip into the forbidden scope's parent", bash("unzip /tmp/a.zip -d src"), running, "Deny", "forbidden scope"],
    ["unzip into a computed directory", bash("unzip /tmp/a.zip -d \"$OUT\""), running, "Deny", "cannot resolve"],
    ["unzip into a temporary directory while INTERVIEWING", bash("unzip /tmp/a.zip -d /tmp/x"), context(task("INTERVIEWING")), "Allow", ""],
    ["tar -x into the parent (the home directory, which holds the store)", bash("tar -xf /tmp/a.tar -C .."), running, "Deny", "Ratchet's own"],
    ["tar -x outside the workspace", bash("tar -xf /tmp/a.tar -C /opt/x"), running, "Deny", "outside the workspace"],
    ["tar -x from inside the scope", bash("cd test && tar -xf /tmp/a.tar"), running, "Allow", ""],
    ["tar -x with absolute names", bash("tar -xPf /tmp/a.tar"), running, "Deny", "Ratchet's own"],
    ["curl -o outside the scope", bash("curl -o README.md https://example.com/x"), running, "Deny", "outside the allowed scope"],
    ["curl -O at the root", bash("curl -O https://example.com/x"), running, "Deny", "Ratchet's own"],
    ["curl -o into the scope", bash("curl -sSLo src/x.json https://example.com/x"), running, "Allow", ""],
    ["wget -O outside the scope", bash("wget -O README.md https://example.com/x"), running, "Deny", "outside the allowed scope"],
    ["wget -P into the scope", bash("wget -P test/fixtures https://example.com/x"), running, "Allow", ""],
    ["git apply at the root", bash("git apply /tmp/p.diff"), running, "Deny", "Ratchet's own"],
    ["git apply below the scope", bash("git -C test apply /tmp/p.diff"), running, "Allow", ""],
    ["git am", bash("git am /tmp/p.mbox"), running, "Deny", "cannot resolve"],
    ["patch at the root", bash("patch -p1 < /tmp/p.diff"), running, "Deny", "Ratchet's own"],
    ["patch -d into the scope", bash("patch -d test -p1 < /tmp/p.diff"), running, "Allow", ""],
    // Links: the link in scope, and what it points at too.
    ["a symbolic link up out of the scope", bash("ln -s .. src/up"), running, "Deny", "Ratchet's own"],
    ["a symbolic link to a file outside the scope", bash("ln -s ../package.json src/p.json"), running, "Deny", "not wholly inside the allowed scope"],
    ["a symbolic link outside the workspace", bash("ln -s /etc src/etc"), running, "Deny", "outside the workspace"],
    ["a symbolic link to the store", bash("ln -s ~/.ratchet src/store"), running, "Deny", "Ratchet's own"],
    ["a hard link to a file outside the scope", bash("ln package.json src/p.json"), running, "Deny", "not wholly inside the allowed scope"],
    ["a symbolic link inside the scope", bash("ln -s a.ts src/b.ts"), running, "Allow", ""],
    ["ratchet status", bash("ratchet status t-1234abcd"), context(task("INTERVIEWING")), "Allow", ""],
    ["an MCP tool", { id: null, tool: "mcp__github__create_issue", action: { _tag: "Other" } }, context(task("INTERVIEWING")), "Allow", ""]
  ]
  for (const [name, call, given, expected, mentions] of cases) {
    it(`${name}: ${expected}`, () => {
      const decision = Guard.decide(call, given)
      expect(decision._tag).toBe(expected)
      if (decision._tag !== "Allow") expect(Guard.explain(decision)).toContain(mentions)
    })
  }
})

describe("Guard.decide: protected directories (the runner's agent: the hosts' configuration)", () => {
  // A scope that allows everything, so that a denial is the protection's, not the scope's.
  const open = task("RUNNING", { allowedScope: [], forbiddenScope: [] })
  const agent: Guard.Context = { ...context(open), protectedDirectories: [".claude", ".codex"], protectedFiles: [".mcp.json"] }
  const cases: ReadonlyArray<readonly [string, HostEvent.ToolCall, Guard.Context, "Allow" | "Deny", string]> = [
    ["an edit of .claude/settings.json", edit("/home/dev/project/.claude/settings.json"), agent, "Deny", ".claude/, the host's configuration"],
    ["a relative write of .claude/settings.local.json", edit(".claude/settings.local.json"), agent, "Deny", ".claude/, the host's configuration"],
    ["an edit of .codex/config.toml", edit(".codex/config.toml"), agent, "Deny", ".codex/, the host's configuration"],
    ["a nested .claude", edit("src/.claude/settings.json"), agent, "Deny", ".claude/"],
    ["a redirect into .claude/", bash("echo '{\"disableAllHooks\":true}' > .claude/settings.local.json"), agent, "Deny", ".claude/"],
    ["cd .claude then a write", bash("cd .claude && echo x > settings.json"), agent, "Deny", ".claude/"],
    ["a copy into .codex/", bash("cp /tmp/hooks.json .codex/hooks.json"), agent, "Deny", ".codex/"],
    ["mkdir .claude", bash("mkdir -p .claude"), agent, "Deny", ".claude/"],
    ["a symbolic link to .claude", bash("ln -s ../.claude src/c"), agent, "Deny", ".claude/"],
    ["unzip into .claude", bash("unzip /tmp/a.zip -d .claude"), agent, "Deny", ".claude/"],
    // Case folded and normalised, as macOS and Windows filesystems take a name.
    ["an edit of .Claude/settings.local.json", edit(".Claude/settings.local.json"), agent, "Deny", ".claude/, the host's configuration"],
    ["an edit of .CODEX/config.toml", edit(".CODEX/config.toml"), agent, "Deny", ".codex/, the host's configuration"],
    ["an edit through ./.Claude/../.claude/x", edit("./.Claude/../.claude/x"), agent, "Deny", ".claude/"],
    ["an edit through src/../.cLaUdE/x", edit("/home/dev/project/src/../.cLaUdE/x"), agent, "Deny", ".claude/"],
    ["an edit of .claude. (Windows drops the trailing dot)", edit(".claude./settings.json"), agent, "Deny", ".claude/"],
    ["a redirect into .CLAUDE/", bash("echo '{}' > .CLAUDE/settings.local.json"), agent, "Deny", ".claude/"],
    ["a copy into ./.Codex/", bash("cp /tmp/hooks.json ./.Codex/hooks.json"), agent, "Deny", ".codex/"],
    ["mkdir .Claude", bash("mkdir -p .Claude"), agent, "Deny", ".claude/"],
    ["an edit of .Ratchet/x (Ratchet's own, whatever the case)", edit(".Ratchet/x"), agent, "Deny", "Ratchet's own"],
    // Claude Code's project MCP servers (`.mcp.json`), at any depth, compared the same way.
    ["a write of .mcp.json", edit("/home/dev/project/.mcp.json"), agent, "Deny", ".mcp.json file, the host's configuration"],
    ["a relative edit of .mcp.json", edit(".mcp.json"), agent, "Deny", "Leave .mcp.json alone"],
    ["a nested .mcp.json", edit("src/tools/.mcp.json"), agent, "Deny", ".mcp.json file, the host's configuration"],
    ["an edit of .MCP.json", edit(".MCP.json"), agent, "Deny", ".mcp.json file"],
    ["an edit of .mcp.json. (Windows drops the trailing dot)", edit(".mcp.json."), agent, "Deny", ".mcp.json file"],
    ["an edit of '.mcp.json ' (Windows drops the trailing space)", edit("src/.mcp.json "), agent, "Deny", ".mcp.json file"],
    ["an edit through src/../.mcp.json", edit("src/../.mcp.json"), agent, "Deny", ".mcp.json file"],
    ["a redirect into .mcp.json", bash("echo '{\"mcpServers\":{}}' > .mcp.json"), agent, "Deny", ".mcp.json file"],
    ["an append to a nested .Mcp.Json", bash("echo x >> src/.Mcp.Json"), agent, "Deny", ".mcp.json file"],
    ["a copy onto .mcp.json", bash("cp /tmp/servers.json .mcp.json"), agent, "Deny", ".mcp.json file"],
    ["a move onto .mcp.json", bash("mv src/servers.json ./.mcp.json"), agent, "Deny", ".mcp.json file"],
    ["tee into .mcp.json", bash("echo '{}' | tee .mcp.json"), agent, "Deny", ".mcp.json file"],
    ["sed -i on .mcp.json", bash("sed -i s/a/b/ .mcp.json"), agent, "Deny", ".mcp.json file"],
    ["touch of a nested .mcp.json (handed to a program that may change it)", bash("touch src/.mcp.json"), agent, "Deny", "handed to a program that may change it"],
    ["rm .mcp.json", bash("rm .mcp.json"), agent, "Deny", ".mcp.json file"],
    ["a symbolic link to .mcp.json", bash("ln -s ../.mcp.json src/m"), agent, "Deny", ".mcp.json"],
    // A variable assigned a protected name (its value tested after `=`), however it is assigned.
    ["f=.mcp.json; cp into \"$f\"", bash("f=.mcp.json; cp s.json \"$f\""), agent, "Deny", ".mcp.json file"],
    ["d=.claude; cp into \"$d/settings.json\"", bash("d=.claude; cp x \"$d/settings.json\""), agent, "Deny", ".claude/"],
    ["d=.claude handed to a program as \"$d\"", bash("d=.claude; node x.js \"$d\""), agent, "Deny", ".claude/"],
    ["export d=.Claude", bash("export d=.Claude; node x.js"), agent, "Deny", ".claude/"],
    ["a leading F=.MCP.json. assignment", bash("F=.MCP.json. node x.js"), agent, "Deny", ".mcp.json file"],
    ["env C=.codex", bash("env C=.codex node x.js"), agent, "Deny", ".codex/"],
    ["git commit -m \"x=.claude\" (a message, not an assignment)", bash("git commit -m \"x=.claude\""), agent, "Allow", ""],
    ["NODE_ENV=test npm test", bash("NODE_ENV=test npm test"), agent, "Allow", ""],
    ["an assignment merely named .claude-notes", bash("n=.claude-notes; cp x src/a.ts"), agent, "Allow", ""],
    // A write's target with an expansion or a glob left in it: the guard cannot read it.
    ["a copy onto .mcp.js[o]n (a glob)", bash("cp s.json .mcp.js[o]n"), agent, "Deny", "cannot resolve"],
    ["a redirect into .cl*/settings.json", bash("echo '{}' > .cl*/settings.json"), agent, "Deny", "cannot resolve"],
    ["a copy onto src/.mcp.js?n", bash("cp s.json src/.mcp.js?n"), agent, "Deny", "cannot resolve"],
    ["a tee onto .mcp.{json,x} (a brace list)", bash("tee .mcp.{json,x} < s.json"), agent, "Deny", "cannot resolve"],
    ["a copy onto .{mcp.json,x} (a brace list)", bash("cp s.json .{mcp.json,x}"), agent, "Deny", "cannot resolve"],
    ["a redirect into src/out{1..3}.txt (a brace range)", bash("echo x > src/out{1..3}.txt"), agent, "Deny", "cannot resolve"],
    ["a copy into \"$DIR\" (from the environment)", bash("cp x \"$DIR/settings.json\""), agent, "Deny", "cannot resolve"],
    ["a copy into ${d}/x", bash("cp x ${d}/x"), agent, "Deny", "cannot resolve"],
    ["a copy into $(pwd)/.x", bash("cp x $(pwd)/.x"), agent, "Deny", "cannot resolve"],
    ["a copy into `pwd`/x", bash("cp x `pwd`/x"), agent, "Deny", "cannot resolve"],
    ["tar -x into a globbed directory", bash("tar xf /tmp/a.tar -C .c*"), agent, "Deny", "cannot resolve"],
    ["a glob the command only reads", bash("cat .mcp.js[o]n src/*.ts > /tmp/all.txt"), agent, "Allow", ""],
    ["xargs fed the target", bash("echo .mcp.json | xargs cp s.json"), agent, "Deny", "cannot resolve"],
    ["find -exec writing what it finds", bash("find . -maxdepth 1 -name '.mcp.j*' -exec cp s.json {} +"), agent, "Deny", "cannot resolve"],
    ["xargs fed files to a reader", bash("git ls-files | xargs grep -n TODO"), agent, "Allow", ""],
    // A copy or move lands in its target as its source's name, when the target is a directory (not in the text).
    ["a copy of tpl/.m* into the root", bash("cp tpl/.m* ."), agent, "Deny", "cannot resolve"],
    ["a move of tpl/.c* into the root", bash("mv tpl/.c* ./"), agent, "Deny", "cannot resolve"],
    ["a copy of \"$f\" into the root by its absolute path", bash("cp \"$f\" /home/dev/project"), agent, "Deny", "cannot resolve"],
    ["cp -t . of a substitution", bash("cp -t . \"$(ls tpl | head -1)\""), agent, "Deny", "cannot resolve"],
    ["a copy of a named file into the root", bash("cp tpl/a.json ./"), agent, "Allow", ""],
    ["a move of named files into a directory", bash("mv src/a.ts src/b.ts src/old/"), agent, "Allow", ""],
    // A tree copied or extracted into the workspace root or a protected directory: what it holds is not in the text.
    ["cp -r tpl/. .", bash("cp -r tpl/. ."), agent, "Deny", "Ratchet's own"],
    ["cp -a tpl/. ./", bash("cp -a tpl/. ./"), agent, "Deny", "Ratchet's own"],
    ["cp -R into the root by its absolute path", bash("cp -R /tmp/tpl/. /home/dev/project"), agent, "Deny", "Ratchet's own"],
    ["rsync -a tpl/ ./", bash("rsync -a tpl/ ./"), agent, "Deny", "Ratchet's own"],
    ["rsync -r into the root from below", bash("cd src && rsync -r ../tpl/ .."), agent, "Deny", "Ratchet's own"],
    ["cp -r into .codex", bash("cp -r tpl .codex"), agent, "Deny", ".codex/"],
    ["tar -x into the root", bash("tar xf /tmp/a.tar -C ."), agent, "Deny", "Ratchet's own"],
    ["unzip -d into .Claude", bash("unzip /tmp/a.zip -d .Claude"), agent, "Deny", ".claude/"],
    ["cp -r into a directory below the root", bash("cp -r tpl src/new"), agent, "Allow", ""],
    ["rsync -a into a directory below the root", bash("rsync -a tpl/ src/copy/"), agent, "Allow", ""],
    ["tar -x into a directory below the root (left to the step's end: ADR 0040)", bash("tar xf /tmp/a.tar -C src"), agent, "Allow", ""],
    ["a file (not a tree) copied into the root", bash("cp /tmp/notes.md ."), agent, "Allow", ""],
    ["reading .mcp.json", read(".mcp.json"), agent, "Allow", ""],
    ["cat .mcp.json", bash("cat .mcp.json"), agent, "Allow", ""],
    ["a file merely named .mcp.json.bak", edit("src/.mcp.json.bak"), agent, "Allow", ""],
    ["a file named mcp.json (no dot)", edit("src/mcp.json"), agent, "Allow", ""],
    ["a file named x.mcp.json", edit("src/x.mcp.json"), agent, "Allow", ""],
    ["an edit of .mcp.json by a session without the protection", edit(".mcp.json"), context(open), "Allow", ""],
    ["reading .claude/settings.json", read(".claude/settings.json"), agent, "Allow", ""],
    ["a file merely named .Claude-notes", edit(".Claude-notes"), agent, "Allow", ""],
    ["a directory named .claudex", edit(".claudex/a.ts"), agent, "Allow", ""],
    ["a path that leaves .claude by ..", edit(".claude/../src/a.ts"), agent, "Allow", ""],
    ["an edit beside it", edit("src/a.ts"), agent, "Allow", ""],
    ["a file merely named .claude-notes", edit(".claude-notes"), agent, "Allow", ""],
    // Without the protection (an interactive session), the same write is held to the scope only.
    ["an edit of .claude/settings.json by a session without the protection", edit(".claude/settings.json"), context(open), "Allow", ""]
  ]
  for (const [name, call, given, expected, mentions] of cases) {
    it(`${name}: ${expected}`, () => {
      const decision = Guard.decide(call, given)
      expect(decision._tag).toBe(expected)
      if (decision._tag !== "Allow") expect(Guard.explain(decision)).toContain(mentions)
    })
  }
})

describe("Guard.decide: the working directory and the project root", () => {
  const running = context(task("RUNNING"))
  const cases: ReadonlyArray<readonly [string, HostEvent.ToolCall, string, "Allow" | "Deny", string]> = [
    ["a cwd at the root", edit("/home/dev/project/src/a.ts"), "/home/dev/project", "Allow", ""],
    ["a cwd below the root", bash("echo x > a.ts"), "/home/dev/project/src", "Allow", ""],
    ["a cwd of / with an absolute write into the repository", edit("/home/dev/project/README.md"), "/", "Deny", "outside the project /home/dev/project"],
    ["a cwd of the repository's parent", edit("/home/dev/project/README.md"), "/home/dev", "Deny", "outside the project"],
    ["a cwd of a sibling directory", bash("touch x"), "/home/dev/project-other", "Deny", "outside the project"],
    ["a cwd escaping by ..", bash("ls"), "/home/dev/project/../other", "Deny", "outside the project"],
    ["a cwd outside, for a read too", read("/home/dev/project/src/a.ts"), "/tmp", "Deny", "outside the project"],
    ["a cwd with NUL", edit("/home/dev/project/src/a.ts"), "/home/dev/project\u0000/x", "Deny", "control characters"],
    ["a cwd with a line end", bash("ls"), "/home/dev/project\n", "Deny", "control characters"],
    ["a cwd with an escape", bash("ls"), "/home/dev/project/\u001b[2J", "Deny", "control characters"],
    ["a relative cwd", bash("ls"), "project", "Deny", "not absolute"],
    ["an empty cwd", bash("ls"), "", "Deny", "not absolute"]
  ]
  for (const [name, call, cwd, expected, mentions] of cases) {
    it(`${name}: ${expected}`, () => {
      const decision = Guard.decide(call, { ...running, cwd })
      expect(decision._tag).toBe(expected)
      if (decision._tag !== "Allow") expect(Guard.explain(decision)).toContain(mentions)
    })
  }
  it("outside a Ratchet project the same holds for the directory the session started in", () => {
    expect(Guard.decide(bash("ls"), { ...context(null), cwd: "/" })._tag).toBe("Deny")
    expect(Guard.decide(bash("ls"), context(null))._tag).toBe("Allow")
  })
  it("a path with control characters is denied, whatever the call", () => {
    for (const call of [edit("/home/dev/project/src/a\u0000.ts"), edit("src/\u001b[31ma.ts"), read("/home/dev/project/src/\u0085a.ts")]) {
      const decision = Guard.decide(call, running)
      expect(decision._tag).toBe("Deny")
      expect(Guard.explain(decision)).toContain("control characters")
    }
    expect(Guard.decide(edit("src/é.ts"), running)._tag).toBe("Allow")
  })
})

describe("Guard.decide: person-only acts", () => {
  // Written by hand: each act and what the denial says it is.
  const acts: ReadonlyArray<readonly [string, string]> = [
    ["ratchet approve t-1234abcd spec", "approves"],
    ["ratchet approver add key.pub", "keys approvals are signed with"],
    ["ratchet reopen t-1 --reason x", "reopens"],
    ["ratchet unblock t-1 --resolve fix succeeded", "blocked task"],
    ["ratchet unblock t-1 --to RUNNING --resolution x", "blocked task"],
    ["ratchet rewind t-1 --to 3", "history"],
    ["ratchet verify t-1 --ac AC-001", "verdicts"],
    ["ratchet lessons pin L-1", "lessons"],
    ["ratchet hooks uninstall claude-code", "hooks that guard"],
    ["ratchet $X t-1", "subcommand the text does not say"]
  ]
  for (const state of states) {
    it(`every act is denied while ${state}, saying a person runs it in their own terminal`, () => {
      for (const [command, what] of acts) {
        const decision = Guard.decide(bash(command), context(task(state)))
        expect(decision._tag, command).toBe("Deny")
        if (decision._tag !== "Deny") continue
        expect(decision.reason, command).toContain(what)
        expect(decision.reason).toContain("An agent may not run it")
        expect(decision.fix).toContain("in their own terminal")
      }
    })
  }
  it("is denied with no task, with several, and outside a project", () => {
    for (const given of [context(null), { ...context(null), ambiguous: ["t-1 RUNNING", "t-2 VERIFYING"] }]) {
      for (const [command] of acts) expect(Guard.decide(bash(command), given)._tag, command).toBe("Deny")
    }
  })
  it("is denied before anything else the command does", () => {
    const decision = Guard.decide(bash("echo x > src/a.ts; python3 -c 'import os; os.system(\"ratchet approve t-1 plan\")'"), context(task("RUNNING")))
    expect(Guard.explain(decision)).toContain("is for a person")
  })
})

describe("Guard.decide: Ratchet's places named in any position", () => {
  const running = context(task("RUNNING"))
  const denied: ReadonlyArray<string> = [
    "python3 -c 'import os; os.remove(\"/home/dev/.ratchet/ratchet.db\")'",
    "node scripts/x.js ~/.ratchet",
    "node -e \"require('fs').rmSync(process.env.HOME + '/.ratchet', { recursive: true })\"",
    "cp ~/.ratchet/ratchet.db /tmp/copy.db",
    "cd ~/.ratchet && python3 x.py",
    "prettier --write .ratchet/tasks/x/spec.md",
    "node x.js \"$RATCHET_HOME/blobs\"",
    "sqlite3 ~/.ratchet/ratchet.db 'DELETE FROM ratchet_events'",
    "mkdir -p src/nested/.ratchet",
    "git -C ~/.ratchet init"
  ]
  for (const command of denied) {
    it(`${JSON.stringify(command)} is denied as Ratchet's own`, () => {
      const decision = Guard.decide(bash(command), running)
      expect(decision._tag).toBe("Deny")
      expect(Guard.explain(decision)).toMatch(/Ratchet's own|database shell/)
    })
  }
  const allowed: ReadonlyArray<string> = ["ls ~/.ratchet", "cat .ratchet/tasks/x/spec.md", "git add .ratchet/project.json", "grep -r goal .ratchet/tasks", "node scripts/ratchet-report.js src"]
  for (const command of allowed) {
    it(`${JSON.stringify(command)} only reads, and is allowed`, () => {
      expect(Guard.decide(bash(command), running)).toEqual({ _tag: "Allow" })
    })
  }
})

describe("Guard.decide: commands Ratchet cannot read", () => {
  const unreadable: ReadonlyArray<string> = [
    "echo cmF0Y2hldCBhcHByb3ZlIFQgcGxhbg== | base64 -d | sh",
    "python3 -c 'print(1)'",
    `true ${"x ".repeat(40_000)}; echo hi > README.md`,
    "$(printf 'r%sh%s' atc et) status"
  ]
  for (const state of states) {
    it(`are denied while ${state}, naming the task`, () => {
      for (const command of unreadable) {
        const decision = Guard.decide(bash(command), context(task(state)))
        expect(decision._tag, command.slice(0, 60)).toBe("Deny")
        if (decision._tag === "Deny") expect(decision.reason).toContain(`task t-1234abcd is ${state}`)
      }
    })
  }
  it("are denied with several tasks in progress, and asked about with none", () => {
    for (const command of unreadable) {
      expect(Guard.decide(bash(command), { ...context(null), ambiguous: ["t-1 RUNNING", "t-2 VERIFYING"] })._tag).toBe("Deny")
      const asked = Guard.decide(bash(command), context(null))
      expect(asked._tag).toBe("Ask")
      if (asked._tag === "Ask") expect(asked.reason).toMatch(/cannot tell what the command runs or writes\. Allow it\?$/)
    }
  })
  it("a command over 1 MiB is denied unread, task or not", () => {
    const command = `echo ${"x".repeat(1024 * 1024)}`
    for (const given of [context(task("RUNNING")), context(null)]) {
      const decision = Guard.decide(bash(command), given)
      expect(decision._tag).toBe("Deny")
      expect(Guard.explain(decision)).toContain("more than Ratchet judges")
    }
  })
  it("a store removal behind padding is denied as Ratchet's own, task or not", () => {
    const command = `true ${"x ".repeat(40_000)}; rm -rf /home/dev/.ratchet`
    for (const given of [context(task("RUNNING")), context(null)]) expect(Guard.explain(Guard.decide(bash(command), given))).toContain("Ratchet's own")
  })
})

describe("Guard.stop", () => {
  const cases: ReadonlyArray<readonly [string, Guard.StopContext | null, boolean, "Allow" | "Deny"]> = [
    ["RUNNING with an unverified criterion", { taskId: "t-1", state: "RUNNING", unverified: ["AC-001"] }, false, "Deny"],
    ["VERIFYING with an unverified criterion", { taskId: "t-1", state: "VERIFYING", unverified: ["AC-001", "AC-002"] }, false, "Deny"],
    ["the same stop after a block (stop_hook_active)", { taskId: "t-1", state: "VERIFYING", unverified: ["AC-001"] }, true, "Allow"],
    ["VERIFYING with every criterion verified", { taskId: "t-1", state: "VERIFYING", unverified: [] }, false, "Allow"],
    ["INTERVIEWING (nothing to verify yet)", { taskId: "t-1", state: "INTERVIEWING", unverified: ["AC-001"] }, false, "Allow"],
    ["COMPLETED", { taskId: "t-1", state: "COMPLETED", unverified: [] }, false, "Allow"],
    ["BLOCKED", { taskId: "t-1", state: "BLOCKED", unverified: ["AC-001"] }, false, "Allow"],
    ["no task", null, false, "Allow"]
  ]
  for (const [name, given, continuing, expected] of cases) {
    it(`${name}: ${expected}`, () => {
      const decision = Guard.stop(given, continuing)
      expect(decision._tag).toBe(expected)
      if (decision._tag === "Deny") {
        expect(decision.reason).toContain("AC-001")
        expect(decision.fix).toContain("ratchet verify t-1")
      }
    })
  }
})
