// `agent-iac schema [--out FILE] [--check]`: the JSON Schema of agent files, generated from the
// same zod schemas the loader validates with, for editors (yaml-language-server).
import { readFile, writeFile } from "node:fs/promises";
import { agentJsonSchema } from "../definitions/index.ts";
import { parseCommand } from "./args.ts";

const DEFAULT_OUT = "agents/agent.schema.json";
const HELP = `usage: agent-iac schema [--out FILE] [--check]

Writes the JSON Schema of agent files to FILE (default: ${DEFAULT_OUT}); agent files name it in
their first line: # yaml-language-server: $schema=./agent.schema.json
With --check, writes nothing and exits 1 when FILE differs from the generated schema.

exit codes: 0 written (or up to date), 1 stale (--check), 2 usage error or the file cannot be written.
`;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand("schema", HELP, argv, {
    out: { type: "string", default: DEFAULT_OUT },
    check: { type: "boolean", default: false },
  });
  if ("exitCode" in parsed) return parsed.exitCode;
  const { values } = parsed;
  const schema = agentJsonSchema();
  if (values.check) {
    const current = await readFile(values.out, "utf8").catch(() => undefined);
    if (current === schema) {
      process.stdout.write(`${values.out} is up to date\n`);
      return 0;
    }
    process.stderr.write(`${values.out} is stale: run \`agent-iac schema --out ${values.out}\`\n`);
    return 1;
  }
  try {
    await writeFile(values.out, schema);
  } catch (error) {
    process.stderr.write(`agent-iac schema: cannot write ${values.out}: ${(error as Error).message}\n`);
    return 2;
  }
  process.stdout.write(`wrote ${values.out}\n`);
  return 0;
}
