// src/escape: the escaping helpers, one per output format. Text from agent files, the service and
// models is data on every surface: text.ts for the terminal, JSON Lines, Markdown, XML and YAML;
// html.ts the `html` tag, through which alone the HTML report builds markup. Imports nothing of
// agent-iac, so every folder that writes text (the renderers, the live output, drafts) can use it.

export { Html, html, trusted } from "./html.ts";
export {
  codeSpan,
  fenced,
  hasControl,
  jsonLine,
  markdownText,
  tableCell,
  terminalLines,
  terminalText,
  xml,
  yamlText,
} from "./text.ts";
