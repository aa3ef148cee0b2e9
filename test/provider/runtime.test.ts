// The provider's pure decisions: what counts as a change, what is validated, how failures read.
import { describe, expect, it } from "vitest";
import { ApiError, ConnectionError, TimeoutError } from "../../src/api/index.ts";
import { checkAgent, diffAgent, explainCreateFailure, resolveSettings } from "../../src/provider/runtime.ts";

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
    expect(diffAgent(olds, news)).toEqual({ changes: false, replaces: [], deleteBeforeReplace: false });
  });

  it("replaces on every changed field, and creates the new agent first", () => {
    const news = {
      ...body,
      description: "Answers more calls.",
      config: { ...body.config, channel: { is_voicemail_enabled: true } },
    };
    expect(diffAgent(body, news)).toEqual({
      changes: true,
      replaces: ["description", "config"],
      deleteBeforeReplace: false,
    });
  });

  it("treats a value not known until apply as a change (a replaced linked agent)", () => {
    expect(diffAgent(body, { ...body, postprocess_agents: [UNKNOWN] }).replaces).toEqual(["postprocess_agents"]);
  });

  it("treats an absent and an empty link list alike", () => {
    const { postprocess_agents: _, ...unlinked } = body;
    expect(diffAgent({ ...unlinked, postprocess_agents: [] }, unlinked).changes).toBe(false);
  });
});

describe("checkAgent", () => {
  it("accepts unknown placeholders on a first preview", () => {
    expect(checkAgent("conversational", {}, { ...body, postprocess_agents: [UNKNOWN] }).failures).toEqual([]);
  });

  it("reports what the service would reject, by property path", () => {
    const result = checkAgent("procedural", {}, { ...body, config: { runtime: { model: "gpt-4o" } } });
    expect(result.failures?.map((f) => f.property)).toEqual(["config.runtime.model"]);
    expect(result.failures?.[0]?.reason).toContain("<vendor>/<model name>");
  });
});

describe("explainCreateFailure", () => {
  it("says the agent may exist when the request was sent and the answer lost", () => {
    const lost = new ConnectionError({
      message: "socket hang up",
      method: "POST",
      path: "/procedural_agents",
      requestSent: true,
      attempts: 1,
    });
    expect(explainCreateFailure("procedural", "Call summary", lost).message).toMatch(
      /^the service may have created procedural agent "Call summary": socket hang up\. .*not retried/,
    );
    const timeout = new TimeoutError({
      message: "no answer",
      method: "POST",
      path: "/procedural_agents",
      requestSent: true,
      attempts: 1,
    });
    expect(explainCreateFailure("procedural", "Call summary", timeout).message).toContain("may have created");
  });

  it("names the agent and keeps the service's status and reason otherwise", () => {
    const refused = new ApiError({
      message: "POST /conversational_agents → 400: config.runtime.model",
      method: "POST",
      path: "/conversational_agents",
      status: 400,
      attempts: 1,
    });
    expect(explainCreateFailure("conversational", "Support line", refused).message).toBe(
      'could not create conversational agent "Support line": POST /conversational_agents → 400: config.runtime.model',
    );
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
