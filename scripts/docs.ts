// `npm run docs`: regenerates the references in docs/ from the code — docs/cli.md from the commands'
// own declarations, docs/fields.md from the agent file's zod schemas. `npm run docs -- --check`
// writes nothing and exits 1 when a file differs from a fresh generation (as `schema --check`);
// test/readme/references.test.ts runs the same comparison in `npm test`. The files are written as the
// project's formatter (Biome) would write them, so `npm run lint` passes on them as generated.
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { checkoutHelp, cliReference, inProcessHelp } from "./docs-cli.ts";
import { fieldReference } from "./docs-fields.ts";

const ROOT = path.resolve(import.meta.dirname, "..");

/**
 * The commands' help, read in this process (fast: the modules load once) while src/cli.ts runs its
 * command line when loaded; else from a process per command.
 */
async function helpReader(root: string) {
  const inProcess = inProcessHelp(root);
  const probe = await inProcess(["--help"]).catch(() => "");
  return probe.includes("commands:") ? inProcess : checkoutHelp(root);
}

/** Markdown as the project's formatter writes it (`npm run lint` checks docs/ too: tables aligned). */
export function formatMarkdown(root: string, file: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const biome = execFile(
      path.join(root, "scripts", "biome"),
      ["format", `--stdin-file-path=${file}`],
      { cwd: root, maxBuffer: 16 << 20 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`biome format ${file}: ${stderr || error.message}`)) : resolve(stdout),
    );
    biome.stdin?.end(text);
  });
}

/** Each generated file (relative to the project) and its fresh content. */
export async function generatedDocs(root = ROOT): Promise<Record<string, string>> {
  const raw = {
    "docs/cli.md": await cliReference(await helpReader(root)),
    "docs/fields.md": fieldReference(),
  };
  return Object.fromEntries(
    await Promise.all(Object.entries(raw).map(async ([file, text]) => [file, await formatMarkdown(root, file, text)])),
  );
}

/** The generated files whose committed text differs from a fresh generation. */
export async function staleDocs(root = ROOT): Promise<string[]> {
  const fresh = await generatedDocs(root);
  const stale: string[] = [];
  for (const [file, text] of Object.entries(fresh)) {
    const current = await readFile(path.join(root, file), "utf8").catch(() => undefined);
    if (current !== text) stale.push(file);
  }
  return stale;
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes("--check")) {
    const stale = await staleDocs();
    for (const file of stale) process.stderr.write(`${file} is stale: run \`npm run docs\`\n`);
    if (stale.length === 0) process.stdout.write("docs/cli.md and docs/fields.md are up to date\n");
    return stale.length === 0 ? 0 : 1;
  }
  for (const [file, text] of Object.entries(await generatedDocs())) {
    await writeFile(path.join(ROOT, file), text);
    process.stdout.write(`wrote ${file}\n`);
  }
  return 0;
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
