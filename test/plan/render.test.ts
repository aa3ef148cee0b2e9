import { describe, expect, it } from "vitest";
import { fieldChanges, type Plan, renderMarkdown } from "../../src/plan/index.ts";

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
