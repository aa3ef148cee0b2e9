// The references in docs/ are generated from the code (scripts/docs.ts, `npm run docs`): a flag, a
// default, an exit code or a field changed without regenerating them fails here, as a stale
// agents/agent.schema.json fails `agent-iac schema --check`.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { generatedDocs, staleDocs } from "../../scripts/docs.ts";
import { cliReference, inProcessHelp, parseCommandList, parseHelp, subcommands } from "../../scripts/docs-cli.ts";
import { agentFileSchema, fieldReference } from "../../scripts/docs-fields.ts";
import { anchors, cell, prose, slug } from "../../scripts/docs-markdown.ts";
import { agentJsonSchema } from "../../src/definitions/index.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** Table cells as written before the formatter pads them. */
const oneSpace = (markdown: string) => markdown.replace(/ {2,}\|/g, " |").replace(/\| {2,}/g, "| ");

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

describe("the generated references", () => {
  it("docs/cli.md and docs/fields.md are what `npm run docs` writes", async () => {
    expect(await staleDocs(ROOT), "run `npm run docs` and commit the result").toEqual([]);
  });

  it("a flag's help changed in the code changes docs/cli.md", async () => {
    const real = inProcessHelp(ROOT);
    const edited = await cliReference(async (args) =>
      (await real(args)).replace("calls at a time (default: 4)", "calls at a time (default: 8)"),
    );
    const { "docs/cli.md": committed = "" } = await generatedDocs(ROOT);
    expect(oneSpace(committed)).toContain("| `--concurrency N` | calls at a time (default: 4) |");
    expect(edited).toContain("| `--concurrency N` | calls at a time (default: 8) |");
    expect(edited).not.toBe(committed);
  });

  it("lists every command the CLI lists, each subcommand of a group, and their exit codes", async () => {
    const { "docs/cli.md": text = "" } = await generatedDocs(ROOT);
    const { commands } = parseCommandList(await inProcessHelp(ROOT)(["--help"]));
    expect(commands.map((c) => c.name)).toEqual(expect.arrayContaining(["start", "smoke", "events", "judge"]));
    for (const { name } of commands) expect(text).toMatch(new RegExp(`^##+ \`agent-iac ${name}( [a-z-]+)?\`$`, "m"));
    for (const sub of ["conversations list", "conversations procedures", "procedures list", "judge check"]) {
      expect(text).toContain(`### \`agent-iac ${sub}\``);
    }
    expect(text.match(/^\*\*Exit codes:\*\* /gm)?.length).toBeGreaterThanOrEqual(10);
    for (const link of text.matchAll(/\]\(#([^)]+)\)/g)) expect(anchors(text), link[1]).toContain(link[1]);
  });

  it("the field reference reads the schema agents/agent.schema.json is generated from", () => {
    expect(`${JSON.stringify(sortKeys(agentFileSchema()), null, 2)}\n`).toBe(agentJsonSchema());
    const text = oneSpace(fieldReference());
    for (const row of [
      "| `timeout` | number (> 0, ≤ 3600) | `120` | Seconds (default 120). |",
      '| `transport` | `"sse"` or `"ws"` | `"sse"` |  |',
      "| `config.runtime.prompt.file` | string |  |",
      '| `expect.judge[].votes` | integer (≥ 1, ≤ 15) or `"auto"` |  | Independent judge requests',
      "| `postprocess_agents` | list of string (at most 100 characters, matching `^[a-z0-9]+(?:-[a-z0-9]+)*$`) | `[]` |",
    ]) {
      expect(text).toContain(oneSpace(row));
    }
  });
});

describe("reading a command's help", () => {
  const help = `usage: agent-iac demo <id> [options]

Does a thing to <id>.
Second line.

options:
  --stack NAME       the stack (default: dev)
  --mode a|b         a or b
  -h, --help         this help

connection: the stack's agents:baseUrl.

exit codes: 0 done, 2 usage.
`;

  it("splits usage, about, options and footer", () => {
    expect(parseHelp(help)).toEqual({
      usage: "agent-iac demo <id> [options]",
      about: "Does a thing to <id>.\nSecond line.",
      options: [
        { flag: "--stack NAME", help: "the stack (default: dev)" },
        { flag: "--mode a|b", help: "a or b" },
        { flag: "-h, --help", help: "this help" },
      ],
      footer: "connection: the stack's agents:baseUrl.\n\nexit codes: 0 done, 2 usage.",
    });
    expect(parseHelp("usage: agent-iac group list [filters]\n")).toBeUndefined();
    expect(subcommands("group", "usage: agent-iac group list\n       agent-iac group show <id>\n")).toEqual([
      "list",
      "show",
    ]);
  });

  it("renders it as Markdown that shows the text as written", async () => {
    const page = await cliReference(async (args) =>
      args[0] === "--help" ? "usage: agent-iac <command>\n\ncommands:\n  demo  does a thing\n" : help,
    );
    expect(page).toContain("## `agent-iac demo`");
    expect(page).toContain("Does a thing to &lt;id>. Second line.");
    expect(page).toContain("| `--mode a\\|b` | a or b |");
    expect(page).toContain("**Exit codes:** 0 done, 2 usage.");
    expect(page).toContain("| [`agent-iac demo`](#agent-iac-demo) | does a thing |");
  });
});

describe("Markdown helpers", () => {
  it("escape markup outside code spans and keep snake_case", () => {
    expect(prose("agents/*.yaml and <key> in `a*b<c>`, min_pass, _x_")).toBe(
      "agents/\\*.yaml and &lt;key> in `a*b<c>`, min_pass, \\_x\\_",
    );
    expect(prose("# not a heading")).toBe("\\# not a heading");
    expect(cell("a | b\nc")).toBe("a \\| b c");
  });

  it("give headings GitHub's anchors", () => {
    expect(slug("Old versus new (`smoke --compare`)")).toBe("old-versus-new-smoke---compare");
    expect(slug("Judged expectations (`expect.judge`)")).toBe("judged-expectations-expectjudge");
    expect(slug("Gates: repeats, latency, budget, shards, replay")).toBe("gates-repeats-latency-budget-shards-replay");
    expect([...anchors('# A\n## A\n```\n# not\n```\n<a id="here"></a>\n')]).toEqual(["a", "a-1", "here"]);
  });
});
