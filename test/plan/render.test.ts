import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { fenced } from "../../src/escape/index.ts";
import { fieldChanges, type Plan, planRecorder } from "../../src/plan/index.ts";
import { planJson as renderJson, planMarkdown as renderMarkdown } from "../../src/report/index.ts";

describe("fieldChanges", () => {
  it("lists leaf paths that differ, absent fields included", () => {
    expect(
      fieldChanges(
        { name: "A", config: { runtime: { model: "x/a", prompt: { text: "hi", type: "fixed" } } } },
        {
          name: "A",
          config: {
            runtime: { model: "x/b", prompt: { text: "hi", type: "fixed" } },
            channel: { is_voicemail_enabled: true },
          },
        },
      ),
    ).toEqual([
      { path: "config.channel", before: undefined, after: { is_voicemail_enabled: true } },
      { path: "config.runtime.model", before: "x/a", after: "x/b" },
    ]);
  });

  it("shows values known only after apply as such", () => {
    expect(
      fieldChanges({ postprocess_agents: ["pa_1"] }, { postprocess_agents: ["04da6b54-80e4-46f7-96ec-b56ff0331ba9"] }),
    ).toEqual([{ path: "postprocess_agents", before: ["pa_1"], after: "(known after apply)" }]);
  });
});

describe("renderMarkdown", () => {
  const base: Plan = { stack: "dev", overlays: [], agents: [] };

  it("says so when nothing changes", () => {
    const md = renderMarkdown({
      ...base,
      agents: [{ agent: "support", kind: "conversational", action: "unchanged", why: "", fields: [], promptDiffs: {} }],
    });
    expect(md).toContain("No changes: 1 agent(s) unchanged.");
    expect(md).not.toContain("| agent |");
  });

  it("tables the changes, shows prompt diffs and folds long ones", () => {
    const longDiff = Array.from({ length: 40 }, (_, i) => `+line ${i}`).join("\n");
    const md = renderMarkdown({
      stack: "prod",
      overlays: ["agents/support.prod.yaml"],
      agents: [
        {
          agent: "call-summary",
          kind: "procedural",
          action: "replace",
          why: "changed: config.runtime.prompt.text",
          fields: [{ path: "config.runtime.prompt.text", before: "a", after: "b" }],
          promptDiffs: { "config.runtime.prompt.text": "@@ -1 +1 @@\n-a\n+b\n" },
        },
        {
          agent: "support",
          kind: "conversational",
          action: "replace",
          why: "linked procedural agent `call-summary` is replaced",
          fields: [{ path: "config.runtime.prompt.text", before: "x", after: "y" }],
          promptDiffs: { "config.runtime.prompt.text": longDiff },
        },
      ],
    });
    expect(md).toContain("| `call-summary` | procedural | replace | changed: config.runtime.prompt.text |");
    expect(md).toContain("linked procedural agent `call-summary` is replaced");
    expect(md).toContain("```diff\n@@ -1 +1 @@\n-a\n+b\n```");
    expect(md).toContain("<details><summary><code>config.runtime.prompt.text</code> (40 lines of diff)</summary>");
    expect(md).toContain("Overlays applied: `agents/support.prod.yaml`.");
    expect(md).toContain("the old one stays on the service");
  });
});

describe("a created agent's plan shows its whole request", async () => {
  const { loadAgents } = await import("../../src/definitions/index.ts");
  const { AGENT_TYPE_PREFIX } = await import("../../src/provider/index.ts");
  const pulumi = await import("@pulumi/pulumi");
  const AGENTS = new URL("../../agents", import.meta.url).pathname;

  /** A preview of the prod stack in which every agent is new, as Pulumi's step events report it. */
  async function prodPlanWithNewAgents(): Promise<Plan> {
    const { agents, errors } = await loadAgents(AGENTS, { stack: "prod", from: process.cwd() });
    expect(errors).toEqual([]);
    const recorder = planRecorder("prod", agents);
    for (const agent of agents) {
      const type = `${AGENT_TYPE_PREFIX}${agent.kind === "procedural" ? "ProceduralAgent" : "ConversationalAgent"}`;
      const inputs = {
        name: agent.name,
        description: agent.description,
        config: agent.config,
        // A procedural agent created in the same run: its id is known only after apply.
        ...(agent.postprocessAgents.length > 0
          ? { postprocess_agents: agent.postprocessAgents.map(() => pulumi.runtime.unknownValue) }
          : {}),
        __provider: "serialized provider text",
      };
      recorder.onEvent({
        sequence: 0,
        timestamp: 0,
        resourcePreEvent: {
          metadata: {
            op: "create",
            urn: `urn:pulumi:prod::agents::${type}::${agent.key}`,
            type,
            provider: "",
            new: { inputs },
          },
        },
      } as unknown as Parameters<typeof recorder.onEvent>[0]);
    }
    return recorder.plan();
  }

  it("shows the prod overlay's post_url whole, the config as YAML, the prompt as text", async () => {
    const plan = await prodPlanWithNewAgents();
    const md = renderMarkdown(plan);
    expect(md).toContain("### `call-summary` (create, with overlay `agents/call-summary.prod.yaml`)");
    expect(md).toContain("  post_url: https://hooks.northwind.example/agents/call-summary\n");
    expect(md).toContain("filter_statuses:\n  - completed\n");
    // The prompt file's text, line by line, not a JSON string with \n escapes.
    const prompt = await readFile(new URL("../../prompts/call-summary.md", import.meta.url), "utf8");
    expect(md).toContain(prompt.trimEnd());
    expect(md).not.toContain("…");
    expect(md).toContain(
      "- `postprocess_agents`: `call-summary` (_(known after apply)_), `qa-scorer` (_(known after apply)_)",
    );
    expect(md).not.toContain("serialized provider text");
  });

  it("puts the same whole request in the JSON plan", async () => {
    const plan = JSON.parse(renderJson(await prodPlanWithNewAgents())) as Plan;
    const summary = plan.agents.find((a) => a.agent === "call-summary");
    expect(summary?.request?.config).toMatchObject({
      output: { post_url: "https://hooks.northwind.example/agents/call-summary" },
    });
    const support = plan.agents.find((a) => a.agent === "support");
    expect(support?.request?.postprocess_agents).toEqual([
      { key: "call-summary", id: "(known after apply)" },
      { key: "qa-scorer", id: "(known after apply)" },
    ]);
  });
});

describe("Markdown that a value cannot break", () => {
  it("fences a prompt that contains a fence with a longer one", () => {
    expect(fenced("a\n```\nb", "text")).toEqual(["````text", "a\n```\nb", "````"]);
    expect(fenced("plain", "diff")).toEqual(["```diff", "plain", "```"]);
  });

  it("keeps a prompt diff whose lines hold ``` inside its block", () => {
    const md = renderMarkdown({
      stack: "dev",
      overlays: [],
      agents: [
        {
          agent: "support",
          kind: "conversational",
          action: "replace",
          why: "changed",
          fields: [{ path: "config.runtime.prompt.text", before: "a", after: "```\n# injected heading" }],
          promptDiffs: { "config.runtime.prompt.text": "@@ -1 +1,2 @@\n-a\n+```\n+# injected heading\n" },
        },
      ],
    });
    expect(md).toContain("````diff\n@@ -1 +1,2 @@\n-a\n+```\n+# injected heading\n````");
  });

  it("shows a long or multi-line changed value whole, in a folded block, and backticks as they are", () => {
    const long = `https://hooks.example/${"x".repeat(200)}`;
    const md = renderMarkdown({
      stack: "dev",
      overlays: [],
      agents: [
        {
          agent: "call-summary",
          kind: "procedural",
          action: "replace",
          why: "changed",
          fields: [
            { path: "config.output.post_url", before: "http://a", after: long },
            { path: "description", before: "uses `x`", after: "uses ``y``" },
          ],
          promptDiffs: {},
        },
      ],
    });
    expect(md).toContain(long);
    expect(md).toContain("<details><summary><code>config.output.post_url</code></summary>");
    expect(md).toContain("- `description`: `` uses `x` `` → ``` uses ``y`` ```");
  });
});
