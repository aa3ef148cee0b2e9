// The Pulumi program (Pulumi.yaml `main`): the agents program of src/component/program.ts, its
// results as the stack's outputs. Its agents stay at the stack's root where this program has always
// declared them (so upgrading replaces nothing: test/e2e/product/package-upgrade.test.ts).
import { agentsProgram } from "./component/program.ts";
import { capturePromiseStacks } from "./pulumi-seams/index.ts";

// No stack trace captured for every promise the SDK makes unless asked (AGENT_IAC_DEBUG=1): the
// seam says what it costs. This program's errors keep their stacks.
if (process.env.AGENT_IAC_DEBUG !== "1") capturePromiseStacks(false);

/** `versions` `{key: version_id}`: what smoke calls pin; `agents` `{key: {id, version_id, kind, name}}`;
 * `previous_versions` `{key: version_id}`: the version each agent held before its current one. */
// The program's own process (the CLI starts it in the project with the run's environment): a process entry.
export const { versions, agents, previous_versions } = await agentsProgram({ env: process.env });
