// `agent-iac smoke`: smoke test calls against the version ids the stack holds.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { formatDiagnostic } from "../definitions/index.ts";
import { CliError } from "../errors/index.ts";
import { requireConnection } from "../settings/index.ts";
import { runSmoke } from "../smoke/index.ts";
import { parseCommand, positiveInteger, STACK_FLAG } from "./args.ts";
import { checkAccess, connectClient, printRetry, unknownVersionsNote } from "./connect.ts";
import { existingStack, pulumiFailure, reportPath, stackAgents, staleOutputsNote } from "./stack.ts";

const SPEC = {
  name: "smoke",
  about: `Places a test call for each smoke scenario of the conversational agents in agents/, against the
version ids the stack holds (ca_x@vN: from its state, which after a failed or interrupted update
differs from its outputs; smoke says so), follows each call's event stream and checks what the
agent said and did. A bare report file name is written under reports/.`,
  flags: {
    stack: STACK_FLAG,
    agent: { type: "string", multiple: true, arg: "KEY", help: "only this agent" },
    scenario: { type: "string", multiple: true, arg: "NAME", help: "only this scenario" },
    "version-id": { type: "string", arg: "ID", help: "call this version instead of the stack's (with one --agent)" },
    concurrency: { type: "string", default: "4", arg: "N", help: "calls at a time (default: 4)" },
    junit: { type: "string", arg: "FILE", help: "write a JUnit XML report" },
    json: { type: "string", arg: "FILE", help: "write a JSON report (transcripts, tool calls, procedures, timings)" },
    live: {
      type: "boolean",
      default: false,
      help: "allow scenarios with livemode: true (calls are test calls otherwise)",
    },
    "allow-unpinned": { type: "boolean", default: false, help: "allow a bare agent id (the released version)" },
  },
  footer: `connection: the stack's agents:baseUrl (else AGENT_IAC_BASE_URL); the API key from the stack's
secret agents:apiKey (else AGENT_IAC_API_KEY; on a loopback address, the local dev key).
Each retried request is said on stderr.

exit codes: 0 all passed, 1 an expectation failed, 2 usage or configuration error
(unknown agent or scenario, nothing deployed, invalid agent files, a refused API key), 3 a call
could not complete (service unreachable, stream failed after its retries, timeout), 130 interrupted
(the reports still list every planned call).`,
} as const;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand(SPEC, argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const concurrency = positiveInteger("concurrency", values.concurrency) ?? 4;
  const { stack, agents, errors, connection } = await existingStack(values.stack, "reading the stack failed");
  if (errors.length > 0) {
    for (const error of errors) process.stderr.write(`${formatDiagnostic(error)}\n`);
    throw new CliError(`${errors.length} error(s) in the agent files`, 2);
  }
  const held = await stackAgents(stack).catch((error: unknown) => {
    throw pulumiFailure("reading the stack's state failed", error);
  });
  if (Object.keys(held.agents).length === 0 && values["version-id"] === undefined) {
    throw new CliError(`stack "${values.stack}" holds no agents: run \`pulumi up\` (or \`npm start\`) first`, 2);
  }
  if (held.stale.length > 0) process.stderr.write(staleOutputsNote(values.stack, held.stale));
  const resolved = requireConnection(connection, values.stack);
  const client = connectClient(resolved);
  try {
    await checkAccess(client, connection);
  } finally {
    await client.close();
  }
  const files = { junit: values.junit && reportPath(values.junit), json: values.json && reportPath(values.json) };
  for (const file of [files.junit, files.json])
    if (file) await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  // Ctrl+C (or SIGTERM) stops the calls: those in flight end as interrupted, the rest as not run,
  // and the reports are still written with every planned call.
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`\n${signal}: stopping the calls; the reports keep what finished\n`);
    stop.abort(new Error(`interrupted by ${signal}`));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const { results, exitCode } = await runSmoke({
    definitions: agents,
    outputs: held.agents,
    selection: {
      agents: values.agent,
      scenarios: values.scenario,
      versionId: values["version-id"],
      allowUnpinned: values["allow-unpinned"],
      live: values.live,
    },
    connection: { ...resolved, onRetry: printRetry },
    concurrency,
    ...(files.junit ? { junitFile: files.junit } : {}),
    ...(files.json ? { jsonFile: files.json } : {}),
    out: process.stdout,
    signal: stop.signal,
  }).finally(() => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  });
  if (stop.signal.aborted) return 130;
  process.stderr.write(unknownVersionsNote(results, held.agents, values.stack));
  return exitCode;
}
