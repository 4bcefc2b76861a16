import { sqlite } from "./harness.js"
import { runPage } from "./scenarios/ui.js"

runPage(sqlite)
