// Which changed agents the behaviour preview can play, with what override_config, and why not the
// others; and how the results read under each agent's diff. Pure logic: no service, no Pulumi.
import { describe, expect, it } from "vitest";
import type { AgentDefinition } from "../../src/definitions/index.ts";
import {
  type AgentPlan,
  attachBehaviour,
  behaveReport,
  behaviourTargets,
  type Plan,
  type PlanInputs,
} from "../../src/plan/index.ts";
import type { HeldAgent } from "../../src/provider/index.ts";
import { htmlReport } from "../../src/report/html/index.ts";
import { planMarkdown as renderMarkdown } from "../../src/report/index.ts";
import type { ScenarioResult } from "../../src/smoke/index.ts";

const scenario = {
  name: "books",
  channel: { callee_no: "+1555" },
  livemode: true,
  transport: "sse",
  timeout: 30,
  iterations: 1,
  expect: {},
};
const definition = (key: string, kind: "conversational" | "procedural", smoke = [scenario]) =>
  ({ key, kind, name: key, description: "", config: {}, postprocessAgents: [], smoke }) as unknown as AgentDefinition;
const agent = (name: string, fields: AgentPlan["fields"], extra: Partial<AgentPlan> = {}): AgentPlan => ({
  agent: name,
  kind: "conversational",
  action: "replace",
  why: "",
  fields,
  promptDiffs: {},
  ...extra,
});
const heldAgent = (key: string, id: string, name: string): HeldAgent => ({
  key,
  kind: "conversational",
  id,
  version_id: `${id}@v1`,
  name,
  postprocess_agents: [],
  urn: `urn:pulumi:dev::agents::x::${key}`,
});
const held = { booking: heldAgent("booking", "ca_b", "Booking"), support: heldAgent("support", "ca_s", "Support") };
const before = {
  config: {
    personas: [{ name: "Leo" }],
    tool: {
      tools: [
        { ns: "syscall", name: "a" },
        { ns: "syscall", name: "b" },
      ],
    },
    channel: { is_voicemail_enabled: true },
  },
};
const after = {
  config: {
    personas: [{ name: "Leo" }],
    tool: { tools: [{ ns: "syscall", name: "a" }] },
    channel: { is_voicemail_enabled: true },
  },
};

describe("behaviourTargets", () => {
  const definitions = [
    definition("booking", "conversational"),
    definition("support", "conversational"),
    definition("summary", "procedural", []),
  ];

  it("sends every changed top-level config section whole, as test calls on the version the stack holds", () => {
    const plan: Plan = {
      stack: "dev",
      overlays: [],
      agents: [
        agent("booking", [
          { path: "config.tool.tools", before: before.config.tool.tools, after: after.config.tool.tools },
        ]),
      ],
    };
    const inputs: PlanInputs = new Map([["booking", { before, after }]]);
    const { targets, skipped } = behaviourTargets(plan, inputs, definitions, held);
    expect(skipped.size).toBe(0);
    expect(targets).toHaveLength(1);
    expect(targets[0]).toMatchObject({ agent: "booking", versionId: "ca_b@v1", sections: ["tool"] });
    // A scenario written with livemode: true is still a test call in a preview.
    expect(targets[0]?.calls.map((c) => [c.versionId, c.live, c.overrideConfig])).toEqual([
      ["ca_b@v1", false, { tool: after.config.tool }],
    ]);
  });

  it("names why each other change cannot be previewed", () => {
    const plan: Plan = {
      stack: "dev",
      overlays: [],
      agents: [
        agent("new-line", [], { action: "create" }),
        agent("summary", [{ path: "config.runtime.prompt.text", before: "a", after: "b" }], { kind: "procedural" }),
        agent("support", [
          { path: "description", before: "a", after: "b" },
          { path: "name", before: "a", after: "b" },
        ]),
        agent("linked", [{ path: "postprocess_agents", before: ["pa_1"], after: "(known after apply)" }]),
        agent("removed", [{ path: "config.voice", before: { boosted_keywords: [] }, after: undefined }]),
        agent("quiet", [{ path: "config.channel.is_voicemail_enabled", before: true, after: false }]),
        agent("unchanged", [], { action: "unchanged" }),
      ],
    };
    const defs = [
      ...definitions,
      definition("linked", "conversational"),
      definition("removed", "conversational"),
      definition("quiet", "conversational", []),
    ];
    const { targets, skipped } = behaviourTargets(plan, new Map(), defs, held);
    expect(targets).toEqual([]);
    expect(Object.fromEntries(skipped)).toEqual({
      "new-line": "new agent: nothing is deployed to call yet",
      summary:
        "procedural agent: its effect shows through the conversational agents' `procedures` expectations only after deploy",
      support: "`description` and `name` change: a conversation cannot override them",
      linked: "its linked procedural agents (`postprocess_agents`) change: their procedures run only after deploy",
      removed: "`config.voice` removed: override_config can add and change fields, not remove them",
      quiet: "no smoke scenarios",
    });
  });
});

describe("the behaviour under each agent's diff", () => {
  const failed: ScenarioResult = {
    agent: "booking",
    scenario: "books",
    iteration: 1,
    versionId: "ca_b@v1",
    conversationId: "conv_1",
    transport: "sse",
    status: "failed",
    outcome: { kind: "failed" },
    assertions: [
      {
        kind: "tool_calls",
        key: "b",
        description: "calls tool b",
        passed: false,
        detail: "b was never called (called: a)",
        context: ["tool a({}) → {}", "agent: done"],
      },
      { kind: "ends", key: "ends", description: "the conversation ends", passed: true },
    ],
    timings: { durationMs: 1200 },
  };

  it("lists each scenario with its unmet expectations and the nearest transcript lines, in Markdown, JSON and the v2 report", () => {
    const plan: Plan = {
      stack: "dev",
      overlays: [],
      agents: [
        agent("booking", [{ path: "config.tool.tools", before: 1, after: 2 }]),
        agent("new-line", [], { action: "create", request: { name: "N", description: "d", config: {} } }),
      ],
    };
    const target = { agent: "booking", versionId: "ca_b@v1", sections: ["tool"], calls: [] };
    attachBehaviour(plan, [target], new Map([["new-line", "new agent: nothing is deployed to call yet"]]), [failed]);
    expect(plan.behave).toEqual({
      previewed: ["booking"],
      not_previewed: [{ agent: "new-line", reason: "new agent: nothing is deployed to call yet" }],
      scenarios: 1,
      passed: 0,
      failed: 1,
      errors: 0,
    });
    const md = renderMarkdown(plan);
    const section = md.slice(md.indexOf("### `booking`"), md.indexOf("### `new-line`"));
    expect(section).toContain(
      "**Behaviour with the proposed config** (against `ca_b@v1`, override_config `tool`): 0 passed, 1 failed",
    );
    expect(section).toContain(
      "- ✗ `books`\n  - calls tool b: b was never called (called: a)\n\n    ```text\n    tool a({}) → {}\n    agent: done\n    ```",
    );
    expect(md.slice(md.indexOf("### `new-line`"))).toContain(
      "**Behaviour:** not previewed: new agent: nothing is deployed to call yet.",
    );
    expect(md).toContain("- `new-line`: new agent: nothing is deployed to call yet");

    const report = behaveReport(plan, [target], [failed]);
    expect(report).toMatchObject({ kind: "behave", stack: "dev", versions: { booking: "ca_b@v1" } });
    expect(report.summary).toMatchObject({ scenarios: 1, calls: 1, failed: 1, passed: 0 });
    expect(report.results[0]).toMatchObject({ side: "new", livemode: false, status: "failed" });
    expect(report.results[0]?.assertions[0]?.context).toEqual(["tool a({}) → {}", "agent: done"]);
    // The HTML renderer takes it as it is.
    expect(htmlReport(report)).toContain("Behaviour preview of changed agents");
    expect(report.notes).toEqual([
      "booking: played against ca_b@v1 with the proposed config sections tool as override_config (test calls)",
      "new-line: not previewed: new agent: nothing is deployed to call yet",
    ]);
  });
});
