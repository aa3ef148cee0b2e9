// Drift's use case decides, before any stack is read, which baseline a drift test runs against (the
// stack's own file, a missing one said with how to bless one, another stack's refused), and whether a
// pull request changes the stack's baseline (git at a ref against the working tree). Temp
// projects without a Pulumi project (a run that reached the stack would fail there); a real git
// repository.
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors/index.ts";
import { projectContext } from "../../src/settings/index.ts";
import { baselineChange, runDrift } from "../../src/usecases/drift.ts";

let root: string;

/** A baseline file as `baseline bless` writes it, of `stack`. */
const baseline = (stack: string) =>
  JSON.stringify({
    format: "agent-iac-baseline",
    version: 1,
    stack,
    blessed_at: "2026-11-29T09:00:00Z",
    tool_version: "0.1.0",
    reports: [{ file: "r.json", created_at: "2026-11-29T08:00:00Z" }],
    agents: {
      booking: {
        version_id: "ca_1@v1",
        scenarios: {
          books: {
            scenario_hash: "sha256:aaa",
            calls: 1,
            passes: 1,
            errors: 0,
            expectations: [],
            latency: { response_p50_ms: 100, response_p95_ms: 100, turns: 1 },
            judge_models: [],
            caller_models: [],
          },
        },
      },
    },
  });

async function project(files: Record<string, string> = {}) {
  const dir = await mkdtemp(path.join(root, "p-"));
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  // No Pulumi.yaml: a run that reached the stack fails there, not with these refusals.
  return projectContext({ cwd: dir, env: {} });
}

const drift = (stack: string, p: Awaited<ReturnType<typeof project>>, baselineFile?: string) =>
  runDrift(
    { stack, project: p, concurrency: 1, ...(baselineFile ? { baselineFile } : {}) },
    { out: { write: () => true }, signal: new AbortController().signal, warn: () => {} },
  ).catch((e: unknown) => e);

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "drift-usecase-"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe("runDrift's baseline", () => {
  it("no baseline of the stack: a configuration error that says how to bless one (a qualified name's file)", async () => {
    const p = await project();
    const error = await drift("acme/app/dev", p);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      "baselines/acme_app_dev.json: no baseline (ENOENT): bless one first: `agent-iac smoke --stack acme/app/dev --json r.json`, then `agent-iac baseline bless r.json --stack acme/app/dev`",
    );
  });

  it("another stack's baseline is refused, whether found by name or given as a file", async () => {
    const p = await project({ "baselines/dev.json": baseline("staging"), "given.json": baseline("staging") });
    const byName = await drift("dev", p);
    expect(byName).toBeInstanceOf(ConfigError);
    expect((byName as Error).message).toBe('baselines/dev.json: the baseline of stack "staging", not "dev"');
    // A given file is read relative to the project, not the process.
    const given = await drift("dev", p, "given.json");
    expect((given as Error).message).toBe('given.json: the baseline of stack "staging", not "dev"');
  });

  it("the stack's own baseline is taken: the run goes on to read the stack (here a directory with no project)", async () => {
    const p = await project({ "baselines/dev.json": baseline("dev") });
    const error = (await drift("dev", p)) as Error;
    // Refused past the baseline: by the stack's reading (no Pulumi.yaml, or no Pulumi CLI in the unit run).
    expect(error.message).not.toMatch(/baseline/);
    expect(error.message).toMatch(/Pulumi\.yaml|ensure-pulumi/);
  });
});

describe("baselineChange", () => {
  let repo: string;
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "ignore" });
  /** The repository as the run's project (git runs there, with the run's environment). */
  const inRepo = () => projectContext({ cwd: repo, env: process.env });

  beforeAll(async () => {
    repo = await mkdtemp(path.join(root, "repo-"));
    git("init", "-q", "-b", "main");
    git("config", "user.email", "test@example.com");
    git("config", "user.name", "test");
    await mkdir(path.join(repo, "baselines"));
    await writeFile(path.join(repo, "baselines", "dev.json"), baseline("dev"));
    await writeFile(path.join(repo, "baselines", "old.json"), baseline("old"));
    git("add", ".");
    git("commit", "-q", "-m", "blessed");
  });

  it("the same file at the ref and in the tree, or none on either side: no change", async () => {
    expect(await baselineChange("dev", "main", inRepo())).toBeUndefined();
    expect(await baselineChange("never", "main", inRepo())).toBeUndefined();
  });

  it("re-blessed, added, removed: each said with its file and the ref", async () => {
    await writeFile(path.join(repo, "baselines", "dev.json"), baseline("dev").replace("ca_1@v1", "ca_1@v2"));
    await writeFile(path.join(repo, "baselines", "new.json"), baseline("new"));
    await rm(path.join(repo, "baselines", "old.json"));
    expect(await baselineChange("dev", "main", inRepo())).toEqual({
      file: "baselines/dev.json",
      base: "main",
      change: "changed",
    });
    expect(await baselineChange("new", "main", inRepo())).toMatchObject({ change: "added" });
    expect(await baselineChange("old", "main", inRepo())).toMatchObject({
      file: "baselines/old.json",
      change: "removed",
    });
    // A ref git does not know holds no baseline: the tree's is added.
    expect(await baselineChange("dev", "no-such-ref", inRepo())).toMatchObject({
      change: "added",
      base: "no-such-ref",
    });
  });
});
