// `variants:` in an agent file and a variant file of `try --variant NAME=FILE`: validated like the
// agent file's config, prompt files read relative to the file that names them, errors at file:line.
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadAgents, loadConfigFile } from "../../src/definitions/index.ts";
import { type TempProject, tempProject, where } from "./helpers.ts";

const AGENT = `kind: conversational
name: Booking
description: Books.
config:
  runtime:
    prompt: { type: fixed, text: Book. }
variants:
  warm:
    runtime:
      prompt: { type: fixed, file: ../prompts/warm.md }
`;

let project: TempProject | undefined;
afterEach(async () => {
  await project?.cleanup();
  project = undefined;
});

describe("variants", () => {
  it("an agent file's variants are read with their prompt files and kept apart from the config", async () => {
    project = await tempProject({ "agents/booking.yaml": AGENT, "prompts/warm.md": "Be warm.\n" });
    const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors).toEqual([]);
    const booking = agents[0];
    expect(booking?.variants?.warm?.runtime?.prompt).toEqual({ type: "fixed", text: "Be warm.\n" });
    // The config sent on create does not carry them.
    expect(JSON.stringify(booking?.config)).not.toContain("warm");
  });

  it("a wrong field in an entry is an error at its file:line", async () => {
    project = await tempProject({
      "agents/booking.yaml": `${AGENT}  cold:\n    tool: { toolz: [] }\n`,
      "prompts/warm.md": "Be warm.\n",
    });
    const { errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors.map(where)).toEqual(["booking.yaml:12:13: variants.cold.tool.toolz"]);
  });

  it("a variant file: its prompt file relative to it, its errors at file:line, inside the project only", async () => {
    project = await tempProject({
      "tries/warm.yaml": "runtime:\n  prompt: { type: fixed, file: warm.md }\n",
      "tries/warm.md": "Be warm.\n",
      "tries/bad.yaml": "language:\n  default_language: 3\n",
      "tries/outside.yaml": "runtime:\n  prompt: { type: fixed, file: ../../outside.md }\n",
    });
    const warm = await loadConfigFile(path.join(project.root, "tries/warm.yaml"), project.root, process.cwd());
    expect(warm.config?.runtime?.prompt).toEqual({ type: "fixed", text: "Be warm.\n" });
    const bad = await loadConfigFile(path.join(project.root, "tries/bad.yaml"), project.root, process.cwd());
    expect(bad.errors.map(where)).toEqual(["bad.yaml:2:21: language.default_language"]);
    const outside = await loadConfigFile(path.join(project.root, "tries/outside.yaml"), project.root, process.cwd());
    expect(outside.errors[0]?.message).toContain("outside the project directory");
  });
});
