// The docs' recipes: the shell blocks a user is told to run, in README.md and docs/**/*.md, marked by
// an HTML comment on the line before their fence, so the documentation itself is the test input (as
// Rust's doctests):
//
//   <!-- recipe: smoke-dev-service background ready: /listening on/ -->
//   ```sh
//   npm run service -- --data .agent-iac/simulator.json
//   ```
//
// `background`: the block runs in another terminal (started, left running until the recipes end);
// `ready: /re/`: wait for its output to match before the next block; `expect: /re/`: the block's
// output must match. Blocks run in README order, then page by page through docs/ in path order, so
// a page's block may use a background block started before it (the README's dev service).
export type Recipe = {
  id: string;
  /** The page it is on, relative to the project (README.md, docs/….md). */
  file: string;
  /** 1-based line of the fence's first command, for messages. */
  line: number;
  script: string;
  background: boolean;
  ready?: RegExp | undefined;
  expect?: RegExp | undefined;
};

const MARKER = /^<!--\s*recipe:\s*(\S+)(.*?)-->\s*$/;

function regexOption(options: string, name: string): RegExp | undefined {
  const match = new RegExp(`${name}:\\s*/((?:\\\\/|[^/])+)/`).exec(options);
  return match?.[1] ? new RegExp(match[1], "m") : undefined;
}

export function parseRecipes(markdown: string, file = "README.md"): Recipe[] {
  const lines = markdown.split("\n");
  const recipes: Recipe[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = MARKER.exec(lines[i]?.trim() ?? "");
    if (!marker) continue;
    const [, id = "", options = ""] = marker;
    const fence = lines[i + 1]?.trim() ?? "";
    if (!/^```(sh|bash|shell)$/.test(fence)) {
      throw new Error(`${file}:${i + 1}: recipe ${id} is not followed by a \`\`\`sh block`);
    }
    const end = lines.findIndex((line, j) => j > i + 1 && line.trim() === "```");
    if (end < 0) throw new Error(`${file}:${i + 2}: recipe ${id}'s block is never closed`);
    // Indented blocks (inside a list item) lose their indentation.
    const indent = /^\s*/.exec(lines[i + 1] ?? "")?.[0].length ?? 0;
    const script = lines
      .slice(i + 2, end)
      .map((line) => line.slice(Math.min(indent, /^\s*/.exec(line)?.[0].length ?? 0)))
      .join("\n");
    recipes.push({
      id,
      file,
      line: i + 3,
      script,
      background: /\bbackground\b/.test(options),
      ready: regexOption(options, "ready"),
      expect: regexOption(options, "expect"),
    });
    i = end;
  }
  return recipes;
}

/** The pages whose recipes run, in the order they run: README.md, then every .md below docs/ by path. */
export function recipePages(files: readonly string[]): string[] {
  const docs = files.filter((file) => /^docs\/.+\.md$/.test(file)).sort();
  return [...(files.includes("README.md") ? ["README.md"] : []), ...docs];
}
