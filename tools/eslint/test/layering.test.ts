/**
 * `ratchet/layering` against the package table: imports up the table pass, imports across a
 * row or down it fail, apps are never imported, internals stay private, and packages missing
 * from the table are called out. Most cases lint virtual files under `/repo`; the fixture
 * repository supplies real `package.json` names.
 */
import { fileURLToPath } from "node:url"
import rule from "../rules/layering.js"
import { ruleTester } from "./ruleTester.js"

const fixtureRoot = fileURLToPath(new URL("fixtures/repo", import.meta.url))

const notAbove = (importer: string, importerRank: number, target: string, targetRank: number) => ({
  message:
    `${importer} (rank ${importerRank}) may not import ${target} (rank ${targetRank}): a package imports only ` +
    "packages listed above it in the package table, so dependencies point one way and cannot form a cycle. " +
    `Move what both need into a package above ${importer}, or pass the value in (rule ratchet/layering, table in ` +
    "tools/eslint/layers.js)."
})

const importsApp = (importer: string, target: string, source: string) => ({
  message:
    `${importer} may not import the app ${target} ("${source}"): nothing imports an app. Move the shared code ` +
    "into a package the app imports (rule ratchet/layering)."
})

ruleTester("/repo").run("ratchet/layering", rule, {
  valid: [
    { code: 'import { Attempt } from "@ratchet/kernel"', filename: "/repo/packages/storage/src/EventStore.ts" },
    { code: 'import * as Attempt from "@ratchet/kernel/Attempt"', filename: "/repo/packages/storage/src/EventStore.ts" },
    {
      code: 'import { Attempt } from "@ratchet/kernel"\nimport { EventStore } from "@ratchet/storage"\nimport { Lease } from "@ratchet/lease"\nimport { Gate } from "@ratchet/verifier"',
      filename: "/repo/packages/controller/src/Commands.ts"
    },
    { code: 'import type { Store } from "@ratchet/storage"', filename: "/repo/packages/storage-sqlite/src/Layer.ts" },
    { code: 'import { Controller } from "@ratchet/controller"', filename: "/repo/packages/host-mcp/src/Server.ts" },
    { code: 'import { suite } from "@ratchet/storage"', filename: "/repo/packages/testkit/src/StorageSuite.ts" },
    // a package may name itself, internals included
    { code: 'import { Attempt } from "@ratchet/kernel"', filename: "/repo/packages/kernel/test/Attempt.test.ts" },
    { code: 'import * as Hash from "@ratchet/kernel/internal/hash"', filename: "/repo/packages/kernel/src/Digest.ts" },
    // relative imports inside the project
    { code: 'import * as Attempt from "../src/Attempt.js"', filename: "/repo/packages/kernel/test/Attempt.test.ts" },
    { code: 'import { main } from "../src/bin.js"', filename: "/repo/apps/cli/test/bin.test.ts" },
    // apps sit below every package
    {
      code: 'import { Controller } from "@ratchet/controller"\nimport { suite } from "@ratchet/testkit"',
      filename: "/repo/apps/cli/src/bin.ts"
    },
    { code: 'import { main } from "@ratchet/cli"', filename: "/repo/apps/cli/test/bin.test.ts" },
    // external modules are another rule's concern; computed specifiers cannot be placed
    { code: 'import * as fs from "node:fs"\nimport { it } from "vitest"', filename: "/repo/packages/kernel/test/Gate.test.ts" },
    { code: "export const load = (name: string) => import(name)", filename: "/repo/packages/storage/src/Load.ts" },
    // files outside packages/* and apps/* are not checked
    { code: 'import { main } from "@ratchet/cli"', filename: "/repo/tools/release.ts" },
    { code: 'import { main } from "@ratchet/cli"', filename: "/repo/packages/README.ts" },
    // `alsoAllow` lifts the row order for the named packages (tests and the test kit)
    {
      code: 'import { suite } from "@ratchet/testkit"',
      filename: "/repo/packages/storage-sqlite/test/SqliteStore.test.ts",
      options: [{ alsoAllow: ["@ratchet/testkit"] }]
    }
  ],
  invalid: [
    {
      code: 'import { EventStore } from "@ratchet/storage"',
      filename: "/repo/packages/kernel/src/Attempt.ts",
      errors: [notAbove("@ratchet/kernel", 0, "@ratchet/storage", 1)]
    },
    {
      code: 'import type { Store } from "@ratchet/storage"',
      filename: "/repo/packages/kernel/src/Attempt.ts",
      errors: [notAbove("@ratchet/kernel", 0, "@ratchet/storage", 1)]
    },
    {
      code: 'import { PgLayer } from "@ratchet/storage-postgres"',
      filename: "/repo/packages/storage-sqlite/src/Layer.ts",
      errors: [notAbove("@ratchet/storage-sqlite", 2, "@ratchet/storage-postgres", 2)]
    },
    {
      code: 'export * from "@ratchet/controller"',
      filename: "/repo/packages/storage/src/index.ts",
      errors: [notAbove("@ratchet/storage", 1, "@ratchet/controller", 5)]
    },
    {
      code: 'export const load = () => import("@ratchet/host")',
      filename: "/repo/packages/verifier/src/Gate.ts",
      errors: [notAbove("@ratchet/verifier", 4, "@ratchet/host", 6)]
    },
    {
      code: 'const lease = require("@ratchet/lease")',
      filename: "/repo/packages/storage/src/Legacy.ts",
      errors: [notAbove("@ratchet/storage", 1, "@ratchet/lease", 3)]
    },
    {
      code: 'import { suite } from "@ratchet/testkit"',
      filename: "/repo/packages/storage/test/Memory.test.ts",
      errors: [notAbove("@ratchet/storage", 1, "@ratchet/testkit", 8)]
    },
    {
      code: 'import { main } from "@ratchet/cli"',
      filename: "/repo/packages/testkit/src/Cli.ts",
      errors: [importsApp("@ratchet/testkit", "@ratchet/cli", "@ratchet/cli")]
    },
    {
      code: 'import { main } from "@ratchet/cli"',
      filename: "/repo/packages/controller/test/Cli.test.ts",
      options: [{ alsoAllow: ["@ratchet/testkit", "@ratchet/cli"] }],
      errors: [importsApp("@ratchet/controller", "@ratchet/cli", "@ratchet/cli")]
    },
    {
      code: 'import { run } from "@ratchet/runner"',
      filename: "/repo/apps/cli/src/commands/run.ts",
      errors: [importsApp("@ratchet/cli", "@ratchet/runner", "@ratchet/runner")]
    },
    {
      code: 'import { flags } from "../../../../apps/cli/src/flags.js"',
      filename: "/repo/packages/controller/src/commands/Start.ts",
      errors: [importsApp("@ratchet/controller", "@ratchet/cli", "../../../../apps/cli/src/flags.js")]
    },
    {
      code: 'import { flags } from "../../../cli/src/flags.js"',
      filename: "/repo/apps/runner/src/commands/main.ts",
      errors: [importsApp("@ratchet/runner", "@ratchet/cli", "../../../cli/src/flags.js")]
    },
    {
      code: 'import * as Hash from "@ratchet/kernel/internal/hash.js"',
      filename: "/repo/packages/storage/src/BlobStore.ts",
      errors: [
        {
          message:
            '@ratchet/storage may not import "@ratchet/kernel/internal/hash.js": the internal/* modules of ' +
            "@ratchet/kernel are private to it. Use what @ratchet/kernel exports publicly, or make the module " +
            "public there (rule ratchet/layering)."
        }
      ]
    },
    {
      code: 'import * as Attempt from "../../kernel/src/Attempt.js"',
      filename: "/repo/packages/storage/src/EventStore.ts",
      errors: [
        {
          message:
            '@ratchet/storage may not reach into @ratchet/kernel by the relative path "../../kernel/src/Attempt.js": ' +
            "import it by its package name, so the dependency is declared and its layer checked (rule ratchet/layering)."
        }
      ]
    },
    {
      code: 'import { thing } from "@ratchet/metrics"',
      filename: "/repo/packages/controller/src/Commands.ts",
      errors: [
        {
          message:
            "@ratchet/controller imports @ratchet/metrics, which is not in the package table: add @ratchet/metrics " +
            "to the row it belongs on in tools/eslint/layers.js so its imports can be checked (rule ratchet/layering)."
        }
      ]
    },
    {
      code: "export const value = 1",
      filename: "/repo/packages/metrics/src/Counter.ts",
      errors: [
        {
          message:
            "@ratchet/metrics is not in the package table: add it to the row it belongs on in tools/eslint/layers.js " +
            "so its imports can be checked (rule ratchet/layering).",
          line: 1,
          column: 1
        }
      ]
    }
  ]
})

ruleTester(fixtureRoot).run("ratchet/layering (names from package.json)", rule, {
  valid: [
    // packages/demo says it is @ratchet/storage, so the kernel is above it and it may name itself
    { code: 'import { Attempt } from "@ratchet/kernel"\nimport * as Self from "@ratchet/storage"', filename: `${fixtureRoot}/packages/demo/src/a.ts` }
  ],
  invalid: [
    {
      code: 'import { main } from "ratchet-console"',
      filename: `${fixtureRoot}/packages/demo/src/a.ts`,
      errors: [importsApp("@ratchet/storage", "ratchet-console", "ratchet-console")]
    },
    {
      code: 'import { main } from "../../../apps/console/src/main.js"',
      filename: `${fixtureRoot}/packages/demo/src/a.ts`,
      errors: [importsApp("@ratchet/storage", "ratchet-console", "../../../apps/console/src/main.js")]
    },
    {
      code: 'import { Gate } from "@ratchet/verifier"',
      filename: `${fixtureRoot}/packages/demo/src/a.ts`,
      errors: [notAbove("@ratchet/storage", 1, "@ratchet/verifier", 4)]
    }
  ]
})
