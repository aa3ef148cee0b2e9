// The one error model: src/cli.ts maps a CliError to its exit code, a usage error to 2, and anything
// unexpected to 3 as "a bug" (its stack only under --debug / AGENT_IAC_DEBUG=1).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./helpers/cli.ts";

describe("agent-iac error handling", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-cli-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  // A real TypeError inside a command: a preloaded module makes `validate`'s closing line throw one.
  const withBug = async () => {
    const preload = path.join(dir, "bug.mjs");
    await writeFile(
      preload,
      "const write = process.stdout.write.bind(process.stdout);\n" +
        "process.stdout.write = (chunk, ...rest) => {\n" +
        '  if (String(chunk).includes(" OK")) throw new TypeError("x.map is not a function");\n' +
        "  return write(chunk, ...rest);\n};\n",
    );
    return { ...process.env, NODE_OPTIONS: `--import=${preload}` };
  };

  it("reports an unexpected TypeError as a bug: exit 3, no stack without --debug", async () => {
    const result = await runCli(["validate"], { env: await withBug() });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("this is a bug: TypeError: x.map is not a function");
    expect(result.stderr).toContain("--debug");
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it("prints the stack of a bug under --debug and under AGENT_IAC_DEBUG=1", async () => {
    const env = await withBug();
    const flagged = await runCli(["validate", "--debug"], { env });
    expect(flagged.code).toBe(3);
    expect(flagged.stderr).toMatch(/^\s+at /m);
    const viaEnv = await runCli(["validate"], {
      env: { ...env, AGENT_IAC_DEBUG: "1" },
    });
    expect(viaEnv.code).toBe(3);
    expect(viaEnv.stderr).toMatch(/^\s+at /m);
  });

  it("exits 2 on a usage error with the usage, and 0 on --help", async () => {
    const bad = await runCli(["validate", "--frobnicate"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^agent-iac validate: unknown option --frobnicate\n/);
    expect(bad.stderr).toContain("usage: agent-iac validate");
    const extra = await runCli(["schema", "surplus"]);
    expect(extra.code).toBe(2);
    const help = await runCli(["smoke", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--version-id ID");
    expect(help.stdout).toContain("--stack NAME");
  });
});
