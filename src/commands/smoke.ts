// `agent-iac smoke`: smoke test calls against the stack's pinned version ids.
import { formatDiagnostic } from "../definitions/index.ts";
import { type AgentOutput, runSmoke, UsageError } from "../smoke/index.ts";
import { ToolchainError } from "../workspace/index.ts";
import { parseCommand, usageError } from "./args.ts";
import { existingStack, MissingStack } from "./stack.ts";

const HELP = `usage: agent-iac smoke [options]

Places a test call for each smoke scenario of the conversational agents in agents/, against the
version ids in the stack's outputs (ca_x@vN), follows each call's event stream and checks what
the agent said and did.

options:
  --stack NAME          the stack whose outputs pin the versions (default: dev)
  --agent KEY           only this agent (repeatable)
  --scenario NAME       only this scenario (repeatable)
  --version-id ID       call this version instead of the stack's (with one --agent)
  --concurrency N       calls at a time (default: 4)
  --junit FILE          write a JUnit XML report
  --json FILE           write a JSON report (transcripts, tool calls, procedures, timings)
  --live                allow scenarios with livemode: true (calls are test calls otherwise)
  --allow-unpinned      allow a bare agent id (the released version) instead of ca_x@vN

connection: the stack's agents:baseUrl (else AGENT_IAC_BASE_URL); the API key from
the stack's secret agents:apiKey (else AGENT_IAC_API_KEY), as the provider reads them.

exit codes: 0 all passed, 1 an expectation failed, 2 usage or configuration error
(unknown agent or scenario, no stack outputs, invalid agent files), 3 a call could not
complete (service unreachable, stream failed after its retries, timeout).
`;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand("smoke", HELP, argv, {
    stack: { type: "string", default: "dev" },
    agent: { type: "string", multiple: true },
    scenario: { type: "string", multiple: true },
    "version-id": { type: "string" },
    concurrency: { type: "string", default: "4" },
    junit: { type: "string" },
    json: { type: "string" },
    live: { type: "boolean", default: false },
    "allow-unpinned": { type: "boolean", default: false },
  });
  if ("exitCode" in parsed) return parsed.exitCode;
  const { values } = parsed;
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    return usageError("smoke", HELP, "--concurrency must be a positive whole number").exitCode;
  }

  try {
    const { stack, config, agents, errors } = await existingStack(values.stack);
    if (errors.length > 0) {
      for (const error of errors) process.stderr.write(`${formatDiagnostic(error)}\n`);
      return 2;
    }
    const outputs = (await stack.outputs()).agents?.value as Record<string, AgentOutput> | undefined;
    if (!outputs && values["version-id"] === undefined) {
      throw new UsageError(`stack "${values.stack}" has no outputs: run \`pulumi up\` (or \`npm start\`) first`);
    }
    const baseUrl = config["agents:baseUrl"]?.value || process.env.AGENT_IAC_BASE_URL;
    const apiKey = config["agents:apiKey"]?.value || process.env.AGENT_IAC_API_KEY;
    if (!baseUrl) throw new UsageError("no service address: set agents:baseUrl on the stack or AGENT_IAC_BASE_URL");
    if (!apiKey) throw new UsageError("no API key: set the stack's secret agents:apiKey or AGENT_IAC_API_KEY");

    const { exitCode } = await runSmoke({
      definitions: agents,
      outputs,
      selection: {
        agents: values.agent,
        scenarios: values.scenario,
        versionId: values["version-id"],
        allowUnpinned: values["allow-unpinned"],
        live: values.live,
      },
      connection: { baseUrl, apiKey, serviceVersion: config["agents:serviceVersion"]?.value },
      concurrency,
      junitFile: values.junit,
      jsonFile: values.json,
      out: process.stdout,
    });
    return exitCode;
  } catch (error) {
    if (error instanceof UsageError || error instanceof MissingStack) {
      process.stderr.write(`agent-iac smoke: ${error.message}\n`);
      return 2;
    }
    if (error instanceof ToolchainError) {
      process.stderr.write(`agent-iac smoke: ${error.message}\n`);
      return error.exitCode;
    }
    process.stderr.write(`agent-iac smoke: ${error instanceof Error ? error.message : String(error)}\n`);
    return 3;
  }
}
