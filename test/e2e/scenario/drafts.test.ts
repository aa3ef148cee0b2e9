// `agent-iac scenario derive` and `scenario generate` (real Pulumi CLI, the simulator on port 0, the
// example judge behind a recording stand-in on port 0 as the model): a derived scenario validates and
// passes against the same version with a persona caller; generate covers the booking agent's tools;
// a hostile answer's unknown tool, duplicate, YAML injection and extra scenario are dropped and
// counted; personal data in the call reaches neither the model nor the output; --check sets apart
// a scenario that fails on the pinned version, with why.
import { spawn } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments, parseDocument } from "yaml";
import { type AgentsProject, addScenarios, agentsProject, deployStack } from "../../helpers/agents-project.ts";
import { CLI, runInProcess } from "../../helpers/cli.ts";
import { type DraftModel, startDraftModel } from "../../helpers/draft-model.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-test-drafts-5c2e8a71d4";
const PHONE = "+1 415 555 0199";
const EMAIL = "jane.doe@example.com";
/** An address that a cut at the line's 1,000th character would split. */
const STRADDLING = "straddle.person@example.org";
/** What must not reach the model nor the terminal of the formats the caller uses (compared lower-case). */
const FORMATTED_SECRETS = [
  "4111",
  "5500",
  "0004",
  "4012",
  "1881",
  "4222",
  "４２２２",
  "415.555",
  "4155550123",
  "1234.5678",
  "12345678",
  "3704",
  "0130",
  "de89",
  "jürgen@",
  "exämple",
  "straddle",
  "@example.org",
  "@exa",
];

/** What a terminal would act on: C0 controls but the line break, DEL, C1 and bidi overrides. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

type Drafted = {
  name: string;
  channel: { callee_no: string; caller_no?: string };
  transport: string;
  caller: { persona: string; goal: string; max_turns: number };
  override_config?: { language?: { default_language?: string } };
  expect: { tool_calls?: string[]; judge?: string[]; procedures?: Record<string, string> };
};

describe("agent-iac scenario derive and generate (real Pulumi CLI, simulator, a stand-in model)", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let model: DraftModel;
  /** The recorded call of the first test (derive reads it again). */
  let booked = "";
  const env = () => ({
    ...process.env,
    ...sandbox.env,
    AGENT_IAC_API_KEY: API_KEY,
    AGENT_IAC_CALLER_BASE_URL: model.url,
    AGENT_IAC_CALLER_MODEL: "example-judge",
    AGENT_IAC_JUDGE_BASE_URL: model.url,
    AGENT_IAC_JUDGE_MODEL: "example-judge",
    AGENT_IAC_JUDGE_CACHE_KEY: "drafts-test-cache-key",
  });
  const cli = (args: string[]) => runInProcess(args, { cwd: project.dir, env: env() });
  /** Smoke one scenario of the booking agent with --record; its conversation id. */
  const recordCall = async (scenario: string): Promise<string> => {
    const smoke = await cli([
      "smoke",
      "--stack",
      "test",
      "--agent",
      "booking",
      "--scenario",
      scenario,
      "--record",
      "recordings",
      "--json",
      `${scenario}.json`,
    ]);
    expect(smoke.code, smoke.stdout + smoke.stderr).toBe(0);
    const report = JSON.parse(await readFile(path.join(project.dir, "reports", `${scenario}.json`), "utf8"));
    return report.results[0].conversation_id;
  };
  /** `scenario derive` of a recorded call. */
  const deriveRecorded = (conversationId: string, ...extra: string[]) =>
    cli(["scenario", "derive", conversationId, "--from-recording", "recordings", "--stack", "test", ...extra]);
  const agentFile = () => path.join(project.dir, "agents", "booking.yaml");
  const addToAgentFile = async (scenarios: unknown[]) => {
    const document = parseDocument(await readFile(agentFile(), "utf8"));
    for (const scenario of scenarios) document.addIn(["smoke"], scenario);
    await writeFile(agentFile(), document.toString());
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    model = await startDraftModel();
    await deployStack(project.stack);
  });
  afterAll(async () => {
    await model?.close();
    await sim?.close();
    await project?.cleanup();
    await sandbox?.cleanup();
  });

  it("derive from a recording: a persona scenario with the call's tools, which passes against the same version", async () => {
    const conversationId = await recordCall("checks-availability-and-books");
    booked = conversationId;
    const out = await cli(["scenario", "derive", conversationId, "--from-recording", "recordings", "--stack", "test"]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(new RegExp(`^# Derived from conversation ${conversationId} \\(booking, ca_`));
    expect(out.stderr).toContain("1 proposed, 1 kept");
    const [scenario] = parse(out.stdout) as Drafted[];
    expect(scenario?.caller.persona).toBeTruthy();
    expect(scenario?.caller.goal).toBe("check availability, then book appointment");
    // The call had three caller lines: room for them and two more.
    expect(scenario?.caller.max_turns).toBe(5);
    expect(scenario?.expect.tool_calls).toEqual(["check_availability", "book_appointment"]);
    expect(scenario?.expect.judge?.length).toBeGreaterThan(0);
    // The agent's own number is the team's, not personal data: it stays, so the scenario runs as it is.
    expect(scenario?.channel).toEqual({ callee_no: "+15550142100" });

    await addToAgentFile([scenario]);
    const smoke = await cli(["smoke", "--stack", "test", "--agent", "booking", "--scenario", scenario?.name ?? ""]);
    expect(smoke.code, smoke.stdout + smoke.stderr).toBe(0);
    expect(smoke.stdout).toMatch(/1 passed, 0 failed/);
  });

  it("derive from the service's stream reads the same call; a scenario the agent file already has is dropped as a duplicate", async () => {
    const args = ["scenario", "derive", booked, "--stack", "test", "--callee-no", "+15550142100"];
    const unnamed = await cli(args);
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain("--agent KEY");
    const before = model.requests.length;
    const out = await cli([...args, "--agent", "booking"]);
    expect(model.requests.slice(before).join("\n")).toContain(
      "Tools the agent called: check_availability, book_appointment",
    );
    // The first test put this call's scenario in the agent file: the same persona and goal again is no new test.
    expect(out.code).toBe(1);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("1 proposed, 0 kept: 1 repeated an existing scenario (same persona and goal)");
  });

  it("an answer that is no list of scenarios: said, nothing printed, exit 1", async () => {
    model.answer.derive = () => "I am sorry, I cannot help with that.";
    try {
      const out = await cli(["scenario", "derive", booked, "--from-recording", "recordings", "--stack", "test"]);
      expect(out.code).toBe(1);
      expect(out.stdout).toBe("");
      expect(out.stderr).toContain("note: the model's answer was not used: the answer holds no JSON object");
      expect(out.stderr).toContain("0 proposed, 0 kept");
    } finally {
      delete model.answer.derive;
    }
  });

  it("generate for the booking agent: at least 4 valid scenarios covering both of its tools, each passing --check", async () => {
    const out = await cli(["scenario", "generate", "booking", "--stack", "test", "--count", "5", "--check"]);
    expect(out.code, out.stderr).toBe(0);
    const scenarios = parse(out.stdout) as Drafted[];
    expect(scenarios.length).toBeGreaterThanOrEqual(4);
    const tools = new Set(scenarios.flatMap((s) => s.expect.tool_calls ?? []));
    expect([...tools].sort()).toEqual(["book_appointment", "check_availability"]);
    expect(scenarios.some((s) => s.override_config?.language?.default_language === "Spanish")).toBe(true);
    expect(out.stderr).toContain(`5 proposed, ${scenarios.length} kept`);
    // Each scenario whole, as a person would paste it: no anchors or aliases between them.
    expect(out.stdout).not.toMatch(/[&*]a\d/);
    // Valid where they are meant to go: the agent file with all of them validates.
    await addToAgentFile(scenarios);
    const validate = await cli(["validate", "--stack", "test"]);
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
  });

  it("a hostile answer: an unknown tool, a duplicate, YAML injection and an extra scenario are dropped and counted", async () => {
    const title = "\u001b]0;pwned\u0007";
    const valid = {
      name: "asks-for-tuesday",
      persona: "A patient who wants a Tuesday slot",
      goal: "check availability on Tuesday",
      max_turns: 3,
      tool_calls: ["check_availability"],
      procedures: {},
      judge: [],
      language: null,
    };
    const smuggled = '\n- name: smuggled\n  channel: { callee_no: "+15550000000" }\n  expect: { ends: true }';
    model.answer.generate = () =>
      JSON.stringify({
        scenarios: [
          valid,
          { ...valid, name: "cancels", goal: "cancel an appointment", tool_calls: ["cancel_appointment"] },
          { ...valid, name: "again" },
          { ...valid, name: "injected", persona: `A caller${smuggled}`, goal: "something else" },
          { ...valid, name: `extra${title}`, goal: "an extra one" },
        ],
      });
    try {
      const out = await cli(["scenario", "generate", "booking", "--stack", "test", "--count", "4"]);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stderr).toContain(
        "5 proposed, 1 kept: 1 named a tool the agent does not have, 1 repeated an existing scenario (same persona and goal), 1 held text that is not one line of plain text, 1 came beyond the number asked",
      );
      expect(out.stderr).toContain("dropped cancels: unknown tool: tool(s) cancel_appointment");
      expect(out.stdout + out.stderr).not.toMatch(RAW_CONTROL);
      expect(out.stdout).not.toContain("smuggled");
      expect(parseAllDocuments(out.stdout)).toHaveLength(1);
      const scenarios = parse(out.stdout) as Drafted[];
      expect(scenarios.map((s) => s.name)).toEqual(["asks-for-tuesday"]);
    } finally {
      delete model.answer.generate;
    }
  });

  it("personal data in the call reaches neither the model's requests nor the output (--keep-pii sends it)", async () => {
    await addScenarios(project.dir, "booking", {
      name: "gives-contact-details",
      channel: { callee_no: "+15550142100", caller_no: "+14155550123" },
      transport: "ws",
      caller: { turns: [`Please call me back on ${PHONE} or write to ${EMAIL}.`, "That's all, thank you."] },
      expect: { ends: true },
    });
    const conversationId = await recordCall("gives-contact-details");
    const before = model.requests.length;
    const out = await cli(["scenario", "derive", conversationId, "--from-recording", "recordings", "--stack", "test"]);
    expect(out.code, out.stderr).toBe(0);
    const sent = model.requests.slice(before).join("\n");
    expect(sent).toContain("Please call me back on <phone 1> or write to <email 1>.");
    for (const secret of [PHONE, "4155550199", EMAIL, "+14155550123"]) {
      expect(sent).not.toContain(secret);
      expect(out.stdout + out.stderr).not.toContain(secret);
    }
    // The recording held them: what is kept out is kept out by derive.
    const dir = path.join(project.dir, "recordings", "booking");
    const [file] = (await readdir(dir)).filter((name) => name.startsWith("gives-contact-details"));
    expect(await readFile(path.join(dir, file as string), "utf8")).toContain(EMAIL);

    const kept = model.requests.length;
    const keep = await deriveRecorded(conversationId, "--keep-pii");
    expect(keep.code, keep.stderr).toBe(0);
    expect(model.requests.slice(kept).join("\n")).toContain(EMAIL);
  });

  it("personal data in any format (dots, dashes, non-breaking spaces, lower-case IBANs, non-ASCII e-mails, full-width digits, a value at the line's cut) reaches neither the model nor the output", async () => {
    // "caller: " and 980 characters: the address starts before the 1,000-character cut and ends after it.
    const straddling = `${"x".repeat(980)} ${STRADDLING}`;
    await addScenarios(project.dir, "booking", {
      name: "gives-details-in-many-formats",
      channel: { callee_no: "+15550142100", caller_no: "+14155550123" },
      transport: "ws",
      caller: {
        turns: [
          "My card is 4111.1111.1111.1111, or 5500 - 0000 - 0000 - 0004, or 4012\u00a08888\u00a08888\u00a01881.",
          "Call 415.555.0123 or +49.30.1234.5678; IBAN de89 3704 0044 0532 0130 00; mail jürgen@exämple.de.",
          "Or the other card: ４２２２ ２２２２ ２２２２ ２.",
          straddling,
        ],
      },
      expect: { ends: true },
    });
    const conversationId = await recordCall("gives-details-in-many-formats");
    // The model names the scenario and writes its persona with the call's data: printed, it is scrubbed too.
    model.answer.derive = () =>
      JSON.stringify({
        scenarios: [
          {
            name: "card 4111|1111|1111|1111",
            persona: "Jürgen (jürgen@exämple.de), who pays with 4111 - 1111 - 1111 - 1111",
            goal: "give his details, IBAN DE89.3704.0044.0532.0130.00",
            max_turns: 6,
            tool_calls: [],
            procedures: {},
            judge: ["the agent does not repeat ５５００ ００００ ００００ ０００４"],
            language: null,
          },
        ],
      });
    const before = model.requests.length;
    try {
      const out = await deriveRecorded(conversationId);
      expect(out.code, out.stderr).toBe(0);
      const sent = model.requests.slice(before).join("\n");
      expect(sent).toContain("My card is <card 1>, or <card 2>, or <card 3>.");
      expect(sent).toContain("IBAN <account 1>; mail <email 1>.");
      expect(sent).toContain("<email 2>");
      const printed = out.stdout + out.stderr;
      expect(parse(out.stdout)[0].name).toBe("card-card-1");
      for (const secret of FORMATTED_SECRETS) {
        expect(sent.toLowerCase()).not.toContain(secret);
        expect(printed.toLowerCase()).not.toContain(secret);
      }
    } finally {
      delete model.answer.derive;
    }
  });

  it("generate --check with no judge: exit 2 with the advice, before the model is asked", async () => {
    const before = model.requests.length;
    const out = await runInProcess(["scenario", "generate", "booking", "--stack", "test", "--count", "2", "--check"], {
      cwd: project.dir,
      env: { ...env(), AGENT_IAC_JUDGE_BASE_URL: "", AGENT_IAC_JUDGE_MODEL: "" },
    });
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toContain("--check places each drafted scenario, and its rubrics (expect.judge) need a judge");
    expect(out.stderr).toContain("no judge is configured for stack test");
    expect(out.stderr).toContain("Or leave out --check");
    expect(out.stdout).toBe("");
    expect(model.requests.length).toBe(before);
  });

  it("--check: a generated scenario that fails on the pinned version is set apart, with why", async () => {
    const passing = {
      name: "asks-to-check",
      persona: "A caller who wants to know the free slots",
      goal: "check availability for next week",
      max_turns: 3,
      tool_calls: ["check_availability"],
      procedures: {},
      judge: ['the agent introduces themself: "this is Leo"'],
      language: null,
    };
    const failing = {
      ...passing,
      name: "expects-a-discount",
      persona: "A caller who hopes for a discount",
      goal: "a cheaper cleaning",
      tool_calls: [],
      judge: ['the agent offers "a 20% discount"'],
    };
    model.answer.generate = () => JSON.stringify({ scenarios: [passing, failing] });
    try {
      const out = await cli(["scenario", "generate", "booking", "--stack", "test", "--count", "2", "--check"]);
      expect(out.code, out.stderr).toBe(0);
      expect((parse(out.stdout) as Drafted[]).map((s) => s.name)).toEqual(["asks-to-check"]);
      expect(out.stderr).toContain("failed on the pinned version (a finding about today's version, not a test):");
      expect(out.stderr).toMatch(/ {2}expects-a-discount: failed on ca_\S+: .*a 20% discount/);
      expect(out.stderr).toContain("2 proposed, 1 kept: 1 failed on the pinned version");
    } finally {
      delete model.answer.generate;
    }
  });

  it("Ctrl+C while the model's request hangs: exit 130, nothing printed", async () => {
    const before = model.requests.length;
    model.answer.derive = () => new Promise<string>(() => {});
    try {
      const child = spawn(
        process.execPath,
        [CLI, "scenario", "derive", booked, "--from-recording", "recordings", "--stack", "test"],
        { cwd: project.dir, env: { ...env(), NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] },
      );
      let stdout = "";
      child.stdout?.on("data", (chunk) => {
        stdout += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      const deadline = Date.now() + 60_000;
      while (model.requests.length <= before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(model.requests.length).toBeGreaterThan(before);
      child.kill("SIGINT");
      expect(await exited).toBe(130);
      expect(stdout).toBe("");
    } finally {
      delete model.answer.derive;
    }
  });
});
