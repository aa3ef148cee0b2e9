// The provider's pure decisions: what counts as a change, what is validated, how failures read.
import { describe, expect, it } from "vitest";
import { ApiError, ConnectionError, TimeoutError } from "../../src/api/index.ts";
import { bodyDigests } from "../../src/provider/body.ts";
import { explainCreateFailure, resolveSettings } from "../../src/provider/create.ts";
import { checkAgent, diffAgent, handle } from "../../src/provider/runtime.ts";

const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const body = {
  name: "Support line",
  description: "Answers calls.",
  config: { runtime: { model: "openai/gpt-4o", prompt: { type: "fixed", text: "Be kind." } } },
  postprocess_agents: ["pa_1"],
};

describe("diffAgent", () => {
  it("ignores the serialized provider and the ids: upgrading agent-iac replaces nothing", () => {
    const olds = { ...body, __provider: "exports.handler = old", agentId: "ca_1", versionId: "ca_1@v1" };
    const news = { ...body, __provider: "exports.handler = new" };
    expect(diffAgent("conversational", olds, news)).toEqual({
      changes: false,
      replaces: [],
      deleteBeforeReplace: false,
    });
  });

  it("replaces on every changed field, and creates the new agent first", () => {
    const news = {
      ...body,
      description: "Answers more calls.",
      config: { ...body.config, channel: { is_voicemail_enabled: true } },
    };
    expect(diffAgent("conversational", body, news)).toEqual({
      changes: true,
      replaces: ["description", "config"],
      deleteBeforeReplace: false,
    });
  });

  it("treats a value not known until apply as a change (a replaced linked agent)", () => {
    expect(diffAgent("conversational", body, { ...body, postprocess_agents: [UNKNOWN] }).replaces).toEqual([
      "postprocess_agents",
    ]);
  });

  it("compares only the fields of its own kind's request body", () => {
    const { postprocess_agents: _, ...procedural } = body;
    // A stray postprocess_agents on a procedural agent is not sent, so it replaces nothing.
    expect(diffAgent("procedural", procedural, { ...procedural, postprocess_agents: ["pa_2"] }).changes).toBe(false);
    expect(diffAgent("conversational", body, { ...body, postprocess_agents: ["pa_2"] }).replaces).toEqual([
      "postprocess_agents",
    ]);
  });

  it("treats an absent and an empty link list alike", () => {
    const { postprocess_agents: _, ...unlinked } = body;
    expect(diffAgent("conversational", { ...unlinked, postprocess_agents: [] }, unlinked).changes).toBe(false);
  });
});

describe("checkAgent", () => {
  it("accepts unknown placeholders on a first preview", async () => {
    expect((await checkAgent("conversational", {}, { ...body, postprocess_agents: [UNKNOWN] })).failures).toEqual([]);
  });

  it("gives each unknown field its own stand-in: a link is still checked as a pa_ id, other fields are not failed", async () => {
    const unknownPrompt = {
      ...body,
      config: { runtime: { model: "openai/gpt-4o", prompt: { type: "fixed", text: UNKNOWN } } },
    };
    expect((await checkAgent("conversational", {}, unknownPrompt)).failures).toEqual([]);
    // A known wrong value beside an unknown one is still reported.
    const both = { ...body, postprocess_agents: [UNKNOWN, "not-a-procedural-id"] };
    expect((await checkAgent("conversational", {}, both)).failures.map((f) => f.reason)).toEqual([
      expect.stringMatching(/^postprocess_agents\[1\]: /),
    ]);
  });

  it("reports what the service would reject as an agent file's error: the field's path, its problem", async () => {
    const result = await checkAgent("procedural", {}, { ...body, config: { runtime: { model: "gpt-4o" } } });
    // No property: the engine prints the value at a named property (a whole config as a Go map).
    expect(result.failures).toEqual([
      { property: "", reason: "config.runtime.model: must look like <vendor>/<model name>, e.g. openai/gpt-4o" },
    ]);
  });

  it("names an unknown key with the known key it resembles, as an agent file's error does", async () => {
    const typo = { ...body, config: { langauge: { default_language: "English" } } };
    expect((await checkAgent("conversational", {}, typo)).failures).toEqual([
      { property: "", reason: 'config.langauge: unknown key "langauge" (did you mean "language"?)' },
    ]);
  });
});

describe("explainCreateFailure", () => {
  it("says the agent may exist when the request was sent and the answer lost", async () => {
    const lost = new ConnectionError({
      message: "socket hang up",
      method: "POST",
      path: "/procedural_agents",
      requestSent: true,
      attempts: 1,
    });
    expect((await explainCreateFailure("procedural", "Call summary", lost)).message).toMatch(
      /^the service may have created procedural agent "Call summary": socket hang up\. .*not retried/,
    );
    const timeout = new TimeoutError({
      message: "no answer",
      method: "POST",
      path: "/procedural_agents",
      requestSent: true,
      attempts: 1,
    });
    const explained = await explainCreateFailure("procedural", "Call summary", timeout);
    expect(explained.message).toContain("may have created");
    expect(explained.cause).toBe(timeout);
    expect(explained.cause).toMatchObject({ requestSent: true, attempts: 1, path: "/procedural_agents" });
  });

  it("names the agent and keeps the service's status and reason otherwise, with the typed error as cause", async () => {
    const refused = new ApiError({
      message: "POST /conversational_agents → 400: config.runtime.model",
      method: "POST",
      path: "/conversational_agents",
      status: 400,
      requestId: "req_42",
      attempts: 3,
    });
    const failure = await explainCreateFailure("conversational", "Support line", refused);
    expect(failure.message).toBe(
      'could not create conversational agent "Support line": POST /conversational_agents → 400: config.runtime.model',
    );
    expect(failure.cause).toBe(refused);
    expect(failure.cause).toMatchObject({ status: 400, requestId: "req_42", attempts: 3 });
  });
});

describe("resolveSettings", () => {
  it("prefers stack config and names both places when the key is missing", () => {
    const config = (values: Record<string, string>) => ({ config: { get: (key: string) => values[key] } });
    expect(resolveSettings(config({ "agents:baseUrl": "http://x", "agents:apiKey": "k" }))).toMatchObject({
      baseUrl: "http://x",
      apiKey: "k",
    });
    const saved = process.env.AGENT_IAC_API_KEY;
    delete process.env.AGENT_IAC_API_KEY;
    try {
      expect(() => resolveSettings(config({ "agents:baseUrl": "http://x" }))).toThrow(
        /agents:apiKey.*AGENT_IAC_API_KEY/,
      );
    } finally {
      if (saved !== undefined) process.env.AGENT_IAC_API_KEY = saved;
    }
  });
});

describe("state layout: the body in the inputs once, ids and a digest per field in the outputs", () => {
  const stored = {
    agentId: "ca_1",
    versionId: "ca_1@v1",
    digests: bodyDigests("conversational", body),
    __provider: "x",
  };

  it("finds no change against the digests of the same body, whatever the order of its keys", () => {
    const reordered = {
      postprocess_agents: ["pa_1"],
      config: { runtime: { prompt: { text: "Be kind.", type: "fixed" }, model: "openai/gpt-4o" } },
      description: "Answers calls.",
      name: "Support line",
    };
    expect(diffAgent("conversational", stored, reordered)).toEqual({
      changes: false,
      replaces: [],
      deleteBeforeReplace: false,
    });
  });

  it("names each changed field, as the body's copy in today's outputs did", () => {
    const news = { ...body, description: "Answers more calls.", postprocess_agents: ["pa_2"] };
    expect(diffAgent("conversational", stored, news).replaces).toEqual(["description", "postprocess_agents"]);
    const { postprocess_agents: _, ...unlinked } = body;
    expect(diffAgent("conversational", stored, unlinked).replaces).toEqual(["postprocess_agents"]);
    expect(diffAgent("conversational", stored, { ...body, postprocess_agents: [UNKNOWN] }).replaces).toEqual([
      "postprocess_agents",
    ]);
  });

  it("treats an absent and an empty link list alike", () => {
    const { postprocess_agents: _, ...unlinked } = body;
    const olds = { digests: bodyDigests("conversational", { ...unlinked, postprocess_agents: [] }) };
    expect(diffAgent("conversational", olds, unlinked).changes).toBe(false);
  });

  it("does not validate an unchanged body again (validated when it was created), and does a changed one", async () => {
    const invalid = { ...body, config: { runtime: { model: "gpt-4o" } } };
    expect((await checkAgent("conversational", invalid, invalid)).failures).toEqual([]);
    expect((await checkAgent("conversational", body, invalid)).failures.map((f) => f.reason)).toEqual([
      expect.stringMatching(/^config\.runtime\.model: /),
    ]);
  });
});

describe("handle: one entry point, the method told by the host's arguments", () => {
  it("dispatches diff (id, olds, news), check (olds, news), delete (id, props) and configure (request)", async () => {
    const stored = { digests: bodyDigests("conversational", body) };
    expect(await handle("conversational", ["ca_1", stored, { ...body, name: "Renamed" }])).toMatchObject({
      replaces: ["name"],
    });
    expect(await handle("conversational", [{}, body])).toEqual({ inputs: body, failures: [] });
    expect(await handle("conversational", [{ config: { get: () => undefined } }])).toBeUndefined();
    const logged: string[] = [];
    const error = console.error;
    console.error = (line: string) => logged.push(line);
    try {
      expect(await handle("procedural", ["pa_1", { agentId: "pa_1" }])).toBeUndefined();
    } finally {
      console.error = error;
    }
    expect(logged).toEqual(["procedural agent pa_1 is no longer managed by this stack; the service keeps it."]);
    await expect(handle("procedural", [])).rejects.toThrow(/no method taking 0 argument/);
  });
});
