/**
 * HTML for the run page, built so that nothing stored can become markup: every value interpolated
 * into the {@link html} template is escaped unless it is already {@link Html} (made by this module),
 * and control and bidirectional formatting characters are written out as `\u{…}` first, as the
 * projection files show them. Goals, step ids, command output and actor names come from people,
 * agents and commands, so they are hostile until escaped.
 *
 * @since 0.3.0
 */
import * as Projection from "@ratchet/controller/Projection"

const brand: unique symbol = Symbol.for("@ratchet/cli/ui/Html")

/**
 * Markup known to be safe: the output of {@link html}, {@link raw} or {@link join}.
 *
 * @since 0.3.0
 * @category models
 */
export interface Html {
  readonly [brand]: true
  readonly value: string
}

const make = (value: string): Html => ({ [brand]: true, value })

/**
 * Whether `value` is {@link Html}.
 *
 * @since 0.3.0
 * @category guards
 */
export const isHtml = (value: unknown): value is Html => typeof value === "object" && value !== null && brand in value

const entities: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;", "`": "&#96;" }

/**
 * `text` as HTML text or a quoted attribute value: control characters made visible, then the
 * characters HTML gives meaning to replaced by entities.
 *
 * @since 0.3.0
 * @category constructors
 */
export const escape = (text: string): string => Projection.visible(text).replace(/[&<>"'`]/g, (character) => entities[character] ?? character)

/**
 * Markup written by this program (a constant), never a stored string.
 *
 * @since 0.3.0
 * @category constructors
 */
export const raw = (markup: string): Html => make(markup)

/**
 * A value the template accepts: text (escaped), numbers, markup, nothing, or a list of them.
 *
 * @since 0.3.0
 * @category models
 */
export type Part = string | number | boolean | null | undefined | Html | ReadonlyArray<Part>

const render = (part: Part): string => {
  if (part === null || part === undefined || part === false || part === true) return ""
  if (typeof part === "number") return Number.isFinite(part) ? String(part) : ""
  if (typeof part === "string") return escape(part)
  if (isHtml(part)) return part.value
  // Anything else that reached here untyped (a decoded value, a look-alike object) is text.
  return Array.isArray(part) ? part.map(render).join("") : escape(String(part))
}

/**
 * The template tag: the literal parts are markup, every interpolated part is escaped.
 *
 * @since 0.3.0
 * @category constructors
 */
export const html = (strings: TemplateStringsArray, ...parts: ReadonlyArray<Part>): Html => {
  let out = strings[0] ?? ""
  for (let i = 0; i < parts.length; i++) out += render(parts[i]) + (strings[i + 1] ?? "")
  return make(out)
}

/**
 * Parts joined by `separator` (markup).
 *
 * @since 0.3.0
 * @category constructors
 */
export const join = (parts: ReadonlyArray<Part>, separator: string = ""): Html => make(parts.map(render).join(separator))

/**
 * A link within the page's own routes: `href` is built from fixed path segments and ids that the
 * router validated, each segment percent-encoded all the same.
 *
 * @since 0.3.0
 * @category constructors
 */
export const href = (segments: ReadonlyArray<string>, query: Readonly<Record<string, string | number>> = {}): string => {
  const path = `/${segments.map(encodeURIComponent).join("/")}`
  const search = Object.entries(query).map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`).join("&")
  return search === "" ? path : `${path}?${search}`
}

/**
 * A CLI command to copy: shown as code with a copy button (the page script copies it).
 *
 * @since 0.3.0
 * @category constructors
 */
export const command = (text: string): Html => html`<span class="cmd"><code>${text}</code><button type="button" class="copy" data-copy="${text}">copy</button></span>`

/**
 * A whole page: the same-origin stylesheet and script (the Content-Security-Policy allows no
 * other), the store position the live update compares, and the body.
 *
 * @since 0.3.0
 * @category constructors
 */
export const page = (input: { readonly title: string; readonly lsn: number | null; readonly crumbs: ReadonlyArray<Html>; readonly body: Html }): string =>
  html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${input.title} · ratchet ui</title>
<link rel="stylesheet" href="/assets/ui.css">
<script src="/assets/ui.js" defer></script>
</head>
<body data-lsn="${input.lsn ?? ""}">
<header><nav><a href="/">ratchet</a>${input.crumbs.map((crumb) => html` / ${crumb}`)}</nav><span id="live" class="live" hidden>updated</span></header>
<main>
${input.body}
</main>
<footer>Read-only. Every action is a <code>ratchet</code> command to run in a terminal.</footer>
</body>
</html>
`.value
