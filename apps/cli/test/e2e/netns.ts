/**
 * Machines on a network, simulated: a Linux network namespace per machine, joined to this one by a
 * veth pair, and a TCP relay on this side's end of the pair that forwards to the test's PostgreSQL
 * (which listens on loopback only, and is shared: its settings are not the test's to change). A
 * process started with {@link Machine.command} sees no network but its own loopback and the pair,
 * so it reaches the database only as a runner on another machine would: over a link, by address.
 *
 * Needs root and `ip` with netns and veth support; {@link open} says in one line why not otherwise,
 * and the caller runs its machines without namespaces.
 */
import { execFileSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as net from "node:net"

/** One simulated machine. */
export interface Machine {
  /** The namespace's name. */
  readonly name: string
  /** Connections relayed to the database so far. */
  readonly relayed: () => number
  /** The database URL as seen from inside the namespace. */
  readonly url: string
  /** Wraps a command so it runs inside the namespace. */
  readonly command: (file: string, args: ReadonlyArray<string>) => { readonly file: string; readonly args: ReadonlyArray<string> }
}

/** Namespaces made, and their removal. */
export interface Network {
  readonly machines: ReadonlyArray<Machine>
  readonly close: () => Promise<void>
}

const ip = (args: ReadonlyArray<string>) => execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] })

/** `count` machines whose runners reach the database of `url` over a veth pair each, or why they cannot. */
export const open = async (count: number, url: string): Promise<Network | { readonly unavailable: string }> => {
  if (process.getuid?.() !== 0) return { unavailable: "network namespaces need root; the runners share this machine's network" }
  const target = new URL(url)
  const targetPort = target.port === "" ? 5432 : Number(target.port)
  const tag = crypto.randomBytes(2).toString("hex")
  // A /30 per machine in 10.<random>.<i>.0, so two runs of the test on one host do not collide.
  const octet = 64 + crypto.randomInt(0, 128)
  const made: Array<{ readonly ns: string; readonly host: string; readonly server: net.Server }> = []
  const close = async () => {
    for (const one of made) {
      await new Promise<void>((resolve) => one.server.close(() => resolve()))
      try {
        ip(["link", "del", one.host])
      } catch {
        // removed with the namespace already
      }
      try {
        ip(["netns", "del", one.ns])
      } catch {
        // already gone
      }
    }
  }
  try {
    const machines: Array<Machine> = []
    for (let i = 0; i < count; i++) {
      const ns = `ratchet-${tag}-${i}`
      const host = `rh${tag}${i}`
      const inside = `rn${tag}${i}`
      const hostAddress = `10.${octet}.${i}.1`
      const insideAddress = `10.${octet}.${i}.2`
      ip(["netns", "add", ns])
      ip(["link", "add", host, "type", "veth", "peer", "name", inside])
      ip(["link", "set", inside, "netns", ns])
      ip(["addr", "add", `${hostAddress}/30`, "dev", host])
      ip(["link", "set", host, "up"])
      ip(["-n", ns, "addr", "add", `${insideAddress}/30`, "dev", inside])
      ip(["-n", ns, "link", "set", inside, "up"])
      ip(["-n", ns, "link", "set", "lo", "up"])
      let relayed = 0
      const server = net.createServer((socket) => {
        relayed += 1
        const upstream = net.connect({ host: target.hostname, port: targetPort })
        socket.pipe(upstream).pipe(socket)
        const end = () => {
          socket.destroy()
          upstream.destroy()
        }
        socket.on("error", end)
        upstream.on("error", end)
        socket.on("close", end)
        upstream.on("close", end)
      })
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject)
        server.listen(targetPort, hostAddress, () => resolve())
      })
      made.push({ ns, host, server })
      const seen = new URL(url)
      seen.hostname = hostAddress
      machines.push({ name: ns, relayed: () => relayed, url: seen.toString(), command: (file, args) => ({ file: "ip", args: ["netns", "exec", ns, file, ...args] }) })
    }
    return { machines, close }
  } catch (error) {
    await close()
    return { unavailable: `network namespaces are not available here (${error instanceof Error ? error.message.split("\n")[0] : String(error)}); the runners share this machine's network` }
  }
}
