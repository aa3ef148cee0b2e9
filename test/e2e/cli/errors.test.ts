// The one error model: the domain throws typed errors with a stable code (src/errors); the command
// layer alone maps each code to an exit code and each field to its flag (src/commands/errors.ts);
// src/cli.ts says them, and anything unexpected as "a bug", exit 3 (its stack only under --debug /
// AGENT_IAC_DEBUG=1). The service client's ApiError family has codes of its own, mapped there too.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cliOutcome,
  EXIT_CODES,
  exitCodeOf,
  FLAGS,
  flagNaming,
  type KnownError,
} from "../../../src/commands/errors.ts";
import { loadAgents } from "../../../src/definitions/index.ts";
import {
  AgentIacError,
  API_ERROR_CODES,
  ApiError,
  AuthenticationError,
  BackendError,
  CliError,
  ConfigError,
  ConnectionError,
  ERROR_CODES,
  INPUT_FIELDS,
  InterruptedError,
  InvalidFilesError,
  InvalidInputError,
  InvalidRequestError,
  InvalidResponseError,
  IoError,
  ModelAnswerError,
  NotFoundError,
  plainNaming,
  RateLimitError,
  ServerError,
  ServiceError,
  StackLockedError,
  StackNotFoundError,
  TimeoutError,
} from "../../../src/errors/index.ts";
import { LabelledFileError } from "../../../src/judge/index.ts";
import { PolicyConfigError } from "../../../src/policy/index.ts";
import { readReport } from "../../../src/results/index.ts";
import { planCalls, RecordingError } from "../../../src/smoke/index.ts";
import { projectRoot } from "../../../src/workspace/index.ts";
import { runCli, runInProcess } from "../../helpers/cli.ts";

const api = { message: "GET /conversations → 401", method: "GET", path: "/conversations" };

describe("the mapping from the error model to the CLI", () => {
  it("gives every code, the service client's too, one of the README's exit codes", () => {
    const codes = [...ERROR_CODES, ...API_ERROR_CODES];
    expect(Object.keys(EXIT_CODES).sort()).toEqual([...codes].sort());
    for (const code of codes) expect([1, 2, 3, 130]).toContain(EXIT_CODES[code]);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^AGENT_IAC_[A-Z_]+$/);
  });

  it("has one root: the service client's errors are AgentIacErrors too", () => {
    const refused = new AuthenticationError(api);
    expect(refused).toBeInstanceOf(AgentIacError);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused.name).toBe("AuthenticationError");
    expect(refused.code).toBe("AGENT_IAC_API_AUTHENTICATION");
  });

  it("maps each category, and the folders' own error classes, to the README's exit code", () => {
    const cases: [KnownError, string, number][] = [
      [new InvalidInputError("x"), "AGENT_IAC_INVALID_INPUT", 2],
      [new ConfigError("x"), "AGENT_IAC_CONFIG", 2],
      // Invalid agent or scenario files are a failed check, from every command.
      [
        new InvalidFilesError("1 error(s) in the agent files", "agents/a.yaml:1:1: name: required"),
        "AGENT_IAC_INVALID_FILES",
        1,
      ],
      [new StackNotFoundError("prod"), "AGENT_IAC_STACK_NOT_FOUND", 2],
      [new StackLockedError("prod", "x"), "AGENT_IAC_STACK_LOCKED", 3],
      [new BackendError("x"), "AGENT_IAC_BACKEND", 3],
      [new IoError("x"), "AGENT_IAC_IO", 3],
      [new ModelAnswerError("x"), "AGENT_IAC_MODEL_ANSWER", 3],
      [new InterruptedError("SIGINT", "x"), "AGENT_IAC_INTERRUPTED", 130],
      [new PolicyConfigError("x"), "AGENT_IAC_CONFIG", 2],
      [new LabelledFileError("l.yaml", ["l.yaml:1: items: required"]), "AGENT_IAC_INVALID_INPUT", 2],
      [new RecordingError(new Error("EACCES")), "AGENT_IAC_IO", 3],
      [new ServiceError("x"), "AGENT_IAC_SERVICE", 3],
      // A usage error is the one thing a command throws of its own, and it carries no exit code.
      [new CliError("x"), "AGENT_IAC_USAGE", 2],
      // The service's answers: a refused key or request, an unknown id are the caller's to change.
      [new ApiError(api), "AGENT_IAC_API", 3],
      [new AuthenticationError(api), "AGENT_IAC_API_AUTHENTICATION", 2],
      [new NotFoundError(api), "AGENT_IAC_API_NOT_FOUND", 2],
      [new InvalidRequestError(api), "AGENT_IAC_API_INVALID_REQUEST", 2],
      [new RateLimitError(api), "AGENT_IAC_API_RATE_LIMIT", 3],
      [new ServerError(api), "AGENT_IAC_API_SERVER", 3],
      [new InvalidResponseError(api), "AGENT_IAC_API_INVALID_RESPONSE", 3],
      [new ConnectionError({ ...api, requestSent: false }), "AGENT_IAC_API_CONNECTION", 3],
      [new TimeoutError({ ...api, requestSent: true }), "AGENT_IAC_API_TIMEOUT", 3],
    ];
    for (const [error, code, exitCode] of cases) {
      expect({ name: error.name, code: error.code, exitCode: exitCodeOf(error) }).toEqual({
        name: error.name,
        code,
        exitCode,
      });
    }
    // Every code is covered above.
    expect(new Set(cases.map(([, code]) => code))).toEqual(new Set([...ERROR_CODES, ...API_ERROR_CODES]));
  });

  it("explains the service's errors in the terms of the run's connection, whatever the command", () => {
    const connection = {
      baseUrl: "http://127.0.0.1:1",
      apiKey: "sk-x",
      serviceVersion: undefined,
      keySource: "AGENT_IAC_API_KEY",
      loopback: true,
    } as const;
    expect(cliOutcome(new AuthenticationError(api), {}, connection)).toMatchObject({
      exitCode: 2,
      message: "the service refused the API key from AGENT_IAC_API_KEY: GET /conversations → 401",
      hint: "check the stack's secret agents:apiKey or AGENT_IAC_API_KEY",
    });
    const refused = new ConnectionError({ ...api, requestSent: false, networkCode: "ECONNREFUSED" });
    expect(cliOutcome(refused, {}, connection)).toMatchObject({
      exitCode: 3,
      message: "nothing answers at http://127.0.0.1:1 (ECONNREFUSED)",
      hint: expect.stringContaining("npm run service"),
    });
    // Without a connection: the service's words.
    expect(cliOutcome(new AuthenticationError(api), {})).toEqual({
      exitCode: 2,
      message: api.message,
      hint: undefined,
    });
  });

  it("reads a report merge's input as input: a file that is not a report is an InvalidInputError (exit 2)", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "read-report-"));
    try {
      const notJson = path.join(dir, "a.json");
      await writeFile(notJson, "{");
      for (const file of [notJson, path.join(dir, "missing.json")]) {
        const error = await readReport(file, dir).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidInputError);
        expect(exitCodeOf(error as InvalidInputError)).toBe(2);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("words every field as a distinct flag of the commands", () => {
    expect(Object.keys(FLAGS).sort()).toEqual([...INPUT_FIELDS].sort());
    for (const field of INPUT_FIELDS) expect(FLAGS[field]).toMatch(/^--[a-z][a-z-]*$/);
    expect(new Set(Object.values(FLAGS)).size).toBe(INPUT_FIELDS.length);
    expect(flagNaming("oldVersions")).toBe("--compare");
    expect(flagNaming("versionId")).toBe("--version-id");
  });

  it("says a domain error's fields as flags in the message and the hint; the domain's own message names the fields", () => {
    const error = new InvalidInputError(
      (name) => `${name("versionId")} pins one agent: select it with ${name("agent")} KEY`,
      {
        field: "versionId",
        value: "ca_x@v2",
        hint: (name) => `or drop ${name("versionId")}`,
      },
    );
    expect(error.message).toBe("versionId pins one agent: select it with agent KEY");
    expect(error.hint).toBe("or drop versionId");
    expect(error.describe(plainNaming)).toEqual({ message: error.message, hint: error.hint });
    expect(cliOutcome(error, {})).toEqual({
      exitCode: 2,
      message: "--version-id pins one agent: select it with --agent KEY",
      hint: "or drop --version-id",
    });
    expect(error).toMatchObject({ field: "versionId", value: "ca_x@v2" });
    // A plain message is said as it is.
    expect(cliOutcome(new ConfigError("no API key", { hint: "set it" }), {})).toEqual({
      exitCode: 2,
      message: "no API key",
      hint: "set it",
    });
  });

  it("a smoke selection error names the selection's fields, which the CLI says as flags", async () => {
    const { agents, errors } = await loadAgents(path.join(projectRoot, "agents"), {
      stack: "dev",
      from: process.cwd(),
    });
    expect(errors).toEqual([]);
    let thrown: unknown;
    try {
      planCalls(agents, undefined, { versionId: "ca_x@v1" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidInputError);
    expect(thrown).toMatchObject({ code: "AGENT_IAC_INVALID_INPUT", field: "versionId", value: "ca_x@v1" });
    expect(cliOutcome(thrown as InvalidInputError, {}).message).toBe(
      "--version-id pins one agent: select it with --agent KEY",
    );
  });
});

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

  it("says a domain error that reaches it with its exit code and the flag it is about", async () => {
    const bad = await runInProcess(["audit", "--since", "soon"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('agent-iac audit: --since must be a duration such as 30m, 24h, 7d or 1h30m, not "soon"\n');
    const missing = path.join(dir, "missing.json");
    const baseline = await runInProcess(["watch", "--baseline", missing]);
    expect(baseline.code).toBe(2);
    expect(baseline.stderr).toBe(`agent-iac watch: --baseline ${missing}: cannot read it (ENOENT)\n`);
  });

  it("exits 2 on a usage error with the usage, and 0 on --help", async () => {
    const bad = await runInProcess(["validate", "--frobnicate"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^agent-iac validate: unknown option --frobnicate\n/);
    expect(bad.stderr).toContain("usage: agent-iac validate");
    const extra = await runInProcess(["schema", "surplus"]);
    expect(extra.code).toBe(2);
    const help = await runInProcess(["smoke", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--version-id ID");
    expect(help.stdout).toContain("--stack NAME");
  });
});
