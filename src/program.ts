// The Pulumi program (Pulumi.yaml `main`): the agents program of src/component/program.ts, its
// results as the stack's outputs. Its agents stay at the stack's root where this program has always
// declared them (so upgrading replaces nothing: test/package.upgrade.test.ts).
import { agentsProgram } from "./component/program.ts";

// The SDK captures a stack trace for every promise it makes (kept only to name leaked promises) and
// formats each through source-map-support: at 1,000 agents that was 1.5 s of the program's 5.3 s of
// CPU and about 2 s of an 11 s one-agent change. This program's errors reach the user without
// stacks anyway (src/workspace/output.ts), so it captures none unless asked (AGENT_IAC_DEBUG=1).
if (process.env.AGENT_IAC_DEBUG !== "1") Error.stackTraceLimit = 0;

/** `versions` `{key: version_id}`: what smoke calls pin; `agents` `{key: {id, version_id, kind, name}}`;
 * `previous_versions` `{key: version_id}`: the version each agent held before its current one. */
// The program's own process (the CLI starts it in the project with the run's environment): a process entry.
export const { versions, agents, previous_versions } = await agentsProgram({ env: process.env });
