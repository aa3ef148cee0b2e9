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

export async function startLabelServer(options: {
  items: readonly LabelItem[];
  store: LabelStore;
  labeller: string;
  now?: () => Date;
}): Promise<LabelServer> {
  const { items, store, labeller } = options;
  const now = options.now ?? (() => new Date());
  const token = randomBytes(24).toString("base64url");
  const given = new Map<number, Given>();
  const keys = items.map(labelKey);
  for (const label of await store.labels()) {
    if (label.labeller !== labeller) continue;
    const at = keys.indexOf(labelKey(label));
    if (at >= 0) given.set(at, { human: label.human, note: label.note ?? "" });
  }
  let written = 0;
  /** The first item not answered from `from` on (wrapping round), or null when all are. */
  const nextOpen = (from: number): number | null => {
    for (let k = 0; k < items.length; k++) {
      const i = (from + k) % items.length;
      if (!given.has(i)) return i;
    }
    return null;
  };

  let origin = "";
  const tokenOk = (request: IncomingMessage, url: URL) => {
    const sent = Buffer.from(String(request.headers["x-label-token"] ?? url.searchParams.get("token") ?? ""));
    const expected = Buffer.from(token);
    return sent.length === expected.length && timingSafeEqual(sent, expected);
  };
  const send = (response: ServerResponse, status: number, body: string, type: string, headers = {}) => {
    response.writeHead(status, {
      "content-type": type,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "cross-origin-resource-policy": "same-origin",
      ...headers,
    });
    response.end(body);
  };
  const sendJson = (response: ServerResponse, status: number, value: unknown) =>
    send(response, status, JSON.stringify(value), "application/json; charset=utf-8");

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", origin);
    const requestOrigin = request.headers.origin;
    if (
      request.headers.host !== new URL(origin).host ||
      (requestOrigin !== undefined && requestOrigin !== origin) ||
      !tokenOk(request, url)
    ) {
      return send(response, 403, "forbidden: open the address judge label printed\n", "text/plain; charset=utf-8");
    }
    if (request.method === "GET" && url.pathname === "/") {
      const nonce = randomBytes(16).toString("base64");
      return send(response, 200, labelPage(nonce), "text/html; charset=utf-8", {
        "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
        "x-frame-options": "DENY",
      });
    }
    if (request.method === "GET" && url.pathname === "/api/state") {
      return sendJson(response, 200, { total: items.length, next: nextOpen(0) });
    }
    if (request.method === "GET" && url.pathname === "/api/item") {
      const i = Number(url.searchParams.get("i"));
      const item = items[i];
      if (!Number.isInteger(i) || !item) return sendJson(response, 404, { error: "no such item" });
      return sendJson(response, 200, {
        index: i,
        total: items.length,
        rubric: item.rubric,
        lines: item.transcript.map(attributed),
        tool_calls: listText(item.tool_calls),
        procedures: listText(item.procedures),
        answer: given.get(i) ?? null,
      });
    }
    if (request.method === "POST" && url.pathname === "/api/answer") {
      if (!String(request.headers["content-type"]).startsWith("application/json")) {
        return sendJson(response, 415, { error: "send JSON" });
      }
      let body: { i?: unknown; human?: unknown; note?: unknown };
      try {
        body = JSON.parse(await readBody(request));
      } catch {
        return sendJson(response, 400, { error: "not JSON, or over 64 KiB" });
      }
      const i = Number(body.i);
      const item = items[i];
      const human = body.human;
      const note = typeof body.note === "string" ? body.note.trim().slice(0, MAX_NOTE_CHARS) : "";
      if (!Number.isInteger(i) || !item || (human !== "pass" && human !== "fail" && human !== "skip")) {
        return sendJson(response, 400, { error: "give i (an item) and human: pass, fail or skip" });
      }
      // On disk before the page hears it is saved.
      await store.answer(item, human, labeller, note, now());
      given.set(i, { human, note });
      written++;
      // The next item not answered; once all are, the next in order (for a second look), if any.
      const open = nextOpen(i + 1);
      const next = open ?? (i + 1 < items.length ? i + 1 : null);
      return sendJson(response, 200, { judge: item.judge.verdict, next, remaining: items.length - given.size });
    }
    return sendJson(response, 404, { error: "no such route" });
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: Error) => {
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
    answered: () => written,
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
