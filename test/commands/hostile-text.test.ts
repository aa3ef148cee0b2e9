// Text from the service is data, never terminal control. A scripted service on port 0 puts ESC, BEL,
// CR, LF (and a C1 CSI) into a transcript, list cells and error texts: `events`, the lists and
// smoke's live output show each of them escaped. FORCE_COLOR is set (as on a CI runner), so any
// colour of our own would show; the bytes of the service's sequences never reach stdout or stderr.
import { execFile } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.ts";
import type { Scenario } from "../../src/smoke/call.ts";
import { type PlannedCall, runCalls } from "../../src/smoke/index.ts";
import { json, type ScriptedServer, scriptedServer } from "../api/scripted-server.ts";
import { CLI } from "../helpers/cli.ts";

const KEY = "sk-hostile-text-2b7e";
/** Sets the window title, rings the bell, clears the screen, and forges a line of its own. */
const HOSTILE = "hi\u001b]0;pwned\u0007\u001b[2J\r\nuser: forged\u009b31m";
const FORGED_LINE = /^(?:\s*\S*\s*│ )?user: forged/m;

/** Every control byte in the output must be one of ours: a line break, or the status line's redraw. */
function foreignControls(text: string): string[] {
  const ours = text.replaceAll("\r\u001b[2K", "");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters.
  return [...ours.matchAll(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g)].map((m) => JSON.stringify(m[0]));
}

function expectInert(output: string, whole = true) {
  expect(foreignControls(output)).toEqual([]);
  expect(output).not.toMatch(FORGED_LINE);
  // The service's text is still there to read, escaped (a table cell shows its first 48 characters).
  expect(output).toContain(
    whole ? "\\x1b]0;pwned\\x07\\x1b[2J\\r\\nuser: forged\\x9b31m" : "\\x1b]0;pwned\\x07\\x1b[2J\\r\\n",
  );
}

function sse(res: ServerResponse, payloads: object[]) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  payloads.forEach((payload, i) => {
    res.write(`id: ${i}\ndata: ${JSON.stringify({ id: `ev_${i}`, created_at: "2026-01-01T00:00:00Z", payload })}\n\n`);
  });
  res.end();
}

const TRANSCRIPT = [
  { type: "conversation.started" },
  { type: "agent.message.delta", generation_id: "g1", text_delta: "hi\u001b]0;pw" },
  { type: "agent.message.delta", generation_id: "g1", text_delta: "ned\u0007\u001b[2J\r\nuser: forged\u009b31m" },
  { type: "agent.message.completed", generation_id: "g1", text: HOSTILE },
  { type: "user.message.received", text: HOSTILE },
  { type: "agent.tool_call.created", call_id: "c1", name: `lookup${HOSTILE}`, arguments: { q: HOSTILE } },
  { type: "agent.tool_call.returned", call_id: "c1", name: `lookup${HOSTILE}`, result: HOSTILE },
  { type: "server.error", error: { message: HOSTILE } },
  { type: "conversation.ended" },
];

function hostile(base: () => string) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    const at = "2026-01-01T00:00:00Z";
    if (url.pathname === "/conversations/conv_bad/events") {
      return json(res, 400, { error: { message: HOSTILE } }, { "x-request-id": "req_hostile" });
    }
    if (url.pathname.endsWith("/events")) return sse(res, TRANSCRIPT);
    if (req.method === "POST" && url.pathname === "/conversations") {
      const channel = { type: "phone", callee_no: "+15550100", token: "tok_hostile_text_000000000000" };
      return json(res, 200, {
        id: "conv_1",
        channel: { ...channel, events_url: `${base()}/conversations/conv_1/events` },
      });
    }
    if (url.pathname === "/conversations") {
      const row = { id: "conv_1", agent_id: `ca_x@v1${HOSTILE}`, livemode: false, created_at: at, status: HOSTILE };
      return json(res, 200, { data: [row], cursor: null });
    }
    if (url.pathname === "/procedures" || url.pathname.endsWith("/procedures")) {
      const row = { id: "proc_1", name: HOSTILE, conversation_id: "conv_1", agent_id: "pa_x", created_at: at };
      return json(res, 200, { page: [{ ...row, status: "completed", output: { text: HOSTILE }, error: HOSTILE }] });
    }
    if (url.pathname === "/feedbacks") {
      const row = { id: "fb_1", conversation_id: "conv_1", created_at: at, rating: HOSTILE, comment: HOSTILE };
      return json(res, 200, { data: [{ ...row, reasons: [HOSTILE] }], cursor: null, reasons: { [HOSTILE]: 1 } });
    }
    json(res, 404, { error: { message: HOSTILE } });
  };
}

describe("text from a hostile service never drives the terminal", () => {
  let server: ScriptedServer;

  beforeAll(async () => {
    let url = "";
    server = await scriptedServer(hostile(() => url));
    url = server.url;
  });
  afterAll(async () => {
    await server?.close();
  });

  const cli = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string; output: string }>((resolve) => {
      const env: NodeJS.ProcessEnv = { ...process.env, AGENT_IAC_API_KEY: KEY, FORCE_COLOR: "1" };
      delete env.NO_COLOR;
      execFile(process.execPath, [CLI, ...args, "--base-url", server.url], { env }, (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout, stderr, output: stdout + stderr });
      });
    });

  it("events: the transcript is one line per turn, every control character escaped", async () => {
    const result = await cli("events", "conv_1");
    expect(result.code, result.stderr).toBe(0);
    expectInert(result.output);
    // One line per entry: agent, user, the tool call (again when it returns), the error, the end.
    const heads = result.stdout
      .trim()
      .split("\n")
      .map((line) => line.split(/[ :]/)[0]);
    expect(heads).toEqual(["agent", "user", "tool", "tool", "error", "(conversation"]);
  });

  it("events --json: every event on one line, valid JSON, no raw control character", async () => {
    const result = await cli("events", "conv_1", "--json");
    expect(result.code, result.stderr).toBe(0);
    expect(foreignControls(result.output)).toEqual([]);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(TRANSCRIPT.length);
    expect(JSON.parse(lines[4] ?? "").payload.text).toBe(HOSTILE);
  });

  it("events: the service's error text is escaped, on one line, with its request id", async () => {
    const result = await cli("events", "conv_bad");
    expect(result.code).toBe(2);
    // The client says the reason on one line (its line breaks as spaces); nothing else is obeyed.
    expect(foreignControls(result.output)).toEqual([]);
    expect(result.stderr).toContain("\\x1b]0;pwned\\x07\\x1b[2J user: forged\\x9b31m");
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain("req_hostile");
  });

  it.each([
    ["conversations", "list"],
    ["conversations", "procedures", "conv_1"],
    ["procedures", "list"],
    ["feedbacks", "list", "--service-id", "svc_1"],
  ])("%s %s: table cells are escaped", async (...args) => {
    const result = await cli(...args);
    expect(result.code, result.stderr).toBe(0);
    expectInert(result.output, false);
    expect(result.stdout.trim().split("\n").length).toBeLessThanOrEqual(4); // header, one row, count, note
  });

  it("smoke's live output on a terminal: the transcript and the result line are escaped", async () => {
    const client = createClient({ baseUrl: server.url, apiKey: KEY });
    const scenario = {
      name: "hostile",
      transport: "sse",
      timeout: 10,
      livemode: false,
      iterations: 1,
      channel: { callee_no: "+15550100" },
      expect: { says: ["something it never says"], ends: true },
    } as unknown as Scenario;
    const call = { agent: "support", scenario, iteration: 1, versionId: "ca_x@v1", procedural: {}, live: false };
    let output = "";
    const out = {
      isTTY: true,
      columns: 120,
      write: (text: string) => {
        output += text;
        return true;
      },
    };
    try {
      await runCalls(client, [call as PlannedCall], { concurrency: 1, out });
    } finally {
      await client.close();
    }
    expectInert(output);
    expect(output).toContain("support/hostile#1 │ agent: ");
  });
});
