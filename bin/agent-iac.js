#!/usr/bin/env node
// The package's command. In the checkout Node runs the TypeScript sources directly (built-in type
// stripping); an installed copy ships no sources and runs the compiled JavaScript in dist/.
import { existsSync } from "node:fs";

const source = new URL("../src/cli.ts", import.meta.url);
await import(existsSync(source) ? source.href : new URL("../dist/cli.js", import.meta.url).href);
