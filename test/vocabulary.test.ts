// The project's vocabulary, each word declared once (issue 50): the transports and the stream each
// opens, the pinned-version rule, an agent's key from its URN, the state directory, the report-file
// flags. Behaviour first (every reader of a word agrees), then the source: no second declaration.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Client, createClient, STREAMS } from "../src/api/index.ts";
import { agentIdOf, isPinnedVersionId, TRANSPORTS } from "../src/contract/index.ts";
import { type AgentDefinition, loadAgents } from "../src/definitions/index.ts";
import { smokeScenario } from "../src/definitions/schema.ts";
import { InvalidInputError } from "../src/errors/index.ts";
import { planCalls } from "../src/smoke/index.ts";
import { attributor } from "../src/watch/attribute.ts";
import { versionsIn } from "../src/watch/index.ts";
import { projectRoot } from "../src/workspace/index.ts";
import { startTestSimulator } from "./helpers/simulator.ts";
import { createConversation, createConversational } from "./simulator/helpers.ts";

describe("the pinned-version rule", () => {
  let agents: AgentDefinition[];
  beforeAll(async () => {
    agents = (await loadAgents(path.join(projectRoot, "agents"), { stack: "dev", from: process.cwd() })).agents;
  });

  // Before, four regexes read it three ways: `x@v1` and `ca_a@v0` were versions to watch and audit
  // but not to smoke, and a baseline file took `ca_a@v01`.
  const ids: [string, boolean][] = [
    ["ca_a@v1", true],
    ["ca_a-b_C@v12", true],
    ["pa_x@v2", true],
    ["ca_a", false],
    ["ca_a@v0", false],
    ["ca_a@v01", false],
    ["x@v1", false],
    ["ca_a@v1x", false],
    ["ca a@v1", false],
  ];

  it.each(ids)("%s pinned: %s, for smoke, the baseline file and the attribution of traffic alike", (id, pinned) => {
    expect(isPinnedVersionId(id)).toBe(pinned);
    // smoke: a version id that is not pinned is refused unless the released version is asked for.
    const key = agents.find((a) => a.kind === "conversational")?.key ?? "";
    const plan = () => planCalls(agents, undefined, { agents: [key], versionId: id });
    if (pinned) expect(plan().every((c) => c.versionId === id)).toBe(true);
    else expect(plan).toThrow(InvalidInputError);
    // watch/audit --baseline: only pinned ids count as versions.
    expect(versionsIn({ [key]: id })).toEqual(pinned ? { [key]: id } : undefined);
    // watch/audit: a pinned agent_id is taken as it is; the stack's versions are known by it.
    const attribute = attributor([id]);
    attribute.versionOf(id);
    expect(attribute.counts.by_version_id).toBe(pinned ? 1 : 0);
    expect(attributor([id]).versionOf(agentIdOf(id))).toBe(id);
  });
});

describe("the transports", () => {
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let client: Client;
  beforeAll(async () => {
    sim = await startTestSimulator();
    client = createClient({ baseUrl: sim.url, apiKey: sim.apiKey, retryBaseDelayMs: 1 });
  });
  afterAll(async () => {
    await client?.close();
    await sim?.close();
  });

  it("are what a scenario takes", () => {
    const scenario = { name: "s", channel: { callee_no: "+15550100" } };
    for (const transport of TRANSPORTS) {
      expect(smokeScenario.parse({ ...scenario, transport }).transport).toBe(transport);
    }
    expect(smokeScenario.safeParse({ ...scenario, transport: "grpc" }).success).toBe(false);
  });

  it.each(TRANSPORTS)("%s opens the conversation's stream, to its end", async (transport) => {
    const agent = await createConversational(sim);
    const conversation = await createConversation(sim, agent.version_id);
    const stream = await STREAMS[transport](client, conversation.id, {
      token: conversation.channel.token,
      eventsUrl: conversation.channel.events_url,
    });
    const types: string[] = [];
    for await (const envelope of stream.events) {
      types.push(envelope.payload.type);
      if (envelope.payload.type === "conversation.ended") break;
    }
    stream.speaker?.close();
    expect(types.at(-1)).toBe("conversation.ended");
    // Only the session carries a caller's lines.
    expect(stream.speaker !== undefined).toBe(transport === "ws");
  });
});

/** Each non-comment line of src/ (path, line) that matches `pattern`. */
async function sourceLines(pattern: RegExp): Promise<string[]> {
  const src = path.join(projectRoot, "src");
  const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith(".ts")).sort();
  const found: string[] = [];
  for (const file of files) {
    const lines = (await readFile(path.join(src, file), "utf8")).split("\n");
    for (const line of lines) {
      if (!/^\s*(\/\/|\*|\/\*\*)/.test(line) && pattern.test(line)) found.push(`${file}: ${line.trim()}`);
    }
  }
  return found;
}

describe("each word is declared once in src/", () => {
  it("the transport union: TRANSPORTS in src/contract", async () => {
    expect(await sourceLines(/\[\s*"sse",\s*"ws"\s*\]|"sse"\s*\|\s*"ws"|"ws"\s*\|\s*"sse"/)).toEqual([
      'contract/index.ts: export const TRANSPORTS = ["sse", "ws"] as const;',
    ]);
  });

  it("the pinned-version rule: no regex of its own outside src/contract", async () => {
    expect(await sourceLines(/\/[^/\s]*@v(\\d|\[1-9\]|\()/)).toEqual([]);
    expect(await sourceLines(/split\("@"\)/)).toEqual([]);
  });

  it("an agent's key from its URN: agentKeyOf in src/provider", async () => {
    expect(await sourceLines(/split\("::"\)\.at\(-1\)/)).toEqual([
      'provider/state.ts: export const agentKeyOf = (urn: string): string => urn.split("::").at(-1) ?? urn;',
    ]);
  });

  it("the state directory: STATE_DIR in src/settings", async () => {
    expect(await sourceLines(/["'`]\.agent-iac["'`/]|\/\.agent-iac`/)).toEqual([
      'settings/index.ts: export const STATE_DIR = ".agent-iac";',
    ]);
  });

  it("the report-file flags: src/commands/flags.ts", async () => {
    const declared = (await sourceLines(/^\s*(junit|html|markdown|"behave-report"): \{/)).map((l) => l.split(":")[0]);
    expect(new Set(declared)).toEqual(new Set(["commands/flags.ts"]));
  });
});
