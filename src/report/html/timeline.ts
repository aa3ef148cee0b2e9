// One call's latency as an inline SVG timeline. With event times (`entries[].at_ms`) each agent
// message, user turn, tool call (as a bar until it returned) and error sits on its own lane over
// the call's duration; without them (an older report, or a call that showed none) the measured
// latencies are drawn as bars from zero instead. A caption repeats every number as text.

import { type Html, html } from "../../escape/index.ts";
import { type CallResult, type ReportEntry, userLabel } from "../../results/index.ts";
import { clip, duration } from "./format.ts";

const WIDTH = 640;
const LEFT = 92;
/** Room right of the plot for a value written after its bar. */
const RIGHT = 56;
const ROW = 22;
const PLOT = WIDTH - LEFT - RIGHT;

type Row = { label: string; marks: Html[] };

function entryText(entry: ReportEntry): string {
  switch (entry.kind) {
    case "agent":
      return `agent: ${entry.text}`;
    case "user":
      return `${userLabel(entry.by)}: ${entry.text}`;
    case "tool":
      return `tool ${entry.name}`;
    case "error":
      return `error: ${typeof entry.error === "string" ? entry.error : JSON.stringify(entry.error)}`;
  }
}

function ticks(span: number, x: (ms: number) => number, y: number): Html[] {
  return [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const at = x(span * f);
    const anchor = f === 0 ? "start" : f === 1 ? "end" : "middle";
    return html`<line class="tick" x1="${at}" x2="${at}" y1="0" y2="${y}"></line><text class="axis" x="${at}" y="${y + 14}" text-anchor="${anchor}">${duration(span * f)}</text>`;
  });
}

function eventRows(entries: readonly ReportEntry[], x: (ms: number) => number): { rows: Row[]; drawn: number } {
  const lanes: Record<ReportEntry["kind"], Row> = {
    agent: { label: "agent", marks: [] },
    // The caller's lane when the scenario's caller spoke.
    user: { label: entries.some((e) => e.kind === "user" && e.by === "caller") ? "caller" : "user", marks: [] },
    tool: { label: "tool calls", marks: [] },
    error: { label: "errors", marks: [] },
  };
  let drawn = 0;
  for (const entry of entries) {
    if (entry.at_ms === null) continue;
    drawn++;
    const at = x(entry.at_ms);
    const title = html`<title>${clip(`+${duration(entry.at_ms)} ${entryText(entry)}`, 160)}</title>`;
    const lane = lanes[entry.kind];
    if (entry.kind === "tool") {
      const end = entry.returned_at_ms === null ? at + 4 : Math.max(x(entry.returned_at_ms), at + 3);
      lane.marks.push(
        html`<rect class="mark-tool" x="${at}" y="5" width="${end - at}" height="12" rx="2">${title}</rect>`,
      );
    } else if (entry.kind === "user") {
      lane.marks.push(html`<rect class="mark-user" x="${at - 5}" y="6" width="10" height="10">${title}</rect>`);
    } else if (entry.kind === "error") {
      lane.marks.push(html`<path class="mark-error" d="M${at} 4 L${at + 7} 18 L${at - 7} 18 Z">${title}</path>`);
    } else {
      lane.marks.push(html`<circle class="mark-agent" cx="${at}" cy="11" r="6">${title}</circle>`);
    }
  }
  const waits = replyWaits(entries, x);
  const rows = Object.values(lanes).filter((row) => row.marks.length > 0);
  return { rows: waits.length > 0 ? [...rows, { label: "reply wait", marks: waits }] : rows, drawn };
}

/** Each user turn to the agent's next message: how long the caller waited for a reply. */
function replyWaits(entries: readonly ReportEntry[], x: (ms: number) => number): Html[] {
  const marks: Html[] = [];
  entries.forEach((entry, i) => {
    if (entry.kind !== "user" || entry.at_ms === null) return;
    const reply = entries.slice(i + 1).find((e) => e.kind === "agent" && e.at_ms !== null);
    if (!reply || reply.at_ms === null) return;
    const wait = reply.at_ms - entry.at_ms;
    const from = x(entry.at_ms);
    const width = Math.max(x(reply.at_ms) - from, 2);
    marks.push(
      html`<rect class="mark-wait" x="${from}" y="14" width="${width}" height="5"><title>reply after ${duration(wait)}</title></rect>${width > 48 ? html`<text class="value" x="${from + width / 2}" y="11" text-anchor="middle">${duration(wait)}</text>` : null}`,
    );
  });
  return marks;
}

function latencyRows(call: CallResult, x: (ms: number) => number): Row[] {
  const bar = (ms: number, cls: string, label: string) =>
    html`<rect class="${cls}" x="${x(0)}" y="5" width="${Math.max(x(ms) - x(0), 2)}" height="12" rx="2"><title>${label}: ${duration(ms)}</title></rect><text class="value" x="${x(ms) + 4}" y="15">${duration(ms)}</text>`;
  const rows: Row[] = [];
  const first = call.latency.first_response_ms ?? call.timings.time_to_first_agent_message_ms;
  if (first !== null) rows.push({ label: "first reply", marks: [bar(first, "mark-agent", "first reply")] });
  call.latency.response_ms.forEach((ms, i) => {
    rows.push({ label: `reply ${i + 1}`, marks: [bar(ms, "mark-agent", `reply ${i + 1}`)] });
  });
  call.latency.tool_ms.forEach((ms, i) => {
    rows.push({ label: `tool ${i + 1}`, marks: [bar(ms, "mark-tool", `tool ${i + 1}`)] });
  });
  return rows;
}

/** The numbers of the timeline as a sentence, for readers who cannot see the drawing. */
function caption(call: CallResult, mode: string, missing: number): string {
  const parts = [`call ${duration(call.timings.duration_ms)}`];
  const first = call.latency.first_response_ms ?? call.timings.time_to_first_agent_message_ms;
  if (first !== null) parts.push(`first reply ${duration(first)}`);
  if (call.latency.response_ms.length > 0) parts.push(`replies ${call.latency.response_ms.map(duration).join(", ")}`);
  if (call.latency.tool_ms.length > 0) parts.push(`tools ${call.latency.tool_ms.map(duration).join(", ")}`);
  if (mode === "latency") parts.push("no event times in this report: latencies drawn from zero");
  else if (missing > 0) parts.push(`${missing} event(s) without a time are not drawn`);
  return parts.join(" · ");
}

export function timeline(call: CallResult): Html {
  const times = call.entries.flatMap((e) => [e.at_ms, e.kind === "tool" ? e.returned_at_ms : null]);
  const known = times.filter((t): t is number => t !== null);
  const latencies = [
    call.latency.first_response_ms,
    call.timings.time_to_first_agent_message_ms,
    ...call.latency.response_ms,
    ...call.latency.tool_ms,
  ].filter((t): t is number => t !== null);
  const span = Math.max(call.timings.duration_ms, ...known, ...latencies, 1);
  const x = (ms: number) => LEFT + (Math.min(Math.max(ms, 0), span) / span) * PLOT;
  const withTimes = call.entries.some((e) => e.at_ms !== null);
  const events = withTimes ? eventRows(call.entries, x) : { rows: [], drawn: 0 };
  const mode = withTimes ? "events" : latencies.length > 0 ? "latency" : "none";
  const rows: Row[] = [
    ...(withTimes ? events.rows : latencyRows(call, x)),
    {
      label: "whole call",
      marks: [
        html`<rect class="mark-call" x="${x(0)}" y="7" width="${Math.max(x(call.timings.duration_ms) - x(0), 2)}" height="8"><title>call: ${duration(call.timings.duration_ms)}</title></rect>`,
      ],
    },
  ];
  const plotHeight = rows.length * ROW;
  const height = plotHeight + 22;
  const missing = call.entries.filter((e) => e.at_ms === null).length;
  const text = caption(call, mode, withTimes ? missing : 0);
  const label = `Timeline of ${call.scenario} #${call.iteration}: ${text}`;
  return html`<figure class="timeline">
<svg class="timeline-svg" viewBox="0 0 ${WIDTH} ${height}" width="100%" role="img" aria-label="${label}" data-mode="${mode}" data-markers="${events.drawn}" data-duration-ms="${call.timings.duration_ms}" preserveAspectRatio="xMinYMin meet">
${ticks(span, x, plotHeight)}
${rows.map(
  (row, i) =>
    html`<g transform="translate(0 ${i * ROW})"><text class="lane" x="${LEFT - 8}" y="15" text-anchor="end">${row.label}</text>${row.marks}</g>`,
)}
</svg>
<figcaption>${text}</figcaption>
</figure>`;
}
