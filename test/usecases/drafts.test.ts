// `scenario derive` / `scenario generate` without --check (drafts.ts): the agent named (or the
// call's), which must be a conversational agent of the stack's files; the model from the caller
// settings, else the judge's, required before it is asked; its proposals vetted and counted; a
// Ctrl+C during the model's request an interruption with nothing printed; the commands' use cases
// turn that into the YAML to print, the lines said beside it and the exit code (0 when a scenario
// was kept, else 1). The stack file is plain (read with no Pulumi run); the model is a real HTTP
// server on port 0 (test/helpers/model-double.ts); derive reads a recording of a real call to the
// simulator on port 0 (test/helpers/recorded-call.ts).
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { ConfigError, InterruptedError, InvalidInputError } from "../../src/errors/index.ts";
import { type ProjectContext, projectContext } from "../../src/settings/index.ts";
import {
  type DraftRequest,
  deriveDraft,
  draftFromAgent,
  draftFromCall,
  generateDraft,
} from "../../src/usecases/drafts.ts";
import { projectRoot } from "../../src/workspace/index.ts";
import { type ModelDouble, startModelDouble } from "../helpers/model-double.ts";
import { type RecordedCall, recordedCall } from "../helpers/recorded-call.ts";
import { fakeRun } from "../helpers/run-io.ts";

let dir: string;
let model: ModelDouble;
/** Aborted by the model double when it receives a request marked to hang (a Ctrl+C while the model thinks). */
let stop = new AbortController();
/** What the model double does on a request marked to hang: a Ctrl+C (the test's controller, or a run's). */
let hang = () => stop.abort();
/** A recording of a real call of the support agent (which has no tools). */
let recorded: RecordedCall;

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
  recorded = await recordedCall("drafts-usecase", { agent: "support", scenario: "greets-and-summarizes" });
  model = await startModelDouble((body) => {
    if (body.model === "hangs") {
      hang();
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
  await recorded?.close();
  await model?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("draftFromAgent", () => {
  it("asks the caller model once, keeps what the agent can do and counts what it dropped", async () => {
    const p = await project({ "agents:callerBaseUrl": model.url, "agents:callerModel": "caller-1" });
    const before = model.requests.length;
    const result = await draftFromAgent({ ...request(p), agent: "booking", count: 2 }, io());
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
    const result = await draftFromAgent({ ...request(p), agent: "booking", count: 2 }, io());
    expect([result.model, model.requests.at(-1)?.model]).toEqual(["judge-1", "judge-1"]);
  });

  it("an agent that is not a conversational one of the files, or no model at all: refused before the model is asked", async () => {
    const p = await project({ "agents:callerBaseUrl": model.url, "agents:callerModel": "caller-1" });
    const before = model.requests.length;
    for (const agent of ["call-summary", "nobody"]) {
      const error = await draftFromAgent({ ...request(p), agent, count: 2 }, io()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error).toMatchObject({ field: "agent", value: agent });
      expect((error as Error).message).toBe(
        `no conversational agent "${agent}" in the stack's agent files (agents: booking, support)`,
      );
    }
    const none = await project({});
    const unset = await draftFromAgent({ ...request(none), agent: "booking", count: 2 }, io()).catch((e: unknown) => e);
    expect(unset).toBeInstanceOf(ConfigError);
    expect((unset as Error).message).toMatch(/^a model writes the scenarios, but .*agents:callerBaseUrl/);
    expect(model.requests.length).toBe(before);
  });

  it("a Ctrl+C while the model answers: an interruption, nothing printed", async () => {
    const p = await project({ "agents:callerBaseUrl": model.url, "agents:callerModel": "hangs" });
    stop = new AbortController();
    const error = await draftFromAgent({ ...request(p), agent: "booking", count: 2 }, io()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterruptedError);
    expect(String(error)).toContain("the model's request was stopped; nothing was printed");
    stop = new AbortController();
  });
});

describe("draftFromCall", () => {
  it("a call whose events do not say its agent needs --agent; with it, the call is drafted for that agent", async () => {
    const p = await project({ "agents:callerBaseUrl": model.url, "agents:callerModel": "caller-1" });
    const call = { conversationId: "conv_1", envelopes: [], channel: { callee_no: "+15550100100" } };
    const before = model.requests.length;
    const error = await draftFromCall({ ...request(p), call }, io()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ field: "agent" });
    expect(model.requests.length).toBe(before);
    const drafted = await draftFromCall({ ...request(p), call, agent: "booking" }, io());
    expect(model.requests.length).toBe(before + 1);
    expect(drafted.model).toBe("caller-1");
    expect(drafted.proposed).toBeGreaterThan(0);
  });
});

describe("deriveDraft and generateDraft (the commands' use cases)", () => {
  const caller = { "agents:callerBaseUrl": "", "agents:callerModel": "caller-1" };
  const withModel = () => project({ ...caller, "agents:callerBaseUrl": model.url });
  /** The recorded call, read from its recording as `scenario derive --from-recording` reads it. */
  const recordedRequest = async () => {
    const rec = path.join(recorded.dir, "rec");
    const file = (await readdir(rec, { recursive: true })).find((name) => name.endsWith(".jsonl"));
    const header = JSON.parse((await readFile(path.join(rec, file as string), "utf8")).split("\n")[0] as string);
    return { conversationId: header.conversation_id as string, fromRecording: rec, idleSeconds: 30 };
  };

  it("a derive whose draft keeps nothing: exit 1, an empty report, the notes, each dropped one and the count as notes", async () => {
    const p = await withModel();
    const run = fakeRun();
    // Drafted for the booking agent, the support call's procedures are ones booking does not link.
    const outcome = await deriveDraft({ ...request(p), ...(await recordedRequest()), agent: "booking" }, run.io);
    expect(outcome).toEqual({
      report: "",
      notes: [
        "note: the call's callee_no is not one the agent file holds: channel.callee_no is a placeholder to replace\n",
        "note: 2 personal value(s) replaced by labelled placeholders\n",
        "dropped books-a-cleaning: unknown procedure: procedural agent(s) call-summary, qa-scorer: the agent links none\n",
        "dropped sends-a-fax: more than asked: proposal 2 of 2, 1 asked\n",
        "2 proposed, 0 kept: 1 named a procedural agent the agent does not link, 1 came beyond the number asked\n",
      ],
      code: 1,
    });
    // A recording asks no service.
    expect(run.connections).toEqual([]);
  });

  it("a derive for the call's own agent: what it kept is the report, exit 0, the dropped one and the count as notes", async () => {
    const p = await withModel();
    const { conversationId, ...call } = await recordedRequest();
    const outcome = await deriveDraft({ ...request(p), conversationId, ...call }, fakeRun().io);
    expect(outcome.code).toBe(0);
    expect(outcome.report).toMatch(new RegExp(`^# Derived from conversation ${conversationId} \\(support, `));
    expect(parse(outcome.report ?? "")).toEqual([
      expect.objectContaining({
        name: "books-a-cleaning",
        expect: expect.objectContaining({ procedures: expect.anything() }),
      }),
    ]);
    expect(outcome.notes).toEqual([
      "dropped sends-a-fax: more than asked: proposal 2 of 2, 1 asked\n",
      "2 proposed, 1 kept: 1 came beyond the number asked\n",
    ]);
  });

  it("a derive from the service without a callee number is refused before the model is asked", async () => {
    const p = await withModel();
    const before = model.requests.length;
    const { conversationId } = await recordedRequest();
    const error = await deriveDraft({ ...request(p), conversationId, idleSeconds: 30 }, fakeRun().io).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ field: "calleeNo" });
    expect(model.requests.length).toBe(before);
  });

  it("a generate stopped by Ctrl+C while the model answers: an interruption, no outcome", async () => {
    const p = await project({ ...caller, "agents:callerBaseUrl": model.url, "agents:callerModel": "hangs" });
    const run = fakeRun();
    hang = run.stop;
    try {
      const error = await generateDraft({ ...request(p), agent: "booking", count: 2 }, run.io).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InterruptedError);
      expect(String(error)).toContain("nothing was printed");
    } finally {
      hang = () => stop.abort();
    }
  });
});
