// One call (a scenario's iteration on one version): its expectations with their verdicts — a
// failed one next to the transcript lines it points at —, the conversation as a chat, the
// timeline, and the procedures that ran after it.

import { type Html, html } from "../../escape/index.ts";
import {
  type CallOutcomeKind,
  type CallResult,
  evaluated,
  outcomeFacts,
  type ReportAssertion,
  type ReportEntry,
  unevaluatedText,
  userLabel,
} from "../../results/index.ts";
import { callBadge, clip, duration, passMark, pretty } from "./format.ts";
import { timeline } from "./timeline.ts";

const UNEVALUATED: Partial<Record<CallOutcomeKind, string>> = {
  error: "Call error",
  interrupted: "Interrupted",
  not_run: "Not run",
};

/** A call's conversation shows at most this many entries, so one runaway call cannot bloat the page. */
const MAX_ENTRIES = 1000;

/** Transcript line index → the numbers (1-based) of the failed expectations pointing at it. */
function pointers(call: CallResult): Map<number, number[]> {
  const byLine = new Map<number, number[]>();
  call.assertions.forEach((assertion, n) => {
    if (assertion.passed) return;
    if (assertion.judgement) {
      // A failed judged expectation points at the lines it cites, by their numbers.
      for (const line of assertion.judgement.lines) {
        byLine.set(line - 1, [...new Set([...(byLine.get(line - 1) ?? []), n + 1])]);
      }
      return;
    }
    for (const line of assertion.context) {
      call.transcript.forEach((text, i) => {
        if (text === line) byLine.set(i, [...new Set([...(byLine.get(i) ?? []), n + 1])]);
      });
    }
  });
  return byLine;
}

const at = (ms: number | null) => (ms === null ? null : html` <span class="at">+${duration(ms)}</span>`);

function pointedNote(numbers: number[] | undefined): Html | null {
  if (!numbers) return null;
  return html`<span class="pointer"><span aria-hidden="true">◀ ✗</span> unmet expectation ${numbers.join(", ")}</span>`;
}

function entryItem(entry: ReportEntry, id: string, pointed: number[] | undefined): Html {
  const cls = `turn ${entry.kind}${pointed ? " pointed" : ""}`;
  switch (entry.kind) {
    case "agent":
      return html`<li class="${cls}" id="${id}"><div class="who">agent${at(entry.at_ms)}${entry.complete ? null : html` <span class="note">(incomplete)</span>`} ${pointedNote(pointed)}</div><div class="bubble">${clip(entry.text)}</div></li>`;
    case "user":
      // The scenario's caller said it: labelled so, as in the terminal, JSON and JUnit transcripts.
      return html`<li class="${cls}${entry.by === "caller" ? " caller" : ""}" id="${id}"><div class="who">${userLabel(entry.by)}${at(entry.at_ms)} ${pointedNote(pointed)}</div><div class="bubble">${clip(entry.text)}</div></li>`;
    case "tool": {
      const returned =
        "result" in entry
          ? html`<div class="label">result${entry.returned_at_ms === null ? null : html` <span class="at">+${duration(entry.returned_at_ms)}</span>`}</div><pre>${pretty(entry.result)}</pre>`
          : html`<div class="label">result</div><p class="note">did not return</p>`;
      return html`<li class="${cls}" id="${id}"><div class="who"><span aria-hidden="true">⚙</span> tool call <code>${entry.name}</code>${entry.call_id ? html` <span class="note">${entry.call_id}</span>` : null}${at(entry.at_ms)} ${pointedNote(pointed)}</div><div class="tool-card"><div class="label">arguments</div><pre>${pretty(entry.arguments ?? {})}</pre>${returned}</div></li>`;
    }
    case "error":
      return html`<li class="${cls}" id="${id}"><div class="who"><span aria-hidden="true">⚠</span> error${at(entry.at_ms)} ${pointedNote(pointed)}</div><pre class="error-body">${pretty(entry.error)}</pre></li>`;
  }
}

function conversation(call: CallResult, id: string): Html {
  const pointed = pointers(call);
  if (call.entries.length > 0) {
    const shown = call.entries.slice(0, MAX_ENTRIES);
    const more = call.entries.length - shown.length;
    return html`<ol class="chat" aria-label="conversation">${shown.map((entry, i) => entryItem(entry, `${id}-e${i}`, pointed.get(i)))}</ol>${more > 0 ? html`<p class="note">… and ${more} more entries: see the JSON report.</p>` : null}`;
  }
  if (call.transcript.length > 0) {
    // A report without entries as data: the display lines, as they are.
    return html`<ol class="chat lines" aria-label="conversation">${call.transcript.map(
      (line, i) =>
        html`<li class="turn line${pointed.has(i) ? " pointed" : ""}" id="${id}-e${i}">${pointedNote(pointed.get(i))} <code>${line}</code></li>`,
    )}</ol>`;
  }
  return html`<p class="note">No transcript: the call showed no events.</p>`;
}

function expectation(assertion: ReportAssertion, n: number, call: CallResult, id: string): Html {
  const lines = assertion.passed
    ? null
    : assertion.context.map((line) => {
        const i = call.transcript.lastIndexOf(line);
        return html`<li>${i >= 0 ? html`<a href="#${id}-e${i}">line ${i + 1}</a> ` : null}<code>${line}</code></li>`;
      });
  return html`<li class="expectation" data-passed="${String(assertion.passed)}"><span class="num">${n}.</span> ${passMark(assertion.passed)} <span class="desc">${assertion.description}</span>${judgementNote(assertion, id)}${assertion.detail ? html`<div class="detail">${assertion.detail}</div>` : null}${lines && lines.length > 0 ? html`<div class="context"><div class="label">transcript lines it points at</div><ol class="context-lines">${lines}</ol></div>` : null}</li>`;
}

/** ` (95 % CI 0.45–0.96)`: a calibration's kappa interval, where it was measured (older ones lack it). */
function kappaInterval(calibration: { kappa_low?: number | null; kappa_high?: number | null }): string {
  const { kappa_low: low, kappa_high: high } = calibration;
  return low == null || high == null ? "" : ` (95 % CI ${low.toFixed(2)}–${high.toFixed(2)})`;
}

/** A judged expectation: verdict, votes (`2/3`, uncertain when split), the lines it cites, the rubric's measured agreement. */
function judgementNote(assertion: ReportAssertion, id: string): Html | null {
  const j = assertion.judgement;
  if (!j) return null;
  const cited = j.lines.map((n) => html` <a href="#${id}-e${n - 1}">line ${n}</a>`);
  const calibration = j.calibration
    ? html` · agreement with human labels ${Math.round(j.calibration.agreement * 100)} % over ${j.calibration.items}${j.calibration.kappa === null ? null : html`, kappa ${j.calibration.kappa.toFixed(2)}${kappaInterval(j.calibration)}`}`
    : html` · agreement with human labels not measured`;
  return html`<div class="judgement" data-verdict="${j.verdict}" data-uncertain="${String(j.uncertain)}"><span class="label">judged by <code>${j.model}</code>${j.answered_model !== null && j.answered_model !== j.model ? html` <span class="warn-text">(answered by <code>${j.answered_model}</code>)</span>` : null}:</span> <strong>${j.verdict}</strong> <span class="votes">${j.agreement}</span>${j.uncertain ? html` <span class="warn-text">uncertain (the votes split)</span>` : null}${j.cached_votes > 0 ? html` <span class="note">(${j.cached_votes} vote(s) from the cache)</span>` : null}${cited.length > 0 ? html` · cites${cited}` : null}${calibration}</div>`;
}

function expectations(call: CallResult, id: string): Html {
  if (call.assertions.length === 0) {
    return html`<p class="warn-text"><span aria-hidden="true">⚠</span> Nothing was checked: the call evaluated no expectation.</p>`;
  }
  return html`<ol class="expectations" aria-label="expectations">${call.assertions.map((a, i) => expectation(a, i + 1, call, id))}</ol>`;
}

function procedures(call: CallResult): Html | null {
  if (call.procedures.length === 0) return null;
  return html`<details class="procedures"><summary>Procedures after the call (${call.procedures.length})</summary><ul>${call.procedures.map(
    (p) => {
      const record = (p ?? {}) as Record<string, unknown>;
      const name = String(record.key ?? record.name ?? "procedure");
      return html`<li><code>${name}</code>${typeof record.status === "string" ? html` — ${record.status}` : null}<pre>${pretty(p)}</pre></li>`;
    },
  )}</ul></details>`;
}

function toolCallsWithoutEntries(call: CallResult): Html | null {
  // Tool calls are shown in the conversation; only a report without entries needs them apart.
  if (call.entries.length > 0 || call.tool_calls.length === 0) return null;
  return html`<details><summary>Tool calls (${call.tool_calls.length})</summary><pre>${pretty(call.tool_calls)}</pre></details>`;
}

function facts(call: CallResult): Html {
  const row = (name: string, value: Html | string | null) =>
    value === null ? null : html`<div><dt>${name}</dt><dd>${value}</dd></div>`;
  return html`<dl class="facts">${[
    row("version", html`<code>${call.version_id}</code>`),
    row("conversation", call.conversation_id ? html`<code>${call.conversation_id}</code>` : "(not created)"),
    row("transport", call.transport),
    row("live call", call.livemode ? "yes" : "no (livemode false)"),
    row("started", call.started_at),
    row("duration", duration(call.timings.duration_ms)),
    row("first agent message", duration(call.timings.time_to_first_agent_message_ms)),
    row("event stream", call.events_url ? html`<code>${call.events_url}</code>` : null),
    row("outcome", html`${call.outcome.kind.replace("_", " ")}${outcomeFacts(call)}`),
    row("fault", call.fault),
  ]}</dl>`;
}

/** `id` is unique in the page: anchors of transcript lines hang off it. */
export function callArticle(call: CallResult, id: string): Html {
  const { kind } = call.outcome;
  const open = kind !== "passed";
  return html`<article class="call" id="${id}" data-status="${call.status}" data-outcome="${kind}" data-side="${call.side}" data-iteration="${call.iteration}"${call.fault ? html` data-fault="${call.fault}"` : null}>
<details${open ? html` open` : null}>
<summary><span class="call-title">Iteration ${call.iteration}</span> ${callBadge(kind)} <span class="note">${duration(call.timings.duration_ms)} · ${call.assertions.filter((a) => a.passed).length}/${call.assertions.length} expectations met${call.fault ? ` · fault: ${call.fault}` : ""}</span></summary>
${facts(call)}
${evaluated(kind) ? null : html`<p class="call-error" role="note"><span aria-hidden="true">⚠</span> <strong>${UNEVALUATED[kind] ?? "Call error"}:</strong> ${unevaluatedText(call)}</p>`}
<h5>Expectations</h5>
${expectations(call, id)}
<h5>Conversation</h5>
${conversation(call, id)}
${toolCallsWithoutEntries(call)}
<h5>Latency</h5>
${timeline(call)}
${procedures(call)}
</details>
</article>`;
}
