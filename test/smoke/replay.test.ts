// `smoke --replay` says what failed: a recording of a passing call, replayed against an expectation
// that no longer holds, prints the same result lines as live smoke (the unmet expectation with the
// nearest transcript lines) and names it in every report.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.ts";
import { type AgentDefinition, loadAgents } from "../../src/definitions/index.ts";
import { htmlReport, jobSummary, junitXml, terminalSummary } from "../../src/report/index.ts";
import { startSimulator } from "../../src/simulator/index.ts";
import { type AgentOutput, replaySmoke, runSmoke } from "../../src/smoke/index.ts";

const AGENTS = path.resolve(import.meta.dirname, "../../agents");
const SCENARIO = "greets-and-summarizes";

describe("smoke --replay", () => {
  let sim: Awaited<ReturnType<typeof startSimulator>>;
  let agents: AgentDefinition[];
  const outputs: Record<string, AgentOutput> = {};
  let dir: string;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, eventDelayMs: 1, quiet: true });
    dir = await mkdtemp(path.join(os.tmpdir(), "smoke-replay-"));
    agents = (await loadAgents(AGENTS, { stack: "dev" })).agents;
    const client = createClient({ baseUrl: sim.url, apiKey: sim.apiKey });
    for (const agent of agents) {
      const body = { name: agent.name, description: agent.description, config: agent.config };
      const created =
        agent.kind === "procedural"
          ? await client.proceduralAgents.create(body)
          : await client.conversationalAgents.create({
              ...body,
              postprocess_agents: agent.postprocessAgents.map((key) => outputs[key]?.id ?? ""),
            } as Parameters<typeof client.conversationalAgents.create>[0]);
      outputs[agent.key] = { id: created.id, version_id: created.version_id, kind: agent.kind, name: agent.name };
    }
    await client.close();
  });
  afterAll(async () => {
    await sim?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("names the expectation that no longer holds, with the nearest transcript lines, on stdout and in every report", async () => {
    const recordings = path.join(dir, "recordings");
    const live = await runSmoke({
      definitions: agents,
      outputs,
      selection: { agents: ["support"], scenarios: [SCENARIO] },
      connection: { baseUrl: sim.url, apiKey: sim.apiKey },
      concurrency: 1,
      recordDir: recordings,
      out: { write: () => true, isTTY: false },
    });
    expect(live.report.scenarios.map((s) => s.verdict)).toEqual(["passed"]);

    // The scenario author edits `expect:`: the agent never said this.
    const edited = agents.map((agent) =>
      agent.key !== "support"
        ? agent
        : {
            ...agent,
            smoke: agent.smoke.map((s) =>
              s.name === SCENARIO ? { ...s, expect: { ...s.expect, says: ["we sell submarines"] } } : s,
            ),
          },
    );
    let printed = "";
    const { report } = await replaySmoke({
      definitions: edited,
      dir: recordings,
      out: { write: (text: string) => (printed += text) },
    });
    const expectation = 'says "we sell submarines"';
    expect(report.scenarios.map((s) => s.verdict)).toEqual(["failed"]);
    // The same result lines as live smoke: the call, then the unmet expectation, then the transcript lines it points at.
    const lines = printed.split("\n");
    const at = lines.findIndex((l) => l.includes(`✗ ${expectation}`));
    expect(lines[at - 1]).toMatch(new RegExp(`^✗ support/${SCENARIO}#1 \\(ca_[^)]+\\) 1 of \\d+ expectations unmet`));
    expect(lines[at]).toContain("no completed agent message matched");
    expect(lines[at + 1]).toMatch(/^ {8}\| agent: .*Maya/);
    // And in every report.
    expect(terminalSummary(report)).toMatch(new RegExp(`support/${SCENARIO}: 0/1 passed → failed`));
    expect(junitXml(report)).toContain(`<failure message="${expectation.replaceAll('"', "&quot;")}"`);
    expect(junitXml(report)).toMatch(/ {4}\| agent: .*Maya/);
    expect(jobSummary(report)).toContain(`✗ says "we sell submarines": no completed agent message matched`);
    expect(jobSummary(report)).toMatch(/> agent: .*Maya/);
    expect(htmlReport(report)).toContain("we sell submarines");
  });
});
