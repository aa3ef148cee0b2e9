// The contract's one deepMerge (override_config in the simulator, overlays in the definitions).
import { describe, expect, it } from "vitest";
import { deepMerge } from "../../src/contract/index.ts";

describe("deepMerge", () => {
  it("merges objects key by key and replaces arrays and scalars; an undefined override keeps the base", () => {
    const base = { runtime: { model: "a/b", prompt: { text: "t", type: "fixed" } }, tool: { tools: [1, 2] } };
    const merged = deepMerge(base, { runtime: { prompt: { text: "u" } }, tool: { tools: [3] } });
    expect(merged).toEqual({ runtime: { model: "a/b", prompt: { text: "u", type: "fixed" } }, tool: { tools: [3] } });
    expect(base.runtime.prompt.text).toBe("t");
    expect(deepMerge(base, undefined)).toBe(base);
  });

  it("replaceWhole keys are replaced, not merged (the definitions' prompt rule)", () => {
    const merged = deepMerge(
      { p: { prompt: { text: "t", type: "fixed" } } },
      { p: { prompt: { file: "x.md" } } },
      {
        replaceWhole: ["prompt"],
      },
    );
    expect(merged).toEqual({ p: { prompt: { file: "x.md" } } });
  });

  it("a __proto__ key stays a plain own key and pollutes no prototype", () => {
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "a": {"__proto__": {"deep": true}}}');
    const merged = deepMerge({ a: { b: 1 } }, hostile) as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).deep).toBeUndefined();
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.hasOwn(merged, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(merged.a)).toBe(Object.prototype);
  });
});
