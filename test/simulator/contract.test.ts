// Contract tests: every operation of the service interface, in the interface's shapes, against a
// real simulator on port 0; responses are checked with the shared (tolerant) schemas and with
// exact field sets where the interface names them.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  conversationList,
  conversation as conversationSchema,
  createAgentResponse,
  createConversationResponse,
  eventEnvelope,
  feedbackList,
  knownPayload,
  procedureList,
} from "../../src/contract/index.ts";
import { type Simulator, startSimulator } from "../../src/simulator/index.ts";
import {
  allEvents,
  call,
  conversationalConfig,
  createConversation,
  createConversational,
  createProcedural,
  ok,
  readSse,
  said,
  streamHeaders,
  types,
  waitFor,
} from "./helpers.ts";

const CONVERSATION_FIELDS = [
  "agent_id",
  "channel_type",
  "completed_at",
  "created_at",
  "custom_fields",
  "customer_id",
  "direction",
  "duration_sec",
  "failure_reason",
  "id",
  "livemode",
  "sentiment",
  "started_at",
  "status",
];
const PROCEDURE_FIELDS = [
  "agent_id",
  "conversation_id",
  "created_at",
  "error",
  "id",
  "livemode",
  "name",
  "output",
  "status",
];
const FEEDBACK_FIELDS = [
  "comment",
  "conversation_id",
  "created_at",
  "created_by_user_id",
  "created_by_user_name",
  "id",
  "rating",
  "reasons",
];

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, apiKey: "sk-contract-test", eventDelayMs: 1, quiet: true });
});
afterAll(() => sim?.close());
beforeEach(async () => {
  await ok(sim, "POST", "/_simulator/reset");
});

describe("agent creation", () => {
  it("creates procedural and conversational agents with ca_/pa_ ids and <id>@v1 version ids", async () => {
    const pa = await createProcedural(sim);
    expect(createAgentResponse.parse(pa)).toEqual(pa);
    expect(Object.keys(pa).sort()).toEqual(["id", "version_id"]);
    expect(pa.id).toMatch(/^pa_[A-Za-z0-9]+$/);
    expect(pa.version_id).toBe(`${pa.id}@v1`);
    const ca = await createConversational(sim, { postprocess_agents: [pa.id] });
    expect(ca.id).toMatch(/^ca_[A-Za-z0-9]+$/);
    expect(ca.version_id).toBe(`${ca.id}@v1`);
    // Every create is a new agent.
    const again = await createConversational(sim);
    expect(again.id).not.toBe(ca.id);

    const stored = await ok(sim, "GET", "/_simulator/agents");
    expect(stored.procedural).toHaveLength(1);
    expect(stored.conversational).toHaveLength(2);
    const first = stored.conversational.find((a: { id: string }) => a.id === ca.id);
    expect(first).toMatchObject({
      id: ca.id,
      version_id: ca.version_id,
      name: "Booking",
      description: "books",
      config: conversationalConfig,
      postprocess_agents: [pa.id],
    });
    expect(first.versions).toHaveLength(1);
  });

  it("rejects postprocess_agents naming no procedural agent, naming the field", async () => {
    const ca = await createConversational(sim);
    for (const id of ["pa_doesnotexist", ca.id.replace("ca_", "pa_")]) {
      const reply = await call(sim, "POST", "/conversational_agents", {
        body: { name: "x", description: "d", config: {}, postprocess_agents: [id] },
      });
      expect(reply.status).toBe(400);
      expect(reply.body.error.field).toBe("postprocess_agents.0");
      expect(reply.body.error.message).toContain(id);
    }
    expect((await ok(sim, "GET", "/_simulator/agents")).conversational).toHaveLength(1);
  });

  it("validates bodies with the shared schemas: 400 with a JSON body naming the field", async () => {
    const cases: [string, unknown, string][] = [
      ["/conversational_agents", { description: "d", config: {} }, "name"],
      [
        "/conversational_agents",
        { name: "x", description: "d", config: { runtime: { model: "gpt" } } },
        "config.runtime.model",
      ],
      ["/conversational_agents", { name: "x", description: "d", config: {}, colour: "red" }, "colour"],
      [
        "/procedural_agents",
        { name: "x", description: "d", config: { filter_statuses: "completed" } },
        "config.filter_statuses",
      ],
      ["/conversations", { agent_id: "ca_x", channel: { type: "phone" } }, "channel.callee_no"],
      ["/conversations", { agent_id: "agent-1", channel: { type: "phone", callee_no: "1" } }, "agent_id"],
    ];
    for (const [path, body, field] of cases) {
      const reply = await call(sim, "POST", path, { body });
      expect(reply.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(reply.body.error.field).toBe(field);
      expect(reply.body.error.message).toContain(field);
      expect(reply.body.error.request_id).toBe(reply.headers["request-id"]);
    }
    const broken = await call(sim, "POST", "/procedural_agents", {
      body: undefined,
      headers: { "content-type": "application/json" },
    });
    expect(broken.status).toBe(400);
    expect((await ok(sim, "GET", "/_simulator/agents")).procedural).toHaveLength(0);
  });
});

describe("conversations", () => {
  it("resolves agent_id: bare and @v1 run, @v2 and unknown ids are 404", async () => {
    const ca = await createConversational(sim);
    for (const agentId of [ca.id, `${ca.id}@v1`]) {
      const created = await createConversation(sim, agentId);
      expect(createConversationResponse.parse(created)).toBeTruthy();
    }
    for (const agentId of [`${ca.id}@v2`, "ca_unknown", "ca_unknown@v1"]) {
      const reply = await call(sim, "POST", "/conversations", {
        body: { agent_id: agentId, channel: { type: "phone", callee_no: "+1" } },
      });
      expect(reply.status).toBe(404);
      expect(reply.body.error.field).toBe("agent_id");
    }
    // A procedural agent is not a conversational one.
    const pa = await createProcedural(sim);
    const reply = await call(sim, "POST", "/conversations", {
      body: { agent_id: pa.id.replace("pa_", "ca_"), channel: { type: "phone", callee_no: "+1" } },
    });
    expect(reply.status).toBe(404);
  });

  it("returns the channel with token and events_url (no token in it); null numbers; livemode default true", async () => {
    const ca = await createConversational(sim);
    const created = await ok(sim, "POST", "/conversations", {
      agent_id: ca.version_id,
      channel: { type: "phone", callee_no: "+15550100100", priority: "normal" },
    });
    expect(created.id).toMatch(/^conv_/);
    expect(created.channel).toEqual({
      type: "phone",
      callee_no: "+15550100100",
      caller_no: null,
      priority: "normal",
      token: expect.stringMatching(/^tok_/),
      events_url: `${sim.url}/conversations/${created.id}/events`,
    });
    expect(created.channel.events_url).not.toContain(created.channel.token);

    const test = await createConversation(sim, ca.id, { livemode: false });
    const list = await ok(sim, "GET", "/conversations");
    const byId = new Map(list.data.map((c: { id: string }) => [c.id, c]));
    expect(byId.get(created.id)).toMatchObject({ livemode: true, agent_id: ca.version_id });
    expect(byId.get(test.id)).toMatchObject({ livemode: false });
  });

  it("a new conversation is queued until its first event (a long event delay holds it there)", async () => {
    const held = await startSimulator({ port: 0, apiKey: "sk-held", eventDelayMs: 60_000, quiet: true });
    try {
      const ca = await createConversational(held);
      const created = await createConversation(held, ca.id);
      const item = (await ok(held, "GET", "/conversations")).data[0];
      expect(item).toMatchObject({
        id: created.id,
        status: "queued",
        started_at: null,
        completed_at: null,
        duration_sec: null,
      });
    } finally {
      await held.close();
    }
  });

  it("runs the default script: queued → in_progress → completed, greeting by persona, goodbye, list fields", async () => {
    const ca = await createConversational(sim);
    const created = await createConversation(sim, ca.version_id);

    const events = await allEvents(sim, created.id);
    for (const event of events) {
      expect(eventEnvelope.parse(event)).toEqual(event);
      expect(knownPayload.safeParse(event.payload).success).toBe(true);
    }
    expect(types(events)[0]).toBe("conversation.started");
    expect(types(events).at(-1)).toBe("conversation.ended");
    expect(said(events)).toEqual([
      "Hello, this is Leo. How can I help you today?",
      "I understand: Hi, I'd like some help with my account.",
      "Thank you for calling. Goodbye!",
    ]);
    expect(events.filter((e) => e.payload.type === "user.message.received").map((e) => e.payload.text)).toEqual([
      "Hi, I'd like some help with my account.",
      "That's all, thank you.",
    ]);
    // Deltas of one generation concatenate to its completed text.
    const greeting = events.find((e) => e.payload.type === "agent.message.completed");
    const deltas = events.filter(
      (e) => e.payload.type === "agent.message.delta" && e.payload.generation_id === greeting?.payload.generation_id,
    );
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.map((e) => e.payload.text_delta).join("")).toBe(greeting?.payload.text);

    const item = await waitFor(async () => {
      const list = await ok(sim, "GET", "/conversations");
      return list.data[0].status === "completed" ? list.data[0] : undefined;
    });
    expect(conversationList.parse({ data: [item], cursor: null })).toBeTruthy();
    expect(conversationSchema.parse(item)).toEqual(item);
    expect(Object.keys(item).sort()).toEqual(CONVERSATION_FIELDS);
    expect(item).toMatchObject({ direction: "inbound", failure_reason: null, livemode: true });
    expect(Date.parse(item.started_at)).toBeGreaterThanOrEqual(Date.parse(item.created_at));
    expect(Date.parse(item.completed_at)).toBeGreaterThanOrEqual(Date.parse(item.started_at));
    expect(item.duration_sec).toBeGreaterThanOrEqual(0);
  });

  it("deep-merges override_config for that conversation only, and calls tools named in user turns", async () => {
    const ca = await createConversational(sim);
    const overridden = await createConversation(sim, ca.id, {
      override_config: { personas: [{ name: "Lucía" }], language: { default_language: "Spanish" } },
      context: {
        simulation: { user_turns: ["Please check availability on Tuesday.", "Check Availability again and bye."] },
      },
    });
    const events = await allEvents(sim, overridden.id);
    expect(said(events)).toEqual([
      "Hello, this is Lucía. How can I help you today?",
      "I have used check_availability for you.",
      "I have used check_availability for you.",
      "Thank you for calling. Goodbye!",
    ]);
    const created = events.filter((e) => e.payload.type === "agent.tool_call.created");
    const returned = events.filter((e) => e.payload.type === "agent.tool_call.returned");
    expect(created).toHaveLength(2);
    expect(created[0]?.payload).toMatchObject({
      name: "check_availability",
      arguments: { request: "Please check availability on Tuesday." },
    });
    expect(returned[0]?.payload).toMatchObject({
      call_id: created[0]?.payload.call_id,
      result: { ok: true, tool: "check_availability" },
    });
    expect(created[0]?.payload.call_id).not.toBe(created[1]?.payload.call_id);

    // The agent's own config is unchanged: the next conversation greets as Leo.
    const plain = await createConversation(sim, ca.id, { context: { simulation: { user_turns: [] } } });
    expect(said(await allEvents(sim, plain.id))).toEqual([
      "Hello, this is Leo. How can I help you today?",
      "Thank you for calling. Goodbye!",
    ]);
  });

  it("context.simulation.outcome failed: server.error after the greeting, then ended, status failed", async () => {
    const noPersona = await ok(sim, "POST", "/conversational_agents", { name: "x", description: "d", config: {} });
    const created = await createConversation(sim, noPersona.id, { context: { simulation: { outcome: "failed" } } });
    const events = await allEvents(sim, created.id);
    expect(said(events)).toEqual(["Hello, this is the agent. How can I help you today?"]);
    expect(types(events).slice(-2)).toEqual(["server.error", "conversation.ended"]);
    expect(events.at(-2)?.payload.error.message).toMatch(/simulated failure/);
    const item = (await ok(sim, "GET", "/conversations")).data[0];
    expect(item).toMatchObject({ status: "failed", failure_reason: expect.stringMatching(/simulated failure/) });
  });
});

describe("event stream", () => {
  it("sends id: lines, replays to late subscribers, resumes after Last-Event-ID, closes after conversation.ended", async () => {
    const ca = await createConversational(sim);
    const created = await createConversation(sim, ca.id);
    const live = await readSse(created.channel.events_url, streamHeaders(sim, "key"));
    expect(live.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(live.headers["request-id"]).toMatch(/^req_/);
    expect(live.messages.map((m) => m.id)).toEqual(live.events.map((e) => e.id));
    expect(new Set(live.events.map((e) => e.id)).size).toBe(live.events.length);

    // After the end: the whole log, then the stream closes.
    const late = await readSse(created.channel.events_url, streamHeaders(sim, "key"));
    expect(late.events).toEqual(live.events);

    const cut = 5;
    const resumed = await readSse(created.channel.events_url, {
      ...streamHeaders(sim, "key"),
      "last-event-id": live.events[cut - 1]?.id as string,
    });
    expect(resumed.events).toEqual(live.events.slice(cut));
  });

  it("a subscriber that joins mid-conversation gets the events so far, then live ones, in order", async () => {
    const slow = await startSimulator({ port: 0, apiKey: "sk-slow", eventDelayMs: 15, quiet: true });
    try {
      const ca = await createConversational(slow);
      const created = await createConversation(slow, ca.id);
      await waitFor(async () => (await ok(slow, "GET", "/conversations")).data[0].status === "in_progress");
      await new Promise((resolve) => setTimeout(resolve, 60));
      const joined = await readSse(created.channel.events_url, streamHeaders(slow, "key"));
      expect(types(joined.events)[0]).toBe("conversation.started");
      expect(types(joined.events).at(-1)).toBe("conversation.ended");
      const numbers = joined.events.map((e) => Number(e.id.split("_").at(-1)));
      expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    } finally {
      await slow.close();
    }
  });

  it("answers 404 for an unknown conversation", async () => {
    const result = await readSse(`${sim.url}/conversations/conv_nope/events`, streamHeaders(sim, "key"));
    expect(result.status).toBe(404);
  });
});

describe("procedures", () => {
  it("runs postprocess agents after the conversation: pending → completed, output shaped by output_schema", async () => {
    const shaped = await createProcedural(
      sim,
      {
        filter_statuses: ["completed"],
        output: {
          output_schema: {
            type: "object",
            properties: {
              summary: { type: "string" },
              follow_up_needed: { type: "boolean" },
              score: { type: "integer", minimum: 1 },
              topics: { type: "array", items: { type: "string" } },
              sentiment: { type: "string", enum: ["positive", "negative"] },
            },
          },
        },
      },
      "Call summary",
    );
    const plain = await createProcedural(sim, {}, "QA scorer");
    const onlyFailed = await createProcedural(sim, { filter_statuses: ["failed"] }, "Failure triage");
    const ca = await createConversational(sim, { postprocess_agents: [shaped.id, plain.id, onlyFailed.id] });
    const created = await createConversation(sim, ca.id, { livemode: false });
    await allEvents(sim, created.id);

    const list = await waitFor(async () => {
      const body = await ok(sim, "GET", `/conversations/${created.id}/procedures`);
      return body.page.length === 2 && body.page.every((p: { status: string }) => p.status === "completed")
        ? body
        : undefined;
    });
    expect(procedureList.parse(list)).toBeTruthy();
    expect(list.cursor).toBeNull();
    const byName = Object.fromEntries(list.page.map((p: { name: string }) => [p.name, p]));
    expect(Object.keys(byName).sort()).toEqual(["Call summary", "QA scorer"]);
    for (const item of list.page)
      expect(Object.keys(item).sort()).toEqual(PROCEDURE_FIELDS.filter((f) => f !== "livemode"));
    expect(byName["Call summary"]).toMatchObject({ agent_id: shaped.id, conversation_id: created.id, error: null });
    expect(byName["Call summary"].output).toEqual({
      summary: expect.stringContaining(created.id),
      follow_up_needed: false,
      score: 1,
      topics: [expect.any(String)],
      sentiment: "positive",
    });
    expect(byName["QA scorer"].output).toEqual({ summary: expect.any(String) });

    const global = await ok(sim, "GET", "/procedures");
    expect(global.page).toHaveLength(2);
    for (const item of global.page) {
      expect(Object.keys(item).sort()).toEqual(PROCEDURE_FIELDS);
      expect(item.livemode).toBe(false);
    }
    const missing = await call(sim, "GET", "/conversations/conv_nope/procedures");
    expect(missing.status).toBe(404);
  });

  it("a failed conversation triggers only agents whose filter_statuses include failed; procedure_outcome failed", async () => {
    const onCompleted = await createProcedural(sim, { filter_statuses: ["completed"] }, "On completed");
    const onFailed = await createProcedural(sim, { filter_statuses: ["failed"] }, "On failed");
    const ca = await createConversational(sim, { postprocess_agents: [onCompleted.id, onFailed.id] });
    const created = await createConversation(sim, ca.id, {
      context: { simulation: { outcome: "failed", procedure_outcome: "failed" } },
    });
    await allEvents(sim, created.id);
    const page = await waitFor(async () => {
      const body = await ok(sim, "GET", `/procedures?conversation_id=${created.id}`);
      return body.page.length === 1 && body.page[0].status !== "pending" ? body.page : undefined;
    });
    expect(page[0]).toMatchObject({ name: "On failed", status: "failed", output: null });
    expect(page[0].error.message).toMatch(/simulated failure/);
  });
});

describe("feedbacks", () => {
  it("lists feedback of this service id with the top-level reasons object; other service ids get none", async () => {
    const ca = await createConversational(sim);
    const conversation = await createConversation(sim, ca.id);
    const info = await ok(sim, "GET", "/_simulator/info");
    expect(info).toMatchObject({ service_id: sim.serviceId, pid: process.pid });
    const made = await ok(sim, "POST", "/_simulator/feedbacks", {
      conversation_id: conversation.id,
      rating: "bad",
      reasons: ["too_slow", "wrong_answer"],
      comment: "It took ages.",
      created_by_user_id: "usr_1",
      created_by_user_name: "Ada",
    });
    await ok(sim, "POST", "/_simulator/feedbacks", {
      conversation_id: conversation.id,
      rating: "good",
      reasons: ["too_slow"],
    });
    const list = await call(sim, "GET", `/feedbacks?service_id=${sim.serviceId}`, {
      headers: { "service-version": "2024-01-01" },
    });
    expect(list.status).toBe(200);
    expect(feedbackList.parse(list.body)).toBeTruthy();
    expect(list.body.cursor).toBeNull();
    expect(list.body.reasons).toEqual({ too_slow: 2, wrong_answer: 1 });
    expect(list.body.data).toHaveLength(2);
    for (const item of list.body.data) expect(Object.keys(item).sort()).toEqual(FEEDBACK_FIELDS);
    expect(list.body.data[1]).toEqual(made);

    const other = await ok(sim, "GET", "/feedbacks?service_id=svc_other");
    expect(other).toEqual({ data: [], cursor: null, reasons: {} });
    const noService = await call(sim, "GET", "/feedbacks");
    expect(noService.status).toBe(400);
    expect(noService.body.error.field).toBe("service_id");
    const bad = await call(sim, "POST", "/_simulator/feedbacks", {
      body: { conversation_id: "conv_nope", rating: "good" },
    });
    expect(bad.status).toBe(400);
  });
});

describe("simulator routes and request ids", () => {
  it("counts every service request by interface route, rejected ones too, but not /_simulator/ calls", async () => {
    const ca = await createConversational(sim);
    await call(sim, "POST", "/conversational_agents", { body: {} });
    await call(sim, "GET", "/conversations", { headers: { authorization: null } });
    const created = await createConversation(sim, ca.id);
    await allEvents(sim, created.id);
    await ok(sim, "GET", `/conversations/${created.id}/procedures`);
    await call(sim, "GET", "/no/such/route");
    await ok(sim, "GET", "/_simulator/agents");
    const counts = await ok(sim, "GET", "/_simulator/requests");
    expect(counts).toEqual({
      count: 7,
      by_route: {
        "POST /conversational_agents": 2,
        "GET /conversations": 1,
        "POST /conversations": 1,
        "GET /conversations/{conversation_id}/events": 1,
        "GET /conversations/{conversation_id}/procedures": 1,
      },
    });
  });

  it("sends a request-id header on every response, errors included, matching the error body", async () => {
    const replies = [
      await call(sim, "GET", "/conversations"),
      await call(sim, "GET", "/conversations", { headers: { authorization: "Bearer wrong" } }),
      await call(sim, "GET", "/nowhere"),
      await call(sim, "POST", "/procedural_agents", { body: { name: 1 } }),
    ];
    const ids = replies.map((r) => r.headers["request-id"]);
    for (const id of ids) expect(id).toMatch(/^req_[A-Za-z0-9]+$/);
    expect(new Set(ids).size).toBe(ids.length);
    for (const reply of replies.slice(1)) expect(reply.body.error.request_id).toBe(reply.headers["request-id"]);
  });

  it("reset forgets agents, conversations, feedbacks, counts and faults but keeps the service id", async () => {
    const ca = await createConversational(sim);
    await createConversation(sim, ca.id);
    await ok(sim, "POST", "/_simulator/faults", { route: "GET /procedures", status: 500 });
    await ok(sim, "POST", "/_simulator/reset");
    expect(await ok(sim, "GET", "/_simulator/agents")).toEqual({ conversational: [], procedural: [] });
    expect((await ok(sim, "GET", "/conversations")).data).toEqual([]);
    expect((await ok(sim, "GET", "/procedures")).page).toEqual([]);
    expect(await ok(sim, "GET", "/_simulator/info")).toMatchObject({ service_id: sim.serviceId });
    expect(await ok(sim, "GET", "/_simulator/requests")).toEqual({
      count: 2,
      by_route: { "GET /conversations": 1, "GET /procedures": 1 },
    });
  });
});
