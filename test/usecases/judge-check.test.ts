// `judge check`'s use case: the stack's judge (its plain stack file, no Pulumi run) measured against
// a labelled file; the results said per rubric, the --within-humans gate decided, the measurement
// stored where the run's gates read it, the JSON written in the project; a refused key stops before
// any item is judged. The judge is a real HTTP server on port 0 (test/helpers/judge-server.ts).
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { AuthenticationError } from "../../src/api/index.ts";
import { type ProjectContext, projectContext } from "../../src/settings/index.ts";
import { buildJudge } from "../../src/usecases/judge.ts";
import { judgeCheck } from "../../src/usecases/judge-check.ts";
import { startTestJudge, type TestJudge } from "../helpers/judge-server.ts";

const RUBRIC = "greets the caller";
let judge: TestJudge;
let dir: string;

/** Twelve labelled transcripts: six greet, six do not; the human calls the sixth greeting a fail. */
const items = Array.from({ length: 12 }, (_, i) => ({
  rubric: RUBRIC,
  transcript: [i < 6 ? `agent: hello, this is desk ${i}` : `agent: state your business ${i}`, "caller: fine"],
  human: i < 5 ? "pass" : "fail",
}));

/** A project whose stack file names the judge (plain settings: read without the Pulumi CLI). */
async function project(judgeUrl: string, model: string, extra: Record<string, string> = {}): Promise<ProjectContext> {
  const root = await mkdtemp(path.join(dir, "p-"));
  await writeFile(path.join(root, "Pulumi.yaml"), "name: judged\nruntime: nodejs\n");
  await writeFile(
    path.join(root, "Pulumi.dev.yaml"),
    stringify({ config: { "agents:judgeBaseUrl": judgeUrl, "agents:judgeModel": model, ...extra } }),
  );
  await writeFile(path.join(root, "labels.yaml"), stringify({ votes: 1, items }));
  return projectContext({ cwd: root, env: { AGENT_IAC_JUDGE_CACHE_KEY: "judge-check-test-key" } });
}

const out = () => {
  let text = "";
  return { write: (chunk: string) => (text += chunk), text: () => text };
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "judge-check-usecase-"));
  // The judge passes what greets; the second model ("always-pass") passes everything.
  judge = await startTestJudge(
    {
      [RUBRIC]: (transcript, model) => ({
        verdict: model === "always-pass" || /hello/.test(transcript) ? "pass" : "fail",
      }),
    },
    { apiKey: "sk-judge" },
  );
});
afterAll(async () => {
  await judge?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("judgeCheck", () => {
  it("measures the stack's judge per rubric, says it, stores it for the gates and writes the JSON in the project", async () => {
    const p = await project(judge.url, "judge-2025-01-01", { "agents:judgeApiKey": "sk-judge" });
    const said = out();
    const before = judge.requests.length;
    const outcome = await judgeCheck(
      { project: p, file: path.join(p.dir, "labels.yaml"), stack: "dev", json: "check.json" },
      { out: said },
    );
    expect(judge.requests.length - before).toBe(12);
    expect(outcome.model).toBe("judge-2025-01-01");
    expect(outcome.overall).toMatchObject({ items: 12, agreement: 11 / 12 });
    expect(outcome.overall.confusion).toEqual({
      human_pass_judge_pass: 5,
      human_pass_judge_fail: 0,
      human_fail_judge_pass: 1,
      human_fail_judge_fail: 6,
    });
    expect(outcome.gate).toBeNull();
    const text = said.text();
    expect(text).toMatch(/^judge judge-2025-01-01: 12 labelled transcript\(s\)\n/);
    expect(text.match(/^ {2}✗ line \d+ "greets the caller": judge pass/gm)).toHaveLength(1);
    expect(text.match(/^ {2}✓ /gm)).toHaveLength(11);
    expect(text).not.toContain("gate (--within-humans)");
    expect(text).not.toContain("warning:");
    // Written where the gates read it: the judge built for the same endpoint and model finds the measurement.
    const again = await buildJudge({ baseUrl: judge.url, model: "judge-2025-01-01", timeoutSec: 5 }, { project: p });
    const stored = await again.calibrations();
    await again.client.close();
    expect(stored[RUBRIC]).toMatchObject({ items: 12, agreement: 11 / 12, human_pass: 5, human_fail: 7 });
    // …and the JSON, relative to the project (not the process), says the same.
    const json = JSON.parse(await readFile(path.join(p.dir, "reports", "check.json"), "utf8"));
    expect(json).toMatchObject({ model: "judge-2025-01-01", gate: null, overall: { items: 12 } });
  });

  it("--within-humans without two labellers is refused, and a moving model name is warned of", async () => {
    const p = await project(judge.url, "gpt-4o", { "agents:judgeApiKey": "sk-judge" });
    const said = out();
    const outcome = await judgeCheck(
      { project: p, file: path.join(p.dir, "labels.yaml"), stack: "dev", withinHumans: true },
      { out: said },
    );
    expect(outcome.gate).toBe(
      "no item was labelled by two labellers (judge label --labeller NAME), so their own agreement is unknown",
    );
    expect(said.text()).toContain(`gate (--within-humans): refused: ${outcome.gate}\n`);
    expect(said.text()).toMatch(/^warning: agents:judgeModel "gpt-4o" moves/m);
  });

  it("a second judge model on the same endpoint: judge–judge agreement beside the human's", async () => {
    const p = await project(judge.url, "judge-2025-01-01", { "agents:judgeApiKey": "sk-judge" });
    const said = out();
    const outcome = await judgeCheck(
      { project: p, file: path.join(p.dir, "labels.yaml"), stack: "dev", secondJudge: "always-pass" },
      { out: said },
    );
    expect(outcome.second_model).toBe("always-pass");
    expect(outcome.overall.judge_judge).toBeDefined();
    expect(said.text()).toContain("judge–judge (judge-2025-01-01 and always-pass): ");
    const asked = judge.requests.slice(-24).map((r) => r.body.model);
    expect(asked.filter((m) => m === "always-pass")).toHaveLength(12);
  });

  it("a judge that refuses the key stops before any item is judged, and nothing is stored", async () => {
    const p = await project(judge.url, "judge-2025-01-01", { "agents:judgeApiKey": "sk-wrong" });
    const before = judge.requests.length;
    const error = await judgeCheck(
      { project: p, file: path.join(p.dir, "labels.yaml"), stack: "dev" },
      { out: out() },
    ).catch((e: unknown) => e);
    // The refusal is the judge's, naming the judge's key setting (never the service's agents:apiKey).
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({
      status: 401,
      origin: { use: "judge", baseUrl: judge.url, keySetting: expect.stringMatching(/^agents:judgeApiKey /) },
    });
    expect(judge.keyChecks.at(-1)?.authorization).toBe("Bearer sk-wrong");
    expect(judge.requests.length).toBe(before);
    const again = await buildJudge({ baseUrl: judge.url, model: "judge-2025-01-01", timeoutSec: 5 }, { project: p });
    expect(await again.calibrations()).toEqual({});
    await again.client.close();
  });

  it("with a pull request's base, the judge's address comes from the base, not from the change", async () => {
    const p = await project(judge.url, "judge-2025-01-01", { "agents:judgeApiKey": "sk-judge" });
    const git = (...args: string[]) => execFileSync("git", args, { cwd: p.dir, stdio: "ignore" });
    git("init", "-q", "-b", "main");
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "empty");
    git("add", "Pulumi.yaml", "Pulumi.dev.yaml");
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "judge");
    // The change points the judge elsewhere (where nothing answers): the base's judge is measured.
    await writeFile(
      path.join(p.dir, "Pulumi.dev.yaml"),
      stringify({
        config: {
          "agents:judgeBaseUrl": "http://127.0.0.1:9/v1",
          "agents:judgeModel": "judge-2025-01-01",
          "agents:judgeApiKey": "sk-judge",
        },
      }),
    );
    const before = judge.requests.length;
    const outcome = await judgeCheck(
      { project: p, file: path.join(p.dir, "labels.yaml"), stack: "dev", base: "main" },
      { out: out() },
    );
    expect(outcome.overall.items).toBe(12);
    expect(judge.requests.length - before).toBe(12);
    // A base git does not know is refused before any request.
    const unknown = await judgeCheck(
      { project: p, file: path.join(p.dir, "labels.yaml"), stack: "dev", base: "no-such-branch" },
      { out: out() },
    ).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: "AGENT_IAC_CONFIG" });
    expect(judge.requests.length - before).toBe(12);
  });

  it("no judge in the stack file nor the environment: a configuration error naming the settings", async () => {
    const root = await mkdtemp(path.join(dir, "none-"));
    await writeFile(path.join(root, "labels.yaml"), stringify({ votes: 1, items }));
    const p = projectContext({ cwd: root, env: {} });
    const error = await judgeCheck(
      { project: p, file: path.join(root, "labels.yaml"), stack: "dev" },
      { out: out() },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "AGENT_IAC_CONFIG" });
    expect(String((error as Error).message)).toContain("no judge is configured for stack dev: set agents:judgeBaseUrl");
  });
});
