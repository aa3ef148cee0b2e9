// The parts of `start`'s deploy that decide without a Pulumi run (deploy.ts; the up itself is
// driven end to end by the start and failed-up tests): a deploy aborted before it starts writes and
// runs nothing; Pulumi's error text cleaned to the lines a user reads; the report of a smoke phase
// that will not run after a cancelled up; and whether the comparison over the base consumed it.
// The session is a plain record of what these read; the agent definitions are the examples'.
import { access, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentDefinition, loadAgents } from "../../src/definitions/index.ts";
import { InterruptedError } from "../../src/errors/index.ts";
import { type ProjectContext, projectContext } from "../../src/settings/index.ts";
import { cleanErrorLines, deploy, notRunAfterUp, settleComparisonBase } from "../../src/usecases/deploy.ts";
import type { LocalService } from "../../src/usecases/local-service.ts";
import type { HeldAgents, StackSession } from "../../src/usecases/session.ts";
import { projectRoot } from "../../src/workspace/index.ts";

let root: string;
let project: ProjectContext;
let definitions: AgentDefinition[];

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/** A session of stack dev: its name, project, what it holds and its scenarios; no stack behind it. */
function session(held: () => Promise<HeldAgents>): StackSession {
  return {
    name: "dev",
    project,
    held,
    scenarioAgents: async () => definitions,
  } as unknown as StackSession;
}

const holding = (versions: Record<string, string>): HeldAgents => ({
  agents: Object.fromEntries(
    Object.entries(versions).map(([key, version_id]) => [
      key,
      { key, kind: "conversational", id: `id-${key}`, version_id, name: key, postprocess_agents: [], urn: "" },
    ]),
  ),
  stale: [],
  directories: [],
  previous: {},
  previousRecorded: true,
});

const baseFile = () => path.join(project.stateDir, "comparison-base.dev.json");
const writeBase = async () => {
  await mkdir(project.stateDir, { recursive: true });
  await writeFile(
    baseFile(),
    JSON.stringify({
      stack: "dev",
      versions: { booking: "v1" },
      seen: ["booking"],
      recorded_at: "2026-11-29T09:00:00Z",
    }),
  );
};

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "deploy-usecase-"));
  project = projectContext({ cwd: root, env: {} });
  definitions = (await loadAgents(path.join(projectRoot, "agents"), { stack: "dev", from: projectRoot })).agents;
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe("deploy", () => {
  it("aborted before the up: an interruption that says the run was not started, and nothing is written", async () => {
    const stopped = new AbortController();
    stopped.abort();
    const logged: string[] = [];
    const error = await deploy(
      session(async () => {
        throw new Error("the stack was read");
      }),
      { simulated: false } as LocalService,
      { log: (text) => logged.push(text), color: false, signal: stopped.signal, interrupts: {} as never },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterruptedError);
    expect(String(error)).toContain("the Pulumi run was not started");
    expect(logged).toEqual([]);
    expect(await exists(path.join(root, "reports", "old-versions.json"))).toBe(false);
    expect(await exists(baseFile())).toBe(false);
  });
});

describe("cleanErrorLines", () => {
  it("keeps the lines a user reads: no colour codes, stack frames, error-object fields or repeats", () => {
    const text = [
      "\u001b[31merror:\u001b[0m booking: POST /conversational_agents → 400: config.runtime.model is not a model",
      "    at Object.create (/app/node_modules/x.js:1:2)",
      "{",
      "  code: 1,",
      "  stderr: 'noise'",
      "}",
      "error: booking: POST /conversational_agents → 400: config.runtime.model is not a model",
      "",
      "the second line   ",
    ].join("\n");
    expect(cleanErrorLines(text)).toBe(
      "error: booking: POST /conversational_agents → 400: config.runtime.model is not a model\nthe second line",
    );
  });
});

describe("notRunAfterUp", () => {
  it("every scenario not run, pinned to what the stack holds, the rest '(not created)'; the report is interrupted", async () => {
    const report = await notRunAfterUp(session(async () => holding({ booking: "ca_b@v3" })));
    expect(report?.interrupted).toBe(true);
    expect(report?.scenarios.length).toBeGreaterThan(0);
    expect(new Set(report?.scenarios.map((s) => s.verdict))).toEqual(new Set(["not_run"]));
    const pins = new Map(report?.results.map((r) => [r.agent, r.version_id]));
    expect(pins.get("booking")).toBe("ca_b@v3");
    expect(pins.get("support")).toBe("(not created)");
    expect(new Set(report?.results.map((r) => r.error))).toEqual(
      new Set(["not run: `pulumi up` was interrupted first"]),
    );
  });

  it("a stack whose state cannot be read: no report rather than a wrong one", async () => {
    const unreadable = session(async () => {
      throw new Error("backend unreachable");
    });
    expect(await notRunAfterUp(unreadable)).toBeUndefined();
  });
});

describe("settleComparisonBase", () => {
  it("a comparison that did not complete (interrupted) keeps the base; one that completed consumes it", async () => {
    await writeBase();
    const interrupted = (await notRunAfterUp(session(async () => holding({ booking: "v2" })))) as NonNullable<
      Awaited<ReturnType<typeof notRunAfterUp>>
    >;
    await settleComparisonBase(
      session(async () => holding({})),
      interrupted,
    );
    expect(await exists(baseFile())).toBe(true);
    // A report that exits 0 (an audit that found nothing unknown is the smallest such report).
    const completed = {
      kind: "audit",
      interrupted: false,
      fail_on: null,
      traffic: { versions: [] },
    } as unknown as typeof interrupted;
    await settleComparisonBase(
      session(async () => holding({})),
      completed,
    );
    expect(await exists(baseFile())).toBe(false);
  });
});
