// `agent-iac watch` and `agent-iac audit` after a real `pulumi up` and a replace, on traffic seeded
// through the simulator (POST /_simulator/traffic): regressions by failure rate with both counts,
// equal rates, too little traffic, test calls left out, old versions and unknown agent ids named,
// and the same figures through a 429 storm while paging.
import { readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentsProject, agentsProject, deployStack, stackOutputs } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { simulatorCall, startTestSimulator, testProfile } from "../../helpers/simulator.ts";

const API_KEY = "sk-watch-e2e-3f9a61c4d2";
const HOUR = 3600;
/** The variant profile's conversations name the bare agent id (`ca_x`), the default's the version. */
const BARE_IDS = testProfile() === "variant";

type Share = { count: number; of: number; value: number | null };
type Figures = {
  calls: number;
  finished: number;
  failure_rate: Share;
  negative_feedback: Share;
  procedure_errors: Share;
  duration_sec: { median: number | null; p95: number | null };
};
type Report = {
  format: string;
  kind: string;
  versions: Record<string, string>;
  old_versions: Record<string, string>;
  traffic: {
    attribution: { rule: string; by_version_id: number; by_bare_id: number; text: string } | null;
    pages_read: number;
    items_read: number;
    test_calls_excluded: number;
    reads: { what: string; pages: number; items: number; resumed: number }[];
    agents: {
      key: string;
      status: string;
      baseline_source: string | null;
      current: Figures;
      previous: Figures | null;
    }[];
    versions: {
      agent_id: string;
      calls: number;
      live: number;
      test: number;
      category: string;
      key: string | null;
      note: string;
    }[];
    idle: { key: string; version_id: string }[];
  };
};

describe("agent-iac watch and audit", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let oldSupport: string;
  let newSupport: string;
  let outside: string;
  const printed: string[] = [];

  const cli = async (command: string, ...args: string[]) => {
    const json = path.join(project.dir, `${command}-${printed.length}.json`);
    const markdown = path.join(project.dir, `${command}-${printed.length}.md`);
    const result = await runInProcess([command, "--stack", "test", "--json", json, "--markdown", markdown, ...args], {
      cwd: project.dir,
      env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY },
    });
    const jsonText = await readFile(json, "utf8").catch(() => "");
    const markdownText = await readFile(markdown, "utf8").catch(() => "");
    printed.push(result.stdout, result.stderr, jsonText, markdownText);
    return { ...result, markdown: markdownText, report: jsonText ? (JSON.parse(jsonText) as Report) : undefined };
  };

  const seed = (body: Record<string, unknown>) => simulatorCall(sim, "POST", "/_simulator/traffic", body);
  const support = (r: Report | undefined) => r?.traffic.agents.find((a) => a.key === "support");
  /** An explicit window `hoursAgo` back, one hour long (its baseline: the hour before). */
  const window = (hoursAgo: number) => {
    const to = Date.now() - (hoursAgo - 1) * HOUR * 1000;
    return ["--from", new Date(to - HOUR * 1000).toISOString(), "--to", new Date(to).toISOString()];
  };

  const bookingVersion = async () => {
    const versions = (await stackOutputs(project.stack)).versions?.value as Record<string, string> | undefined;
    return versions?.booking ?? "";
  };

  const supportVersion = async () => {
    const versions = (await stackOutputs(project.stack)).versions?.value as Record<string, string> | undefined;
    return versions?.support ?? "";
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ apiKey: API_KEY });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    await deployStack(project.stack);
    oldSupport = await supportVersion();
    // A replace: support's description changes, so a new agent takes over the key.
    const file = path.join(project.dir, "agents", "support.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace(/^description: /m, "description: Reworded. "));
    await deployStack(project.stack);
    newSupport = await supportVersion();
    expect(newSupport).not.toBe(oldSupport);
    expect(newSupport.split("@")[0]).not.toBe(oldSupport.split("@")[0]);
  });
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("exits 1 naming the failure rate with both counts, test calls left out, and says how to roll back", async () => {
    const feedback = { negative: 0.1, positive: 0.1 };
    // The previous hour: the old version, 5 % failures; this hour: the new one, 25 %.
    await seed({
      agent_id: oldSupport,
      count: 200,
      failure_rate: 0.05,
      ago_s: 1.2 * HOUR,
      spread_s: 0.6 * HOUR,
      feedback,
      duration_sec: [40, 60, 80],
    });
    await seed({
      agent_id: newSupport,
      count: 200,
      failure_rate: 0.25,
      ago_s: 60,
      spread_s: 0.5 * HOUR,
      feedback,
      procedure_failure_rate: 0.2,
      duration_sec: [30, 45, 60, 170],
    });
    // Smoke-like test calls that all fail: not live traffic.
    await seed({ agent_id: newSupport, count: 30, failure_rate: 1, livemode: false, ago_s: 120 });
    const run = await cli("watch", "--since", "1h");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `support: failure rate 25.0 % (50 of 200) on ${newSupport} vs 5.0 % (10 of 200) on ${oldSupport}: up 20.0 points, more than the allowed 5.0 points`,
    );
    expect(run.stderr).toContain(`to roll back support: send its calls to ${oldSupport} again`);
    expect(run.stderr).toContain("pulumi up");
    expect(run.stdout).toContain("test calls (livemode: false) left out: 30");
    const figures = support(run.report);
    expect(figures?.status).toBe("regressed");
    expect(figures?.baseline_source).toBe("stack history");
    expect(figures?.current.failure_rate).toEqual({ count: 50, of: 200, value: 0.25 });
    expect(figures?.previous?.failure_rate).toEqual({ count: 10, of: 200, value: 0.05 });
    expect(figures?.previous?.duration_sec).toMatchObject({ median: 60, p95: 80 });
    expect(figures?.current.duration_sec).toMatchObject({ median: 45, p95: 170 });
    // Feedback joined by conversation id (the local simulator's service id was found).
    expect(figures?.current.negative_feedback).toMatchObject({ count: 20, of: 40 });
    expect(figures?.previous?.negative_feedback).toMatchObject({ count: 20, of: 40 });
    // Procedures of the linked procedural agents: some failed on the new version only.
    expect(figures?.current.procedure_errors.count).toBeGreaterThan(0);
    expect(figures?.previous?.procedure_errors).toMatchObject({ count: 0 });
    expect(figures?.previous?.procedure_errors.of).toBeGreaterThan(0);
    expect(run.report?.format).toBe("agent-iac-report");
    expect(run.report?.kind).toBe("watch");
    expect(run.report?.old_versions.support).toBe(oldSupport);
    expect(run.report?.traffic.test_calls_excluded).toBe(30);
    // Every call attributed by the rule the service's answers call for, and the report says which.
    expect(run.report?.traffic.attribution).toMatchObject(
      BARE_IDS ? { rule: "bare agent id", by_version_id: 0 } : { rule: "version id", by_bare_id: 0 },
    );
    expect(run.stdout).toContain(
      BARE_IDS
        ? "attribution: calls attributed: 430 by the bare agent id"
        : "attribution: calls attributed: 430 by the version id",
    );
    expect(run.report?.traffic.pages_read).toBeGreaterThanOrEqual(2);
    expect(run.stdout).toMatch(/read \d+ page\(s\), \d+ item\(s\)/);
    expect(run.markdown).toContain("| failure rate | 25.0 % (50 of 200) | 5.0 % (10 of 200) |");
    expect(run.markdown).toContain("**Rollback:**");
    // Counting the test calls changes the figure.
    const all = await cli("watch", "--since", "1h", "--include-test-calls");
    expect(support(all.report)?.current.failure_rate).toEqual({ count: 80, of: 230, value: 80 / 230 });
  });

  it("exits 0 when the rates are equal", async () => {
    await seed({ agent_id: oldSupport, count: 100, failure_rate: 0.1, ago_s: 10.5 * HOUR, spread_s: 0.3 * HOUR });
    await seed({ agent_id: newSupport, count: 100, failure_rate: 0.1, ago_s: 9.5 * HOUR, spread_s: 0.3 * HOUR });
    // The old versions as `pulumi stack output versions --json` of the previous release gives them.
    const before = path.join(project.dir, "versions-before.json");
    await writeFile(before, JSON.stringify({ support: oldSupport, booking: "ca_gone@v1" }));
    const run = await cli("watch", ...window(10), "--baseline", before);
    expect(run.code).toBe(0);
    const figures = support(run.report);
    expect(figures?.status).toBe("ok");
    expect(figures?.baseline_source).toBe("versions file");
    expect(run.stdout).toContain(`support: ${newSupport} vs ${oldSupport} (from versions file)`);
    expect(figures?.current.failure_rate).toEqual({ count: 10, of: 100, value: 0.1 });
    expect(figures?.previous?.failure_rate).toEqual({ count: 10, of: 100, value: 0.1 });
  });

  it('says "not enough traffic" and exits 0 below --min-calls', async () => {
    await seed({ agent_id: oldSupport, count: 10, ago_s: 20.5 * HOUR });
    await seed({ agent_id: newSupport, count: 10, failure_rate: 0.5, ago_s: 19.5 * HOUR });
    const run = await cli("watch", ...window(20), "--min-calls", "50");
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`warning: support: not enough traffic on ${newSupport}: 10 finished call(s)`);
    expect(run.stdout).toContain("not enough traffic");
    expect(support(run.report)?.status).toBe("not_enough_traffic");
  });

  it("audits: the old version of support still taking calls, an agent from outside the stack as unknown", async () => {
    const created = await simulatorCall<{ version_id: string }>(sim, "POST", "/conversational_agents", {
      name: "Made elsewhere",
      description: "not in the stack",
      config: { runtime: { model: "openai/gpt-4o", prompt: { type: "fixed", text: "Hi." } } },
    });
    outside = created.version_id;
    await seed({ agent_id: outside, count: 7, ago_s: 60 });
    const run = await cli("audit", "--since", "2h");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`${oldSupport}\\s+200\\s+200 / 0\\s+old version of support still taking calls`),
    );
    const rows = run.report?.traffic.versions ?? [];
    expect(rows.find((r) => r.agent_id === oldSupport)).toMatchObject({ category: "old", key: "support", calls: 200 });
    expect(rows.find((r) => r.agent_id === newSupport)).toMatchObject({
      category: "current",
      key: "support",
      calls: 230,
      test: 30,
    });
    // An agent the stack never held: its bare id stays as the service said it (no version to map to).
    const outsideShown = BARE_IDS ? outside.split("@")[0] : outside;
    expect(rows.find((r) => r.agent_id === outsideShown)).toMatchObject({ category: "unknown", key: null, calls: 7 });
    // Each agent once: no "unpinned" row beside its version, and support is not idle.
    expect(new Set(rows.map((r) => r.agent_id)).size).toBe(rows.length);
    expect(rows).toHaveLength(3);
    expect(run.report?.traffic.idle.map((i) => i.key)).toEqual(["booking"]);
    expect(run.report?.traffic.attribution?.rule).toBe(BARE_IDS ? "bare agent id" : "version id");
    expect(run.markdown).toContain("Older versions of this stack's agents still taking calls (1)");
    const strict = await cli("audit", "--since", "2h", "--fail-on-unknown");
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain(`agent ids this stack never held took calls: ${outsideShown} (7 calls)`);
  });

  it("audits without the stack's history: the version replaced in the last update is old (the stack's previous_versions), and by --baseline with it", async () => {
    // A backend without readable history (S3, Postgres, Pulumi Cloud): here, the file backend's history moved aside.
    const historyDir = path.join(sandbox.backendDir, ".pulumi", "history");
    await rename(historyDir, `${historyDir}.aside`);
    try {
      const blind = await cli("audit", "--since", "2h", "--fail-on-unknown");
      // Only the agent from outside the stack is unknown.
      expect(blind.code).toBe(1);
      const oldRow = blind.report?.traffic.versions.find((r) => r.agent_id === oldSupport);
      expect(oldRow).toMatchObject({ category: "old", key: "support", calls: 200 });
      expect(oldRow?.note).toContain("previous_versions");
      expect(blind.report?.traffic.versions.filter((r) => r.category === "unknown").map((r) => r.calls)).toEqual([7]);
      // The versions saved before the release (what the deploy job saves before `pulumi up`).
      const before = path.join(project.dir, "versions-before-replace.json");
      await writeFile(before, JSON.stringify({ support: oldSupport, booking: await bookingVersion() }));
      const run = await cli("audit", "--since", "2h", "--fail-on-unknown", "--baseline", before);
      const rows = run.report?.traffic.versions ?? [];
      expect(rows.find((r) => r.agent_id === oldSupport)).toMatchObject({
        category: "old",
        key: "support",
        calls: 200,
      });
      expect(rows.find((r) => r.agent_id === oldSupport)?.note).toContain("--baseline");
      expect(rows.filter((r) => r.category === "unknown").map((r) => r.calls)).toEqual([7]);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(new RegExp(`${oldSupport}\\s+200\\s+200 / 0\\s+old version of support`));
    } finally {
      await rename(`${historyDir}.aside`, historyDir);
    }
  });

  it("reads the same figures through a 429 storm while paging, resuming from the last cursor, and says what it read", async () => {
    const calm = await cli("audit", "--since", "2h");
    const calmWatch = await cli("watch", "--since", "1h");
    // Four 429s in a row (more than the client's retries: the read resumes), then every second
    // request refused for a while (the client's retries carry the paging through).
    await simulatorCall(sim, "POST", "/_simulator/faults", {
      route: "GET /conversations",
      status: 429,
      retry_after_s: 0,
      count: 4,
    });
    await simulatorCall(sim, "POST", "/_simulator/faults", {
      route: "GET /conversations",
      status: 429,
      retry_after_s: 0,
      rate: 0.5,
      count: 30,
    });
    try {
      const stormy = await cli("audit", "--since", "2h");
      expect(stormy.code).toBe(0);
      expect(stormy.stderr).toContain("resuming at the first page");
      expect(stormy.stderr).toMatch(/retrying GET \/conversations after 429 in 0 ms \(attempt 2 of 4\)/);
      expect(stormy.report?.traffic.versions).toEqual(calm.report?.traffic.versions);
      expect(stormy.report?.traffic.pages_read).toBe(calm.report?.traffic.pages_read);
      expect(stormy.report?.traffic.reads[0]?.resumed).toBe(1);
      expect(stormy.stdout).toMatch(/resumed 1× after the client's retries/);
      const stormyWatch = await cli("watch", "--since", "1h");
      expect(stormyWatch.code).toBe(1);
      expect(support(stormyWatch.report)?.current).toEqual(support(calmWatch.report)?.current);
      expect(support(stormyWatch.report)?.previous).toEqual(support(calmWatch.report)?.previous);
    } finally {
      await simulatorCall(sim, "DELETE", "/_simulator/faults");
    }
  }, 240_000);

  it("says a usage error with exit 2", async () => {
    const both = await cli("watch", "--since", "1h", "--from", "2026-01-01T00:00:00Z");
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("either --since or --from/--to");
    const bad = await cli("audit", "--since", "soon");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--since must be a duration");
  });

  it("never writes the API key", () => {
    for (const text of printed) expect(text).not.toContain(API_KEY);
  });
});
