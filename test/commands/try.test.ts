// `agent-iac try`'s flags and messages, in-process: usage errors exit 2 before any stack is read.
import { describe, expect, it } from "vitest";
import { runInProcess } from "../helpers/cli.ts";

describe("agent-iac try: usage", () => {
  it("needs an agent and at least one --variant", async () => {
    const none = await runInProcess(["try", "booking"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("name at least one --variant NAME=FILE or --variant NAME");
    const noAgent = await runInProcess(["try", "--variant", "a=a.yaml"]);
    expect(noAgent.code).toBe(2);
  });

  it("refuses a variant name that is not a key, and a --fail-on it does not know", async () => {
    const bad = await runInProcess(["try", "booking", "--variant", "Warm Words=warm.yaml"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("NAME must be lowercase letters, digits and single dashes");
    const failOn = await runInProcess(["try", "booking", "--variant", "a=a.yaml", "--fail-on", "failure"]);
    expect(failOn.code).toBe(2);
  });

  it("says in its help what cannot be tried and its exit codes", async () => {
    const help = await runInProcess(["try", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("removing a field or section");
    expect(help.stdout).toContain("--promote NAME");
  });
});
