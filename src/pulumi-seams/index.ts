// The members of the Pulumi SDK that agent-iac uses beyond its public, typed API: each one for a
// measured saving or for a bug of the SDK's, and each named here with why. test/pulumi-seams.test.ts
// checks every member against the installed @pulumi/pulumi, with the real SDK, so an upgrade that
// changes one fails a unit test, not only an end-to-end run. This module loads nothing but the SDK:
// the Pulumi program and the dynamic provider's module load it.
import { createRequire } from "node:module";
import * as pulumi from "@pulumi/pulumi";

type Stack = pulumi.automation.Stack;
type LocalWorkspace = pulumi.automation.LocalWorkspace;

/**
 * `Resource.framePositionRegExp` (static, private in the SDK's types), which `Resource.callsites`
 * parses each stack frame with to record a resource's source position in the state. An ES module's
 * frame names a file: URL, which the SDK's regexp keeps and `stackTrace` turns into
 * `file:///<cwd>/file:/<path>`: the state then held this machine's paths. This one reads such frames
 * as paths (the SDK's regexp with an optional `file://`).
 */
export const FRAME_POSITION = /^\s*at .* \((?:file:\/\/)?(?<file>.*):(?<line>[0-9]+):(?<column>[0-9]+)\)$/;

/** Makes the SDK read a file: URL frame as a path (FRAME_POSITION), for every resource declared after. */
export function readFileUrlFrames(): void {
  (pulumi.Resource as unknown as { framePositionRegExp: RegExp }).framePositionRegExp = FRAME_POSITION;
}

/**
 * A stack of `workspace` without `pulumi stack select` (a CLI run of ~0.5–1 s, which would also
 * change the stack the user has selected): `Stack.select`'s construction runs only the workspace's
 * `selectStack(name)`, so the workspace's is made a no-op. Every later command names the stack with
 * `--stack`, and the first one says when the backend does not hold it.
 */
export function stackWithoutSelect(name: string, workspace: LocalWorkspace): Promise<Stack> {
  workspace.selectStack = async () => {};
  return pulumi.automation.Stack.select(name, workspace);
}

/**
 * `Stack.prototype.up` without the three CLI runs it makes after the update (`stack output` twice
 * and `stack history`, about 1.3 s of CPU) only to fill `outputs` and `summary`: it reads them
 * through `this.outputs()` and `this.info()`, which a view of the stack answers at once. The update
 * itself is the SDK's; the result's `outputs` and `summary` are empty.
 */
export function upWithoutReads(
  stack: Stack,
  options: pulumi.automation.UpOptions,
): Promise<pulumi.automation.UpResult> {
  const view: Stack = Object.create(stack, {
    outputs: { value: async () => ({}) },
    info: { value: async () => undefined },
  });
  return pulumi.automation.Stack.prototype.up.call(view, options);
}

/**
 * A Pulumi CLI run as the workspace's own reads make it: `LocalWorkspace.pulumiCommand.run(args,
 * cwd, env)` (internal in the SDK's types), with the workspace's CLI, directory and environment, its
 * failures as the SDK's error classes (StackNotFoundError…). For reads the Automation API makes
 * dearer (`stack export` without `--show-secrets`: src/workspace/reads.ts).
 */
export async function runPulumi(workspace: LocalWorkspace, args: string[]): Promise<{ stdout: string }> {
  const command = workspace.pulumiCommand as unknown as InternalPulumiCommand;
  const env = { ...(workspace.pulumiHome ? { PULUMI_HOME: workspace.pulumiHome } : {}), ...workspace.envVars };
  return command.run(args, workspace.workDir, env);
}

type InternalPulumiCommand = {
  run(args: string[], cwd: string, env: Record<string, string>): Promise<{ stdout: string }>;
};

// The SDK's runtime calls `debuggablePromise` through its module's exports object
// (`debuggable_1.debuggablePromise(…)`), so a wrapper set there reaches every call.
type Debuggable = { debuggablePromise: <T>(promise: Promise<T>, context: unknown) => Promise<T> };
const debuggable: Debuggable = createRequire(import.meta.url)("@pulumi/pulumi/runtime/debuggable");
const sdkDebuggablePromise = debuggable.debuggablePromise;
let captureStacks = true;

/**
 * Whether the SDK's `debuggablePromise` (internal, runtime/debuggable.js) captures a stack trace
 * for every promise it makes: it keeps `new Error().stack` only to name leaked promises, and each is
 * formatted through source-map-support. Off, its `new Error()` runs with `Error.stackTraceLimit` 0
 * and nothing else in the process loses a stack. Measured, declaring agents under the SDK's mocks
 * with source-map-support registered as its program runner does: 1,000 agents 3.9–4.1 s of CPU with
 * the stacks, 1.15 s without (as with the process-wide `Error.stackTraceLimit = 0` this replaced);
 * 100 agents 0.96 s, 0.42 s.
 */
export function capturePromiseStacks(capture: boolean): void {
  captureStacks = capture;
  if (debuggable.debuggablePromise !== sdkDebuggablePromise) return;
  debuggable.debuggablePromise = (promise, context) => {
    if (captureStacks) return sdkDebuggablePromise(promise, context);
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return sdkDebuggablePromise(promise, context);
    } finally {
      Error.stackTraceLimit = limit;
    }
  };
}
