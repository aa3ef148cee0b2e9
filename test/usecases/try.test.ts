// `try`'s use case refuses, before any call, what cannot be tried (an agent that is procedural or
// not in the files, a variant named twice or "base", one not under `variants:`, one that changes
// nothing or removes a field, a variant file with errors, no variant at all), and a dry run places
// nothing. One real `pulumi up` of the example agents (the Pulumi CLI, a file backend) against the
// simulator on port 0; the simulator's request counts say that no conversation was placed.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, InvalidFilesError } from "../../src/errors/index.ts";
import { projectContext } from "../../src/settings/index.ts";
import { COMPARE_DEFAULTS_FOR_TRY, type TryRequest, tryVariants, type VariantSpec } from "../../src/usecases/try.ts";
import { type AgentsProject, agentsProject, deployStack } from "../helpers/agents-project.ts";
import { type PulumiSandbox, pulumiSandbox } from "../helpers/pulumi.ts";
import { requestCounts, startTestSimulator } from "../helpers/simulator.ts";

const API_KEY = "sk-try-usecase-41c9";
const SLOW = 300_000;
let sandbox: PulumiSandbox;
let sim: Awaited<ReturnType<typeof startTestSimulator>>;
let project: AgentsProject;

function request(agent: string, variants: VariantSpec[], extra: Partial<TryRequest> = {}): TryRequest {
  return {
    stack: "test",
    project: projectContext({ cwd: project.dir, env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY } }),
    agent,
    variants,
    rule: { ...COMPARE_DEFAULTS_FOR_TRY },
    concurrency: 2,
    dryRun: false,
    failOn: null,
    ...extra,
  };
}

/** The run's output, and how many conversations the service was asked for meanwhile. */
async function tried(req: TryRequest) {
  const before = (await requestCounts(sim)).by_route["POST /conversations"] ?? 0;
  let text = "";
  const io = {
    out: { write: (chunk: string) => (text += chunk) },
    signal: new AbortController().signal,
    warn: (line: string) => (text += line),
  };
  const result = await tryVariants(req, io).catch((error: unknown) => error);
  const after = (await requestCounts(sim)).by_route["POST /conversations"] ?? 0;
  return { result, text, conversations: after - before };
}

async function refused<E extends Error = ConfigError>(
  req: TryRequest,
  kind: new (...args: never[]) => E = ConfigError as unknown as new (
    ...args: never[]
  ) => E,
): Promise<E> {
  const { result, conversations } = await tried(req);
  expect(conversations).toBe(0);
  expect(result).toBeInstanceOf(kind);
  return result as E;
}

beforeAll(async () => {
  sandbox = await pulumiSandbox();
  sim = await startTestSimulator({ apiKey: API_KEY });
  project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
  await deployStack(project.stack);
  // A variant in the agent file (not deployed: the agent is unchanged).
  const file = path.join(project.dir, "agents", "booking.yaml");
  await writeFile(
    file,
    `${await readFile(file, "utf8")}variants:\n  spanish:\n    language:\n      default_language: Spanish\n`,
  );
  await writeFile(path.join(project.dir, "same.yaml"), "language:\n  default_language: English\n");
  await writeFile(path.join(project.dir, "renamed.yaml"), "name: Another name\n");
  await writeFile(path.join(project.dir, "broken.yaml"), "runtime:\n  model: 42\n");
  await writeFile(
    path.join(project.dir, "no-book.yaml"),
    "tool:\n  tools:\n    - { ns: syscall, name: check_availability }\n",
  );
}, SLOW);
afterAll(async () => {
  await project?.cleanup();
  await sim?.close();
  await sandbox?.cleanup();
});

describe("tryVariants refuses before any call", { timeout: SLOW }, () => {
  it("an agent that is procedural, or not in the agent files", async () => {
    const procedural = await refused(request("call-summary", [{ name: "spanish" }]));
    expect(procedural.message).toMatch(/^call-summary cannot be tried: a procedural agent.*; nothing was called$/);
    const unknown = await refused(request("nobody", [{ name: "spanish" }]));
    expect(unknown.message).toBe('nobody cannot be tried: no agent "nobody" in the agent files; nothing was called');
  });

  it("variants named twice, named base, not under variants:, or none at all", async () => {
    const twice = await refused(request("booking", [{ name: "spanish" }, { name: "spanish" }]));
    expect(twice.message).toBe('variant "spanish" is named twice');
    const base = await refused(request("booking", [{ name: "base", file: "same.yaml" }]));
    expect(base.message).toBe('"base" names the unchanged config: give the variant another name');
    const missing = await refused(request("booking", [{ name: "french" }]));
    expect(missing.message).toMatch(
      /booking\.yaml has no variant "french" under variants: \(it has spanish\); or give one as --variant french=FILE$/,
    );
    const none = await refused(request("booking", []));
    expect(none.message).toBe("name at least one variant (--variant NAME=FILE or --variant NAME)");
  });

  it("a variant that changes nothing, one that is not config, and a variant file with errors (file:line)", async () => {
    const same = await refused(request("booking", [{ name: "same", file: "same.yaml" }]));
    expect(same.message).toBe(`variant "same" changes nothing in booking's config`);
    const renamed = await refused(request("booking", [{ name: "renamed", file: "renamed.yaml" }]));
    expect(renamed.message).toMatch(/^renamed\.yaml: variant "renamed" cannot be tried: .*; nothing was called$/);
    const broken = await refused(request("booking", [{ name: "broken", file: "broken.yaml" }]), InvalidFilesError);
    expect(broken.message).toBe("1 error(s) in the variant file broken.yaml; nothing was called");
    expect(broken.details).toMatch(/broken\.yaml:2:\d+: .*runtime\.model/);
  });
});

describe("tryVariants --dry-run", { timeout: SLOW }, () => {
  it("says what it would play on the deployed version and places nothing", async () => {
    const { result, text, conversations } = await tried(request("booking", [{ name: "spanish" }], { dryRun: true }));
    expect(result).toEqual({ kind: "dry-run" });
    expect(conversations).toBe(0);
    expect(text).toMatch(
      /^try booking against \S+: spanish \(override_config language\) beside the base, up to 60 pairs each\n/,
    );
  });
});

describe("tryVariants --promote", { timeout: SLOW }, () => {
  it("a variant decided worse is not promoted: the refusal is returned and the agent file is left as it was", async () => {
    const file = path.join(project.dir, "agents", "booking.yaml");
    const before = await readFile(file, "utf8");
    const { result, conversations, text } = await tried(
      request("booking", [{ name: "no-book", file: "no-book.yaml" }], {
        scenarios: ["checks-availability-and-books"],
        promote: "no-book",
      }),
    );
    expect(result).toMatchObject({
      kind: "ran",
      promoted: {
        refused:
          "--promote no-book: not written, its verdict is worse (only a variant decided no worse or better is promoted)",
      },
    });
    const report = (result as { report: { variants?: { variants: { name: string; verdict: string }[] } } }).report;
    expect(report.variants?.variants.map((v) => [v.name, v.verdict])).toEqual([["no-book", "worse"]]);
    expect(conversations).toBeGreaterThan(0);
    expect(text).toMatch(/no-book worse after \d+ pairs/);
    expect(await readFile(file, "utf8")).toBe(before);
  });
});
