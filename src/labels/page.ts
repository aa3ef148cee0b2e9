// The labelling page: one HTML document holding its own style and script (allowed by a nonce, nothing
// from the network), and no data: each item is fetched as JSON and put on the page with textContent
// only — the service's text is data, never markup. The judge's verdict is not in it: the server
// says it only in the answer to a posted answer.

const STYLE = `
*{box-sizing:border-box}
body{font:16px/1.45 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:baseline;justify-content:space-between;padding:.75rem 1rem;background:#1f3a5f;color:#fff}
header h1{font-size:1.1rem;margin:0}
#progress{margin:0;font-weight:600}
main{max-width:60rem;margin:0 auto;padding:1rem}
h2{font-size:1rem;margin:1rem 0 .4rem}
#rubric{font-size:1.1rem;margin:0;padding:.6rem .8rem;background:#fff;border-left:4px solid #1f3a5f;overflow-wrap:anywhere}
ol{margin:0;padding:0;list-style:none;background:#fff;border:1px solid #ccc}
ol li{display:grid;grid-template-columns:2.2rem 7.5rem 1fr;gap:.5rem;padding:.3rem .6rem;border-top:1px solid #eee}
ol li:first-child{border-top:0}
.n{color:#666;text-align:right}
.who{font-weight:600}
.who-agent{color:#1f3a5f}.who-caller,.who-user{color:#6b3d00}.who-tool{color:#3d5a00}
.text{overflow-wrap:anywhere;white-space:pre-wrap}
pre{margin:0;padding:.6rem;background:#fff;border:1px solid #ccc;overflow:auto;max-height:16rem;white-space:pre-wrap;overflow-wrap:anywhere}
form{margin-top:1rem;padding:.8rem;background:#fff;border:1px solid #ccc}
textarea{width:100%;min-height:3rem;font:inherit}
.buttons{display:flex;flex-wrap:wrap;gap:.5rem;margin-top:.6rem}
button{font:inherit;padding:.55rem 1.1rem;border:2px solid #1f3a5f;border-radius:4px;background:#fff;color:#1f3a5f;cursor:pointer;min-width:6rem}
h2:focus{outline:none}button:focus-visible{outline:3px solid #e07b00;outline-offset:2px}
button[aria-pressed=true]{background:#1f3a5f;color:#fff}
#status{min-height:1.5rem;margin:.6rem 0 0}
kbd{font:inherit;font-size:.85em;border:1px solid currentColor;border-radius:3px;padding:0 .25em}
@media (max-width:40rem){ol li{grid-template-columns:1.8rem 1fr}.who{grid-column:2}.text{grid-column:1/-1}button{flex:1 1 40%}}
`;

/** The page's script: fetch an item, show it, post the answer, go on; keys p, f, s, b. */
const SCRIPT = `
"use strict";
const token = new URLSearchParams(location.search).get("token") || "";
const $ = (id) => document.getElementById(id);
let index = 0, total = 0;
async function api(path, body) {
  const response = await fetch(path, body === undefined
    ? { headers: { "x-label-token": token } }
    : { method: "POST", headers: { "x-label-token": token, "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(response.status + " " + (await response.text()));
  return response.json();
}
function say(text) { $("status").textContent = text; }
function show(item) {
  index = item.index; total = item.total;
  $("progress").textContent = (index + 1) + " of " + total;
  $("rubric").textContent = item.rubric;
  const list = $("transcript"); list.replaceChildren();
  item.lines.forEach((line, i) => {
    const li = document.createElement("li");
    const n = document.createElement("span"); n.className = "n"; n.textContent = String(i + 1);
    const who = document.createElement("span"); who.className = "who who-" + line.who.split(" ")[0]; who.textContent = line.who || "—";
    const text = document.createElement("span"); text.className = "text"; text.textContent = line.text;
    li.append(n, who, text); list.append(li);
  });
  $("tools").textContent = item.tool_calls;
  $("procedures").textContent = item.procedures;
  $("note").value = item.answer ? item.answer.note || "" : "";
  for (const b of document.querySelectorAll("[data-answer]")) b.setAttribute("aria-pressed", String(!!item.answer && item.answer.human === b.dataset.answer));
  $("back").disabled = index === 0;
  // Focus at the item's start: a screen reader reads the new rubric, and the page shows it from the top.
  $("rubric-heading").focus();
}
async function load(i) {
  try { show(await api("/api/item?i=" + i)); } catch (e) { say("Could not load the item: " + e.message); }
}
async function answer(human) {
  try {
    const result = await api("/api/answer", { i: index, human: human, note: $("note").value });
    const judged = result.judge ? " The judge said " + result.judge + "." : "";
    const saved = "Saved item " + (index + 1) + ": " + human + "." + judged;
    if (result.next !== null) await load(result.next);
    say(result.remaining === 0 ? saved + " " + allDone() : saved);
  } catch (e) { say("Not saved: " + e.message); }
}
function allDone() { return "All " + total + " items are labelled: you may close this tab (or go back over them)."; }
for (const b of document.querySelectorAll("[data-answer]")) b.addEventListener("click", () => answer(b.dataset.answer));
$("back").addEventListener("click", () => { if (index > 0) load(index - 1); });
$("answer-form").addEventListener("submit", (e) => e.preventDefault());
document.addEventListener("keydown", (e) => {
  if (e.target instanceof HTMLTextAreaElement) { if (e.key === "Escape") e.target.blur(); return; }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const keys = { p: "pass", f: "fail", s: "skip" };
  if (keys[e.key]) { e.preventDefault(); answer(keys[e.key]); }
  else if (e.key === "b") { e.preventDefault(); $("back").click(); }
  else if (e.key === "n") { e.preventDefault(); $("note").focus(); }
});
api("/api/state").then((state) => { total = state.total; if (state.next === null) { load(0).then(() => say(allDone())); } else load(state.next); }, (e) => say("Could not start: " + e.message));
`;

/** The page, with `nonce` on its one style and one script (the Content-Security-Policy names it). */
export function labelPage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>agent-iac judge label</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<header><h1>Label judged transcripts</h1><p id="progress" aria-live="polite">loading…</p></header>
<main>
<section aria-labelledby="rubric-heading"><h2 id="rubric-heading" tabindex="-1">Rubric</h2><p id="rubric"></p></section>
<section aria-labelledby="transcript-heading"><h2 id="transcript-heading">Transcript</h2>
<ol id="transcript" aria-label="Transcript lines, each with who said it"></ol></section>
<section aria-labelledby="tools-heading"><h2 id="tools-heading">Tool calls</h2><pre id="tools" tabindex="0"></pre></section>
<section aria-labelledby="procedures-heading"><h2 id="procedures-heading">Procedure output</h2><pre id="procedures" tabindex="0"></pre></section>
<form id="answer-form" aria-labelledby="answer-heading">
<h2 id="answer-heading">Does the transcript meet the rubric?</h2>
<label for="note">Note (optional; <kbd>n</kbd> to write, <kbd>Esc</kbd> to leave)</label>
<textarea id="note" maxlength="2000"></textarea>
<div class="buttons" role="group" aria-label="Your verdict">
<button type="button" data-answer="pass" aria-keyshortcuts="p" aria-pressed="false">Pass <kbd>p</kbd></button>
<button type="button" data-answer="fail" aria-keyshortcuts="f" aria-pressed="false">Fail <kbd>f</kbd></button>
<button type="button" data-answer="skip" aria-keyshortcuts="s" aria-pressed="false">Skip <kbd>s</kbd></button>
<button type="button" id="back" aria-keyshortcuts="b">Back <kbd>b</kbd></button>
</div>
</form>
<p id="status" role="status" aria-live="polite"></p>
</main>
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>
`;
}
