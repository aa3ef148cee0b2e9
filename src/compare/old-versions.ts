// The versions to compare against (`smoke --compare OLD`): the stack's `versions` output saved
// before a deploy (`pulumi stack output versions --json`: `{key: version_id}`), or a previous smoke
// JSON report (read tolerantly: the versions its calls were pinned to).
import { readFile } from "node:fs/promises";
import { CliError } from "../errors/index.ts";
import { REPORT_FORMAT, reportSchema } from "../report/index.ts";

export type OldVersions = { versions: Record<string, string>; source: "outputs" | "report" };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Reads OLD; exit 2 with the file's name when it is neither shape. An empty file or `{}` is a first deploy. */
export async function readOldVersions(file: string): Promise<OldVersions> {
  const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new CliError(`--compare ${file}: cannot read it (${error.code ?? error.message})`, 2);
  });
  return parseOldVersions(text, file);
}

export function parseOldVersions(text: string, file: string): OldVersions {
  if (text.trim() === "" || text.trim() === "null") return { versions: {}, source: "outputs" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`--compare ${file}: not JSON (${(error as Error).message})`, 2, {
      hint: "pass the output of `pulumi stack output versions --json` or a smoke JSON report (--json)",
    });
  }
  if (isObject(value) && (value.format === REPORT_FORMAT || Array.isArray(value.results))) {
    const report = reportSchema.safeParse(value);
    if (!report.success) throw new CliError(`--compare ${file}: not a readable smoke report`, 2);
    // The new side of any earlier report: what those calls were pinned to.
    const versions: Record<string, string> = { ...report.data.versions };
    for (const result of report.data.results) {
      if (result.side === "new" && !(result.agent in versions)) versions[result.agent] = result.version_id;
    }
    return { versions, source: "report" };
  }
  if (isObject(value) && Object.values(value).every((v) => typeof v === "string")) {
    return { versions: value as Record<string, string>, source: "outputs" };
  }
  throw new CliError(`--compare ${file}: neither a versions output ({"agent": "ca_x@vN"}) nor a smoke report`, 2, {
    hint: "pass the output of `pulumi stack output versions --json` or a smoke JSON report (--json)",
  });
}
