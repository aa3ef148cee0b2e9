// Per-stack overlays: agents/<key>.<stack>.yaml deep-merged over agents/<key>.yaml.
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { formatDiagnostic, loadAgents } from "../../src/definitions/index.ts";
import { type TempProject, tempProject, where } from "./helpers.ts";

const AGENTS = path.resolve(import.meta.dirname, "../../agents");

let project: TempProject | undefined;
afterEach(async () => {
  await project?.cleanup();
  project = undefined;
});

const BASE = [
  "kind: conversational",
  "name: Desk",
  "description: Front desk",
  "config:",
  "  personas: [{name: Ann, voice: {id: f1, provider: service}}]",
  "  runtime:",
  "    model: openai/gpt-4o",
  "    prompt: {type: fixed, file: ../prompts/desk.md}",
  "  tool:",
  "    tools: [{ns: syscall, name: lookup}]",
  "    transfers: [{id: '+15550001'}, {id: '+15550002'}]",
  "smoke:",
  "  - name: greets",
  "    channel: {callee_no: '+15550100'}",
  "",
].join("\n");

describe("overlays", () => {
  it("merge objects, replace arrays and whole prompts, and record which overlay applied", async () => {
    project = await tempProject({
      "agents/desk.yaml": BASE,
      "prompts/desk.md": "Base prompt\n",
      "agents/desk.prod.yaml": [
        "config:",
        "  personas: [{name: Bea}]",
        "  runtime:",
        "    prompt: {type: fixed, text: Prod prompt}",
        "  tool:",
        "    transfers: [{id: '+18005550001'}]",
        "smoke:",
        "  - name: greets-prod",
        "    channel: {callee_no: '+18005550100'}",
        "",
      ].join("\n"),
      "agents/desk.staging.yaml": "name: Desk (staging)\n",
    });
    const prod = await loadAgents(project.agents, { stack: "prod", from: process.cwd() });
    expect(prod.errors).toEqual([]);
    const desk = prod.agents[0];
    expect(desk?.overlay).toMatch(/desk\.prod\.yaml$/);
    expect(desk?.name).toBe("Desk");
    expect(desk?.config).toEqual({
      personas: [{ name: "Bea" }],
      runtime: { model: "openai/gpt-4o", prompt: { type: "fixed", text: "Prod prompt" } },
      tool: { tools: [{ ns: "syscall", name: "lookup" }], transfers: [{ id: "+18005550001" }] },
    });
    expect(desk?.smoke.map((s) => [s.name, s.channel.callee_no])).toEqual([["greets-prod", "+18005550100"]]);

    // Another stack's overlay is ignored; a stack without an overlay gets the base file.
    const staging = await loadAgents(project.agents, { stack: "staging", from: process.cwd() });
    expect(staging.agents[0]?.name).toBe("Desk (staging)");
    expect(staging.agents[0]?.config.runtime?.prompt?.text).toBe("Base prompt\n");
    const dev = await loadAgents(project.agents, { stack: "dev", from: process.cwd() });
    expect(dev.agents[0]?.overlay).toBeUndefined();
    expect(dev.agents[0]?.name).toBe("Desk");
    // A fully qualified stack name selects the overlay by its last part.
    const qualified = await loadAgents(project.agents, { stack: "acme/agents/prod", from: process.cwd() });
    expect(qualified.agents[0]?.overlay).toMatch(/desk\.prod\.yaml$/);
  });

  it("report overlay errors at the overlay's own file:line, base errors at the base's", async () => {
    project = await tempProject({
      "agents/desk.yaml": BASE.replace("name: Desk", "name: [Desk]"),
      "prompts/desk.md": "Base prompt\n",
      "agents/desk.prod.yaml": [
        "# prod numbers", // 1
        "config:", // 2
        "  runtime:", // 3
        "    model: gpt-4o", // 4
        "    prompt: {type: fixed, file: ../prompts/prod.md}", // 5
        "  tool:", // 6
        "    transfers: {id: '+18005550001'}", // 7
        "    tolls: []", // 8
        "",
      ].join("\n"),
    });
    const { errors } = await loadAgents(project.agents, { stack: "prod", from: process.cwd() });
    expect(errors.map(where)).toEqual([
      "desk.prod.yaml:4:12: config.runtime.model",
      "desk.prod.yaml:5:33: config.runtime.prompt.file",
      "desk.prod.yaml:7:16: config.tool.transfers",
      "desk.prod.yaml:8:5: config.tool.tolls",
      "desk.yaml:2:7: name",
    ]);
    expect(errors.find((d) => d.field === "config.tool.tolls")?.message).toBe(
      'unknown key "tolls" (did you mean "tools"?)',
    );
    expect(errors.find((d) => d.field === "config.runtime.prompt.file")?.message).toMatch(
      /prompts\/prod\.md does not exist/,
    );
  });

  it("without a stack, check every overlay against its base; an overlay without a base is an error", async () => {
    project = await tempProject({
      "agents/desk.yaml": BASE,
      "prompts/desk.md": "Base prompt\n",
      "agents/desk.prod.yaml": "config:\n  runtime:\n    model: nope\n",
      "agents/desk.staging.yaml": "kind: procedural\n",
      "agents/ghost.prod.yaml": "name: Ghost\n",
    });
    const all = await loadAgents(project.agents, { from: process.cwd() });
    expect(all.errors.map((d) => `${where(d)}: ${d.message}`)).toEqual([
      "desk.prod.yaml:3:12: config.runtime.model: must look like <vendor>/<model name>, e.g. openai/gpt-4o",
      "desk.staging.yaml:1:7: kind: an overlay cannot change an agent's kind",
      "ghost.prod.yaml:1:1: (file): overlay without a base file: there is no ghost.yaml to merge it over",
    ]);
    // With a stack selected, other stacks' overlays are not read (the orphan is still reported).
    const dev = await loadAgents(project.agents, { stack: "dev", from: process.cwd() });
    expect(dev.errors.map(where)).toEqual(["ghost.prod.yaml:1:1: (file)"]);
    expect(dev.agents.map((a) => a.key)).toEqual(["desk"]);
  });

  it("the prod examples change the transfer number, the smoke callee numbers and the post_url", async () => {
    const base = await loadAgents(AGENTS, { stack: "dev", from: process.cwd() });
    const prod = await loadAgents(AGENTS, { stack: "prod", from: process.cwd() });
    expect(prod.errors.map(formatDiagnostic)).toEqual([]);
    const pick = (result: typeof prod, key: string) => result.agents.find((a) => a.key === key);
    const transfers = (r: typeof prod) =>
      (pick(r, "booking")?.config as { tool?: { transfers?: unknown } } | undefined)?.tool?.transfers;
    expect(transfers(prod)).not.toEqual(transfers(base));
    expect(pick(prod, "booking")?.smoke.map((s) => s.channel.callee_no)).not.toEqual(
      pick(base, "booking")?.smoke.map((s) => s.channel.callee_no),
    );
    const postUrl = (r: typeof prod) =>
      (pick(r, "call-summary")?.config as { output?: { post_url?: string } } | undefined)?.output?.post_url;
    expect(postUrl(base)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(postUrl(prod)).toMatch(/^https:\/\//);
    expect(prod.agents.filter((a) => a.overlay).map((a) => a.key)).toEqual(["call-summary", "booking"]);
    // Prompts are untouched by the overlays.
    expect(pick(prod, "booking")?.config.runtime?.prompt).toEqual(pick(base, "booking")?.config.runtime?.prompt);
  });
});
