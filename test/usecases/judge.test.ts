// The judge a run needs (judge.ts): none when nothing is judged; a configuration error before any
// request when a judged scenario has no judge, or when a gate (judge_min_agreement, judge_min_kappa)
// has no trusted measurement on this machine; and a judge cache git tracks is refused. The judge is
// a real HTTP server on port 0 (never asked here: every decision is made before a vote); the
// calibrations are written through the judge's own cache, signed with the project's key.
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SmokeScenario } from "../../src/definitions/index.ts";
import { ConfigError } from "../../src/errors/index.ts";
import type { Calibration } from "../../src/judge/index.ts";
import { type JudgeSettings, type ProjectContext, projectContext } from "../../src/settings/index.ts";
import { buildJudge, setupJudge } from "../../src/usecases/judge.ts";
import { startTestJudge, type TestJudge } from "../helpers/judge-server.ts";
import { rejectedWith } from "../helpers/rejection.ts";

const MODEL = "judge-2025-01-01";
let server: TestJudge;
let settings: JudgeSettings;
let root: string;

const none: JudgeSettings = { baseUrl: undefined, model: undefined, apiKey: undefined, timeoutSec: 5 };

async function project(key = "judge-usecase-key"): Promise<ProjectContext> {
  return projectContext({ cwd: await mkdtemp(path.join(root, "p-")), env: { AGENT_IAC_JUDGE_CACHE_KEY: key } });
}

const scenario = (name: string, extra: Record<string, unknown> = {}) =>
  ({ name, expect: {}, ...extra }) as unknown as SmokeScenario;
const judged = (name: string, rubric: string, gates: Record<string, number> = {}) => ({
  agent: "desk",
  scenario: scenario(name, { expect: { judge: [rubric] }, ...gates }),
});

/** A measurement of `rubric` stored as `judge check` stores it, for this judge on this machine. */
async function measured(p: ProjectContext, rubric: string, calibration: Partial<Calibration>): Promise<void> {
  const judge = await buildJudge({ baseUrl: server.url, model: MODEL, timeoutSec: 5 }, { project: p });
  await judge.cache?.storeAgreements(judge.identity, {
    [rubric]: {
      agreement: 0.9,
      kappa: 0.8,
      kappa_low: 0.5,
      kappa_high: 0.95,
      human_pass: 6,
      human_fail: 6,
      flip_rate: 0,
      items: 12,
      consistency: 1,
      checked_at: "2026-11-01T00:00:00.000Z",
      file: "labels.yaml",
      ...calibration,
    } as Calibration,
  });
  await judge.client.close();
}

const refusal = (promise: Promise<unknown>) => rejectedWith(promise, ConfigError);

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "judge-usecase-"));
  server = await startTestJudge({});
  settings = { baseUrl: server.url, model: MODEL, apiKey: undefined, timeoutSec: 5 };
});
afterAll(async () => {
  await server?.close();
  await rm(root, { recursive: true, force: true });
});

describe("setupJudge", () => {
  it("nothing judged: no judge, even where none is configured; a persona caller's check needs one only where one is", async () => {
    const p = await project();
    const plain = [{ agent: "desk", scenario: scenario("plain") }];
    expect(await setupJudge(plain, none, { project: p })).toBeUndefined();
    const persona = [{ agent: "desk", scenario: scenario("persona", { caller: { persona: "an impatient caller" } }) }];
    expect(await setupJudge(persona, none, { project: p })).toBeUndefined();
    const checker = await setupJudge(persona, settings, { project: p });
    expect(checker?.model).toBe(MODEL);
    await checker?.client.close();
  });

  it("judged scenarios and no judge: a configuration error naming them (the first three) and the settings", async () => {
    const p = await project();
    const four = ["a", "b", "c", "d"].map((name) => judged(name, "greets"));
    const error = await refusal(setupJudge(four, none, { project: p, stack: "qa" }));
    expect(error.message).toMatch(
      /^scenario\(s\) desk\/a, desk\/b, desk\/c and 1 more have judged expectations \(expect\.judge\), but no judge is configured for stack qa: set agents:judgeBaseUrl/,
    );
  });

  it("judged scenarios without gates get the configured judge, and nothing is asked of it yet", async () => {
    const p = await project();
    const judge = await setupJudge([judged("a", "greets")], settings, { project: p });
    expect(judge?.model).toBe(MODEL);
    await judge?.client.close();
    expect([server.requests.length, server.keyChecks.length]).toEqual([0, 0]);
  });

  it("a gate with no measurement on this machine (or one signed elsewhere) is not trusted", async () => {
    const p = await project();
    const gated = [judged("a", "offers a callback", { judge_min_agreement: 0.8 })];
    const never = await refusal(setupJudge(gated, settings, { project: p }));
    expect(never.message).toBe(
      `the judge is not trusted for these rubrics:\n  desk/a: "offers a callback" was never measured with ${MODEL} at ${server.url} on this machine (a calibration copied from elsewhere, hand-written or made with another judge does not count)`,
    );
    expect(never.hint).toMatch(/agent-iac judge check FILE/);
    // Measured, but signed with another machine's key: the same refusal.
    const elsewhere = await project("another-machine");
    await measured(elsewhere, "offers a callback", {});
    const copied = { ...p, stateDir: elsewhere.stateDir, dir: elsewhere.dir };
    await expect(setupJudge(gated, settings, { project: copied })).rejects.toThrow(/was never measured with/);
    // …while on the machine that signed it, it holds.
    const there = await setupJudge(gated, settings, { project: elsewhere });
    expect(there?.model).toBe(MODEL);
    await there?.client.close();
  });

  it("each gate against the measurement: agreement, kappa's lower bound, too few items, one human verdict", async () => {
    const p = await project();
    await measured(p, "greets", {});
    await measured(p, "few", { items: 5 });
    await measured(p, "one-sided", { human_pass: 12, human_fail: 0 });
    await measured(p, "no-interval", { kappa_low: null });
    const held = await setupJudge(
      [judged("ok", "greets", { judge_min_agreement: 0.85, judge_min_kappa: 0.5 })],
      settings,
      { project: p },
    );
    expect(held?.model).toBe(MODEL);
    await held?.client.close();
    const error = await refusal(
      setupJudge(
        [
          judged("strict", "greets", { judge_min_agreement: 0.95, judge_min_kappa: 0.6 }),
          judged("few", "few", { judge_min_agreement: 0.5 }),
          judged("one", "one-sided", { judge_min_kappa: 0.1 }),
          judged("interval", "no-interval", { judge_min_kappa: 0.1 }),
        ],
        settings,
        { project: p },
      ),
    );
    expect(error.message.split("\n").slice(1)).toEqual([
      `  desk/strict: "greets" agreed with its human labels 0.9 of the time (2026-11-01T00:00:00.000Z), below judge_min_agreement 0.95`,
      `  desk/strict: "greets" has kappa 0.8 whose 95 % interval's lower bound 0.5 (2026-11-01T00:00:00.000Z, over 12) is below judge_min_kappa 0.6`,
      `  desk/few: "few" was measured over 5 labelled transcript(s); judge_min_agreement needs at least 10 per rubric`,
      expect.stringMatching(/^ {2}desk\/one: "one-sided" cannot pass judge_min_kappa: /),
      `  desk/interval: "no-interval" has no kappa interval (2026-11-01T00:00:00.000Z): judge_min_kappa 0.1 needs one`,
    ]);
  });
});

describe("buildJudge", () => {
  it("refuses a judge cache that git tracks: a committed calibration is not this judge's evidence", async () => {
    const p = await project();
    const git = (...args: string[]) => execFileSync("git", args, { cwd: p.dir, stdio: "ignore" });
    git("init", "-q");
    const cache = path.join(p.stateDir, "judge-cache");
    await mkdir(cache, { recursive: true });
    await writeFile(path.join(cache, "agreements.json"), "{}");
    git("add", "-f", ".agent-iac/judge-cache/agreements.json");
    const error = await refusal(buildJudge({ baseUrl: server.url, model: MODEL, timeoutSec: 5 }, { project: p }));
    expect(error.message).toMatch(/holds file\(s\) tracked by git \(.*agreements\.json\)/);
    expect(error.hint).toMatch(/git rm -r --cached/);
    // Elsewhere (--judge-cache DIR, relative to the project) it is used.
    const judge = await buildJudge(
      { baseUrl: server.url, model: MODEL, timeoutSec: 5 },
      { project: p, cache: { dir: "elsewhere" } },
    );
    expect(judge.cache?.dir).toBe(path.join(p.dir, "elsewhere"));
    await judge.client.close();
  });
});
