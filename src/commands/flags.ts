// The flags several commands share, declared once: the report files of each report kind (with the
// format each writes), the judge's cache, the connection and the traffic window.
import path from "node:path";
import { parseArgs } from "node:util";
import { type ReportFiles, reportPath } from "../report/index.ts";
import { GUARDED_KEYS, JUDGE_CACHE_DIR } from "../settings/index.ts";
import { type Flag, STACK_FLAG } from "./args.ts";

type FileFlag = Flag & { type: "string"; format: keyof ReportFiles };

/** smoke, replay, report merge: a run's report. */
export const RUN_REPORT_FLAGS = {
  junit: { type: "string", arg: "FILE", format: "junit", help: "write a JUnit XML report" },
  json: {
    type: "string",
    arg: "FILE",
    format: "json",
    help: "write a JSON report (transcripts, tool calls, procedures, timings)",
  },
  html: {
    type: "string",
    arg: "FILE",
    format: "html",
    help: "write a self-contained HTML report (open it in a browser)",
  },
} as const satisfies Record<string, FileFlag>;

/** A Markdown report, the job summary's text. */
const MARKDOWN_REPORT_FLAG = {
  type: "string",
  arg: "FILE",
  format: "markdown",
  help: "write a Markdown report (e.g. for a job summary)",
} as const satisfies FileFlag;

/** watch and audit. */
export const TRAFFIC_REPORT_FLAGS = {
  json: {
    type: "string",
    arg: "FILE",
    format: "json",
    help: "write the JSON report (agent-iac-report, kind watch/audit)",
  },
  markdown: MARKDOWN_REPORT_FLAG,
} as const satisfies Record<string, FileFlag>;

/** try: its report (kind try). */
export const TRY_REPORT_FLAGS = {
  json: { type: "string", arg: "FILE", format: "json", help: "write the JSON report (kind try)" },
  html: {
    type: "string",
    arg: "FILE",
    format: "html",
    help: "write a self-contained HTML report (one column per side, the calls side by side)",
  },
  markdown: MARKDOWN_REPORT_FLAG,
} as const satisfies Record<string, FileFlag>;

/** plan (the behaviour preview's files need --behave). */
export const PLAN_REPORT_FLAGS = {
  markdown: { type: "string", arg: "FILE", format: "markdown", help: "write the Markdown plan to FILE" },
  json: { type: "string", arg: "FILE", format: "json", help: "write the JSON plan to FILE" },
  "behave-report": {
    type: "string",
    arg: "FILE",
    format: "behave_json",
    help: "with --behave: write its calls as a JSON report (kind behave)",
  },
  html: {
    type: "string",
    arg: "FILE",
    format: "html",
    help: "with --behave: write its calls as a self-contained HTML report",
  },
} as const satisfies Record<string, FileFlag>;

/** The files the flags ask for, by format. */
export function reportFiles(flags: Record<string, FileFlag>, values: Record<string, unknown>): ReportFiles {
  const files: ReportFiles = {};
  for (const [name, flag] of Object.entries(flags)) {
    const file = values[name];
    if (typeof file === "string" && file !== "") files[flag.format] = file;
  }
  return files;
}

/** The smoke reports of \`start\` (without --no-smoke), always rewritten by the run. */
export const START_REPORTS = { junit: "smoke.junit.xml", json: "smoke.json", html: "smoke.html" } as const;

/**
 * The report files (as written: a bare name under reports/) that \`argv\` asks a command for, read
 * before the command runs so that no earlier run's file outlives the run's first moment (see
 * CommandIO.claimReports). \`--help\` asks for none; a file also read by the run (a \`--compare\`
 * report, a report to merge) is an input, never claimed: inputs and reports are compared as paths in
 * the run's directory (\`inputs.cwd\`). The command's own parser decides later
 * whether the flags are valid: a refused run has still cleared the files it was asked for.
 */
export function askedReportFiles(
  flags: Record<string, FileFlag>,
  argv: readonly string[],
  inputs?: { flags?: readonly string[]; positionals?: boolean; cwd: string },
): string[] {
  const options = Object.fromEntries(
    [...Object.keys(flags), ...(inputs?.flags ?? [])].map((name) => [
      name,
      { type: "string" as const, multiple: true },
    ]),
  );
  const { values, positionals } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true });
  if (argv.some((arg) => arg === "--help" || arg === "-h")) return [];
  const strings = (name: string) => {
    const value = values[name];
    return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === "string" && v !== "");
  };
  const at = (file: string) => path.resolve(inputs?.cwd ?? ".", file);
  const read = new Set(
    [...(inputs?.flags ?? []).flatMap(strings), ...(inputs?.positionals ? positionals : [])].map(at),
  );
  const files = Object.keys(flags).flatMap((name) => strings(name).map(reportPath));
  return [...new Set(files)].filter((file) => !read.has(at(file)));
}

/** `start`'s reports (none with --no-smoke or --help), claimed like the others. */
export function startReportFiles(argv: readonly string[]): string[] {
  const none = argv.some((arg) => arg === "--no-smoke" || arg === "--help" || arg === "-h");
  return none ? [] : Object.values(START_REPORTS).map(reportPath);
}

/** Every command that runs scenarios takes these for the judge. */
export const JUDGE_FLAGS = {
  "no-judge-cache": {
    type: "boolean",
    default: false,
    help: "ask the judge again for every vote (the cache is not read; new answers are still stored)",
  },
  "judge-cache": {
    type: "string",
    arg: "DIR",
    help: `where judge votes and the last \`judge check\` results are kept (default: ${JUDGE_CACHE_DIR})`,
  },
} as const satisfies Record<string, Flag>;

export const JUDGE_HELP = `judge: scenarios with expect.judge send each call's transcript to the judge endpoint the stack
names (agents:judgeBaseUrl, agents:judgeModel, the secret agents:judgeApiKey; else
AGENT_IAC_JUDGE_BASE_URL, AGENT_IAC_JUDGE_MODEL, AGENT_IAC_JUDGE_API_KEY) — nothing judges by default.`;

/** The judge cache as the flags ask for it. */
export const judgeCache = (values: { "no-judge-cache"?: boolean | undefined; "judge-cache"?: string | undefined }) => ({
  dir: values["judge-cache"],
  read: !values["no-judge-cache"],
});

export const CONNECTION_FLAGS = {
  stack: STACK_FLAG,
  "base-url": { type: "string", arg: "URL", help: "the service address, instead of the stack's" },
} as const satisfies Record<string, Flag>;

export const CONNECTION_HELP = `connection: the stack's agents:baseUrl and agents:apiKey, else AGENT_IAC_BASE_URL and
AGENT_IAC_API_KEY; on a loopback address (the dev stack), the local dev key. The key is never a flag.

exit codes: 0 done, 2 usage or configuration error (also a refused key, 400 or 404 from the
service), 3 service unreachable, failing, or the stream failed.`;

/** watch and audit: the window of traffic read. */
export const WINDOW_FLAGS = {
  since: {
    type: "string",
    arg: "DURATION",
    help: "calls created in the last DURATION (30m, 24h, 7d, 1h30m; default 24h)",
  },
  from: { type: "string", arg: "T", help: "calls created at or after T (ISO 8601), instead of --since" },
  to: { type: "string", arg: "T", help: "… and before T (default: now)" },
} as const satisfies Record<string, Flag>;

/**
 * The settings a pull request's plan reads from its base, never its head (where the keys and the
 * transcripts go, what the caller sends, what code the preview runs), as plan's help lists them.
 */
export const READ_FROM_BASE_HELP = GUARDED_KEYS.join(", ");
