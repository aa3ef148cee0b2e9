// `try --promote NAME`: the variant written into the agent file's `config`, keeping the file's
// comments and layout (the yaml library's Document API edits only the nodes the variant names), and
// the unified diff of the change (the `diff` library), so the pull request that follows carries
// exactly what was tried. A prompt is replaced whole, as it was tried; a `variants:` entry that is
// promoted leaves `variants:`.
import { createTwoFilesPatch, diffArrays } from "diff";
import { isMap, parseDocument } from "yaml";

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Each path the partial sets (objects walked key by key; a prompt, an array or a scalar set whole). */
function leaves(value: Json, at: string[] = []): { path: string[]; value: unknown }[] {
  return Object.entries(value).flatMap(([key, v]) =>
    isRecord(v) && key !== "prompt" ? leaves(v, [...at, key]) : [{ path: [...at, key], value: v }],
  );
}

/**
 * The agent file's text with `partial` (as written in the variant, a prompt `file` already relative
 * to the agent file) set under `config`, and the variant `entry` (when it came from `variants:`)
 * removed. Throws when the file is not a YAML mapping (validation would have refused it).
 */
export function promoteText(text: string, partial: Json, entry?: string): string {
  const doc = parseDocument(text);
  if (!isMap(doc.contents)) throw new Error("the agent file is not a mapping");
  for (const leaf of leaves(partial)) {
    const at = ["config", ...leaf.path];
    // A scalar keeps its node (and the comment beside it); anything else is a new node.
    doc.setIn(at, isRecord(leaf.value) || Array.isArray(leaf.value) ? doc.createNode(leaf.value) : leaf.value);
  }
  if (entry !== undefined) {
    doc.deleteIn(["variants", entry]);
    const rest = doc.getIn(["variants"]);
    if (isMap(rest) && rest.items.length === 0) doc.deleteIn(["variants"]);
  }
  return keepLayout(text, doc.toString({ flowCollectionPadding: false }));
}

/** A line without the spaces just inside flow brackets, the one thing the library re-lays out. */
const unpadded = (line: string) => line.replace(/([[{])\s+/g, "$1").replace(/\s+([\]}])/g, "$1");

/**
 * The rendered text with every line the edit did not change taken back from the source as written:
 * the library writes flow collections with one padding style, the file may use another.
 */
function keepLayout(source: string, rendered: string): string {
  const [before, after] = [source.split("\n"), rendered.split("\n")];
  const out: string[] = [];
  let [i, j] = [0, 0];
  for (const part of diffArrays(before.map(unpadded), after.map(unpadded))) {
    const n = part.value.length;
    if (part.added) out.push(...after.slice(j, j + n));
    else if (!part.removed) out.push(...before.slice(i, i + n));
    if (!part.added) i += n;
    if (!part.removed) j += n;
  }
  return out.join("\n");
}

/**
 * Why `--promote NAME` writes nothing, or undefined when it may: only a variant that was tried and
 * decided no worse or better is promoted (worse, inconclusive, still undecided at an interruption,
 * or one never tried is not).
 */
export function promotionRefusal(name: string, verdict: string | undefined): string | undefined {
  if (verdict === undefined) return `--promote ${name}: no such variant was tried`;
  if (verdict === "no_worse" || verdict === "better") return undefined;
  return `--promote ${name}: not written, its verdict is ${verdict.replace("_", " ")} (only a variant decided no worse or better is promoted)`;
}

/** The unified diff of the agent file before and after. */
export function promoteDiff(file: string, before: string, after: string): string {
  return createTwoFilesPatch(file, file, before, after, "", "", { context: 3 });
}
