// `scenario derive` / `scenario generate` without --check (drafts.ts): the agent named (or the
// call's), which must be a conversational agent of the stack's files; the model from the caller
// settings, else the judge's, required before it is asked; its proposals vetted and counted; a
// Ctrl+C during the model's request an interruption with nothing printed. The stack file is plain
// (read with no Pulumi run); the model is a real HTTP server on port 0 (test/helpers/model-double.ts).
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { ConfigError, InterruptedError, InvalidInputError } from "../../src/errors/index.ts";
import { type ProjectContext, projectContext } from "../../src/settings/index.ts";
import { type DraftRequest, deriveDraft, generateDraft } from "../../src/usecases/drafts.ts";
import { projectRoot } from "../../src/workspace/index.ts";
import { type ModelDouble, startModelDouble } from "../helpers/model-double.ts";

let dir: string;
let model: ModelDouble;
/** Aborted by the model double when it receives a request marked to hang (a Ctrl+C while the model thinks). */
let stop = new AbortController();

const proposal = (name: string, tool: string) => ({
  name,
  persona: "a caller who wants a cleaning",
  goal: "book a cleaning next week",
  max_turns: 4,
  tool_calls: [tool],
  procedures: {},
  judge: ["confirms the booked slot"],
  language: null,
});

async function project(config: Record<string, string>): Promise<ProjectContext> {
  const root = await mkdtemp(path.join(dir, "p-"));
  await cp(path.join(projectRoot, "test", "fixtures", "agents-project"), root, { recursive: true });
  await cp(path.join(projectRoot, "agents"), path.join(root, "agents"), { recursive: true });
  await cp(path.join(projectRoot, "prompts"), path.join(root, "prompts"), { recursive: true });
  await writeFile(
    path.join(root, "Pulumi.dev.yaml"),
    stringify({ config: { "agents:baseUrl": "http://127.0.0.1:9", ...config } }),
  );
  return projectContext({ cwd: root, env: {} });
}

const request = (p: ProjectContext): DraftRequest => ({ stack: "dev", project: p, keepPii: false, check: false });
const io = () => ({ out: { write: () => true }, signal: stop.signal });

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "drafts-usecase-"));
  model = await startModelDouble((body) => {
    if (body.model === "hangs") {
      stop.abort();
      return { hang: true };
    }
    return {
      content: JSON.stringify({
        scenarios: [proposal("books-a-cleaning", "book_appointment"), proposal("sends-a-fax", "send_fax")],
      }),
    };
  });
});
afterAll(async () => {
  await model?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("generateDraft", () => {
  it("asks the caller model once, keeps what the agent can do and counts what it dropped", async () => {
    const p = await project({ "agents:callerBaseUrl": model.url, "agents:callerModel": "caller-1" });
    const before = model.requests.length;
    const result = await generateDraft({ ...request(p), agent: "booking", count: 2 }, io());
    expect(model.requests.length - before).toBe(1);
    expect(model.requests.at(-1)?.model).toBe("caller-1");
    expect(result.model).toBe("caller-1");
    expect(result.kept.map((k) => k.parsed.name)).toEqual(["books-a-cleaning"]);
    expect(result.dropped).toEqual([expect.objectContaining({ name: "sends-a-fax" })]);
    expect(result.count).toMatch(/^2 proposed, 1 kept: 1 /);
    expect(result.yaml).toContain("name: books-a-cleaning");
    expect(result.yaml).not.toContain("sends-a-fax");
  });

  it("without caller settings the judge's model writes them", async () => {
    const p = await project({ "agents:judgeBaseUrl": model.url, "agents:judgeModel": "judge-1" });
    const result = await generateDraft({ ...request(p), agent: "booking", count: 2 }, io());
    expect([result.model, model.requests.at(-1)?.model]).toEqual(["judge-1", "judge-1"]);
  });

  it("an agent that is not a conversational one of the files, or no model at all: refused before the model is asked", async () => {
    const p = await project({ "agents:callerBaseUrl": model.url, "agents:callerModel": "caller-1" });
    const before = model.requests.length;
    for (const agent of ["call-summary", "nobody"]) {
      const error = await generateDraft({ ...request(p), agent, count: 2 }, io()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error).toMatchObject({ field: "agent", value: agent });
      expect((error as Error).message).toBe(
        `no conversational agent "${agent}" in the stack's agent files (agents: booking, support)`,
      );
    }
    const none = await project({});
    const unset = await generateDraft({ ...request(none), agent: "booking", count: 2 }, io()).catch((e: unknown) => e);
    expect(unset).toBeInstanceOf(ConfigError);
    expect((unset as Error).message).toMatch(/^a model writes the scenarios, but .*agents:callerBaseUrl/);
    expect(model.requests.length).toBe(before);
  });

  it("a Ctrl+C while the model answers: an interruption, nothing printed", async () => {
    const p = await project({ "agents:callerBaseUrl": model.url, "agents:callerModel": "hangs" });
    stop = new AbortController();
    const error = await generateDraft({ ...request(p), agent: "booking", count: 2 }, io()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterruptedError);
    expect(String(error)).toContain("the model's request was stopped; nothing was printed");
    stop = new AbortController();
  });
});

describe("deriveDraft", () => {
  it("a call whose events do not say its agent needs --agent; with it, the call is drafted for that agent", async () => {
    const p = await project({ "agents:callerBaseUrl": model.url, "agents:callerModel": "caller-1" });
    const call = { conversationId: "conv_1", envelopes: [], channel: { callee_no: "+15550100100" } };
    const before = model.requests.length;
    const error = await deriveDraft({ ...request(p), call }, io()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ field: "agent" });
    expect(model.requests.length).toBe(before);
    const drafted = await deriveDraft({ ...request(p), call, agent: "booking" }, io());
    expect(model.requests.length).toBe(before + 1);
    expect(drafted.model).toBe("caller-1");
    expect(drafted.proposed).toBeGreaterThan(0);
  });
});
