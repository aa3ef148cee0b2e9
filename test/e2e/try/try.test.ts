// `agent-iac try` end to end: one real `pulumi up` of the example agents against the simulator, then
// three variants of booking played beside its deployed config as override_config: one without
// book_appointment (worse, early), one with another prompt wording (no worse), one with Spanish as
// its default language from the agent file's `variants:` (no worse, promoted). Nothing is created.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { createClient } from "../../../src/api/index.ts";
import { reportSchema } from "../../../src/results/index.ts";
import { type AgentsProject, agentsProject, deployAndRead, stackOutputs } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-try-e2e-5e0b7c31d2";
const SLOW = 300_000;
const CREATES = ["POST /conversational_agents", "POST /procedural_agents"];
const SCENARIO = "checks-availability-and-books";

describe("agent-iac try (real Pulumi CLI against the simulator)", { timeout: SLOW }, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let versions: Record<string, string>;

  async function tryRun(...args: string[]) {
    const before = await requestCounts(sim);
    const result = await runInProcess(["try", "booking", "--stack", "test", ...args], {
      cwd: project.dir,
      env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY },
    });
    const after = await requestCounts(sim);
    const delta = (route: string) => (after.by_route[route] ?? 0) - (before.by_route[route] ?? 0);
    return {
      ...result,
      creates: CREATES.reduce((sum, route) => sum + delta(route), 0),
      conversations: delta("POST /conversations"),
    };
  }

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    const up = await deployAndRead(project.stack);
    expect(up.summary.result).toBe("succeeded");
    versions = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    await writeFile(
      path.join(project.dir, "no-book.yaml"),
      "tool:\n  tools:\n    - { ns: syscall, name: check_availability }\n",
    );
    await writeFile(
      path.join(project.dir, "warm.yaml"),
      "# Another wording of the same instructions.\nruntime:\n  prompt:\n    type: fixed\n    text: You are Leo, a warm receptionist. Check availability first, then book the slot the caller picks.\n",
    );
    // The Spanish variant lives in the agent file (not an input: the deployed agent is unchanged).
    const file = path.join(project.dir, "agents", "booking.yaml");
    await writeFile(
      file,
      `${await readFile(file, "utf8")}variants:\n  # Spanish first, for the clinic's new callers.\n  spanish:\n    language:\n      default_language: Spanish\n`,
    );
  }, SLOW);
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("decides each variant against the base in interleaved rounds, ranks them, promotes one; nothing is created", async () => {
    const reportFile = path.join(project.dir, "try.json");
    const htmlFile = path.join(project.dir, "try.html");
    const summaryFile = path.join(project.dir, "summary.md");
    await writeFile(summaryFile, "");
    const before = await readFile(path.join(project.dir, "agents", "booking.yaml"), "utf8");
    const counted = await requestCounts(sim);
    const result = await runInProcess(
      [
        "try",
        "booking",
        "--stack",
        "test",
        "--variant",
        "no-book=no-book.yaml",
        "--variant",
        "warm=warm.yaml",
        "--variant",
        "spanish",
        "--scenario",
        SCENARIO,
        "--margin",
        "0.2",
        "--max-pairs",
        "30",
        "--fail-on",
        "worse",
        "--promote",
        "spanish",
        "--json",
        reportFile,
        "--html",
        htmlFile,
      ],
      {
        cwd: project.dir,
        env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY, GITHUB_STEP_SUMMARY: summaryFile },
      },
    );
    expect(result.code, result.stderr).toBe(1);
    const counts = await requestCounts(sim);
    const delta = (route: string) => (counts.by_route[route] ?? 0) - (counted.by_route[route] ?? 0);
    // No agent created: every variant was an override_config of a conversation.
    expect(CREATES.map(delta)).toEqual([0, 0]);
    const report = reportSchema.parse(JSON.parse(await readFile(reportFile, "utf8")));
    const part = report.variants;
    expect(report.kind).toBe("try");
    expect(part?.version_id).toBe(versions.booking);
    const verdict = (name: string) => part?.variants.find((v) => v.name === name);
    // Every pair of no-book is discordant (the lost tool call): worse at Holm's strictest level, early.
    expect(verdict("no-book")).toMatchObject({ verdict: "worse", sections: ["tool"] });
    expect(verdict("no-book")?.decided_after).toBeLessThan(15);
    expect(verdict("warm")).toMatchObject({ verdict: "no_worse", sections: ["runtime"] });
    expect(verdict("spanish")).toMatchObject({
      verdict: "no_worse",
      sections: ["language"],
      source: "variants.spanish",
    });
    // The tied sides are named, not ranked.
    expect(part?.ranking.first).toBeNull();
    expect(part?.ranking.not_told_apart.map((n) => [n.a, n.b].sort().join("+")).sort()).toEqual([
      "base+spanish",
      "base+warm",
    ]);
    expect(part?.ranking.text).toMatch(/not told apart after \d+ pairs/);
    // A stopped variant is placed no more: fewer no-book calls than base calls.
    const calls = report.results as unknown as { variant: string; round: number; conversation_id: string | null }[];
    const count = (side: string) => calls.filter((c) => c.variant === side).length;
    expect(count("no-book")).toBe(verdict("no-book")?.decided_after);
    expect(count("base")).toBeGreaterThan(count("no-book"));
    // Every surface says the same.
    expect(result.stdout).toMatch(/no-book: worse after \d+ pairs/);
    // Each round says where the variants stand as it goes.
    expect(result.stdout).toMatch(/^round \d+: no-book worse after \d+ pairs; still running: warm, spanish$/m);
    expect(result.stdout).toMatch(/warm: no worse after \d+ pairs/);
    const html = await readFile(htmlFile, "utf8");
    for (const side of ["base", "no-book", "warm", "spanish"]) expect(html).toContain(`data-side="${side}"`);
    expect(html).toContain('data-exit-code="1"');
    const summary = await readFile(summaryFile, "utf8");
    expect(summary).toContain("| no-book | worse after");
    expect(summary).toContain("not told apart after");

    // The service's conversation list: each round's calls (every side) all before the next round's.
    const client = createClient({ baseUrl: sim.url, apiKey: API_KEY });
    const listed: { id: string; created_at: string }[] = [];
    for await (const c of client.conversations.list()) listed.push(c);
    await client.close();
    const byId = new Map(calls.map((c) => [c.conversation_id, c]));
    const ours = listed.filter((c) => byId.has(c.id)).sort((a, b) => a.created_at.localeCompare(b.created_at));
    expect(ours).toHaveLength(calls.length);
    expect(delta("POST /conversations")).toBe(calls.length);
    const rounds = ours.map((c) => byId.get(c.id)?.round ?? 0);
    expect(rounds).toEqual([...rounds].sort((a, b) => a - b));
    const firstRound = new Set(calls.filter((c) => c.round === 1).map((c) => c.variant));
    expect([...firstRound].sort()).toEqual(["base", "no-book", "spanish", "warm"]);

    // --promote: the entry moved into config, the file's comments kept, the diff printed.
    const after = await readFile(path.join(project.dir, "agents", "booking.yaml"), "utf8");
    expect(result.stdout).toContain("promoted into agents/booking.yaml");
    expect(result.stdout).toContain("+    default_language: Spanish");
    // Only the promoted line and the entry change: the rest keeps its layout (flow lists too).
    expect(result.stdout).not.toContain("+    supported_languages");
    expect(parseDocument(after).getIn(["config", "language", "default_language"])).toBe("Spanish");
    expect(parseDocument(after).get("variants")).toBeUndefined();
    for (const line of before.split("\n").filter((l) => l.trim().startsWith("#") && !l.includes("Spanish first"))) {
      expect(after).toContain(line);
    }
    const validate = await runInProcess(["validate"], { cwd: project.dir, env: { ...process.env, ...sandbox.env } });
    expect(validate.code, validate.stderr).toBe(0);
    await writeFile(path.join(project.dir, "agents", "booking.yaml"), before);
  });

  it("a variants: entry is not an input: the stack's preview shows no change", async () => {
    const preview = await project.stack.preview({ expectNoChanges: true });
    expect(preview.changeSummary.update ?? 0).toBe(0);
    expect(preview.changeSummary.replace ?? 0).toBe(0);
  });

  it("runs no agent creation and says what cannot be tried before any call (exit 2)", async () => {
    await writeFile(path.join(project.dir, "drop-tool.yaml"), "tool: null\n");
    const removed = await tryRun("--variant", "bare=drop-tool.yaml");
    expect(removed.code, removed.stderr).toBe(2);
    expect(removed.stderr).toContain("`tool` removed: override_config can add and change fields, not remove them");
    expect(removed.conversations).toBe(0);
    await writeFile(path.join(project.dir, "renamed.yaml"), "name: Another booking line\n");
    const renamed = await tryRun("--variant", "renamed=renamed.yaml");
    expect(renamed.code).toBe(2);
    expect(renamed.stderr).toContain("`name` is the agent's, not its config's");
    expect(renamed.conversations + renamed.creates).toBe(0);
  });

  it("refuses an agent file that differs from what the stack holds, naming the sections, before any call (exit 2)", async () => {
    const file = path.join(project.dir, "agents", "booking.yaml");
    const before = await readFile(file, "utf8");
    const doc = parseDocument(before);
    doc.setIn(["config", "language", "default_language"], "Spanish");
    doc.set("description", "Books visits, in Spanish first.");
    await writeFile(file, doc.toString());
    try {
      const changed = await tryRun("--variant", "warm=warm.yaml", "--scenario", SCENARIO);
      expect(changed.code, changed.stderr).toBe(2);
      expect(changed.stderr).toMatch(
        /differs from what stack test holds for booking \(\S+\) in description, config\.language:/,
      );
      expect(changed.stderr).toContain("deploy first (`pulumi up --stack test`)");
      expect(changed.conversations + changed.creates).toBe(0);
    } finally {
      await writeFile(file, before);
    }
  });

  it("counts every variant's worst case in --dry-run and --max-call-minutes", async () => {
    const dry = await tryRun(
      "--variant",
      "no-book=no-book.yaml",
      "--variant",
      "warm=warm.yaml",
      "--scenario",
      SCENARIO,
      "--dry-run",
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.conversations).toBe(0);
    // 60 pairs of one scenario: 60 base calls + 60 per variant.
    expect(dry.stdout).toMatch(/180 call/);
    const over = await tryRun("--variant", "no-book=no-book.yaml", "--scenario", SCENARIO, "--max-call-minutes", "1");
    expect(over.code).toBe(2);
    expect(over.conversations).toBe(0);
  });

  it("refuses a variant file with a wrong field at its file:line (exit 1)", async () => {
    await writeFile(path.join(project.dir, "typo.yaml"), "tool:\n  toolz: []\n");
    const typo = await tryRun("--variant", "typo=typo.yaml");
    expect(typo.code).toBe(1);
    expect(typo.stderr).toMatch(/typo\.yaml:2:\d+/);
    expect(typo.conversations).toBe(0);
  });
});
