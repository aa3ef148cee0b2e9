// The terminal renderer. Text from the service is data, never terminal control: `terminalText`
// (the one escaping helper for terminal output) shows every control character visibly (`\x1b`,
// `\x07`, `\r`, `\n`, `\u202e`), so a transcript, a table cell or an error text can neither move
// the cursor, set the window title, clear the screen nor start a line of its own. Then a transcript
// on a terminal: one line per entry ("agent: …", "user: …", "tool …", "error: …"), and a printer
// that follows a live conversation (agent text as it streams, a tool call again when it returns,
// the end). The client builds the transcript as data; this is how the commands and smoke's live
// output and reports show it; and the lists' tables, written page by page (./table.ts).
import type { EventEnvelope, TranscriptEntry, TranscriptToolCall } from "../api/index.ts";
import { TranscriptBuilder } from "../api/index.ts";
import { jsonLine, terminalText } from "../escape/index.ts";

// The one escaping helper for terminal text, and JSON Lines, live with the other formats' (src/escape).
export { jsonLine, terminalLines, terminalText } from "../escape/index.ts";
export { callLines, failureText } from "./call.ts";
export { TableWriter } from "./table.ts";

const json = (value: unknown) => (value === undefined ? "" : jsonLine(value));

/** A tool call as one line: `tool name({…}) → result`, or ` …` while it has not returned. */
function toolLine(call: TranscriptToolCall): string {
  const head = `tool ${terminalText(call.name)}(${json(call.arguments ?? {})})`;
  if (!call.returned) return `${head} …`;
  if (call.error !== undefined && call.error !== null) return `${head} → error ${json(call.error)}`;
  return `${head} → ${call.result === undefined ? "(no result)" : json(call.result)}`;
}

/** An entry as one printable line; an incomplete message or a pending call ends with " …". */
export function entryLine(entry: TranscriptEntry): string {
  switch (entry.kind) {
    case "agent":
      return `agent: ${terminalText(entry.message.text)}${entry.message.complete ? "" : " …"}`;
    case "user":
      return `user: ${terminalText(entry.text)}`;
    case "tool":
      return toolLine(entry.call);
    case "error":
      return `error: ${json(entry.error)}`;
  }
}

export type TranscriptPrinterOptions = {
  /** Written before every line (e.g. which call it belongs to). */
  prefix?: string;
  /** Write agent text as its deltas arrive (default); otherwise each message once, when complete. */
  streamText?: boolean;
};

/**
 * Prints a transcript as it grows: agent text as it streams, user turns, tool calls (again when
 * they return), errors and the end, one line each. Returns the function to feed events to.
 */
export function transcriptPrinter(write: (text: string) => void, options: TranscriptPrinterOptions = {}) {
  const prefix = options.prefix ?? "";
  const streamText = options.streamText ?? true;
  const builder = new TranscriptBuilder();
  let open: { generationId: string; printed: string } | undefined;
  const closeOpen = () => {
    if (open) write("\n");
    open = undefined;
  };
  /** `userLabel`: who said this event's user line (default "user"; "caller" when a scenario's caller did). */
  return (envelope: Pick<EventEnvelope, "payload">, userLabel?: string): void => {
    const wasEnded = builder.ended;
    if (!builder.add(envelope)) return;
    const entry = builder.lastChanged;
    if (entry?.kind === "agent") {
      const message = entry.message;
      if (!streamText) {
        if (message.complete) write(`${prefix}agent: ${terminalText(message.text)}\n`);
        return;
      }
      if (open?.generationId !== message.generationId) {
        closeOpen();
        write(`${prefix}agent: `);
        open = { generationId: message.generationId, printed: "" };
      }
      // The final text normally extends what was streamed; when it does not, show it whole.
      // Escaped character by character, so a delta that splits nothing changes nothing.
      if (message.text.startsWith(open.printed)) write(terminalText(message.text.slice(open.printed.length)));
      else write(`\n${prefix}agent (final): ${terminalText(message.text)}`);
      open.printed = message.text;
      if (message.complete) closeOpen();
      return;
    }
    if (entry) {
      closeOpen();
      const line = entryLine(entry);
      write(`${prefix}${entry.kind === "user" && userLabel ? line.replace(/^user:/, `${userLabel}:`) : line}\n`);
    }
    if (builder.ended && !wasEnded) {
      closeOpen();
      write(`${prefix}(conversation ended)\n`);
    }
  };
}
