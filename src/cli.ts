// `agent-iac <command>`: one entry point. Each command lives in src/commands/ and exports
// `run(argv): Promise<number>` returning the process exit code (0 ok, 1 failed check,
// 2 usage or configuration error, 3 service or backend unreachable).
type Command = {
  summary: string;
  load: () => Promise<{ run(argv: string[]): Promise<number> }>;
  /** The operator commands share one module, which takes the command name as its first argument. */
  withName?: boolean;
};

const commands: Record<string, Command> = {
  start: {
    summary: "provision agents/ against the stack (the local simulator by default) and smoke-call them",
    load: () => import("./commands/start.ts"),
  },
  validate: { summary: "check agents/*.yaml offline; file:line errors", load: () => import("./commands/validate.ts") },
  schema: {
    summary: "write the JSON Schema of agent files (agents/agent.schema.json)",
    load: () => import("./commands/schema.ts"),
  },
  plan: {
    summary: "preview a stack and render a reviewable plan (Markdown, JSON)",
    load: () => import("./commands/plan.ts"),
  },
  smoke: {
    summary: "place smoke test calls against the stack's pinned version ids",
    load: () => import("./commands/smoke.ts"),
  },
  service: { summary: "run the local simulator of the service", load: () => import("./commands/service.ts") },
  conversations: {
    summary: "list conversations, or a conversation's procedures",
    load: () => import("./commands/operate.ts"),
    withName: true,
  },
  procedures: { summary: "list procedures", load: () => import("./commands/operate.ts"), withName: true },
  feedbacks: { summary: "list feedbacks", load: () => import("./commands/operate.ts"), withName: true },
  events: {
    summary: "follow a conversation's event stream",
    load: () => import("./commands/operate.ts"),
    withName: true,
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `usage: agent-iac <command> [options]   (agent-iac <command> --help for its options)\n\ncommands:\n${lines.join("\n")}\n`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`agent-iac: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  const module = await command.load();
  return module.run(command.withName ? argv : rest);
}

process.exitCode = await main(process.argv.slice(2));
