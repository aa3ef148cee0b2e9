// One smoke call against a scripted service on 127.0.0.1 that makes the choices our simulator does
// not: procedure status words the code has never seen, tool arguments as a JSON string, requests
// that never answer. Each test reproduces the failure first (see the commit message).
import type { IncomingMessage, ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { type Client, createClient } from "../../src/api/index.ts";
import type { Expectations } from "../../src/definitions/index.ts";
import { finishedCalls } from "../../src/results/index.ts";
import { type PlannedCall, type Progress, placeCall, type Scenario } from "../../src/smoke/call.ts";
import { callResult, unknownVersionCalls } from "../../src/smoke/index.ts";
import { json, type ScriptedServer, scriptedServer } from "../api/scripted-server.ts";
import { startTestSimulator } from "../helpers/simulator.ts";

const KEY = "sk-call-test";
const CONVERSATION = "conv_1";

type Script = {
  /** Procedure statuses, one per poll; the last repeats. */
  statuses?: string[];
  procedureName?: string;
  toolArguments?: unknown;
  /** Routes that never answer (the request is read, no response is written). */
  hang?: ("create" | "procedures")[];
};

/** The create-conversation answer of the scripted services: its stream on the same server. */
const created = (base: string) => ({
  id: CONVERSATION,
  channel: {
    type: "phone",
    callee_no: "+15550100",
    caller_no: null,
    priority: "normal",
    token: "tok_call_test_0000000000000000",
    events_url: `${base}/conversations/${CONVERSATION}/events`,
  },
});

function service(script: Script): Promise<ScriptedServer> {
  let polls = 0;
  let base = "";
  const server = scriptedServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "POST" && url.pathname === "/conversations") {
      if (script.hang?.includes("create")) return;
      return json(res, 200, created(base));
    }
    if (url.pathname.endsWith("/events")) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const events = [
        { type: "conversation.started" },
        { type: "agent.message.completed", generation_id: "g1", text: "Hello, this is Ava." },
        { type: "agent.tool_call.created", call_id: "c1", name: "check_availability", arguments: script.toolArguments },
        { type: "agent.tool_call.returned", call_id: "c1", name: "check_availability", result: { free: true } },
        { type: "conversation.ended" },
      ];
      events.forEach((payload, i) => {
        res.write(
          `id: ${i}\ndata: ${JSON.stringify({ id: `ev_${i}`, created_at: new Date().toISOString(), payload })}\n\n`,
        );
      });
      return res.end();
    }
    if (url.pathname.endsWith("/procedures")) {
      if (script.hang?.includes("procedures")) return;
      const statuses = script.statuses ?? ["completed"];
      const status = statuses[Math.min(polls++, statuses.length - 1)];
      return json(res, 200, {
        page: [
          {
            id: "proc_1",
            name: script.procedureName ?? "Call summary",
            conversation_id: CONVERSATION,
            agent_id: "pa_old",
            created_at: new Date().toISOString(),
            status,
            output: null,
            error: null,
          },
        ],
        cursor: null,
      });
    }
    json(res, 404, { error: "not found" });
  });
  return server.then((s) => {
    base = s.url;
    return s;
  });
}

function planned(expect: Expectations, options: { timeout?: number; matchBy?: "agent_id" | "name" } = {}): PlannedCall {
  const scenario: Scenario = {
    name: "greets",
    channel: { callee_no: "+15550100" },
    livemode: false,
    transport: "sse",
    timeout: options.timeout ?? 10,
    iterations: 1,
    expect: { no_errors: true, ends: true, ...expect },
  };
  return {
    agent: "support",
    scenario,
    iteration: 1,
    versionId: "ca_1@v1",
    procedural: { "call-summary": { id: "pa_old", name: "Call summary", matchBy: options.matchBy ?? "agent_id" } },
    live: false,
  };
}

let server: ScriptedServer | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

async function call(
  script: Script,
  plannedCall: PlannedCall,
  onProgress?: (p: Progress) => void,
  hooks: { procedureStallMs?: number } = {},
) {
  server = await service(script);
  client = createClient({ baseUrl: server.url, apiKey: KEY, maxRetries: 0 });
  return placeCall(client, plannedCall, { ...hooks, ...(onProgress ? { onProgress } : {}) });
}

describe("procedure polling", () => {
  it("waits through status words it has never seen until the expected one", async () => {
    const result = await call(
      { statuses: ["pending", "queued-for-review", "summarizing", "completed"] },
      planned({ procedures: { "call-summary": "completed" } }),
    );
    expect(result.error).toBeUndefined();
    expect(result.status).toBe("passed");
    expect(result.observation?.procedures[0]).toMatchObject({ status: "completed", matchedBy: "agent_id" });
    expect(server?.requests.filter((r) => r.url.endsWith("/procedures"))).toHaveLength(4);
  });

  it("fails a procedure that never reaches the expected status with the last status seen, at the deadline", async () => {
    const result = await call(
      { statuses: ["pending", "summarizing"] },
      planned({ procedures: { "call-summary": "completed" } }, { timeout: 2 }),
    );
    expect(result.status).toBe("failed");
    const assertion = result.assertions.find((a) => a.description === "procedure call-summary ends completed");
    expect(assertion?.detail).toBe(
      "procedure call-summary is summarizing (the last status seen before the scenario's timeout; the statuses it went through: pending → summarizing; matched by agent id pa_old)",
    );
    // Polled until the deadline ended the wait (the detail says so), not once.
    expect(server?.requests.filter((r) => r.url.endsWith("/procedures")).length).toBeGreaterThan(1);
  });

  it("ends early when a status other than the expected one stops changing, naming the statuses the service used", async () => {
    // A service whose procedures end `succeeded`: the expectation says `completed`, the timeout is 60 s.
    const result = await call(
      { statuses: ["pending", "summarizing", "succeeded"] },
      planned({ procedures: { "call-summary": "completed" } }, { timeout: 60 }),
      undefined,
      { procedureStallMs: 1500 },
    );
    expect(result.status).toBe("failed");
    const assertion = result.assertions.find((a) => a.description === "procedure call-summary ends completed");
    expect(assertion?.detail).toBe(
      "procedure call-summary is succeeded (unchanged for 1.5 s, so taken as the service's last word; the statuses it went through: pending → summarizing → succeeded; expect one of the words this service uses; matched by agent id pa_old)",
    );
    // The stall ended the wait (its own detail and stalledMs), not the scenario's 60-s timeout.
    expect(result.observation?.procedures[0]).toMatchObject({ stalledMs: 1500 });
    expect(result.error).toBeUndefined();
  });

  it("does not end early while the status keeps changing within the bound", async () => {
    const result = await call(
      { statuses: ["pending", "queued", "summarizing", "reviewing", "completed"] },
      planned({ procedures: { "call-summary": "completed" } }, { timeout: 30 }),
      undefined,
      { procedureStallMs: 2500 },
    );
    expect(result.status).toBe("passed");
    expect(result.observation?.procedures[0]).toMatchObject({
      status: "completed",
      statuses: ["pending", "queued", "summarizing", "reviewing", "completed"],
    });
  });

  it("reports progress while it waits: what for, the last status seen, the time left", async () => {
    const seen: Progress[] = [];
    await call(
      { statuses: ["pending", "summarizing"] },
      planned({ procedures: { "call-summary": "completed" } }, { timeout: 2.5 }),
      (p) => seen.push(p),
    );
    const last = seen.at(-1);
    expect(last?.waitingFor).toBe("procedures call-summary → completed");
    expect(last?.lastSeen).toBe("call-summary summarizing");
    // The time left counts down from the scenario's timeout: within it, never going up.
    const left = seen.map((p) => p.remainingMs);
    expect(left.length).toBeGreaterThan(1);
    for (const ms of left) expect(ms >= 0 && ms <= 2500, String(ms)).toBe(true);
    expect(left).toEqual([...left].sort((a, b) => b - a));
    expect(left.at(-1)).toBeLessThan(left[0] as number);
  });

  it("matches an older version's procedures by the procedural agent's name, and says so", async () => {
    // The stack's call-summary is pa_new; the old version links pa_old, whose procedure is named the same.
    const plannedCall = planned({ procedures: { "call-summary": "completed" } }, { matchBy: "name" });
    plannedCall.procedural["call-summary"] = { id: "pa_new", name: "Call summary", matchBy: "name" };
    const result = await call({ statuses: ["completed"] }, plannedCall);
    expect(result.status).toBe("passed");
    expect(result.observation?.procedures[0]).toMatchObject({ agentId: "pa_old", matchedBy: "name" });
    expect(result.assertions.at(-1)?.detail).toMatch(/^matched by name "Call summary": the called version is not/);
  });
});

describe("the scenario's deadline", () => {
  it("covers POST /conversations: a create that never answers ends at the timeout", async () => {
    const result = await call({ hang: ["create"] }, planned({}, { timeout: 1.5 }));
    // The scenario's deadline ended it (the wording), not the client's own request timeout.
    expect(result.status).toBe("error");
    expect(result.error).toBe("timed out after 1.5 s waiting for the conversation to be created");
  });

  it("covers the procedures poll: a poll that never answers ends at the timeout", async () => {
    const result = await call(
      { hang: ["procedures"] },
      planned({ procedures: { "call-summary": "completed" } }, { timeout: 1.5 }),
    );
    expect(result.status).toBe("failed");
    expect(result.assertions.at(-1)?.detail).toMatch(/^no procedure of call-summary \(pa_old\) appeared/);
  });
});

describe("tool-call arguments", () => {
  it("decodes arguments sent as a JSON string for matching and display, and keeps the raw value", async () => {
    const raw = JSON.stringify({ locale: "en-US", request: "Is Tuesday free?" });
    const result = await call(
      { toolArguments: raw },
      planned({ tool_calls: [{ name: "check_availability", arguments: { locale: "en-US", request: "/tuesday/i" } }] }),
    );
    expect(result.assertions.map((a) => [a.description, a.passed, a.detail])).toContainEqual([
      'calls tool check_availability with {"locale":"en-US","request":"/tuesday/i"}',
      true,
      undefined,
    ]);
    const toolCall = result.observation?.toolCalls[0];
    expect(toolCall?.arguments).toEqual({ locale: "en-US", request: "Is Tuesday free?" });
    expect(toolCall?.rawArguments).toBe(raw);
  });

  it("keeps a string that is not JSON as it is", async () => {
    const result = await call({ toolArguments: "{not json" }, planned({ tool_calls: ["check_availability"] }));
    expect(result.status).toBe("passed");
    expect(result.observation?.toolCalls[0]?.arguments).toBe("{not json");
    expect(result.observation?.toolCalls[0]?.rawArguments).toBeUndefined();
  });
});

describe("the typed outcome of a call, from a real failure", () => {
  /** A service whose create answers `create` and whose stream answers `events` (the request, its response). */
  async function failing(routes: {
    create?: (res: ServerResponse) => void;
    events?: (res: ServerResponse) => void;
  }): Promise<ScriptedServer> {
    let base = "";
    const s = await scriptedServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      if (req.method === "POST" && url.pathname === "/conversations") {
        if (routes.create) return routes.create(res);
        return json(res, 200, created(base));
      }
      if (url.pathname.endsWith("/events") && routes.events) return routes.events(res);
      json(res, 404, { error: "not found" });
    });
    base = s.url;
    return s;
  }

  const place = async (url: string, plannedCall: PlannedCall, signal?: AbortSignal, apiKey = KEY) => {
    client = createClient({ baseUrl: url, apiKey, maxRetries: 0 });
    return placeCall(client, plannedCall, signal ? { signal } : {});
  };

  it("404 on create (the real simulator: a version it does not know): error at create, with status and the service's code", async () => {
    const sim = await startTestSimulator();
    try {
      const result = await place(sim.url, { ...planned({}), versionId: "ca_unknown@v9" }, undefined, sim.apiKey);
      expect(result.status).toBe("error");
      expect(result.outcome).toMatchObject({
        kind: "error",
        stage: "create",
        request: "POST /conversations",
        httpStatus: 404,
      });
      expect(result.outcome.code).toEqual(expect.any(String));
      // The domain question the command asks, answered from the outcome.
      expect(unknownVersionCalls([result])).toEqual([result]);
      expect(unknownVersionCalls([callResult(result)])).toHaveLength(1);
      expect(finishedCalls([callResult(result)])).toBe(1);
    } finally {
      await client?.close();
      client = undefined;
      await sim.close();
    }
  });

  it("5xx on create: error at create, with the status and the service's error code", async () => {
    server = await failing({ create: (res) => json(res, 500, { error: { code: "internal", message: "boom" } }) });
    const result = await place(server.url, planned({}));
    expect(result.outcome).toEqual({
      kind: "error",
      stage: "create",
      request: "POST /conversations",
      httpStatus: 500,
      code: "internal",
    });
    expect(unknownVersionCalls([result])).toEqual([]);
  });

  it("5xx on the stream, again on every reconnection: error at stream with the last answer's status and code", async () => {
    server = await failing({ events: (res) => json(res, 503, { error: { code: "overloaded", message: "busy" } }) });
    const result = await place(server.url, planned({}));
    expect(result.outcome).toEqual({
      kind: "error",
      stage: "stream",
      request: `GET /conversations/${CONVERSATION}/events`,
      httpStatus: 503,
      code: "overloaded",
    });
    expect(unknownVersionCalls([result])).toEqual([]);
    // The report's snake_case.
    expect(callResult(result).outcome).toEqual({
      kind: "error",
      stage: "stream",
      request: `GET /conversations/${CONVERSATION}/events`,
      http_status: 503,
      code: "overloaded",
    });
  });

  it("a refused connection: error at create with the network code, no status", async () => {
    const closed = await scriptedServer(() => {});
    await closed.close();
    const result = await place(closed.url, planned({}));
    expect(result.outcome).toEqual({
      kind: "error",
      stage: "create",
      request: "POST /conversations",
      code: "ECONNREFUSED",
    });
  });

  it("the scenario's timeout: error at the stage it was waiting in, code timeout", async () => {
    server = await failing({ create: () => {} });
    const result = await place(server.url, planned({}, { timeout: 1 }));
    expect(result.outcome).toMatchObject({ kind: "error", stage: "create", code: "timeout" });
    expect(result.outcome.httpStatus).toBeUndefined();
  });

  it("a stream that keeps closing before conversation.ended: error at stream, no status", async () => {
    server = await failing({
      events: (res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const payload = { type: "conversation.started" };
        const envelope = { id: "ev_0", created_at: new Date().toISOString(), payload };
        res.end(`retry: 10\nid: 0\ndata: ${JSON.stringify(envelope)}\n\n`);
      },
    });
    const result = await place(server.url, planned({}));
    expect(result.outcome).toEqual({
      kind: "error",
      stage: "stream",
      request: `GET /conversations/${CONVERSATION}/events`,
    });
  });

  it("a stream token refused (401): error at stream with the status, at once", async () => {
    server = await failing({ events: (res) => json(res, 401, { error: { type: "authentication_error" } }) });
    const result = await place(server.url, planned({}));
    expect(result.outcome).toEqual({
      kind: "error",
      stage: "stream",
      request: `GET /conversations/${CONVERSATION}/events`,
      httpStatus: 401,
      code: "authentication_error",
    });
  });

  it("the run's stop (abort) while the stream is open: interrupted at stream, not an error, not finished", async () => {
    server = await failing({
      events: (res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const payload = { type: "conversation.started" };
        res.write(`id: 0\ndata: ${JSON.stringify({ id: "ev_0", created_at: new Date().toISOString(), payload })}\n\n`);
      },
    });
    const result = await place(server.url, planned({}), AbortSignal.timeout(300));
    expect(result.outcome).toEqual({ kind: "interrupted", stage: "stream" });
    expect(result.status).toBe("error");
    expect(callResult(result).status).toBe("error");
    expect(finishedCalls([callResult(result)])).toBe(0);
  });

  it("judged expectations without a judge: error at judge, code no_judge", async () => {
    server = await service({});
    client = createClient({ baseUrl: server.url, apiKey: KEY, maxRetries: 0 });
    const result = await placeCall(client, planned({ judge: ["the agent is polite"] }));
    expect(result.outcome).toEqual({ kind: "error", stage: "judge", code: "no_judge" });
  });
});
