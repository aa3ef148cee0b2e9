// `audit` after agent-iac's own comparison (issue 49): the old versions a release replaced, called
// only by the comparison's test calls (`smoke --compare`, `npm start`'s second run), are not "still
// taking calls"; an old version with live traffic still is. The comparison runs through the smoke
// job against the simulator on port 0, and audit reads that simulator's conversations.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.ts";
import { parseOldVersions } from "../../src/compare/index.ts";
import type { HeldAgent } from "../../src/provider/index.ts";
import { auditText } from "../../src/report/traffic-render.ts";
import { exitCode } from "../../src/results/index.ts";
import { planSmoke } from "../../src/smoke/index.ts";
import { runSmokeJob } from "../../src/usecases/smoke-job.ts";
import type { PastVersion } from "../../src/watch/history.ts";
import { audit, auditReport, resolveWindow } from "../../src/watch/index.ts";
import { createAgents, type ExampleService, exampleService, simulatorCall } from "../helpers/simulator.ts";

describe("audit after agent-iac's own comparison calls", () => {
  let service: ExampleService;
  let old: Record<string, HeldAgent>;
  beforeAll(async () => {
    service = await exampleService({ eventDelayMs: 1 });
    // The versions before the release: the same agents created once more, held as the stack's past.
    const client = createClient({ baseUrl: service.sim.url, apiKey: service.sim.apiKey });
    old = await createAgents(client, service.agents).finally(() => client.close());
  });
  afterAll(() => service?.close());

  it("lists an old version only the comparison called apart from those still taking calls", async () => {
    const { sim, agents, held } = service;
    const oldSupport = old.support?.version_id as string;
    const oldBooking = old.booking?.version_id as string;
    // What npm start does after a deploy: the smoke scenarios on the new and the old versions.
    const compared = await runSmokeJob(
      {
        stack: "dev",
        plan: planSmoke(agents, held, { agents: ["support"] }),
        placement: {
          kind: "compare",
          old: parseOldVersions(JSON.stringify({ support: oldSupport }), "old.json"),
          failOn: "failure",
        },
        concurrency: 2,
        dryRun: false,
        judge: { settings: { baseUrl: undefined, model: undefined, apiKey: undefined, timeoutSec: 60 } },
        connection: () => ({ baseUrl: sim.url, apiKey: sim.apiKey }),
      } as Parameters<typeof runSmokeJob>[0],
      { out: { write: () => true, isTTY: false }, signal: new AbortController().signal },
    );
    expect(compared.kind === "ran" && compared.oldResults.length).toBeGreaterThan(0);
    // Live traffic still on the old booking: a replace did not move it.
    await simulatorCall(sim, "POST", "/_simulator/traffic", { agent_id: oldBooking, count: 3 });

    const past = new Map<string, PastVersion>(
      Object.values(old).map((a) => [a.version_id, { ...a, last_update: 1, last_held_at: null }]),
    );
    const now = new Date();
    const client = createClient({ baseUrl: sim.url, apiKey: sim.apiKey });
    const result = await audit({
      client,
      stack: "dev",
      agents: held,
      history: { available: true, source: "test", updates: 1, past },
      window: resolveWindow({ since: "1h" }, "24h", now),
      resume: {},
      now,
    }).finally(() => client.close());
    expect(result.old.map((r) => r.agent_id)).toEqual([oldBooking]);
    expect(result.oldTests).toMatchObject([{ agent_id: oldSupport, key: "support", live: 0, category: "old_tests" }]);
    const text = auditText(auditReport(result, now, {}));
    const still = text.slice(text.indexOf("still taking calls:"), text.indexOf("called only by test calls"));
    expect(still).toContain(oldBooking);
    expect(still).not.toContain(oldSupport);
    expect(text).toMatch(
      new RegExp(`${oldSupport}\\s+\\d+\\s+0 / \\d+\\s+old version of support called only by test calls`),
    );
    // audit's exit code is the report's, by the one rule (src/results): no unknown agent id took a
    // call, so 0 even under --fail-on-unknown; one that did fails it there, and only there.
    expect(result.unknown).toEqual([]);
    expect(exitCode(auditReport(result, now, {}, { failOnUnknown: true }))).toBe(0);
    const stranger = { agent_id: "ca_stranger@v1", calls: 2, live: 2, test: 0, key: null, note: "not the stack's" };
    const withUnknown = { ...result, unknown: [{ ...stranger, category: "unknown" as const }] };
    expect(exitCode(auditReport(withUnknown, now, {}, { failOnUnknown: true }))).toBe(1);
    expect(exitCode(auditReport(withUnknown, now, {}))).toBe(0);
  });
});
