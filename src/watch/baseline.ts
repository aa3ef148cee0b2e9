// The old versions given with `--baseline FILE`, as `smoke --compare` takes them: a versions map
// (`pulumi stack output versions --json` of the previous release: {key: version_id}), a whole
// `pulumi stack output --json` ({versions} or {agents: {key: {version_id}}}), or an agent-iac JSON
// report (its `versions`). `{}` (before a first deploy) means no old versions.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { isPinnedVersionId } from "../contract/index.ts";
import { InvalidInputError } from "../errors/index.ts";

/** Key → version id from the parsed JSON of a versions file; undefined when it holds none. */
export function versionsIn(json: unknown): Record<string, string> | undefined {
  if (!json || typeof json !== "object" || Array.isArray(json)) return undefined;
  const object = json as Record<string, unknown>;
  const direct = Object.entries(object).filter(([, v]) => isPinnedVersionId(v));
  if (direct.length > 0) return Object.fromEntries(direct) as Record<string, string>;
  const nested = versionsIn(object.versions);
  if (nested) return nested;
  const agents = object.agents;
  if (agents && typeof agents === "object" && !Array.isArray(agents)) {
    const entries = Object.entries(agents as Record<string, unknown>).flatMap(([key, agent]) => {
      const id = (agent as { version_id?: unknown } | null)?.version_id;
      return isPinnedVersionId(id) ? [[key, id] as const] : [];
    });
    if (entries.length > 0) return Object.fromEntries(entries);
  }
  return undefined;
}

/**
 * The versions in the baseline file (named `file` in messages; a relative one read from `within`,
 * the run's project); an InvalidInputError (field `baseline`) when it holds none.
 */
export async function readVersionsFile(file: string, within: string): Promise<Record<string, string>> {
  const invalid = (problem: string, hint?: string) =>
    new InvalidInputError((name) => `${name("baseline")} ${file}: ${problem}`, {
      field: "baseline",
      value: file,
      hint,
    });
  const text = await readFile(path.resolve(within, file), "utf8").catch((error: NodeJS.ErrnoException) => {
    throw invalid(`cannot read it (${error.code ?? error.message})`);
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw invalid(`not JSON (${(error as Error).message})`);
  }
  // `{}`: the stack had no outputs before its first deploy; no old versions then.
  if (json && typeof json === "object" && !Array.isArray(json) && Object.keys(json).length === 0) return {};
  const versions = versionsIn(json);
  if (!versions) {
    throw invalid(
      "no version ids in it",
      'expected {"<key>": "ca_x@vN", …} (pulumi stack output versions --json), a stack output, or an agent-iac JSON report',
    );
  }
  return versions;
}
