/**
 * Inside a mutation run, properties without an explicit run count make 10 runs instead of
 * fast-check's default 100 (see `runs` in fixtures.ts for why that loses little).
 */
import * as fc from "fast-check"

if (process.env["STRYKER_MUTATOR_WORKER"] !== undefined) fc.configureGlobal({ numRuns: 10 })
