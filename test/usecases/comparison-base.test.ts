// What `start` checks of a pending comparison base before it deploys (comparison-base.ts), where the
// backend keeps no readable update history (S3, PostgreSQL, Pulumi Cloud): the stack's state and
// its `previous_versions` say what it holds and held, and a base carried over several deploys is
// trusted only while its record still links to this stack. The session is a plain record (its
// backend address, project and name: all this check reads); the base is a real file in a temp
// project.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BackendError, ConfigError } from "../../src/errors/index.ts";
import type { HeldAgent } from "../../src/provider/index.ts";
import { projectContext } from "../../src/settings/index.ts";
import { checkComparisonBase } from "../../src/usecases/comparison-base.ts";
import type { HeldAgents, StackSession } from "../../src/usecases/session.ts";
import { rejectedWith } from "../helpers/rejection.ts";

let root: string;

const agent = (key: string, version: string) =>
  ({
    key,
    kind: "conversational",
    id: `id-${key}`,
    version_id: version,
    name: key,
    postprocess_agents: [],
    urn: "",
  }) as HeldAgent;

/** The stack holds desk at v3; its last replace left v2 behind. */
const held = (previousRecorded = true): HeldAgents => ({
  agents: { desk: agent("desk", "v3"), lobby: agent("lobby", "l1") },
  stale: [],
  directories: [],
  previous: previousRecorded ? { desk: "v2" } : {},
  previousRecorded,
});

/** A session of stack dev on `backendUrl`, whose pending base file (if any) holds `base`. */
async function session(base: unknown, backendUrl = "s3://agents-state", projectName?: () => Promise<{ name: string }>) {
  const dir = await mkdtemp(path.join(root, "p-"));
  const project = projectContext({ cwd: dir, env: {} });
  if (base !== undefined) {
    await mkdir(project.stateDir, { recursive: true });
    const text = typeof base === "string" ? base : JSON.stringify(base);
    await writeFile(path.join(project.stateDir, "comparison-base.dev.json"), text);
  }
  const projectSettings = projectName ?? (async () => ({ name: "agents" }));
  return {
    name: "dev",
    project,
    env: { PULUMI_BACKEND_URL: backendUrl },
    stack: { workspace: { projectSettings } },
  } as unknown as StackSession;
}

const base = (versions: Record<string, string>, record: Record<string, unknown> = {}) => ({
  stack: "dev",
  versions,
  seen: Object.keys(versions),
  recorded_at: "2026-11-29T09:00:00Z",
  ...record,
});

const refusal = (promise: Promise<unknown>) => rejectedWith(promise, ConfigError);

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "comparison-base-"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe("checkComparisonBase without a readable history", () => {
  it("no pending base: nothing is read of the stack", async () => {
    const unreadable = async () => {
      throw new Error("the stack was read");
    };
    await expect(
      checkComparisonBase(await session(undefined, "file:///nowhere", unreadable), held()),
    ).resolves.toBeUndefined();
  });

  it("a base naming what the stack holds or its last replace left is applied; another version is refused, naming it", async () => {
    await expect(
      checkComparisonBase(await session(base({ desk: "v2", lobby: "l1" })), held()),
    ).resolves.toBeUndefined();
    const error = await refusal(checkComparisonBase(await session(base({ desk: "v9" })), held()));
    expect(error.message).toMatch(
      /comparison-base\.dev\.json names version\(s\) stack "dev" never held \("desk": "v9"\): the comparison base is not applied, nothing was deployed$/,
    );
    expect(error.hint).toMatch(/^delete it \(rm .*comparison-base\.dev\.json\)/);
  });

  it("a base carried over several deploys: its older versions count while its record links to this stack", async () => {
    // Its last deploy left desk at v3 (still held): v1, seen by its earlier deploys, is this stack's.
    const linked = base({ desk: "v1" }, { held_after: { desk: "v3" }, held_versions: ["v1", "v2"] });
    await expect(checkComparisonBase(await session(linked), held())).resolves.toBeUndefined();
    // A record of another stack (its own version ids): its versions are not trusted.
    const foreign = base({ desk: "v1" }, { held_after: { desk: "x7" }, held_versions: ["v1"] });
    const error = await refusal(checkComparisonBase(await session(foreign), held()));
    expect(error.message).toContain('("desk": "v1")');
    // No agent it names is still held: no link either.
    const gone = base({ desk: "v1" }, { held_after: { front: "v3" }, held_versions: ["v1"] });
    await refusal(checkComparisonBase(await session(gone), held()));
  });

  it("a stack deployed before previous_versions existed, with no link: nothing can tell, only the shape is checked", async () => {
    await expect(checkComparisonBase(await session(base({ desk: "v9" })), held(false))).resolves.toBeUndefined();
    const damaged = await refusal(checkComparisonBase(await session("{ not json"), held(false)));
    expect(damaged.message).toMatch(
      /comparison-base\.dev\.json: the pending comparison base is damaged: it is not JSON/,
    );
    const other = await refusal(checkComparisonBase(await session({ ...base({ desk: "v3" }), stack: "prod" }), held()));
    expect(other.message).toContain('holds the comparison base of stack "prod", not of "dev"');
  });
});

describe("checkComparisonBase on a file backend", () => {
  it("a stack whose project cannot be read is a backend error naming the stack", async () => {
    const failing = async () => {
      throw new Error("pulumi: no project");
    };
    const error = await checkComparisonBase(
      await session(base({ desk: "v1" }), `file://${root}`, failing),
      held(),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendError);
    expect(String((error as Error).message)).toMatch(/^reading stack dev failed: /);
  });

  it("a stack never deployed (no history, no outputs) held nothing: a base naming a version is another stack's", async () => {
    const nothing: HeldAgents = { agents: {}, stale: [], directories: [], previous: {}, previousRecorded: false };
    const file = `file://${root}`;
    const error = await refusal(checkComparisonBase(await session(base({ desk: "v3" }), file), nothing));
    expect(error.message).toContain('("desk": "v3")');
    // Its own base (written before its first deploy, which held nothing) is empty, and applies.
    await expect(checkComparisonBase(await session(base({}), file), nothing)).resolves.toBeUndefined();
  });

  it("no update history written yet: the state and previous_versions decide, as elsewhere", async () => {
    const file = `file://${root}`;
    await expect(checkComparisonBase(await session(base({ desk: "v2" }), file), held())).resolves.toBeUndefined();
    await refusal(checkComparisonBase(await session(base({ desk: "v9" }), file), held()));
  });
});
