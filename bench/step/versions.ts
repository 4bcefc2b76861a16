/**
 * The versions of the libraries a suite compares against, as `bench/package.json` pins them.
 */
import * as fs from "node:fs"

const pinned = (): Readonly<Record<string, string>> => {
  const manifest = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    readonly dependencies?: Readonly<Record<string, string>>
  }
  return manifest.dependencies ?? {}
}

/** `name version` of each package, comma-separated. */
export const versions = (names: ReadonlyArray<string>): string => {
  const all = pinned()
  return names.map((name) => `${name} ${all[name] ?? "?"}`).join(", ")
}
