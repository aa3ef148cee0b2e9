// The loader on the committed examples and on broken files: every error at once, each at the
// file:line:column of the field it concerns.
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { formatDiagnostic, loadAgents } from "../../src/definitions/index.ts";
import { SUMMARY, type TempProject, tempProject, where } from "./helpers.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const AGENTS = path.join(ROOT, "agents");

let project: TempProject | undefined;
afterEach(async () => {
  await project?.cleanup();
  project = undefined;
});

describe("the example agents", () => {
  it("load without errors, procedural agents first, prompt files replaced by their exact text", async () => {
    const { agents, errors } = await loadAgents(AGENTS, { from: process.cwd() });
    expect(errors.map(formatDiagnostic)).toEqual([]);
    expect(agents.map((a) => `${a.kind}:${a.key}`)).toEqual([
      "procedural:call-summary",
      "procedural:qa-scorer",
      "conversational:booking",
      "conversational:support",
    ]);
    const support = agents.find((a) => a.key === "support");
    expect(support?.postprocessAgents).toEqual(["call-summary", "qa-scorer"]);
    expect(support?.file).toBe(path.relative(process.cwd(), path.join(AGENTS, "support.yaml")));
    expect(support?.overlay).toBeUndefined();
    const prompt = (support?.config as { runtime?: { prompt?: Record<string, unknown> } } | undefined)?.runtime?.prompt;
    expect(prompt).toEqual({ type: "fixed", text: await readFile(path.join(ROOT, "prompts/support.md"), "utf8") });
    expect(prompt).not.toHaveProperty("file");

    const booking = agents.find((a) => a.key === "booking");
    const config = booking?.config as {
      tool: { tools: { name: string }[]; transfers: unknown[] };
      language: { supported_languages: string[] };
    };
    expect(config.tool.tools.map((t) => t.name)).toEqual(["check_availability", "book_appointment"]);
    expect(config.language.supported_languages).toEqual(["English", "Spanish"]);
    expect(config.tool.transfers).toEqual([{ id: "+15550142000" }]);

    const summary = agents.find((a) => a.key === "call-summary");
    expect(summary?.postprocessAgents).toEqual([]);
    expect(summary?.smoke).toEqual([]);
  });

  it("normalize smoke scenarios with their defaults", async () => {
    const { agents } = await loadAgents(AGENTS, { from: process.cwd() });
    const scenarios = agents.flatMap((a) => a.smoke.map((s) => ({ agent: a.key, ...s })));
    expect(scenarios.length).toBeGreaterThanOrEqual(3);
    const greets = scenarios.find((s) => s.agent === "support");
    expect(greets).toMatchObject({
      livemode: false,
      transport: "sse",
      timeout: 120,
      iterations: 1,
      expect: { no_errors: true, ends: true, procedures: { "call-summary": "completed" } },
    });
    const spanish = scenarios.find((s) => s.name === "spanish-persona-over-websocket");
    expect(spanish?.transport).toBe("ws");
    expect(spanish?.override_config?.personas?.[0]?.name).toBe("Lucía");
  });

  it("each start with the yaml-language-server schema line (overlays excepted)", async () => {
    for (const name of await readdir(AGENTS)) {
      if (!name.endsWith(".yaml") || name.split(".").length > 2) continue;
      const text = await readFile(path.join(AGENTS, name), "utf8");
      expect(text.split("\n")[0], name).toBe("# yaml-language-server: $schema=./agent.schema.json");
    }
  });
});

describe("errors", () => {
  it("reports every error of every file at once, each at its file:line:column and field", async () => {
    project = await tempProject({
      "agents/summary.yaml": SUMMARY,
      "agents/chat.yaml": "kind: conversational\nname: Chat\ndescription: c\nconfig: {}\n",
      "agents/syntax.yaml": "kind: procedural\nname: [Unclosed\ndescription: d\nconfig: {}\n",
      "agents/support.yaml": [
        "kind: conversational", // 1
        "name: 42", // 2
        "description: Support", // 3
        "config:", // 4
        "  runtime:", // 5
        "    model: gpt-4o", // 6
        "    modle: x", // 7
        "    prompt: {type: fixed, file: ../prompts/missing.md}", // 8
        "  personas:", // 9
        "    - name: Maya", // 10
        "      voise: {id: a, provider: service}", // 11
        "postprocess_agents: [summary, chat, sumary, support]", // 12
        "",
      ].join("\n"),
      "agents/empty-prompt.yaml":
        "kind: procedural\nname: E\ndescription: d\nconfig:\n  runtime:\n    prompt: {type: fixed, file: ../prompts/empty.md}\n",
      "prompts/empty.md": "  \n\n",
      "agents/inline-empty.yaml":
        'kind: procedural\nname: E\ndescription: d\nconfig:\n  runtime:\n    prompt: {type: fixed, text: ""}\n',
      "agents/dup.yaml": "kind: procedural\nname: A\ndescription: d\nconfig: {}\nname: B\n",
    });
    const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors.map(where)).toEqual([
      "dup.yaml:5:1: name",
      "empty-prompt.yaml:6:33: config.runtime.prompt.file",
      "inline-empty.yaml:6:33: config.runtime.prompt.text",
      "support.yaml:2:7: name",
      "support.yaml:6:12: config.runtime.model",
      "support.yaml:7:5: config.runtime.modle",
      "support.yaml:8:33: config.runtime.prompt.file",
      "support.yaml:11:7: config.personas[0].voise",
      "support.yaml:12:31: postprocess_agents[1]",
      "support.yaml:12:37: postprocess_agents[2]",
      "support.yaml:12:45: postprocess_agents[3]",
      "syntax.yaml:3:1: description",
    ]);
    const message = (at: string) => errors.find((d) => where(d) === at)?.message;
    expect(message("dup.yaml:5:1: name")).toBe('duplicate key "name" (first at line 2); keys must be unique');
    expect(message("empty-prompt.yaml:6:33: config.runtime.prompt.file")).toMatch(/prompt is empty/);
    expect(message("inline-empty.yaml:6:33: config.runtime.prompt.text")).toBe("the prompt is empty");
    expect(message("support.yaml:2:7: name")).toBe("expected string, received number");
    expect(message("support.yaml:6:12: config.runtime.model")).toMatch(/<vendor>\/<model name>/);
    expect(message("support.yaml:7:5: config.runtime.modle")).toBe('unknown key "modle" (did you mean "model"?)');
    expect(message("support.yaml:8:33: config.runtime.prompt.file")).toMatch(/prompts\/missing\.md does not exist$/);
    expect(message("support.yaml:11:7: config.personas[0].voise")).toBe('unknown key "voise" (did you mean "voice"?)');
    expect(message("support.yaml:12:31: postprocess_agents[1]")).toMatch(/"chat" is a conversational agent/);
    expect(message("support.yaml:12:37: postprocess_agents[2]")).toBe(
      'unknown agent "sumary" (no sumary.yaml) (did you mean "summary"?)',
    );
    expect(message("support.yaml:12:45: postprocess_agents[3]")).toMatch(/cannot link itself/);
    expect(message("syntax.yaml:3:1: description")).toMatch(/^YAML: /);
    // The valid files still load; the broken ones do not.
    expect(agents.map((a) => a.key)).toEqual(["summary", "chat"]);
    // Formatted as file:line:column: field: reason.
    const first = errors[0];
    if (!first) throw new Error("no errors");
    expect(formatDiagnostic(first)).toBe(`${first.file}:5:1: name: ${first.message}`);
  });

  it("names diagnostics' files relative to the working directory", async () => {
    const { errors } = await loadAgents(path.join(ROOT, "test/fixtures/broken"), { from: process.cwd() });
    expect(errors.length).toBeGreaterThan(0);
    for (const d of errors) expect(d.file.startsWith("test/fixtures/broken/")).toBe(true);
  });

  it("reports a missing required field at the mapping that lacks it", async () => {
    project = await tempProject({ "agents/a.yaml": "# comment\nkind: procedural\nname: A\nconfig: {}\n" });
    const { errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors.map((d) => `${where(d)}: ${d.message}`)).toEqual([
      "a.yaml:2:1: description: required (expected string)",
    ]);
  });

  it("checks smoke scenarios: unique names, linked procedures, patterns, types", async () => {
    project = await tempProject({
      "agents/summary.yaml": SUMMARY,
      "agents/qa.yaml": SUMMARY,
      "agents/desk.yaml": [
        "kind: conversational", // 1
        "name: Desk", // 2
        "description: d", // 3
        "config: {}", // 4
        "postprocess_agents: [summary]", // 5
        "smoke:", // 6
        "  - name: one", // 7
        "    channel: {callee_no: '+1555'}", // 8
        "    expect:", // 9
        "      procedures: {summary: completed, qa: completed, nope: failed}", // 10
        "      tool_calls: [{name: lookup, arguments: {id: '/[/'}}]", // 11
        "  - name: one", // 12
        "    channel: {}", // 13
        "    iterations: 0", // 14
        "    transport: grpc", // 15
        "    expect: {says: [1]}", // 16
        "",
      ].join("\n"),
    });
    const { errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors.map(where)).toEqual([
      "desk.yaml:10:40: smoke[0].expect.procedures.qa",
      "desk.yaml:10:55: smoke[0].expect.procedures.nope",
      "desk.yaml:11:51: smoke[0].expect.tool_calls[0].arguments.id",
      "desk.yaml:12:11: smoke[1].name",
      "desk.yaml:13:14: smoke[1].channel.callee_no",
      "desk.yaml:14:17: smoke[1].iterations",
      "desk.yaml:15:16: smoke[1].transport",
      "desk.yaml:16:21: smoke[1].expect.says[0]",
    ]);
    expect(errors[0]?.message).toMatch(/"qa" is not linked in postprocess_agents/);
    expect(errors[1]?.message).toBe('unknown agent "nope"');
  });

  it("rejects a file name that is not a usable key, and two files for one key", async () => {
    project = await tempProject({
      "agents/Support_Line.yaml": SUMMARY,
      "agents/summary.yaml": SUMMARY,
      "agents/summary.yml": SUMMARY,
      "agents/README.md": "not an agent",
    });
    const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors.map(where)).toEqual(["Support_Line.yaml:1:1: (file name)", "summary.yml:1:1: (file name)"]);
    expect(agents.map((a) => a.key)).toEqual(["summary"]);
  });

  it("does not throw for a missing directory", async () => {
    const { agents, errors } = await loadAgents(path.join(ROOT, "no-such-agents-dir"), { from: process.cwd() });
    expect(agents).toEqual([]);
    expect(errors).toMatchObject([{ line: 1, column: 1, field: "(directory)", message: "no such directory" }]);
  });
});

describe("prompt files", () => {
  const agent = (file: string) =>
    `kind: procedural\nname: P\ndescription: d\nconfig:\n  runtime:\n    prompt: {type: fixed, file: ${file}}\n`;
  const textOf = (config: unknown) => (config as { runtime: { prompt: { text: string } } }).runtime.prompt.text;

  it("sends exactly the file's content: final newline and CRLF kept, a UTF-8 byte order mark dropped", async () => {
    project = await tempProject({
      "agents/a.yaml": agent("../prompts/a.md"),
      "prompts/a.md": "Line one\r\nLine two\n",
      "agents/b.yaml": agent("../prompts/b.md"),
      "prompts/b.md": "\uFEFFHola\n\n",
      "agents/c.yaml": agent("c.md"),
      "agents/c.md": "No newline",
    });
    const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors).toEqual([]);
    expect(agents.map((a) => textOf(a.config))).toEqual(["Line one\r\nLine two\n", "Hola\n\n", "No newline"]);
  });

  it("rejects a prompt file over 256 KiB, saying so; accepts one at the limit", async () => {
    project = await tempProject({
      "agents/big.yaml": agent("../prompts/big.md"),
      "prompts/big.md": "x".repeat(256 * 1024 + 1),
      "agents/edge.yaml": agent("../prompts/edge.md"),
      "prompts/edge.md": "y".repeat(256 * 1024),
    });
    const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors.map(where)).toEqual(["big.yaml:6:33: config.runtime.prompt.file"]);
    expect(errors[0]?.message).toMatch(/too large \(262145 bytes; the limit is 256 KiB\)/);
    expect(agents.map((a) => a.key)).toEqual(["edge"]);
  });

  it("rejects a prompt file that is not UTF-8 text, or outside the project", async () => {
    project = await tempProject({
      "agents/latin.yaml": agent("../prompts/latin.md"),
      "prompts/latin.md": Buffer.from("Caf\xe9\n", "latin1"),
      "agents/escape.yaml": agent("../../outside.md"),
    });
    const { errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors.map((d) => `${where(d)}: ${d.message.replace(/ \S*\/(?=\S)/, " …/")}`)).toEqual([
      expect.stringMatching(/^escape\.yaml:6:33: config\.runtime\.prompt\.file: .*outside the project directory/),
      expect.stringMatching(/^latin\.yaml:6:33: config\.runtime\.prompt\.file: .*not valid UTF-8/),
    ]);
  });

  it("refuses an agent file that is a symlink to outside the project, and reads one that stays inside", async () => {
    const outside = await mkdtemp(path.join(os.tmpdir(), "agent-outside-"));
    try {
      // The file an attacker wants sent to the service (or shown in a plan) as an agent's prompt.
      await writeFile(
        path.join(outside, "secret.yaml"),
        "kind: procedural\nname: Leak\ndescription: x\nconfig:\n  runtime:\n    prompt: {type: fixed, text: SECRET-TOKEN}\n",
      );
      project = await tempProject({ "agents/summary.yaml": SUMMARY, "shared/kept.yaml": SUMMARY });
      await symlink(path.join(outside, "secret.yaml"), path.join(project.agents, "leak.yaml"));
      await symlink(path.join(project.root, "shared", "kept.yaml"), path.join(project.agents, "kept.yaml"));
      const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
      expect(errors.map(where)).toEqual(["leak.yaml:1:1: (file)"]);
      expect(errors[0]?.message).toMatch(/outside the project directory .*agent files must live in the repository/);
      expect(agents.map((a) => a.key)).toEqual(["kept", "summary"]);
      expect(JSON.stringify(agents)).not.toContain("SECRET-TOKEN");
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("refuses an agent file that is a FIFO (or any non-regular file), as it refuses a symlink out of the project", async () => {
    project = await tempProject({ "agents/summary.yaml": SUMMARY });
    // A FIFO would block a reader forever; it must be named, not skipped ("1 agent OK").
    const made = spawnSync("mkfifo", [path.join(project.agents, "pipe.yaml")]);
    expect(made.status, String(made.stderr)).toBe(0);
    const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors.map(where)).toEqual(["pipe.yaml:1:1: (file)"]);
    expect(errors[0]?.message).toMatch(/not a regular file/);
    expect(agents.map((a) => a.key)).toEqual(["summary"]);
  });

  it("refuses an agent name holding NUL or a text-direction control, like model and tool names", async () => {
    const named = (name: string) => SUMMARY.replace(/^name: .*$/m, `name: ${JSON.stringify(name)}`);
    project = await tempProject({
      "agents/nul.yaml": named("Front\u0000desk"),
      "agents/bidi.yaml": named("Front desk \u202Egnp.exe"),
      "agents/emoji.yaml": named("Front desk \u260E\uFE0F"),
    });
    const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors.map(where).sort()).toEqual(["bidi.yaml:2:7: name", "nul.yaml:2:7: name"]);
    expect(errors.map((e) => e.message).join("\n")).toMatch(/U\+202E\) at position 12/);
    expect(errors.map((e) => e.message).join("\n")).toMatch(/U\+0000\) at position 6/);
    expect(agents.map((a) => a.key)).toEqual(["emoji"]);
  });
});
