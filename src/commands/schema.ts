// `agent-iac schema [--out FILE] [--check]`: the JSON Schema of agent files, generated from the
// same zod schemas the loader validates with, for editors (yaml-language-server).
import { readFile, writeFile } from "node:fs/promises";
import { agentJsonSchema } from "../checks/index.ts";
import { InvalidInputError } from "../errors/index.ts";
import { parseCommand } from "./args.ts";
import type { CommandIO } from "./lifecycle.ts";

const DEFAULT_OUT = "agents/agent.schema.json";
const SPEC = {
  name: "schema",
  synopsis: "[--out FILE] [--check]",
  about: `Writes the JSON Schema of agent files to FILE (default: ${DEFAULT_OUT}); agent files name it in
their first line: # yaml-language-server: $schema=./agent.schema.json`,
  flags: {
    out: { type: "string", default: DEFAULT_OUT, arg: "FILE", help: `where to write (default: ${DEFAULT_OUT})` },
    check: {
      type: "boolean",
      default: false,
      help: "write nothing; exit 1 when FILE differs from the generated schema",
    },
  },
  footer: "exit codes: 0 written (or up to date), 1 stale (--check), 2 usage error or the file cannot be written.",
} as const;

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const { values } = parsed;
  const schema = agentJsonSchema();
  // Named as given; read and written in the run's project.
  const file = io.project.path(values.out);
  if (values.check) {
    const current = await readFile(file, "utf8").catch(() => undefined);
    if (current === schema) {
      io.stdout.write(`${values.out} is up to date\n`);
      return 0;
    }
    io.stderr.write(`${values.out} is stale: run \`agent-iac schema --out ${values.out}\`\n`);
    return 1;
  }
  await writeFile(file, schema).catch((error: Error) => {
    throw new InvalidInputError(`cannot write ${values.out}: ${error.message}`);
  });
  io.stdout.write(`wrote ${values.out}\n`);
  return 0;
}
