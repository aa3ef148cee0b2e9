// The Pulumi CLI's output as agent-iac shows it. Off a terminal: no escape sequences (the program's
// Node colours inspected errors when FORCE_COLOR is set, whatever `--color never` says). Anywhere:
// not the noise a failed resource leaves in the program's log (Node's "rejection handled
// asynchronously" warnings, the heartbeat's repeats, and the program's "unhandled exception" that only inspects the
// registration error — `<ref *1> Error: resource x failed to register … promise: Promise {…}` —
// whose cause, the resource's own error, Pulumi shows anyway).

// biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences start with ESC (or the C1 CSI).
const ESCAPES = /\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|\u001b[@-Z\\-_]/g;

/** The text without terminal escape sequences (colours, cursor moves, titles). */
export function stripEscapes(text: string): string {
  return text.replace(ESCAPES, "");
}

const WARNING = /\(node:\d+\) PromiseRejectionHandledWarning: |\(Use `node --trace-warnings \.\.\.` to show where/;
const UNHANDLED = /failed with an unhandled exception:\s*$/;
// Either a resource's own registration, or a property of one that depends on it (a conversational
// agent's postprocess_agents when a linked procedural agent failed): the same failure, seen twice.
// Inspected with its stack (`Error: …`), or without one (`[Error: …] {`: the program captures none).
const REGISTRATION = /Error: (?:error serializing property "[^"]*": )?resource .+ failed to register(?:\] \{)?\s*$/;
// The same noise from a program run inline (the Automation API's language server logs it itself):
// one diagnostic line each, the unhandled one followed by its stack's frames.
const INLINE_REGISTRATION =
  /(?:^|\s)(?:error: )?(?:Unhandled exception: )?(?:Error: )?(?:error serializing property "[^"]*": )?resource .+ failed to register\s*$/;
const FRAME = /^\s+at /;
/** Pulumi's heartbeat off a terminal (`@ updating....`): said once, its repeats add nothing. */
const HEARTBEAT = /^@ [a-z]+\.*\s*$/;
/** A progress line of the Stack resource (its diagnostics say the same in full below). */
const STACK_PROGRESS = /^\s*\S+\s+pulumi:pulumi:Stack \S+ /;
/** The head of a resource's block under "Diagnostics:" (`  pulumi:pulumi:Stack (agents-dev):`). */
const SECTION = /^ {2}\S.*\):\s*$/;

export type LogFilter = { write(text: string): void; end(): void };

/**
 * Passes Pulumi's output to `write` line by line, without escape sequences unless `color`, and
 * without the noise described above. `end` writes what is left of a last line.
 */
export function pulumiLogFilter(write: (text: string) => void, options: { color: boolean }): LogFilter {
  let partial = "";
  let held: string | undefined; // an "unhandled exception:" line, until the next one says why
  let skipping = false; // inside an inspected registration error, up to its blank line
  let frames = false; // after an inline program's registration error: its stack's frames
  let section: string[] = []; // a Diagnostics section's head and blank lines, until it shows content
  const heartbeats = new Set<string>();
  const emit = (text: string) => {
    if (SECTION.test(stripEscapes(text))) {
      section = [text];
      return;
    }
    if (section.length > 0 && stripEscapes(text).trim() === "") {
      section.push(text);
      return;
    }
    // Content: the held head goes first; a new section or unindented text: the empty head is dropped.
    const content = /^\s{3,}\S/.test(stripEscapes(text));
    if (section.length > 0) {
      for (const held of content ? section : section.slice(1, 2)) write(held);
      section = [];
    }
    write(text);
  };
  const line = (raw: string) => {
    const text = options.color ? raw : stripEscapes(raw);
    const plain = stripEscapes(raw);
    if (skipping) {
      if (plain.trim() === "") skipping = false;
      else return;
    }
    if (held !== undefined) {
      const unhandled = held;
      held = undefined;
      if (REGISTRATION.test(plain)) {
        skipping = true;
        return;
      }
      emit(unhandled);
    }
    if (frames && FRAME.test(plain)) return;
    frames = false;
    if (INLINE_REGISTRATION.test(plain)) {
      frames = true;
      return;
    }
    if (WARNING.test(plain)) return;
    if (HEARTBEAT.test(plain)) {
      if (heartbeats.has(plain.trim())) return;
      heartbeats.add(plain.trim());
    }
    if (UNHANDLED.test(plain)) {
      if (!STACK_PROGRESS.test(plain)) held = text;
      return;
    }
    emit(text);
  };
  return {
    write(text: string) {
      const lines = (partial + text).split(/(?<=\n)/);
      partial = lines.at(-1)?.endsWith("\n") ? "" : (lines.pop() ?? "");
      for (const each of lines) line(each);
    },
    end() {
      if (held !== undefined) emit(held);
      held = undefined;
      if (partial) line(partial);
      partial = "";
      for (const text of section.slice(1, 2)) write(text);
      section = [];
    },
  };
}

/** The Stack resource's diagnostic that only inspects a failed registration (see above). */
export function isRegistrationNoise(message: string): boolean {
  const [first = "", second = ""] = stripEscapes(message).split("\n");
  return (UNHANDLED.test(first) && REGISTRATION.test(second)) || INLINE_REGISTRATION.test(first);
}
