// What `agent-iac smoke` knows of agents its agents:dir does not describe: the folders of other
// AgentDirectory components (from the state) and TypeScript-declared agents with smoke/<key>.yaml.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { declaredAgents, formatDiagnostic } from "../src/definitions/index.ts";
import type { HeldAgent } from "../src/provider/index.ts";

const write = async (file: string, text: string) => {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
};

/** An agent the stack holds (the one type: src/provider/state.ts). */
const heldAgent = (key: string, kind: "conversational" | "procedural", name: string, id = `${key}_id`): HeldAgent => ({
  key,
  kind,
  id,
  version_id: `${id}@v1`,
  name,
  postprocess_agents: [],
  urn: `urn:pulumi:dev::agents::x::${key}`,
});

describe("agents declared outside agents:dir, for smoke", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-scenarios-"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const held: Record<string, HeldAgent> = {
    "front-desk": heldAgent("front-desk", "conversational", "Front desk"),
    "call-notes": heldAgent("call-notes", "procedural", "Call notes"),
    hotline: heldAgent("hotline", "conversational", "Hotline"),
  };

  it("reads smoke/<key>.yaml for TypeScript-declared agents, and no scenarios where there is no file", async () => {
    await write(
      path.join(dir, "smoke", "front-desk.yaml"),
      'smoke:\n  - name: greets\n    channel: { callee_no: "+15550100200" }\n    expect: { says: ["this is Ada"] }\n',
    );
    const { agents, errors } = await declaredAgents({
      projectDir: dir,
      stack: "dev",
      held,
      directories: [],
      fromFiles: [],
    });
    expect(errors).toEqual([]);
    const byKey = Object.fromEntries(agents.map((a) => [a.key, a]));
    expect(byKey["front-desk"]?.kind).toBe("conversational");
    expect(byKey["front-desk"]?.smoke.map((s) => [s.name, s.channel.callee_no, s.timeout, s.expect.says])).toEqual([
      ["greets", "+15550100200", 120, ["this is Ada"]],
    ]);
    expect(byKey["call-notes"]).toMatchObject({ kind: "procedural", name: "Call notes", smoke: [] });
    expect(byKey.hotline?.smoke).toEqual([]);
  });

  it("reports a wrong scenario file at its file:line and field", async () => {
    await write(path.join(dir, "smoke", "front-desk.yaml"), "smoke:\n  - name: greets\n    chanel: {}\n");
    const { errors } = await declaredAgents({ projectDir: dir, stack: "dev", held, directories: [], fromFiles: [] });
    const lines = errors.map(formatDiagnostic).join("\n");
    expect(lines).toMatch(/front-desk\.yaml:3:5: smoke\[0\]\.chanel: .*channel/);
  });

  it("reads the folders of the stack's AgentDirectory components with the stack's overlays", async () => {
    const agentFile = (model: string) =>
      `kind: conversational\nname: Hotline\ndescription: d\nconfig:\n  runtime: { model: ${model}, prompt: { type: fixed, text: Hi } }\n` +
      'smoke:\n  - name: answers\n    channel: { callee_no: "+15550100900" }\n    expect: { says: ["hello"] }\n';
    await write(path.join(dir, "team", "hotline.yaml"), agentFile("openai/gpt-4o"));
    await write(path.join(dir, "team", "hotline.prod.yaml"), "name: Hotline (prod)\n");
    const { agents, errors } = await declaredAgents({
      projectDir: dir,
      stack: "prod",
      held: { hotline: held.hotline as HeldAgent },
      directories: ["team"],
      fromFiles: [],
    });
    expect(errors).toEqual([]);
    expect(agents.map((a) => [a.key, a.name, a.smoke.map((s) => s.name)])).toEqual([
      ["hotline", "Hotline (prod)", ["answers"]],
    ]);

    await write(path.join(dir, "team", "hotline.yaml"), agentFile("gpt-4o"));
    const broken = await declaredAgents({
      projectDir: dir,
      stack: "prod",
      held: {},
      directories: ["team"],
      fromFiles: [],
    });
    expect(broken.errors.map(formatDiagnostic).join("\n")).toMatch(/hotline\.yaml:5:\d+: config\.runtime\.model/);
  });
});
