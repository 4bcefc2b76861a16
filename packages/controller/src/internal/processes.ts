/**
 * Whether processes are alive, across crashes and reboots: a pid alone is not an identity (the
 * system reuses them), so what Ratchet writes down about a process carries the machine's boot id
 * too, and a pid from another boot is never taken for a live one.
 *
 * @internal
 */
import * as fs from "node:fs"

/** This boot of the machine (Linux); "unknown" where the system does not say. */
export const bootId = (): string => {
  try {
    return fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim().slice(0, 64) || "unknown"
  } catch {
    return "unknown"
  }
}

/** Whether process `pid` (or, negative, any process of group `-pid`) is alive. */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}
