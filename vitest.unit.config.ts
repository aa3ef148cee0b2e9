// `npm run test:unit`: the edit-test loop. Every test file except those that need the Pulumi CLI,
// PostgreSQL, a browser or a spawned `agent-iac` that does (NEEDS_TOOLS), once, in the default
// profile. `npm test` (vitest.config.ts) still runs every file, these included.
//
// A file is a unit file unless it is listed here, so a new one that starts the CLI would slow the
// loop silently; instead it fails: this run has no `pulumi` (nor `go` to build one) on PATH, an
// empty toolchain cache and a PULUMI_HOME that does not exist, so scripts/ensure-pulumi stops at
// once. List such a file below (or name it *.e2e.test.ts).
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { defineConfig } from "vitest/config";
import base from "./vitest.config.ts";

const NEEDS_TOOLS = [
  "test/**/*.e2e.test.ts",
  "test/agents.test.ts",
  "test/api/operate.test.ts",
  "test/broken-files.test.ts",
  "test/first-run.test.ts",
  "test/fleet-stacks.test.ts",
  "test/judge-check-script.test.ts",
  "test/judge/check-terminal.test.ts",
  "test/package.upgrade.test.ts",
  "test/postgres-private-clone.test.ts",
  "test/readme/recipes.test.ts",
  "test/reliability.test.ts",
  "test/start-base.test.ts",
  "test/start-service.test.ts",
  "test/start.test.ts",
  "test/teams.test.ts",
  "test/toolchain.test.ts",
  "test/upgrade.test.ts",
  "test/workspace/stack-errors.test.ts",
];

/** PATH without the directories that hold a `pulumi` or a `go`. */
const pathWithoutTools = (process.env.PATH ?? "")
  .split(path.delimiter)
  .filter((dir) => dir !== "" && !existsSync(path.join(dir, "pulumi")) && !existsSync(path.join(dir, "go")))
  .join(path.delimiter);
/** No toolchain is ever built here: without `go`, ensure-pulumi stops before it creates anything. */
const nowhere = path.join(os.tmpdir(), "agent-iac-unit-no-tools");

const { projects: _projects, reporters: _reporters, ...shared } = base.test ?? {};

export default defineConfig({
  test: {
    ...shared,
    name: "unit",
    include: ["test/**/*.test.ts"],
    exclude: NEEDS_TOOLS,
    env: {
      PATH: pathWithoutTools,
      AGENT_IAC_CACHE_DIR: path.join(nowhere, "cache"),
      PULUMI_HOME: path.join(nowhere, "pulumi-home"),
    },
  },
});
