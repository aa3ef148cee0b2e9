// Model names that move under a pinned gate (issue 51): latest, preview, or no version or date.
import { describe, expect, it } from "vitest";
import { modelMoves, movingModelWarnings } from "../../src/settings/index.ts";

describe("model names that move", () => {
  it("latest and preview move, whatever else the name holds", () => {
    expect(modelMoves("gpt-4o-latest")).toMatch(/"latest"/);
    expect(modelMoves("chatgpt-4o-latest")).toMatch(/"latest"/);
    expect(modelMoves("gemini-2.0-flash-preview-2025-02-05")).toMatch(/"preview"/);
    expect(modelMoves("llama3.1:latest")).toMatch(/"latest"/);
  });

  it("a name with no version or date moves", () => {
    for (const name of ["gpt-4o", "gpt-4o-mini", "example-judge", "claude-3-5-sonnet", "llama3.1:8b"]) {
      expect(modelMoves(name), name).toMatch(/no version or date/);
    }
  });

  it("dated and versioned ids are pinned", () => {
    for (const name of [
      "gpt-4o-2024-08-06",
      "gpt-4o-mini-2024-07-18",
      "gpt-4-0613",
      "claude-3-5-sonnet-20241022",
      "gemini-1.5-pro-002",
      "mistral-large-2407",
      "anthropic.claude-3-sonnet-20240229-v1:0",
      "my-judge-v2",
      "test-model-2024-08-06",
    ]) {
      expect(modelMoves(name), name).toBeNull();
    }
  });

  it("warns once per moving setting, naming it", () => {
    expect(
      movingModelWarnings([
        { setting: "agents:judgeModel", model: "gpt-4o" },
        { setting: "agents:callerModel", model: "gpt-4o-2024-08-06" },
        { setting: "agents:callerModel", model: undefined },
      ]),
    ).toEqual([
      'agents:judgeModel "gpt-4o" moves (it names no version or date): pin a dated or versioned model id, or its verdicts and measured agreement may change without notice',
    ]);
  });
});
