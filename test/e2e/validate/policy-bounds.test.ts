// Policy patterns and globs are bounded like smoke's `says` patterns (issue 41): `agent-iac validate
// --policy` as a real child process. A hang on an unbounded pattern would be killed by a generous
// safety net (2 minutes, never an assertion: a loaded machine is slow, not wrong); each test asserts
// the process ended by itself with the bound's own finding. A nested quantifier is refused when the config is read, with smoke's wording; a
// slow expression without one is stopped by the per-text time bound and reported, never a pass; a
// glob of many `*` is linear; allow-lists are bounded; a value Pulumi refuses as an enforcement
// level is refused here too.
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../../src/workspace/index.ts";
import { CLI } from "../../helpers/cli.ts";

type Run = { code: number | null; stdout: string; stderr: string; killed: boolean };

/** The safety net for a run that never ends (SIGKILL: a regex blocks the signal handler). */
const SAFETY_NET_MS = 120_000;

/** `agent-iac validate --policy FILE` in a child process, killed by the safety net if it never ends. */
function validate(dir: string, config: unknown): Promise<Run> {
  return new Promise((resolve, reject) => {
    const file = path.join(dir, `policy-${Math.random().toString(36).slice(2)}.json`);
    writeFile(file, JSON.stringify(config))
      .then(() => {
        execFile(
          process.execPath,
          [CLI, "validate", "agents", "--policy", file],
          {
            cwd: dir,
            env: { ...process.env, NO_COLOR: "1" },
            timeout: SAFETY_NET_MS,
            killSignal: "SIGKILL",
            maxBuffer: 64 << 20,
          },
          (error, stdout, stderr) =>
            resolve({
              code: error ? (typeof error.code === "number" ? error.code : null) : 0,
              stdout,
              stderr,
              killed: error?.killed === true,
            }),
        );
      })
      .catch(reject);
  });
}

describe("policy patterns and globs are bounded (validate --policy)", { timeout: 300_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "policy-bounds-"));
    await cp(path.join(projectRoot, "agents"), path.join(dir, "agents"), { recursive: true });
    await cp(path.join(projectRoot, "prompts"), path.join(dir, "prompts"), { recursive: true });
    const prompt = path.join(dir, "prompts", "support.md");
    await writeFile(prompt, `${await readFile(prompt, "utf8")}\n${"a".repeat(40)}!\n`);
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("a nested quantifier is refused when the config is read (exit 2), with smoke's wording", async () => {
    const run = await validate(dir, {
      "agent-prompt-forbidden-patterns": { patterns: [{ name: "as", regex: "(a+)+$" }] },
    });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(
      'the regular expression repeats a group that itself repeats ("(a+)+"), which can take exponential time on a non-matching text',
    );
  });

  it("a slow expression without nesting is stopped by the time bound: a mandatory finding naming it, exit 1", async () => {
    const run = await validate(dir, {
      "agent-prompt-forbidden-patterns": {
        enforcementLevel: "mandatory",
        patterns: [{ name: "a-or-aa", regex: "(a|aa)*$" }],
      },
    });
    // Ended by itself: the per-text bound stopped the expression and said so.
    expect(run.killed).toBe(false);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(
      /agent-prompt-forbidden-patterns: .*the forbidden pattern "a-or-aa" did not finish within 1000 ms on a \d+-character text \(catastrophic backtracking\)/,
    );
  });

  it("an allowed-model glob of 22 `*` is answered, not backtracked through", async () => {
    // A backtracking matcher takes time exponential in the stars here: answering at all is the bound.
    const run = await validate(dir, {
      "agent-allowed-models": { enforcementLevel: "mandatory", allowed: [`${"*".repeat(22)}z`] },
    });
    expect(run.killed).toBe(false);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/agent-allowed-models: .*is not an approved model/);
    const matching = await validate(dir, { "agent-allowed-models": { allowed: ["*/*", `${"*".repeat(22)}4`] } });
    expect(matching.code, matching.stderr).toBe(0);
  });

  it("config sizes are bounded: a million allowed patterns or a 5 MB regex is refused briefly (exit 2)", async () => {
    const many = await validate(dir, {
      "agent-allowed-models": { allowed: Array.from({ length: 1_000_000 }, (_, i) => `m${i}/*`) },
    });
    expect(many.code).toBe(2);
    expect(many.stderr).toMatch(/agent-allowed-models: .*1000/);
    expect(many.stderr.length).toBeLessThan(2000);
    const huge = await validate(dir, {
      "agent-prompt-forbidden-patterns": { patterns: [{ name: "huge", regex: `x${"y".repeat(5_000_000)}` }] },
    });
    expect(huge.code).toBe(2);
    expect(huge.stderr).not.toContain("this is a bug");
    expect(huge.stderr.length).toBeLessThan(2000);
  });

  it("refuses an enforcement level value pulumi preview refuses (not a string or object; extra keys under all)", async () => {
    const array = await validate(dir, { all: ["mandatory"] });
    expect(array.code).toBe(2);
    expect(array.stderr).toMatch(/all: \["mandatory"\] is not a valid value/);
    const misspelt = await validate(dir, { all: { enforcmentLevel: "mandatory" } });
    expect(misspelt.code).toBe(2);
    expect(misspelt.stderr).toContain('all: only enforcementLevel can be set for all rules, not "enforcmentLevel"');
    const number = await validate(dir, { "agent-voicemail": 1 });
    expect(number.code).toBe(2);
  });
});
