// The provider as the state stores it: serialized the way `pulumi.dynamic.Resource` does, then
// loaded back the way the provider host does (require-from-string, an empty file name), run from
// the project directory.
import { createRequire } from "node:module";
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { agentProviders } from "../../src/provider/index.ts";

const requireFromString = createRequire(import.meta.url)("require-from-string") as (
  code: string,
  filename: string,
) => {
  handler(): Record<"configure" | "check" | "diff" | "create" | "delete", (...args: unknown[]) => Promise<unknown>>;
};

async function serialized(kind: "conversational" | "procedural"): Promise<string> {
  const provider = agentProviders[kind];
  return (await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true })).text;
}

describe("the serialized provider", () => {
  it("is under 700 bytes per kind (2.1 KB before): one shared method, nothing captured", async () => {
    for (const kind of ["conversational", "procedural"] as const) {
      const text = await serialized(kind);
      expect(text.length).toBeLessThan(700);
      // Each method name points at the one function, written once.
      expect(text.match(/^function __/gm)).toHaveLength(2);
      expect(text).not.toMatch(/apiKey|zod|undici/);
    }
  });

  it("loads back as the host loads it and reaches the runtime for every method", async () => {
    const provider = requireFromString(await serialized("conversational"), "").handler();
    expect(Object.keys(provider).sort()).toEqual(["check", "configure", "create", "delete", "diff"]);
    const body = { name: "A", description: "B", config: { runtime: { model: "openai/gpt-4o" } } };
    expect(await provider.check({}, body)).toEqual({ inputs: body, failures: [] });
    const bad = { ...body, config: { runtime: { model: "gpt-4o" } } };
    expect(((await provider.check({}, bad)) as { failures: unknown[] }).failures).toHaveLength(1);
    const olds = { ...body, agentId: "ca_1", versionId: "ca_1@v1" };
    expect(await provider.diff("ca_1", olds, { ...body, description: "C" })).toMatchObject({
      changes: true,
      replaces: ["description"],
    });
  });
});
