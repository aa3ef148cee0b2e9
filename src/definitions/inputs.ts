// An agent a program declares (a Pulumi YAML resource, a component's inputs): no file, but the same
// checks and the same words as an agent file's, so `config.langauge` reads `unknown key "langauge"
// (did you mean "language"?)` wherever it was written.
import { z } from "zod";
import { conversationalAgentConfig, proceduralAgentConfig } from "../contract/index.ts";
import { FILE_PARSE, type FieldProblem, fieldProblems } from "./issues.ts";
import { agentName } from "./schema.ts";

const inputs = {
  conversational: z.object({ name: agentName, description: z.string(), config: conversationalAgentConfig }),
  procedural: z.object({ name: agentName, description: z.string(), config: proceduralAgentConfig }),
};

/** What is wrong with an agent's name, description and config, each at its field ([] when nothing is). */
export function agentInputProblems(
  kind: "conversational" | "procedural",
  value: { name?: unknown; description?: unknown; config?: unknown },
): FieldProblem[] {
  const schema = inputs[kind];
  const parsed = schema.safeParse(
    { name: value.name, description: value.description, config: value.config },
    FILE_PARSE,
  );
  return parsed.success ? [] : fieldProblems(schema, parsed.error.issues);
}
