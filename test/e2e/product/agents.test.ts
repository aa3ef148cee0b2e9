// Agents as code, end to end: the real Pulumi CLI deploys the agents program (src/component/program.ts,
// run inline) against the simulator. The tests in this file run in order on one stack; each starts
// from the previous one's state.
import { appendFile, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadAgents } from "../../../src/definitions/index.ts";
import { AGENT_TYPE_PREFIX } from "../../../src/provider/index.ts";
import {
  type AgentsProject,
  agentsProject,
  deployAndRead,
  stateFile,
  stepRecorder,
} from "../../helpers/agents-project.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import {
  defaultProfileOnly,
  requestCounts,
  simulatorCall,
  startTestSimulator,
  storedAgents,
} from "../../helpers/simulator.ts";

const API_KEY = "sk-test-e2e-8f3a61c2d9b54e07";

describe("agents as code", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let declared: Awaited<ReturnType<typeof loadAgents>>["agents"];
  const logs: string[] = [];

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY, secretKey: true });
    const loaded = await loadAgents(path.join(project.dir, "agents"), { stack: "test", from: process.cwd() });
    expect(loaded.errors).toEqual([]);
    declared = loaded.agents;
  });
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("creates exactly the declared agents, linked by id, with every version id as an output", async () => {
    const up = await deployAndRead(project.stack);
    logs.push(up.stdout, up.stderr);
    expect(up.summary.result).toBe("succeeded");

    const stored = await storedAgents(sim);
    const procedural = declared.filter((a) => a.kind === "procedural");
    const conversational = declared.filter((a) => a.kind === "conversational");
    expect(procedural.length).toBeGreaterThanOrEqual(2);
    expect(conversational.length).toBeGreaterThanOrEqual(2);
    expect(stored.procedural).toHaveLength(procedural.length);
    expect(stored.conversational).toHaveLength(conversational.length);

    const outputs = up.outputs;
    const agents = outputs.agents?.value as Record<
      string,
      { id: string; version_id: string; kind: string; name: string }
    >;
    const versions = outputs.versions?.value as Record<string, string>;
    expect(Object.keys(versions).sort()).toEqual(declared.map((a) => a.key).sort());
    for (const definition of declared) {
      const output = agents[definition.key];
      expect(output?.kind).toBe(definition.kind);
      expect(output?.name).toBe(definition.name);
      expect(output?.version_id).toBe(`${output?.id}@v1`);
      expect(versions[definition.key]).toBe(output?.version_id);
    }
    for (const definition of conversational) {
      const storedAgent = stored.conversational.find((a) => a.id === agents[definition.key]?.id);
      const expectedIds = definition.postprocessAgents.map((key) => agents[key]?.id).sort();
      expect([...(storedAgent?.postprocess_agents ?? [])].sort()).toEqual(expectedIds);
    }
    // The prompt that was sent is the prompt file's text.
    const support = declared.find((a) => a.kind === "conversational" && a.postprocessAgents.length > 0);
    const sentSupport = stored.conversational.find((a) => a.id === agents[support?.key ?? ""]?.id) as {
      config?: { runtime?: { prompt?: { text?: string } } };
    };
    const declaredPrompt = (support?.config as { runtime?: { prompt?: { text?: string } } } | undefined)?.runtime
      ?.prompt?.text;
    expect(declaredPrompt).toBeTruthy();
    expect(sentSupport.config?.runtime?.prompt?.text).toBe(declaredPrompt);
  });

  defaultProfileOnly("previews no changes right after up, with no request to the service", async () => {
    const before = await requestCounts(sim);
    const preview = await project.stack.preview({ expectNoChanges: true });
    logs.push(preview.stdout, preview.stderr);
    expect(preview.changeSummary.same).toBeGreaterThanOrEqual(declared.length);
    expect((await requestCounts(sim)).count).toBe(before.count);
  });

  defaultProfileOnly(
    "refreshes to the stored state (there is no read endpoint) without requests or changes",
    async () => {
      const before = await project.stack.outputs();
      const requests = (await requestCounts(sim)).count;
      const refresh = await project.stack.refresh();
      logs.push(refresh.stdout, refresh.stderr);
      expect(refresh.summary.result).toBe("succeeded");
      expect(await project.stack.outputs()).toEqual(before);
      expect((await requestCounts(sim)).count).toBe(requests);
      await project.stack.preview({ expectNoChanges: true });
    },
  );

  it("replaces a procedural agent whose prompt file changed, and exactly the agents that link it", async () => {
    const target = declared.find(
      (a) => a.kind === "procedural" && declared.some((c) => c.postprocessAgents.includes(a.key)),
    );
    if (!target) throw new Error("the examples need a linked procedural agent");
    const yamlText = await readFile(path.join(project.dir, "agents", `${target.key}.yaml`), "utf8");
    const promptFile = (parse(yamlText) as { config: { runtime: { prompt: { file?: string } } } }).config.runtime.prompt
      .file;
    expect(promptFile, "the linked procedural agent's prompt comes from a file").toBeTruthy();
    await appendFile(
      path.resolve(project.dir, "agents", promptFile ?? ""),
      "\nAlways mention the caller's account number.\n",
    );

    const linkers = declared.filter((c) => c.postprocessAgents.includes(target.key)).map((c) => c.key);
    const before = (await project.stack.outputs()).versions?.value as Record<string, string>;

    const recorder = stepRecorder();
    // The reviewer's field-level diff (`agent-iac plan`) compares the old inputs in the state with the new ones.
    const configs: string[] = [];
    await project.stack.preview({
      onEvent: (event) => {
        recorder.onEvent(event);
        const step = event.resourcePreEvent?.metadata;
        if (step?.op === "replace" && step.urn.endsWith(`::${target.key}`))
          configs.push(JSON.stringify(step.old?.inputs?.config), JSON.stringify(step.new?.inputs?.config));
      },
    });
    expect(recorder.namesWith("replace")).toEqual([target.key, ...linkers].sort());
    expect(configs[0]).not.toContain("Always mention the caller's account number.");
    expect(configs[1]).toContain("Always mention the caller's account number.");

    const up = await deployAndRead(project.stack);
    logs.push(up.stdout, up.stderr);
    const after = up.outputs.versions?.value as Record<string, string>;
    const changed = Object.keys(after)
      .filter((key) => after[key] !== before[key])
      .sort();
    expect(changed).toEqual([target.key, ...linkers].sort());
    await project.stack.preview({ expectNoChanges: true });
  });

  it("drops a removed agent from the stack and says the service keeps it", async () => {
    const leaf = declared.find((a) => a.kind === "conversational");
    if (!leaf) throw new Error("no conversational agent");
    const storedBefore = await storedAgents(sim);
    for (const file of await readdir(path.join(project.dir, "agents"))) {
      // The agent's file and its overlays.
      if (file === `${leaf.key}.yaml` || file.startsWith(`${leaf.key}.`))
        await rm(path.join(project.dir, "agents", file));
    }
    const up = await deployAndRead(project.stack);
    logs.push(up.stdout, up.stderr);
    expect(up.summary.result).toBe("succeeded");
    expect(up.summary.resourceChanges?.delete).toBe(1);
    expect(`${up.stdout}\n${up.stderr}`).toMatch(/no longer managed by this stack; the service keeps it/);
    expect(Object.keys(up.outputs.versions?.value ?? {})).not.toContain(leaf.key);
    const storedAfter = await storedAgents(sim);
    expect(storedAfter.conversational).toHaveLength(storedBefore.conversational.length);
  });

  defaultProfileOnly(
    "keeps the API key out of the state, the outputs and the logs; each serialized provider stays small",
    async () => {
      const state = await stateFile(sandbox, "test");
      expect(state).not.toContain(API_KEY);
      const outputs = JSON.stringify(await project.stack.outputs());
      expect(outputs).not.toContain(API_KEY);
      for (const log of logs) expect(log).not.toContain(API_KEY);

      const checkpoint = JSON.parse(state) as {
        checkpoint: { latest: { resources: { type: string; inputs?: { __provider?: string } }[] } };
      };
      const agentResources = checkpoint.checkpoint.latest.resources.filter((r) => r.type.startsWith(AGENT_TYPE_PREFIX));
      expect(agentResources.length).toBeGreaterThan(0);
      const sizes = agentResources.map((r) => r.inputs?.__provider?.length ?? 0);
      console.log(`serialized provider: ${Math.min(...sizes)}–${Math.max(...sizes)} bytes per resource`);
      for (const resource of agentResources) {
        const serialized = resource.inputs?.__provider ?? "";
        expect(serialized.length).toBeGreaterThan(0);
        expect(serialized.length).toBeLessThanOrEqual(8 * 1024);
        expect(serialized).not.toContain(API_KEY);
      }
    },
  );

  defaultProfileOnly(
    "fails before anything is created when no API key is configured for a remote service",
    async () => {
      await project.stack.removeConfig("agents:apiKey");
      // On a loopback address the simulator's local dev key applies (the dev stack's case), so the
      // failure needs a service that is not on this machine; nothing is sent to it.
      await project.stack.setConfig("agents:baseUrl", { value: "https://agents.example.invalid" });
      await simulatorCall(sim, "POST", "/_simulator/reset");
      await writeFile(
        path.join(project.dir, "agents", "fresh-scorer.yaml"),
        "kind: procedural\nname: Fresh scorer\ndescription: new\nconfig:\n  runtime:\n    model: openai/gpt-4o-mini\n    prompt: {type: fixed, text: Score it.}\n",
      );
      const failure = await project.stack.preview().then(
        () => undefined,
        (error: Error) => error,
      );
      expect(failure?.message).toContain("agents:apiKey");
      expect(failure?.message).toContain("AGENT_IAC_API_KEY");
      expect((await requestCounts(sim)).count).toBe(0);

      // The same stack on the simulator's loopback address previews with the local dev key.
      await project.stack.setConfig("agents:baseUrl", { value: sim.url });
      const preview = await project.stack.preview();
      expect(preview.changeSummary.create).toBe(1);
      expect((await requestCounts(sim)).count).toBe(0);
    },
  );
});
