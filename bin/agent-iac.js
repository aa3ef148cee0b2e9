#!/usr/bin/env node
// The package's command. Node runs the TypeScript sources directly (built-in type stripping).
import "../src/cli.ts";
