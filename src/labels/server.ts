// The labelling page's server: node:http on 127.0.0.1 at a port the system picks, every request
// checked for the run's one-time token (in the printed address; the page sends it back in a
// header), for its Host (a DNS-rebinding page names another) and for its Origin (another site's
// page is refused, 403). One page, no asset from the network (CSP default-src 'none' and a nonce),
// two JSON routes; the judge's verdict is said only in the answer to a posted answer.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { labelPage } from "./page.ts";
import type { LabelItem } from "./sample.ts";
import { type Answer, type LabelStore, labelKey } from "./store.ts";

const MAX_BODY_BYTES = 64 * 1024;
const MAX_NOTE_CHARS = 2000;

export type LabelServer = {
  /** The address to open: http://127.0.0.1:PORT/?token=… */
  url: string;
  port: number;
  /** Answers written by this run. */
  answered(): number;
  close(): Promise<void>;
};

type Given = { human: Answer; note: string };

/** Who said a display line, as the report attributes it ("caller: …", "tool name(…) → …"). */
function attributed(line: string): { who: string; text: string } {
  const said = /^(agent|caller|user \(not the caller\)|user|error): ?([\s\S]*)$/.exec(line);
  if (said) return { who: said[1] as string, text: said[2] as string };
  if (line.startsWith("tool ")) return { who: "tool", text: line.slice(5) };
  return { who: "", text: line };
}

/** A list (tool calls, procedures) one entry a line, as JSON: text for the page, never markup. */
const listText = (value: readonly unknown[]) =>
  value.length === 0 ? "(none)" : value.map((entry) => JSON.stringify(entry)).join("\n");

/** The request's body as text, refused past MAX_BODY_BYTES. */
async function readBody(request: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of request) {
    text += chunk;
    if (text.length > MAX_BODY_BYTES) throw new Error("body too large");
  }
  return text;
}

/** The run: its items, this labeller's answers (from the file, then this run's) and how many it wrote. */
type Session = {
  items: readonly LabelItem[];
  store: LabelStore;
  labeller: string;
  now: () => Date;
  given: Map<number, Given>;
  written: number;
};

/** The first item not answered from `from` on (wrapping round), or null when all are. */
function nextOpen({ items, given }: Session, from: number): number | null {
  for (let k = 0; k < items.length; k++) {
    const i = (from + k) % items.length;
    if (!given.has(i)) return i;
  }
  return null;
}

function send(response: ServerResponse, status: number, body: string, type: string, headers = {}): void {
  response.writeHead(status, {
    "content-type": type,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-resource-policy": "same-origin",
    ...headers,
  });
  response.end(body);
}

const sendJson = (response: ServerResponse, status: number, value: unknown) =>
  send(response, status, JSON.stringify(value), "application/json; charset=utf-8");

/** The request names this server (Host), comes from its page or no page (Origin), and carries the token. */
function admitted(request: IncomingMessage, url: URL, origin: string, token: string): boolean {
  const requestOrigin = request.headers.origin;
  if (request.headers.host !== new URL(origin).host) return false;
  if (requestOrigin !== undefined && requestOrigin !== origin) return false;
  const sent = Buffer.from(String(request.headers["x-label-token"] ?? url.searchParams.get("token") ?? ""));
  const expected = Buffer.from(token);
  return sent.length === expected.length && timingSafeEqual(sent, expected);
}

/** The page itself, with a policy that runs only its own nonce'd style and script. */
function sendPage(response: ServerResponse): void {
  const nonce = randomBytes(16).toString("base64");
  send(response, 200, labelPage(nonce), "text/html; charset=utf-8", {
    "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    "x-frame-options": "DENY",
  });
}

/** Item `i` as the page shows it: never the judge's verdict. */
function itemView(session: Session, i: number): [number, unknown] {
  const { items, given } = session;
  const item = items[i];
  if (!Number.isInteger(i) || !item) return [404, { error: "no such item" }];
  return [
    200,
    {
      index: i,
      total: items.length,
      rubric: item.rubric,
      lines: item.transcript.map(attributed),
      tool_calls: listText(item.tool_calls),
      procedures: listText(item.procedures),
      answer: given.get(i) ?? null,
    },
  ];
}

/** A posted answer: written to the labels file first, then the judge's verdict and the next item told. */
async function answerPosted(session: Session, request: IncomingMessage): Promise<[number, unknown]> {
  if (!String(request.headers["content-type"]).startsWith("application/json")) return [415, { error: "send JSON" }];
  let body: { i?: unknown; human?: unknown; note?: unknown };
  try {
    body = JSON.parse(await readBody(request));
  } catch {
    return [400, { error: "not JSON, or over 64 KiB" }];
  }
  const { items, given } = session;
  const i = Number(body.i);
  const item = items[i];
  const human = body.human;
  const note = typeof body.note === "string" ? body.note.trim().slice(0, MAX_NOTE_CHARS) : "";
  if (!Number.isInteger(i) || !item || (human !== "pass" && human !== "fail" && human !== "skip")) {
    return [400, { error: "give i (an item) and human: pass, fail or skip" }];
  }
  // On disk before the page hears it is saved.
  await session.store.answer(item, human, session.labeller, note, session.now());
  given.set(i, { human, note });
  session.written++;
  // The next item not answered; once all are, the next in order (for a second look), if any.
  const next = nextOpen(session, i + 1) ?? (i + 1 < items.length ? i + 1 : null);
  return [200, { judge: item.judge.verdict, next, remaining: items.length - given.size }];
}

/** One admitted request: the page, the state, an item or an answer. */
async function route(session: Session, request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> {
  const at = `${request.method} ${url.pathname}`;
  if (at === "GET /") return sendPage(response);
  if (at === "GET /api/state") {
    return sendJson(response, 200, { total: session.items.length, next: nextOpen(session, 0) });
  }
  const [status, value] =
    at === "GET /api/item"
      ? itemView(session, Number(url.searchParams.get("i")))
      : at === "POST /api/answer"
        ? await answerPosted(session, request)
        : [404, { error: "no such route" }];
  sendJson(response, status, value);
}

export async function startLabelServer(options: {
  items: readonly LabelItem[];
  store: LabelStore;
  labeller: string;
  now?: () => Date;
}): Promise<LabelServer> {
  const { items, store, labeller } = options;
  const session: Session = {
    items,
    store,
    labeller,
    now: options.now ?? (() => new Date()),
    given: new Map(),
    written: 0,
  };
  const keys = items.map(labelKey);
  for (const label of await store.labels()) {
    if (label.labeller !== labeller) continue;
    const at = keys.indexOf(labelKey(label));
    if (at >= 0) session.given.set(at, { human: label.human, note: label.note ?? "" });
  }
  const token = randomBytes(24).toString("base64url");
  let origin = "";
  const server = createServer((request, response) => {
    const url = URL.parse(request.url ?? "/", origin);
    if (!url || !admitted(request, url, origin, token)) {
      return send(response, 403, "forbidden: open the address judge label printed\n", "text/plain; charset=utf-8");
    }
    route(session, request, response, url).catch((error: Error) => {
      if (!response.headersSent) sendJson(response, 500, { error: error.message.slice(0, 300) });
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/?token=${token}`,
    port,
    answered: () => session.written,
    close: async () => {
      // No new request; an answer already being written is finished before the run ends.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await store.settled();
      server.closeAllConnections();
      await closed;
    },
  };
}
