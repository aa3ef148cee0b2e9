// docs/fields.md from the zod schemas the loader validates agent files with (src/definitions), the
// same source as agents/agent.schema.json: every field with its type, constraints, default and
// description, in the order the schema declares them. scripts/docs.ts regenerates it;
// test/readme/references.test.ts fails while it is stale.
import { z } from "zod";
import { agentFile } from "../src/definitions/schema.ts";
import { cell, code, slug } from "./docs-markdown.ts";

/** A JSON Schema node, as zod writes it (draft 7). */
export type Node = {
  title?: string;
  description?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  properties?: Record<string, Node>;
  required?: string[];
  additionalProperties?: Node | boolean;
  propertyNames?: Node;
  items?: Node;
  anyOf?: Node[];
  oneOf?: Node[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
};

/**
 * The agent file's JSON Schema in declaration order: `agentJsonSchema()` (agents/agent.schema.json)
 * is the same call with its keys sorted.
 */
export function agentFileSchema(): Node & { oneOf: Node[] } {
  return z.toJSONSchema(agentFile, { io: "input", target: "draft-7", unrepresentable: "any" }) as Node & {
    oneOf: Node[];
  };
}

const TYPE_NAMES: Record<string, string> = { integer: "integer", number: "number", string: "string", null: "null" };

/** A node's constraints in words; the bounds zod sets on every integer (±2⁵³ − 1) say nothing. */
function bounds(node: Node): string[] {
  const out: string[] = [];
  const said = (n: number | undefined) => n !== undefined && Math.abs(n) !== Number.MAX_SAFE_INTEGER;
  if (node.minLength === 1) out.push("non-empty");
  else if (node.minLength !== undefined) out.push(`at least ${node.minLength} characters`);
  if (node.maxLength !== undefined) out.push(`at most ${node.maxLength} characters`);
  if (node.pattern !== undefined) out.push(`matching ${code(node.pattern)}`);
  if (node.format !== undefined) out.push(`a ${node.format}`);
  if (said(node.exclusiveMinimum)) out.push(`> ${node.exclusiveMinimum}`);
  if (said(node.minimum)) out.push(`≥ ${node.minimum}`);
  if (said(node.exclusiveMaximum)) out.push(`< ${node.exclusiveMaximum}`);
  if (said(node.maximum)) out.push(`≤ ${node.maximum}`);
  return out;
}

/** A node's type in words, with its constraints: `integer (≥ 1, ≤ 100)`, `list of string`, `"sse" or "ws"`. */
export function typeOf(node: Node): string {
  if (node.const !== undefined) return code(JSON.stringify(node.const));
  if (node.enum) return node.enum.map((value) => code(JSON.stringify(value))).join(" or ");
  const branches = node.anyOf ?? node.oneOf;
  if (branches) return branches.map(typeOf).join(" or ");
  const types = Array.isArray(node.type) ? node.type : node.type ? [node.type] : [];
  if (types.length === 0) return "any";
  const names = types.map((type) => {
    if (type === "array") {
      if (node.items?.properties) return "list of objects";
      const item = typeOf(node.items ?? {});
      return item.includes(" or ") ? `list, each ${item}` : `list of ${item}`;
    }
    if (type === "object") {
      if (node.properties) return "object";
      const value = typeof node.additionalProperties === "object" ? typeOf(node.additionalProperties) : "any";
      const key = node.propertyNames?.pattern ? `key ${code(node.propertyNames.pattern)}` : "name";
      return `map of ${key} → ${value}`;
    }
    return TYPE_NAMES[type] ?? type;
  });
  const limits = types.includes("array") || types.includes("object") ? [] : bounds(node);
  return `${names.join(" or ")}${limits.length > 0 ? ` (${limits.join(", ")})` : ""}`;
}

type Row = { path: string; node: Node; required: boolean; note?: string };

type Walk = {
  /** Nodes shown by a link instead of their fields (the same object documented elsewhere). */
  see: { json: string; note: string }[];
  /** Fields left to a section of their own. */
  skip: Map<string, string>;
};

function rows(node: Node, prefix: string, walk: Walk, out: Row[] = []): Row[] {
  const required = new Set(node.required ?? []);
  for (const [key, field] of Object.entries(node.properties ?? {})) {
    const path = `${prefix}${key}`;
    const skipped = walk.skip.get(path);
    const seen = walk.see.find((s) => s.json === JSON.stringify(field));
    const note = skipped ?? seen?.note;
    out.push({ path, node: field, required: required.has(key), ...(note ? { note } : {}) });
    if (!note) children(field, path, walk, out);
  }
  return out;
}

function children(node: Node, path: string, walk: Walk, out: Row[]): void {
  if (node.properties) rows(node, `${path}.`, walk, out);
  if (node.items) children(node.items, `${path}[]`, walk, out);
  for (const branch of node.anyOf ?? node.oneOf ?? []) children(branch, path, walk, out);
}

function description(row: Row): string {
  const parts = [row.node.description, row.node.items?.description && `Each: ${row.node.items.description}`];
  const text = cell(parts.filter(Boolean).join(" "));
  return [text, row.note].filter(Boolean).join(" ");
}

function table(list: Row[]): string {
  return [
    "| field | type | default | description |",
    "| --- | --- | --- | --- |",
    ...list.map((row) => {
      const type = `${cell(typeOf(row.node))}${row.required ? ", **required**" : ""}`;
      const fallback = row.node.default === undefined ? "" : code(JSON.stringify(row.node.default));
      return `| ${code(row.path)} | ${type} | ${cell(fallback)} | ${description(row)} |`;
    }),
  ].join("\n");
}

const HEADER = `# Agent file fields

<!-- Generated by \`npm run docs\` from the zod schemas in src/definitions (the source of
agents/agent.schema.json too); do not edit: \`npm test\` fails while this file differs from a fresh
generation. -->

Every field of an agent file (\`agents/<key>.yaml\`, one agent per file; overlays
\`agents/<key>.<stack>.yaml\` take the same fields) and of a smoke scenario, with its type, default and
description, from the schemas \`agent-iac validate\` checks files against. \`config\` is the service's
own agent configuration, field for field; the file adds the keys around it (\`kind\`,
\`postprocess_agents\`, \`protect\`, \`smoke\`) and \`prompt.file\`, which the loader replaces by the
file's text. How to write and check a file: [Agent files and stacks](agent-files.md).
`;

const SCENARIO_INTRO = `Each item of a conversational agent's \`smoke:\` list, and of \`smoke:\` in \`smoke/<key>.yaml\` for an
agent declared in TypeScript. What the gates and expectations mean: [Smoke calls](smoke.md).`;

/** docs/fields.md: one section per kind of agent file, then the smoke scenario. */
export function fieldReference(schema: Node & { oneOf: Node[] } = agentFileSchema()): string {
  const kinds = schema.oneOf;
  const withSmoke = kinds.find((kind) => kind.properties?.smoke?.items?.properties);
  const scenario = withSmoke?.properties?.smoke?.items;
  const scenarioTitle = "Smoke scenarios";
  const scenarioLink = `See [${scenarioTitle}](#${slug(scenarioTitle)}).`;
  const sections = kinds.map((kind, i) => {
    const title = kind.title ?? `Kind ${i + 1}`;
    const config = kind.properties?.config;
    const walk: Walk = { see: [], skip: new Map([["smoke", scenarioLink]]) };
    return { title, config, body: table(rows(kind, "", walk)) };
  });
  const out = [HEADER];
  out.push(...sections.map(({ title }) => `- [${title}](#${slug(title)})`));
  if (scenario) out.push(`- [${scenarioTitle}](#${slug(scenarioTitle)})`);
  out.push("");
  for (const { title, body } of sections) out.push(`## ${title}`, "", body, "");
  if (scenario && withSmoke) {
    const owner = sections[kinds.indexOf(withSmoke)];
    const ownerConfig = owner?.config;
    const see = ownerConfig
      ? [
          {
            json: JSON.stringify(ownerConfig),
            note: `The fields of ${code("config")} of a [${owner.title.toLowerCase()}](#${slug(owner.title)}).`,
          },
        ]
      : [];
    out.push(`## ${scenarioTitle}`, "", SCENARIO_INTRO, "", table(rows(scenario, "", { see, skip: new Map() })), "");
  }
  return `${out.join("\n").trimEnd()}\n`;
}
