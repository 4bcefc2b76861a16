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

/**
 * What `/proc/<pid>/stat` says of process `pid` (Linux), or null when it does not exist or the
 * system has no such file: its state (`R`, `S`, `Z` for a zombie, …), its process group, and its
 * start time (field 22, in clock ticks since boot). A pid is reused; a pid with its start time is
 * not, within one boot.
 */
export const stat = (pid: number): { readonly state: string; readonly pgrp: number; readonly startTicks: string } | null => {
  let text: string
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  } catch {
    return null
  }
  // The command name (field 2) is in parentheses and may itself hold spaces or parentheses.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
  const state = fields[0]
  const pgrp = Number(fields[2])
  const startTicks = fields[19]
  if (state === undefined || !Number.isSafeInteger(pgrp) || startTicks === undefined || !/^\d{1,20}$/.test(startTicks)) return null
  return { state, pgrp, startTicks }
}

/**
 * The processes of group `pgid` that are not zombies, from `/proc` (Linux): empty where the system
 * has no `/proc`. Whose they are is another question: a group whose leader is gone may be one that
 * took the number since, so a caller tells its own by more than the group's id.
 */
export const members = (pgid: number): ReadonlyArray<{ readonly pid: number; readonly startTicks: string }> => {
  let names: Array<string>
  try {
    names = fs.readdirSync("/proc")
  } catch {
    return []
  }
  const found: Array<{ readonly pid: number; readonly startTicks: string }> = []
  for (const name of names) {
    if (!/^\d{1,10}$/.test(name)) continue
    const pid = Number(name)
    const process = stat(pid)
    if (process !== null && process.pgrp === pgid && process.state !== "Z" && process.state !== "X") found.push({ pid, startTicks: process.startTicks })
  }
  return found
}
