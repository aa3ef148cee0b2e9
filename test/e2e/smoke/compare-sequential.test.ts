// Old versus new decided with evidence (issue 52), end to end: the real Pulumi CLI deploys booking
// twice (two versions), the simulator fails each version's calls at its own rate
// (context.simulation.failure_rate_by_version), and `smoke --compare` places old and new in pairs.
// The sequential comparison: an unchanged agent ends "no worse" before its cap, a drop of 0.5 ends
// "regressed" early, a drop of 0.1 with a margin of 0.1 ends inconclusive at the cap, which fails
// --fail-on regression unless --allow-inconclusive. The pairs are whole in every shard, and their
// order is the recorded order of the calls.
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { type Report, reportSchema } from "../../../src/results/index.ts";
import { type AgentsProject, addScenarios, agentsProject, stackOutputs } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-sequential-e2e-71c2a9";
const SLOW = 300_000;

describe("old versus new decided with evidence (real Pulumi CLI against the simulator)", { timeout: SLOW }, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let oldFile: string;
  const env = () => ({ ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY });
  const cli = (args: string[]) => runInProcess(args, { cwd: project.dir, env: env() });

  let runs = 0;
  async function compare(...args: string[]) {
    const json = path.join(project.dir, `compare-${++runs}.json`);
    const result = await cli(["smoke", "--stack", "test", "--compare", oldFile, "--json", json, ...args]);
    const text = await readFile(json, "utf8").catch(() => "");
    return { ...result, json, report: text ? reportSchema.parse(JSON.parse(text)) : undefined };
  }
  const comparison = (report: Report | undefined, name: string) =>
    report?.scenarios.find((s) => s.agent === "booking" && s.scenario === name)?.comparison;

  /** A scenario whose old and new version fail at these rates (each its own failure series). */
  const scenario = (name: string, rates: { old: number; new: number }, versions: [string, string], extra = {}) => {
    return {
      name,
      channel: { callee_no: "+15550142100" },
      context: {
        simulation: {
          series: name,
          failure_rate_by_version: { [versions[0]]: rates.old, [versions[1]]: rates.new },
        },
      },
      ...extra,
    };
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 0, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    const first = await cli(["start", "--stack", "test", "--no-smoke"]);
    expect(first.code, first.stderr).toBe(0);
    const old = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    oldFile = path.join(project.dir, "old-versions.json");
    await writeFile(oldFile, JSON.stringify(old));
    // A new version of booking (its description changes its config).
    const file = path.join(project.dir, "agents", "booking.yaml");
    const doc = parseDocument(await readFile(file, "utf8"));
    doc.set("description", "Books clinic appointments (version two).");
    await writeFile(file, doc.toString());
    const second = await cli(["start", "--stack", "test", "--no-smoke"]);
    expect(second.code, second.stderr).toBe(0);
    const now = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    expect(now.booking).not.toBe(old.booking);
    const versions: [string, string] = [old.booking as string, now.booking as string];
    await addScenarios(
      project.dir,
      "booking",
      scenario("seq-unchanged", { old: 0, new: 0 }, versions, { compare: "sequential" }),
      scenario("seq-half", { old: 0, new: 0.5 }, versions, { compare: "sequential" }),
      scenario("seq-tenth", { old: 0, new: 0.1 }, versions, { compare: { rule: "sequential", margin: 0.1 } }),
      scenario("fixed-three", { old: 0, new: 0 }, versions, { iterations: 4 }),
    );
  }, SLOW);
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("unchanged: no worse before the cap; a drop of 0.5: regressed early; a drop of 0.1 at margin 0.1: inconclusive at the cap", async () => {
    const files = ["junit.xml", "report.html"].map((f) => path.join(project.dir, f));
    const run = await compare(
      ...["--scenario", "seq-unchanged", "--scenario", "seq-half", "--scenario", "seq-tenth"],
      ...["--fail-on", "regression", "--junit", files[0] as string, "--html", files[1] as string],
    );
    expect(run.code, run.stdout).toBe(1);
    const unchanged = comparison(run.report, "seq-unchanged");
    expect(unchanged?.outcome).toBe("no_worse");
    // At α 0.05 and margin 0.1, "no worse" takes at least 32 pairs that all pass.
    expect(unchanged?.sequential).toMatchObject({ max_pairs: 40, margin: 0.1, alpha: 0.05 });
    expect(unchanged?.sequential?.pairs).toBeGreaterThanOrEqual(32);
    expect(unchanged?.sequential?.pairs).toBeLessThan(40);
    const half = comparison(run.report, "seq-half");
    expect(half?.outcome).toBe("regression");
    expect(half?.sequential?.pairs).toBeLessThanOrEqual(14);
    expect(half?.sequential?.regressed_wealth).toBeGreaterThanOrEqual(20);
    const tenth = comparison(run.report, "seq-tenth");
    expect(tenth?.outcome).toBe("inconclusive");
    expect(tenth?.sequential?.pairs).toBe(40);
    // Only the pairs a decision needed were placed, on each side.
    const calls = (name: string, side: string) =>
      run.report?.results.filter((r) => r.scenario === name && r.side === side).length;
    expect(calls("seq-half", "new")).toBe(half?.sequential?.pairs);
    expect(calls("seq-half", "old")).toBe(half?.sequential?.pairs);
    // Every surface says how many pairs it took, and the inconclusive one fails the run.
    expect(run.stdout).toMatch(
      new RegExp(`sequential comparison: decided after ${half?.sequential?.pairs} pairs of 40 \\(\\d+ calls saved\\)`),
    );
    expect(run.stdout).toContain("sequential comparison: undecided at the cap of 40 pairs: inconclusive");
    expect(run.stdout).toMatch(/= no worse booking\/seq-unchanged/);
    expect(run.stdout).toMatch(/\? inconclusive booking\/seq-tenth/);
    // Labelled by the comparison on every surface (no threshold of their own): never "flaky".
    const verdict = (name: string) => run.report?.scenarios.find((s) => s.scenario === name)?.verdict;
    expect([verdict("seq-half"), verdict("seq-tenth")]).toEqual(["failed", "inconclusive"]);
    expect(run.report?.summary).toMatchObject({ failed: 1, inconclusive: 1, flaky: 0 });
    const saved = 2 * (40 - (half?.sequential?.pairs ?? 0)) + 2 * (40 - (unchanged?.sequential?.pairs ?? 0));
    expect(run.report?.summary.calls_saved).toBe(saved);
    expect(run.stdout).toMatch(/booking\/seq-half: .*→ failed/);
    expect(run.stdout).toMatch(/booking\/seq-tenth: .*→ inconclusive/);
    expect(run.stdout).not.toContain("→ flaky");
    // JUnit and HTML say the same.
    const [junit, html] = await Promise.all(files.map((f) => readFile(f, "utf8")));
    expect(junit).toContain(
      `<failure message="regressed against the old version: decided after ${half?.sequential?.pairs} pairs of 40" type="regression">`,
    );
    expect(junit).toContain(
      '<failure message="the comparison with the old version was inconclusive: neither regressed nor no worse (margin 0.1) after 40 pairs of 40" type="inconclusive">',
    );
    expect(html).toContain(`decided after ${half?.sequential?.pairs} pairs of 40`);
    expect(html).toContain("undecided at the cap of 40 pairs: inconclusive");
    expect(junit).not.toContain('<property name="verdict" value="flaky"/>');
    expect(html).toMatch(/data-scenario="seq-half" data-verdict="failed"/);
    expect(html).toMatch(/data-scenario="seq-tenth" data-verdict="inconclusive"/);
  });

  it("--fail-on regression exits 1 on an inconclusive comparison, 0 with --allow-inconclusive (which the summary names)", async () => {
    const strict = await compare("--scenario", "seq-tenth", "--fail-on", "regression");
    expect(comparison(strict.report, "seq-tenth")?.outcome).toBe("inconclusive");
    expect(strict.code, strict.stdout).toBe(1);
    const allowed = await compare("--scenario", "seq-tenth", "--fail-on", "regression", "--allow-inconclusive");
    expect(comparison(allowed.report, "seq-tenth")?.outcome).toBe("inconclusive");
    expect(allowed.code, allowed.stdout).toBe(0);
    expect(allowed.report?.allow_inconclusive).toBe(true);
    expect(allowed.stdout).toContain("1 inconclusive against the old version, allowed by --allow-inconclusive");
  });

  it("the dry run and the budget count the worst case: 2 × max_pairs calls", async () => {
    const dry = await compare("--scenario", "seq-half", "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("worst case: 80 call(s)");
    expect(dry.stdout).toMatch(
      /seq-half: 40 iteration\(s\).*; at most: pairs stop once the sequential comparison decides/,
    );
    const over = await compare("--scenario", "seq-half", "--max-call-minutes", "100");
    // 80 calls × the default 120 s timeout is 160 call minutes.
    expect(over.code).toBe(2);
    expect(over.stderr).toContain("160");
  });

  it("interleaved: each pair's calls go out together in the recorded order, and a shard's pairs are whole", async () => {
    const run = await compare("--scenario", "fixed-three", "--concurrency", "1");
    expect(run.code, run.stdout).toBe(0);
    const results = run.report?.results ?? [];
    const pairs = comparison(run.report, "fixed-three")?.pairs ?? [];
    expect(pairs).toHaveLength(4);
    // One call at a time: sorted by start, the calls are the pairs in turn, each in its recorded order.
    const started = [...results].sort((a, b) => Date.parse(a.started_at ?? "") - Date.parse(b.started_at ?? ""));
    for (let i = 0; i < started.length; i += 2) {
      const [a, b] = [started[i], started[i + 1]];
      expect(a?.iteration).toBe(b?.iteration);
      expect(a?.pair_order).toBe(pairs[(a?.iteration ?? 0) - 1]);
      expect(a?.side).toBe(a?.pair_order === "old_first" ? "old" : "new");
      expect(b?.side).not.toBe(a?.side);
    }
    expect(run.stdout).toMatch(
      /4 pairs placed interleaved \(old and new together\), order per pair: (ON|NO)( (ON|NO)){3}/,
    );
    // Sharded: every iteration a shard holds, it holds on both sides; the shards together place all.
    const placed = async () => (await requestCounts(sim)).by_route["POST /conversations"] ?? 0;
    let total = 0;
    const shardFiles: string[] = [];
    const orders = new Map<number, string | undefined>();
    for (const shard of ["1/2", "2/2"]) {
      const before = await placed();
      const part = await compare("--scenario", "fixed-three", "--scenario", "seq-half", "--shard", shard);
      shardFiles.push(part.json);
      for (const r of part.report?.results ?? [])
        if (r.scenario === "fixed-three") orders.set(r.iteration, r.pair_order);
      expect(part.report?.shard).toEqual({ index: Number(shard[0]), count: 2 });
      total += (await placed()) - before;
      const sides = (side: string) =>
        (part.report?.results ?? [])
          .filter((r) => r.side === side)
          .map((r) => r.iteration)
          .sort();
      expect(sides("old")).toEqual(sides("new"));
      expect((part.report?.results ?? []).every((r) => r.pair_order !== undefined)).toBe(true);
    }
    // Both shards together: fixed-three's 4 pairs, and seq-half's pairs (all in one shard) until it decided.
    const merged = path.join(project.dir, "merged.json");
    const merge = await cli(["report", "merge", ...shardFiles, "--json", merged]);
    expect(merge.code, merge.stderr).toBe(1);
    const report = reportSchema.parse(JSON.parse(await readFile(merged, "utf8")));
    expect(report.kind).toBe("compare");
    const fixed = comparison(report, "fixed-three");
    // The pairs and their order survive the merge, iteration by iteration.
    expect(fixed?.pairs).toEqual([1, 2, 3, 4].map((i) => orders.get(i)));
    expect(fixed?.outcome).toBe("unchanged");
    expect(fixed?.evidence?.old_rate).toMatchObject({ passes: 4, calls: 4 });
    const half = comparison(report, "seq-half");
    expect(half?.outcome).toBe("regression");
    expect(report.scenarios.find((s) => s.scenario === "seq-half")?.verdict).toBe("failed");
    const seqCalls = report.results.filter((r) => r.scenario === "seq-half");
    expect(half?.sequential?.pairs).toBe(seqCalls.length / 2);
    expect(total).toBe(8 + seqCalls.length);
    // Only comparisons with comparisons: a smoke report among them is refused.
    const smoke = path.join(project.dir, "smoke.json");
    await cli(["smoke", "--stack", "test", "--scenario", "fixed-three", "--shard", "1/2", "--json", smoke]);
    const mixed = await cli(["report", "merge", shardFiles[1] as string, smoke]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/a smoke report; only smoke reports, or only comparison reports, are merged/);
  });

  it("start --compare-rule sequential: the deploy's comparison places pairs until no worse", async () => {
    // A third version of booking, compared on one scenario (scenarios are not inputs).
    const file = path.join(project.dir, "agents", "booking.yaml");
    const doc = parseDocument(await readFile(file, "utf8"));
    doc.set("description", "Books clinic appointments (version three).");
    doc.set(
      "smoke",
      doc.createNode([{ name: "seq-start", channel: { callee_no: "+15550142100" }, context: { simulation: {} } }]),
    );
    await writeFile(file, doc.toString());
    // The deploys above placed no smoke (--no-smoke): their comparison base, the first deploy's (none),
    // is still pending and would be carried over; this deploy compares with the versions before it.
    await rm(path.join(project.dir, ".agent-iac", "comparison-base.test.json"), { force: true });
    const run = await cli(["start", "--stack", "test", "--compare-rule", "sequential"]);
    expect(run.code, run.stdout).toBe(0);
    const report = reportSchema.parse(
      JSON.parse(await readFile(path.join(project.dir, "reports", "smoke.json"), "utf8")),
    );
    const seq = comparison(report, "seq-start");
    expect(seq?.outcome).toBe("no_worse");
    expect(seq?.sequential?.pairs).toBe(32);
    expect(run.stdout).toContain("= no worse booking/seq-start");
  });
});
