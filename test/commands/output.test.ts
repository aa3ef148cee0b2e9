// What the commands print: a failed up's lines without colour codes or JavaScript frames, and a
// table written page by page.
import { describe, expect, it } from "vitest";
import { TableWriter } from "../../src/render/index.ts";
import { cleanErrorLines } from "../../src/usecases/deploy.ts";

describe("cleanErrorLines", () => {
  it("keeps the project's message and drops colour codes, stack frames and repeats", () => {
    const text = [
      '\u001b[31merror:\u001b[0m could not create procedural agent "Call summary": POST /procedural_agents → 503',
      "    at explainCreateFailure (file:///x/src/provider/runtime.ts:150:10)",
      "    at async Object.create (eval at <anonymous>)",
      'error: could not create procedural agent "Call summary": POST /procedural_agents → 503',
      "",
    ].join("\n");
    expect(cleanErrorLines(text)).toBe(
      'error: could not create procedural agent "Call summary": POST /procedural_agents → 503',
    );
  });
});

describe("TableWriter", () => {
  it("prints the header with the first page and each later page as it comes", () => {
    const lines: string[] = [];
    const table = new TableWriter(["id", "status"], (text) => lines.push(text));
    table.write([{ id: "conv_1", status: "queued" }]);
    expect(lines).toEqual(["ID      STATUS\n", "conv_1  queued\n"]);
    table.write([{ id: "conv_22", status: null }]);
    expect(lines.at(-1)).toBe("conv_22  -\n");
    table.end();
    expect(lines).toHaveLength(3);
  });

  it("prints the header alone when no row came", () => {
    const lines: string[] = [];
    const table = new TableWriter(["id"], (text) => lines.push(text));
    table.end();
    expect(lines).toEqual(["ID\n"]);
  });
});
