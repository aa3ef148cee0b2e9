// The stack's state read for less than the Automation API's `exportStack`: a CLI run that shows
// secrets stretches the passphrase with 1,000,000 rounds of PBKDF2 (about 0.25 s of CPU on top of
// the 0.3 s every run of the 115 MB binary costs), and the state is read by every command that
// opens a stack.
import type * as pulumi from "@pulumi/pulumi";
import { runPulumi } from "../pulumi-seams/index.ts";

type Stack = pulumi.automation.Stack;

/**
 * `pulumi stack export` without `--show-secrets` (the Automation API's `exportStack` always shows
 * them): secret values stay wrapped and encrypted, so the CLI needs no passphrase to print the state.
 */
export async function exportState(stack: Stack): Promise<pulumi.automation.Deployment> {
  const workspace = stack.workspace as pulumi.automation.LocalWorkspace;
  // The run every Automation API read goes through: the same CLI, environment and directory, and
  // its failures as the same error classes.
  const result = await runPulumi(workspace, ["stack", "export", "--stack", stack.name]);
  return JSON.parse(result.stdout);
}
