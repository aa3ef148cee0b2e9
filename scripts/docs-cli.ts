// docs/cli.md from the commands' own declarations: every command and subcommand the CLI lists, each
// with the `--help` text its declaration generates (src/commands/args.ts `usageText`), so a flag, a
// default or an exit code changed in the code changes the reference (scripts/docs.ts regenerates
// it, test/readme/references.test.ts fails while it is stale). The commands are found the way a
// user finds them: `agent-iac --help` lists the commands, a group's `--help` names its subcommands.
import { execFile } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { cell, code, prose, slug } from "./docs-markdown.ts";

/** Runs `agent-iac ...args` and resolves with what it printed on stdout. */
export type HelpReader = (args: string[]) => Promise<string>;

/**
 * The CLI of the checkout at `root`, in this process: the command layer's `runCli` against a
 * CommandIO whose stdout is captured (commands touch no stream of the process).
 */
export function inProcessHelp(root: string): HelpReader {
  const entry = pathToFileURL(path.join(root, "src", "commands", "index.ts")).href;
  return async (args) => {
    const { CommandIO, runCli } = (await import(entry)) as typeof import("../src/commands/index.ts");
    let out = "";
    const io = new CommandIO(
      { stdout: { write: (text: string) => (out += text) }, stderr: { write: () => true } },
      () => {},
    );
    const code = await runCli(args, io);
    if (code !== 0) throw new Error(`agent-iac ${args.join(" ")} exited ${code}:\n${out}`);
    return out;
  };
}

/**
 * The CLI of the checkout at `root` as a user runs it (bin/agent-iac.js), a process per help, with
 * this Node and an environment that holds no setting of ours. Slower than `inProcessHelp`.
 */
export function checkoutHelp(root: string, concurrency = 3): HelpReader {
  const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? root, NO_COLOR: "1" };
  let running = 0;
  const waiting: (() => void)[] = [];
  const run = (args: string[]) =>
    new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [path.join(root, "bin", "agent-iac.js"), ...args],
        { cwd: root, env },
        (error, stdout, stderr) =>
          error ? reject(new Error(`agent-iac ${args.join(" ")} failed: ${stderr || error.message}`)) : resolve(stdout),
      );
    });
  // A few processes at a time: the machine is shared.
  return async (args) => {
    if (running >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await run(args);
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

type Command = { name: string; summary: string };

/** A command's help as its declaration generates it: usage, about, options, footer. */
export type ParsedHelp = {
  usage: string;
  about: string;
  options: { flag: string; help: string }[];
  footer: string;
};

/** The top-level usage's command list (`  name  summary` lines after "commands:") and its closing note. */
export function parseCommandList(text: string): { commands: Command[]; note: string } {
  const lines = text.split("\n");
  const start = lines.indexOf("commands:");
  if (start < 0) throw new Error(`agent-iac --help lists no commands:\n${text}`);
  const commands: Command[] = [];
  let i = start + 1;
  for (; i < lines.length; i++) {
    const match = /^ {2}(\S+) {2,}(\S.*)$/.exec(lines[i] ?? "");
    if (!match) break;
    commands.push({ name: match[1] ?? "", summary: match[2] ?? "" });
  }
  return { commands, note: lines.slice(i).join("\n").trim() };
}

/** A full help (one with "options:"), or undefined for a group's short usage. */
export function parseHelp(text: string): ParsedHelp | undefined {
  const lines = text.trimEnd().split("\n");
  const optionsAt = lines.indexOf("options:");
  if (optionsAt < 0 || !lines[0]?.startsWith("usage: ")) return undefined;
  const about = lines.slice(1, optionsAt).join("\n").trim();
  const options: ParsedHelp["options"] = [];
  let i = optionsAt + 1;
  for (; i < lines.length && lines[i]?.trim(); i++) {
    const line = lines[i] ?? "";
    const match = /^ {2}(\S.*?) {2,}(\S.*)$/.exec(line);
    const last = options.at(-1);
    if (match) options.push({ flag: match[1] ?? "", help: match[2] ?? "" });
    else if (last) last.help += ` ${line.trim()}`;
    else throw new Error(`unreadable option line: ${JSON.stringify(line)}`);
  }
  return {
    usage: (lines[0] ?? "").slice("usage: ".length),
    about,
    options,
    footer: lines.slice(i).join("\n").trim(),
  };
}

/** The subcommands a group's short usage names (`agent-iac conversations list …`). */
export function subcommands(group: string, text: string): string[] {
  const found = [...text.matchAll(new RegExp(`agent-iac ${group} ([a-z][a-z-]*)`, "g"))].map((m) => m[1] ?? "");
  return [...new Set(found)];
}

/** Paragraphs of help text as Markdown; a paragraph that starts with a label (`exit codes:`) shows it in bold. */
function paragraphs(text: string, labels = true): string {
  return text
    .split(/\n\s*\n/)
    .filter((p) => p.trim())
    .map((p) => {
      const one = p.replace(/\s*\n\s*/g, " ").trim();
      const label = /^([a-z][a-z ]*|--[a-z-]+(?: [A-Z]+)?):\s/.exec(one);
      if (!labels || !label?.[1]) return prose(one);
      const name = label[1].startsWith("--") ? code(label[1]) : label[1][0]?.toUpperCase() + label[1].slice(1);
      return `**${name}:** ${prose(one.slice(label[0].length))}`;
    })
    .join("\n\n");
}

function renderCommand(title: string, help: ParsedHelp, level: string): string {
  const rows = help.options.map(({ flag, help: text }) => {
    const flags = flag
      .split(", ")
      .map((f) => code(f).replaceAll("|", "\\|"))
      .join(", ");
    return `| ${flags} | ${cell(text)} |`;
  });
  return [
    `${level} ${code(title)}`,
    "",
    "```text",
    `agent-iac ${help.usage.replace(/^agent-iac /, "")}`,
    "```",
    "",
    ...(help.about ? [paragraphs(help.about, false), ""] : []),
    "| option | meaning |",
    "| --- | --- |",
    ...rows,
    "",
    ...(help.footer ? [paragraphs(help.footer), ""] : []),
  ].join("\n");
}

const HEADER = `# CLI reference

<!-- Generated by \`npm run docs\` from each command's own declaration (what its \`--help\` prints); do not
edit: \`npm test\` fails while this file differs from a fresh generation. -->

Every \`agent-iac\` command and subcommand with every flag, its default and the command's exit codes,
as \`agent-iac <command> --help\` prints them (\`npx agent-iac\` in the checkout). What the commands are
for, and the exit codes every command shares, are in the [README](../README.md#commands); a bare
report file name (\`--json smoke.json\`) is written under \`reports/\`.
`;

/** docs/cli.md: the index of commands, then each command's reference in the order the CLI lists them. */
export async function cliReference(help: HelpReader): Promise<string> {
  const { commands, note } = parseCommandList(await help(["--help"]));
  const sections = await Promise.all(
    commands.map(async ({ name, summary }) => {
      const text = await help([name, "--help"]);
      const full = parseHelp(text);
      if (full)
        return { name, summary, titles: [`agent-iac ${name}`], body: renderCommand(`agent-iac ${name}`, full, "##") };
      const subs = subcommands(name, text);
      if (subs.length === 0)
        throw new Error(`agent-iac ${name} --help shows neither options nor subcommands:\n${text}`);
      const parts = await Promise.all(
        subs.map(async (sub) => {
          const subText = await help([name, sub, "--help"]);
          const parsed = parseHelp(subText);
          if (!parsed) throw new Error(`agent-iac ${name} ${sub} --help is not a command's help:\n${subText}`);
          return renderCommand(`agent-iac ${name} ${sub}`, parsed, "###");
        }),
      );
      const body = [`## ${code(`agent-iac ${name}`)}`, "", `${prose(summary)}.`, "", ...parts].join("\n");
      return { name, summary, titles: subs.map((sub) => `agent-iac ${name} ${sub}`), body };
    }),
  );
  const index = [
    "| command | what it does |",
    "| --- | --- |",
    ...sections.map(
      ({ summary, titles }) =>
        `| ${titles.map((t) => `[${code(t)}](#${slug(code(t))})`).join(", ")} | ${cell(summary)} |`,
    ),
  ];
  const global = note ? [paragraphs(note, false), ""] : [];
  return `${[HEADER, ...index, "", ...global, ...sections.map((s) => s.body)].join("\n").trimEnd()}\n`;
}
