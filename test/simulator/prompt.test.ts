// The simulated agent reads one thing in its prompt: a tool it must not use (docs/simulator.md).
import { describe, expect, it } from "vitest";
import { toolNamed } from "../../src/simulator/dialogue.ts";

const tools = {
  tools: [
    { ns: "syscall", name: "check_availability" },
    { ns: "syscall", name: "book_appointment" },
  ],
};
const withPrompt = (text: string) => ({ tool: tools, runtime: { prompt: { type: "fixed", text } } });
const BOOK = "Great, please book appointment for Tuesday at 10am.";

describe("the simulated agent's prompt", () => {
  it("calls the tool a turn names when the prompt does not forbid it", () => {
    expect(toolNamed(withPrompt("Use book_appointment once the caller picks a slot."), BOOK)).toBe("book_appointment");
    expect(toolNamed({ tool: tools }, BOOK)).toBe("book_appointment");
  });

  it("does not call a tool a sentence of the prompt forbids, in any of the three phrasings", () => {
    for (const text of [
      "Take the caller's details. Never use book_appointment: the desk calls back.",
      "Do not use book appointment.",
      "You are Leo.\nDon't use BOOK_APPOINTMENT for anyone",
    ]) {
      expect(toolNamed(withPrompt(text), BOOK), text).toBeUndefined();
    }
  });

  it("forbids only the tool the forbidding sentence names", () => {
    const prompt = withPrompt("Never use book_appointment. Use check_availability before you offer a time.");
    expect(toolNamed(prompt, "Can you check availability on Tuesday?")).toBe("check_availability");
    // A turn naming both: the first tool the prompt allows.
    expect(toolNamed(prompt, "Book appointment after you check availability")).toBe("check_availability");
  });
});
