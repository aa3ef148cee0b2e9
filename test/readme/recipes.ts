// The README's recipes: the shell blocks a user is told to run, marked by an HTML comment on the
// line before their fence, so the documentation itself is the test input (as Rust's doctests):
//
//   <!-- recipe: smoke-dev-service background ready: /listening on/ -->
//   ```sh
//   npm run service -- --data .agent-iac/simulator.json
//   ```
//
// `background`: the block runs in another terminal (started, left running until the recipes end);
// `ready: /re/`: wait for its output to match before the next block; `expect: /re/`: the block's
// output must match. Blocks run in README order.
export type Recipe = {
  id: string;
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

export function parseRecipes(markdown: string): Recipe[] {
  const lines = markdown.split("\n");
  const recipes: Recipe[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = MARKER.exec(lines[i]?.trim() ?? "");
    if (!marker) continue;
    const [, id = "", options = ""] = marker;
    const fence = lines[i + 1]?.trim() ?? "";
    if (!/^```(sh|bash|shell)$/.test(fence)) {
      throw new Error(`README.md:${i + 1}: recipe ${id} is not followed by a \`\`\`sh block`);
    }
    const end = lines.findIndex((line, j) => j > i + 1 && line.trim() === "```");
    if (end < 0) throw new Error(`README.md:${i + 2}: recipe ${id}'s block is never closed`);
    // Indented blocks (inside a list item) lose their indentation.
    const indent = /^\s*/.exec(lines[i + 1] ?? "")?.[0].length ?? 0;
    const script = lines
      .slice(i + 2, end)
      .map((line) => line.slice(Math.min(indent, /^\s*/.exec(line)?.[0].length ?? 0)))
      .join("\n");
    recipes.push({
      id,
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
