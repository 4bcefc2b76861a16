/**
 * The run page's stylesheet and script, as constants bundled with the CLI: served from the page's
 * own origin (the Content-Security-Policy allows scripts and styles from nowhere else, and no
 * inline ones), so the page works offline and loads nothing from a CDN.
 *
 * The script does two things: it copies a command when its button is pressed, and it keeps the
 * page current — every two seconds it asks `/api/position` for the store's newest position and
 * reloads when it moved past the one the page was rendered at.
 *
 * @since 0.3.0
 */

/**
 * @since 0.3.0
 * @category constants
 */
export const css = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fbfbfa; --muted: #66707a; --line: #d8dde2; --card: #ffffff;
  --ok: #2e7d32; --fail: #c62828; --indet: #ef6c00; --run: #1565c0; --cancel: #6d4c41; --pending: #9e9e9e; --hold: #ad1457; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8ea; --bg: #15181b; --muted: #98a2ad; --line: #2d3339; --card: #1c2024; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; justify-content: space-between; padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: var(--card); }
header a { color: inherit; font-weight: 600; }
main { padding: 1rem; max-width: 1200px; }
footer { padding: 1rem; color: var(--muted); font-size: 12px; }
h1 { font-size: 1.3rem; margin: .2rem 0 .8rem; overflow-wrap: anywhere; }
h2 { font-size: 1.05rem; margin: 1.4rem 0 .5rem; }
table { border-collapse: collapse; width: 100%; background: var(--card); }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: break-word; word-break: break-word; }
th { white-space: nowrap; }
th { font-weight: 600; color: var(--muted); }
code, pre { font: 12.5px/1.4 ui-monospace, monospace; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--card); border: 1px solid var(--line); padding: .5rem; max-height: 24rem; overflow: auto; }
.muted { color: var(--muted); }
.badge { white-space: nowrap; display: inline-block; padding: 0 .4rem; border-radius: .6rem; font-size: 12px; font-weight: 600; border: 1px solid currentColor; }
.s-COMPLETED, .v-PASS, .v-APPROVED, .o-Succeeded, .d-CLEAR, .d-ALLOWED { color: var(--ok); }
.s-FAILED, .s-CANCELLED, .v-FAIL, .v-REVISE, .o-Failed, .d-FORBIDDEN { color: var(--fail); }
.s-BLOCKED, .d-HOLD, .v-BLOCKED, .v-HELD { color: var(--hold); }
.o-Indeterminate, .v-INDETERMINATE, .o-TimedOut { color: var(--indet); }
.s-RUNNING, .s-VERIFYING, .o-Running { color: var(--run); }
.alert { border: 2px solid var(--indet); background: var(--card); padding: .6rem .8rem; margin: .8rem 0; }
.alert.blocked { border-color: var(--hold); }
.cmd { display: inline-flex; gap: .3rem; align-items: center; }
.cmd code { background: var(--card); border: 1px solid var(--line); padding: .1rem .3rem; }
.copy { font-size: 11px; cursor: pointer; }
.live { color: var(--run); font-size: 12px; }
.pager { margin: .6rem 0; display: flex; gap: 1rem; }
svg.timeline { width: 100%; background: var(--card); border: 1px solid var(--line); }
svg.timeline text { font: 11px ui-monospace, monospace; fill: var(--fg); }
svg.timeline .lane { stroke: var(--line); }
svg.timeline rect.a-Succeeded { fill: var(--ok); }
svg.timeline rect.a-Failed { fill: var(--fail); }
svg.timeline rect.a-Indeterminate { fill: var(--indet); stroke: var(--fg); stroke-width: 2; stroke-dasharray: 4 2; }
svg.timeline rect.a-TimedOut { fill: var(--indet); }
svg.timeline rect.a-Cancelled { fill: var(--cancel); }
svg.timeline rect.a-Running { fill: var(--run); }
svg.timeline rect.a-Pending { fill: var(--pending); }
svg.timeline .intent { stroke: var(--fg); stroke-width: 1.5; }
svg.timeline .intent-open { fill: var(--indet); }
svg.timeline .intent-done { fill: var(--card); }
svg.timeline .successor { stroke: var(--muted); stroke-dasharray: 3 3; fill: none; }
svg.timeline .blocked { fill: var(--hold); }
form.token { display: flex; gap: .5rem; margin: 1rem 0; }
`

/**
 * @since 0.3.0
 * @category constants
 */
export const js = `"use strict";
(function () {
  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!(target instanceof HTMLElement) || !target.classList.contains("copy")) return;
    var text = target.getAttribute("data-copy") || "";
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(function () { target.textContent = "copied"; }, function () {});
  });
  var rendered = document.body.getAttribute("data-lsn");
  if (rendered === null || rendered === "") return;
  var busy = false;
  setInterval(function () {
    if (busy || document.hidden) return;
    busy = true;
    fetch("/api/position", { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (body) {
        busy = false;
        if (body !== null && typeof body.lsn === "number" && String(body.lsn) !== rendered) {
          var live = document.getElementById("live");
          if (live) live.hidden = false;
          location.reload();
        }
      }, function () { busy = false; });
  }, 2000);
})();
`
