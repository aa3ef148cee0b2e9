// Pulumi's log as agent-iac shows it: escape sequences off a terminal, and none of the noise a
// failed resource leaves in the program's log; a genuine program error stays whole.
import { describe, expect, it } from "vitest";
import { isRegistrationNoise, pulumiLogFilter, stripEscapes } from "../../src/workspace/index.ts";

const FAILED_UP = [
  " +  pulumi:pulumi:Stack agents-dev creating (3s) (node:2657) PromiseRejectionHandledWarning: Promise rejection was handled asynchronously (rejection id: 13)",
  " +  pulumi:pulumi:Stack agents-dev creating (3s) error: Running program '/p/index.ts' failed with an unhandled exception:",
  " +  pulumi:pulumi:Stack agents-dev **creating failed (3s)** 1 error; 3 messages",
  "Diagnostics:",
  "  pulumi:pulumi:Stack (agents-dev):",
  "    (node:2657) PromiseRejectionHandledWarning: Promise rejection was handled asynchronously (rejection id: 13)",
  "    (Use `node --trace-warnings ...` to show where the warning was created)",
  "",
  "    error: Running program '/p/index.ts' failed with an unhandled exception:",
  "    \u001b[36m<ref *1>\u001b[39m Error: resource qa-scorer [pulumi-nodejs:dynamic/agents:ProceduralAgent] failed to register",
  "        at /x/@pulumi/runtime/resource.ts:795:40",
  "      promise: Promise { \u001b[36m<rejected>\u001b[39m [Circular *1] }",
  "    }",
  "",
  "  pulumi-nodejs:dynamic/agents:ProceduralAgent (qa-scorer):",
  '    error: could not create procedural agent "QA scorer": POST /procedural_agents → 400 (request id req_1)',
  "",
  "Resources:",
  "",
].join("\n");

function filtered(text: string, color = false, chunk = 7): string {
  let out = "";
  const filter = pulumiLogFilter(
    (line) => {
      out += line;
    },
    { color },
  );
  // Split anywhere: lines are put together again before they are judged.
  for (let i = 0; i < text.length; i += chunk) filter.write(text.slice(i, i + chunk));
  filter.end();
  return out;
}

describe("pulumiLogFilter", () => {
  it("drops the failed registration's inspected error, Node's warnings and an emptied section; keeps the resource's error", () => {
    const out = filtered(FAILED_UP);
    expect(out).not.toContain("\u001b");
    expect(out).not.toContain("<ref *");
    expect(out).not.toContain("Promise {");
    expect(out).not.toContain("PromiseRejectionHandledWarning");
    expect(out).not.toContain("pulumi:pulumi:Stack (agents-dev):");
    expect(out).toContain(
      '  pulumi-nodejs:dynamic/agents:ProceduralAgent (qa-scorer):\n    error: could not create procedural agent "QA scorer"',
    );
    expect(out).toContain("**creating failed (3s)**");
  });

  it("drops the same noise when it is a linking agent's property that failed to register", () => {
    const linked = FAILED_UP.replace(
      "Error: resource qa-scorer [pulumi-nodejs:dynamic/agents:ProceduralAgent] failed to register",
      'Error: error serializing property "postprocess_agents": resource qa-scorer [pulumi-nodejs:dynamic/agents:ProceduralAgent] failed to register',
    );
    expect(linked).not.toBe(FAILED_UP);
    const out = filtered(linked);
    expect(out).not.toContain("<ref *");
    expect(out).not.toContain("Promise {");
    expect(out).not.toContain("error serializing property");
    expect(out).toContain('error: could not create procedural agent "QA scorer"');
  });

  it("drops it too when the error was inspected without a stack (`[Error: …] {`)", () => {
    const bare = [
      "  pulumi:pulumi:Stack (agents-dev):",
      "    error: Running program '/p/index.ts' failed with an unhandled exception:",
      "    <ref *1> [Error: resource qa-scorer [pulumi-nodejs:dynamic/agents:ProceduralAgent] failed to register] {",
      "      promise: Promise { <rejected> [Circular *1] }",
      "    }",
      "",
      "  pulumi-nodejs:dynamic/agents:ProceduralAgent (qa-scorer):",
      '    error: could not create procedural agent "QA scorer": POST /procedural_agents → 400 (request id req_1)',
      "",
    ].join("\n");
    const out = filtered(bare);
    expect(out).not.toContain("Promise {");
    expect(out).not.toContain("pulumi:pulumi:Stack (agents-dev):");
    expect(out).toContain('error: could not create procedural agent "QA scorer"');
  });

  it("drops the same noise from a program run inline: one line each, the unhandled one with its frames", () => {
    const inline = [
      " +  pulumi-nodejs:dynamic/agents:ProceduralAgent qa-scorer **creating failed** error: could not create procedural agent",
      " +  pulumi:pulumi:Stack agents-test creating (15s) error: Unhandled exception: Error: resource qa-scorer [pulumi-nodejs:dynamic/agents:ProceduralAgent] failed to register",
      ' +  pulumi:pulumi:Stack agents-test creating (16s) error: error serializing property "postprocess_agents": resource qa-scorer [pulumi-nodejs:dynamic/agents:ProceduralAgent] failed to register',
      " +  pulumi:pulumi:Stack agents-test **creating failed (16s)** 2 errors",
      "Diagnostics:",
      "  pulumi:pulumi:Stack (agents-test):",
      "    error: Unhandled exception: Error: resource qa-scorer [pulumi-nodejs:dynamic/agents:ProceduralAgent] failed to register",
      "        at /x/node_modules/@pulumi/pulumi/runtime/resource.js:526:32",
      "        at process.processTicksAndRejections (node:internal/process/task_queues:104:5)",
      '    error: error serializing property "postprocess_agents": resource qa-scorer [pulumi-nodejs:dynamic/agents:ProceduralAgent] failed to register',
      "",
      "  pulumi-nodejs:dynamic/agents:ProceduralAgent (qa-scorer):",
      '    error: could not create procedural agent "QA scorer": POST /procedural_agents → 400 (request id req_1)',
      "",
    ].join("\n");
    const out = filtered(inline);
    expect(out).not.toContain("failed to register");
    expect(out).not.toMatch(/^\s+at /m);
    expect(out).not.toContain("pulumi:pulumi:Stack (agents-test):");
    expect(out).toContain("**creating failed (16s)**");
    expect(out).toContain('error: could not create procedural agent "QA scorer"');
    expect(isRegistrationNoise(inline.split("\n")[6]?.replace("    error: ", "") ?? "")).toBe(true);
    expect(isRegistrationNoise(inline.split("\n")[9]?.trim() ?? "")).toBe(true);
    expect(isRegistrationNoise("Unhandled exception: TypeError: Cannot read properties of undefined")).toBe(false);
  });

  it("says Pulumi's heartbeat once", () => {
    const out = filtered("@ updating....\n + a created\n@ updating....\n@ updating....\n");
    expect(out).toBe("@ updating....\n + a created\n");
  });

  it("keeps a genuine program error whole, and colour on a terminal", () => {
    const bug = [
      "  pulumi:pulumi:Stack (agents-dev):",
      "    error: Running program '/p/index.ts' failed with an unhandled exception:",
      "    \u001b[31mTypeError\u001b[39m: Cannot read properties of undefined (reading 'x')",
      "",
    ].join("\n");
    expect(filtered(bug, true)).toBe(bug);
    expect(filtered(bug, false)).toBe(stripEscapes(bug));
  });
});
