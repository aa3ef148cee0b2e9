#!/usr/bin/env node
// The package's command. In the checkout Node runs the TypeScript sources directly (built-in type
// stripping); an installed copy ships no sources and runs the compiled JavaScript in dist/.
// Plain JavaScript any Node can read: an older Node is told which one is needed, not handed a raw
// ERR_UNKNOWN_FILE_EXTENSION or syntax error from deeper down. This check, not package.json's
// `engines`, holds the requirement: npm checks `engines` against the Node that runs npm, and
// `npx agent-iac` in the checkout installs the checkout into npx's cache, so a machine's older Node
// drew two EBADENGINE warnings there although the command runs on node_modules' Node 24.
import { existsSync } from "node:fs";
import module from "node:module";
import os from "node:os";
import path from "node:path";

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  process.stderr.write(
    `agent-iac needs Node >= 22.12 (this is Node ${process.versions.node} at ${process.execPath}).\n` +
      "In the checkout, npm scripts use the Node of node_modules/.bin (npm ci installs it): run `npx agent-iac …` or `npm start`;\n" +
      "elsewhere install Node 22.12 or newer (e.g. the current LTS).\n",
  );
  process.exit(2);
}

// V8's compiled code kept between runs, beside the project's Pulumi CLI build: each start of this
// command, and of the Pulumi program and provider it runs (they inherit the variable), takes about
// half the CPU. NODE_DISABLE_COMPILE_CACHE=1 turns it off; a directory that cannot be written is skipped.
const cacheRoot =
  process.env.AGENT_IAC_CACHE_DIR ||
  path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "agent-iac");
process.env.NODE_COMPILE_CACHE ||= path.join(cacheRoot, "node-compile-cache");
module.enableCompileCache?.(process.env.NODE_COMPILE_CACHE);

const source = new URL("../src/cli.ts", import.meta.url);
await import(existsSync(source) ? source.href : new URL("../dist/cli.js", import.meta.url).href);
