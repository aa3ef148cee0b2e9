// Hostile input: a corpus of hand-written broken files (test/fixtures/broken/), generated huge
// files, and property-based tests. The loader never throws, bounds its work, and every rejection
// names a file, a line and a field.
import { cp, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type Diagnostic, loadAgents, MAX_YAML_BYTES } from "../../src/definitions/index.ts";
import { SUMMARY, type TempProject, tempProject, wellFormed, where } from "./helpers.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const CORPUS = path.join(ROOT, "test/fixtures/broken");

/** Each corpus entry (a file, or a directory of files) → a diagnostic it must produce (basename:line:column: field). */
const EXPECTED: Record<string, string> = {
  "Upper_Case.yaml": "Upper_Case.yaml:1:1: (file name)",
  "alias-bomb.yaml": "alias-bomb.yaml:4:8: b[0]",
  "bad-model.yaml": "bad-model.yaml:6:12: config.runtime.model",
  "binary-junk.yaml": "binary-junk.yaml:1:1: (file)",
  "config-is-list.yaml": "config-is-list.yaml:4:9: config",
  "custom-tag.yaml": "custom-tag.yaml:2:7: name",
  cycle: "ping.yaml:5:22: postprocess_agents[0]",
  "dangling-reference.yaml": "dangling-reference.yaml:5:22: postprocess_agents[0]",
  "deep-block-nesting.yaml":
    "deep-block-nesting.yaml:69:131: config.filter_condition.k0.k1.k2.k3.k4.k5.k6.k7.k8.k9.k10.k11.k12.k13.k14.k15.k1….k38.k39.k40.k41.k42.k43.k44.k45.k46.k47.k48.k49.k50.k51.k52.k53.k54.k55.k56.k57.k58.k59.k60.k61.k62",
  "deep-flow-nesting.yaml": "deep-flow-nesting.yaml:3:91: (document)",
  "duplicate-extension": "scorer.yml:1:1: (file name)",
  "duplicate-mapping-key.yaml": "duplicate-mapping-key.yaml:3:1: name",
  "duplicate-nested-key.yaml": "duplicate-nested-key.yaml:7:5: config.runtime.model",
  "empty-file.yaml": "empty-file.yaml:1:1: (document)",
  "infinite-timeout.yaml": "infinite-timeout.yaml:8:14: smoke[0].timeout",
  "latin1.yaml": "latin1.yaml:1:1: (file)",
  "list-document.yaml": "list-document.yaml:1:1: (document)",
  "merge-key.yaml": "merge-key.yaml:5:3: config.<<",
  "missing-kind.yaml": "missing-kind.yaml:1:1: kind",
  "model-with-space.yaml": "model-with-space.yaml:6:12: config.runtime.model",
  "multiple-documents.yaml": "multiple-documents.yaml:5:1: config",
  "non-string-key.yaml": "non-string-key.yaml:5:5: config",
  "nul-bytes.yaml": "nul-bytes.yaml:1:1: (file)",
  "orphan.prod.yaml": "orphan.prod.yaml:1:1: (file)",
  "overlay-bad-type": "scorer.staging.yaml:3:20: config.filter_statuses",
  "overlay-changes-kind": "scorer.prod.yaml:1:7: kind",
  "overlay-unknown-key": "scorer.prod.yaml:3:5: config.output.post_ulr",
  "procedural-with-postprocess.yaml": "procedural-with-postprocess.yaml:5:1: postprocess_agents",
  "prompt-device-file.yaml": "prompt-device-file.yaml:6:33: config.runtime.prompt.file",
  "prompt-empty-text.yaml": "prompt-empty-text.yaml:6:33: config.runtime.prompt.text",
  "prompt-file-is-directory.yaml": "prompt-file-is-directory.yaml:6:33: config.runtime.prompt.file",
  "prompt-missing-file.yaml": "prompt-missing-file.yaml:6:33: config.runtime.prompt.file",
  "prompt-outside-project.yaml": "prompt-outside-project.yaml:6:33: config.runtime.prompt.file",
  "prompt-text-and-file.yaml": "prompt-text-and-file.yaml:9:13: config.runtime.prompt.file",
  "proto-key.yaml": "proto-key.yaml:4:1: __proto__",
  "scalar-document.yaml": "scalar-document.yaml:1:1: (document)",
  "self-reference.yaml": "self-reference.yaml:5:22: postprocess_agents[0]",
  "smoke-bad-regex.yaml": "smoke-bad-regex.yaml:9:14: smoke[0].expect.says[0]",
  "smoke-bad-transport.yaml": "smoke-bad-transport.yaml:8:16: smoke[0].transport",
  "smoke-duplicate-names.yaml": "smoke-duplicate-names.yaml:8:11: smoke[1].name",
  "smoke-missing-callee.yaml": "smoke-missing-callee.yaml:7:14: smoke[0].channel.callee_no",
  "smoke-unlinked-procedure.yaml": "smoke-unlinked-procedure.yaml:9:20: smoke[0].expect.procedures.summary",
  "syntax-bad-indent.yaml": "syntax-bad-indent.yaml:7:1: config.runtime.model",
  "syntax-unclosed-flow.yaml": "syntax-unclosed-flow.yaml:3:1: description",
  "tab-indentation.yaml": "tab-indentation.yaml:5:1: (document)",
  "unknown-key-did-you-mean.yaml": "unknown-key-did-you-mean.yaml:3:1: descripton",
  "unknown-kind.yaml": "unknown-kind.yaml:1:7: kind",
  "unknown-nested-key.yaml": "unknown-nested-key.yaml:6:5: config.runtime.modle",
  "utf16be-bom.yaml": "utf16be-bom.yaml:1:1: (file)",
  "utf16le-bom.yaml": "utf16le-bom.yaml:1:1: (file)",
  "wrong-type-name.yaml": "wrong-type-name.yaml:2:7: name",
  "model-zero-width.yaml": "model-zero-width.yaml:6:12: config.runtime.model",
  "smoke-catastrophic-argument.yaml":
    "smoke-catastrophic-argument.yaml:11:32: smoke[0].expect.tool_calls[0].arguments.request",
  "smoke-catastrophic-regex.yaml": "smoke-catastrophic-regex.yaml:9:14: smoke[0].expect.says[0]",
  "smoke-tool-call-bom.yaml": "smoke-tool-call-bom.yaml:9:20: smoke[0].expect.tool_calls[0]",
  "tool-name-bidi.yaml": "tool-name-bidi.yaml:7:29: config.tool.tools[0].name",
  "transfer-id-isolate.yaml": "transfer-id-isolate.yaml:7:13: config.tool.transfers[0].id",
};

/** A project holding one corpus entry and a valid procedural `summary` agent it may reference. */
async function projectWith(entry: string): Promise<TempProject> {
  const project = await tempProject({ "agents/summary.yaml": SUMMARY });
  const source = path.join(CORPUS, entry);
  if ((await stat(source)).isDirectory()) await cp(source, project.agents, { recursive: true });
  else await cp(source, path.join(project.agents, entry));
  return project;
}

/** Every file in the directory is either loaded as an agent or named by a diagnostic. */
async function expectAccounted(dir: string, result: { agents: { key: string }[]; errors: Diagnostic[] }) {
  for (const d of result.errors) expect(wellFormed(d), JSON.stringify(d)).toBe(true);
  for (const name of await readdir(dir)) {
    if (!/\.ya?ml$/.test(name)) continue;
    const key = name.split(".")[0];
    const loaded = result.agents.some((a) => a.key === key && name.split(".").length === 2);
    const named = result.errors.some((d) => path.basename(d.file) === name);
    expect(loaded || named || (name.split(".").length > 2 && result.agents.some((a) => a.key === key)), name).toBe(
      true,
    );
  }
}

describe("the broken-file corpus", async () => {
  const entries = (await readdir(CORPUS)).sort();

  it("has at least 30 entries, each with an expected diagnostic", () => {
    expect(entries.length).toBeGreaterThanOrEqual(30);
    expect(entries).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(entries)("%s is rejected with a diagnostic at its file:line and field", async (entry) => {
    const project = await projectWith(entry);
    try {
      const result = await loadAgents(project.agents, { from: process.cwd() });
      expect(result.errors.map(where)).toContain(EXPECTED[entry]);
      for (const d of result.errors) expect(wellFormed(d), JSON.stringify(d)).toBe(true);
      // The companion agent still loads: one broken file does not hide the others.
      if (entry !== "procedural-with-postprocess.yaml") expect(result.agents.map((a) => a.key)).toContain("summary");
      await expectAccounted(project.agents, result);
    } finally {
      await project.cleanup();
    }
  });
});

describe("limits", () => {
  let project: TempProject;
  beforeAll(async () => {
    project = await tempProject();
  });
  afterAll(async () => {
    await project.cleanup();
  });

  it("rejects a YAML file over 1 MiB without parsing it, saying so", async () => {
    const dir = path.join(project.root, "big");
    await mkdir(dir);
    const line = "# padding padding padding padding padding padding padding padding\n";
    await writeFile(path.join(dir, "big.yaml"), `${SUMMARY}${line.repeat(Math.ceil(MAX_YAML_BYTES / line.length))}`);
    const { errors } = await loadAgents(dir, { from: process.cwd() });
    expect(errors.map(where)).toEqual(["big.yaml:1:1: (file)"]);
    expect(errors[0]?.message).toMatch(/too large \(\d+ bytes; the limit is 1 MiB\)/);
  });

  it("bounds a billion-laughs bomb that sits in a valid field, and 10 000 unknown keys", async () => {
    const dir = path.join(project.root, "bomb");
    await mkdir(dir);
    const levels = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"];
    for (let i = 1; i < 12; i++)
      levels.push(
        `    l${i}: &l${i} [${Array(10)
          .fill(i === 1 ? "*a" : `*l${i - 1}`)
          .join(", ")}]`,
      );
    await writeFile(
      path.join(dir, "bomb.yaml"),
      `kind: procedural\nname: Bomb\ndescription: d\nconfig:\n  filter_condition:\n    ${levels.join("\n")}\n`,
    );
    const keys = Array.from({ length: 10_000 }, (_, i) => `k${i}: ${i}`).join("\n");
    await writeFile(path.join(dir, "wide.yaml"), `kind: procedural\nname: Wide\ndescription: d\nconfig: {}\n${keys}\n`);
    const { errors } = await loadAgents(dir, { from: process.cwd() });
    const bomb = errors.filter((d) => d.file.endsWith("bomb.yaml"));
    expect(bomb.map((d) => d.message)).toEqual([expect.stringMatching(/alias bomb/)]);
    const wide = errors.filter((d) => d.file.endsWith("wide.yaml"));
    // Capped: 50 shown, then one line saying how many more there are.
    expect(wide).toHaveLength(51);
    expect(wide.filter((d) => d.message === "9950 more errors in this file are not shown")).toHaveLength(1);
  });
});

describe("property-based", () => {
  let project: TempProject;
  let examples: string[];
  beforeAll(async () => {
    project = await tempProject();
    await cp(path.join(ROOT, "prompts"), path.join(project.root, "prompts"), { recursive: true });
    const names = (await readdir(path.join(ROOT, "agents"))).filter((n) => /^[a-z-]+\.yaml$/.test(n));
    examples = await Promise.all(names.map((n) => readFile(path.join(ROOT, "agents", n), "utf8")));
  });
  afterAll(async () => {
    await project.cleanup();
  });

  /** Writes one file as agents/fuzz.yaml next to a valid summary agent and loads the directory. */
  async function loadOne(content: string | Uint8Array) {
    await rm(project.agents, { recursive: true, force: true });
    await mkdir(project.agents);
    await writeFile(path.join(project.agents, "summary.yaml"), SUMMARY);
    await writeFile(path.join(project.agents, "fuzz.yaml"), content);
    const result = await loadAgents(project.agents, { from: process.cwd() });
    await expectAccounted(project.agents, result);
    expect(result.agents.map((a) => a.key)).toContain("summary");
    return result;
  }

  it("random bytes and random text never make the loader throw", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.uint8Array({ maxLength: 2000 }), fc.string({ unit: "binary", maxLength: 2000 })),
        async (content) => {
          await loadOne(content);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("mutated example files: either a valid agent or diagnostics with file, line and field", async () => {
    const yamlNoise = fc.constantFrom(
      ":",
      "-",
      "[",
      "]",
      "{",
      "}",
      "&x",
      "*x",
      "!!str",
      "|",
      ">",
      "'",
      '"',
      "#",
      "\n",
      "\t",
      "  ",
      "? ",
      "<<: ",
      "---\n",
      "\\",
      "%YAML 1.1\n",
      "\u00e9",
      "\uFFFD",
    );
    const mutation = fc.oneof(
      fc.record({
        op: fc.constant("insert" as const),
        at: fc.nat(),
        text: fc.oneof(yamlNoise, fc.string({ maxLength: 8 })),
      }),
      fc.record({ op: fc.constant("delete" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 40 }) }),
      fc.record({ op: fc.constant("swapLines" as const), at: fc.nat(), other: fc.nat() }),
      fc.record({ op: fc.constant("duplicateLine" as const), at: fc.nat() }),
      fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 6 }), async (pick, mutations) => {
        let text = examples[pick % examples.length] ?? "";
        for (const m of mutations) text = mutate(text, m);
        const result = await loadOne(text);
        if (!result.agents.some((a) => a.key === "fuzz")) {
          expect(result.errors.some((d) => path.basename(d.file) === "fuzz.yaml")).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("random values at any field of a valid agent are rejected at that field or accepted", async () => {
    const valid = {
      kind: "conversational",
      name: "Fuzz",
      description: "d",
      config: {
        runtime: { model: "openai/gpt-4o", prompt: { type: "fixed", file: "../prompts/support.md" } },
        tool: { tools: [] },
      },
      postprocess_agents: ["summary"],
      smoke: [
        { name: "s", channel: { callee_no: "+1" }, expect: { says: ["hi"], procedures: { summary: "completed" } } },
      ],
    };
    const paths = [
      ["kind"],
      ["name"],
      ["config"],
      ["config", "runtime"],
      ["config", "runtime", "model"],
      ["config", "runtime", "prompt"],
      ["config", "runtime", "prompt", "file"],
      ["config", "tool", "tools"],
      ["postprocess_agents"],
      ["postprocess_agents", 0],
      ["smoke", 0, "channel"],
      ["smoke", 0, "expect", "says", 0],
      ["smoke", 0, "expect", "procedures"],
      ["smoke", 0, "timeout"],
    ] as const;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), fc.anything({ maxDepth: 4 }), async (at, value) => {
        const doc = structuredClone(valid) as Record<string, unknown>;
        setIn(doc, at, value);
        let text: string;
        try {
          text = stringify(doc);
        } catch {
          return; // a value YAML cannot represent (e.g. a symbol): nothing to load
        }
        const result = await loadOne(text);
        if (!result.agents.some((a) => a.key === "fuzz")) {
          expect(result.errors.filter((d) => path.basename(d.file) === "fuzz.yaml").length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 200 },
    );
  });
});

type Mutation =
  | { op: "insert"; at: number; text: string }
  | { op: "delete"; at: number; length: number }
  | { op: "swapLines"; at: number; other: number }
  | { op: "duplicateLine"; at: number }
  | { op: "truncate"; at: number };

function mutate(text: string, m: Mutation): string {
  const at = text.length === 0 ? 0 : m.at % text.length;
  const lines = text.split("\n");
  switch (m.op) {
    case "insert":
      return text.slice(0, at) + m.text + text.slice(at);
    case "delete":
      return text.slice(0, at) + text.slice(at + m.length);
    case "truncate":
      return text.slice(0, at);
    case "duplicateLine": {
      const i = m.at % lines.length;
      lines.splice(i, 0, lines[i] ?? "");
      return lines.join("\n");
    }
    case "swapLines": {
      const i = m.at % lines.length;
      const j = m.other % lines.length;
      [lines[i], lines[j]] = [lines[j] ?? "", lines[i] ?? ""];
      return lines.join("\n");
    }
  }
}

function setIn(target: Record<string, unknown>, at: readonly (string | number)[], value: unknown) {
  let node: Record<string | number, unknown> = target;
  for (const segment of at.slice(0, -1)) node = node[segment] as Record<string | number, unknown>;
  node[at.at(-1) as string | number] = value;
}
