// The test layout: a file is where what it tests is.
// - test/e2e/<command>/<topic>.test.ts: end-to-end files, which drive the CLI (a spawned `agent-iac`
//   or runInProcess) or the real Pulumi CLI through a project, filed under the command they are about
//   (`smoke --compare` is smoke's). Two folders are not commands: e2e/cli/ for what every command
//   shares (exit codes, errors, signals, stack names, model faults) and e2e/product/ for the product
//   as a whole (the package, the toolchain, first run, upgrade, teams, fleets, the Pulumi program).
// - test/usecases/<usecase>.test.ts: a use case (src/usecases) run against a temporary project.
// - test/<folder>/: unit tests of src/<folder>; test/*.test.ts: checks of the repository as a whole
//   (the workflow, the vocabulary, the threat model); test/helpers/ and test/fixtures/ serve them all.
import { defineConfig } from "vitest/config";

/**
 * The end-to-end files that run a second time against the simulator's variant profile (the other
 * legal value of every choice the interface leaves open; src/simulator/README.md), so the client is
 * proven against a service other than the one it was written next to. Not here, and why:
 * e2e/start and e2e/product/first-run (npm start runs its own embedded simulator, default profile),
 * e2e/product/teams and toolchain (about the backend and the CLI, not the service),
 * e2e/validate/broken-files (fails before any request), e2e/plan/plan (a preview sends the service no
 * request; its --behave calls are e2e/plan/behave's, which is here).
 */
const BOTH_PROFILES = [
  "test/e2e/smoke/smoke.test.ts",
  "test/e2e/product/agents.test.ts",
  "test/e2e/product/reliability.test.ts",
  "test/api/simulator.test.ts",
  "test/e2e/events/events-and-lists.test.ts",
  "test/definitions/examples-smoke.test.ts",
  "test/e2e/watch/watch.test.ts",
  "test/e2e/smoke/gates.test.ts",
  "test/e2e/plan/behave.test.ts",
  "test/e2e/smoke/compare.test.ts",
];

export default defineConfig({
  test: {
    // Test files wait more than they compute (a caller's quiet pause, a watch window, a provider's
    // retry backoff): with three files at a time a 2-core machine used 1.3 cores on average.
    maxWorkers: 4,
    // A worker process runs file after file instead of one process per file: a fresh process
    // re-imported @pulumi/pulumi and src/ for every file (about 3 s of CPU each). Test files leave no
    // global state behind (runInProcess changes neither the process's env nor its cwd; servers are
    // closed in afterAll).
    isolate: false,
    // Marks the run's processes and fails it when one outlives it (test/helpers/leaks.ts).
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // The JSON report lets .ci/run close with the plain "N passed, N failed" line.
    reporters: ["default", ["json", { outputFile: "reports/vitest.json" }]],
    projects: [
      // The npm start and README-recipe files move their copy's dev address off 127.0.0.1:8787
      // (test/helpers/dev-address.ts), so they run beside the rest.
      { extends: true, test: { name: "default", include: ["test/**/*.test.ts"] } },
      {
        extends: true,
        test: { name: "variant", include: BOTH_PROFILES, env: { AGENT_IAC_TEST_PROFILE: "variant" } },
      },
    ],
  },
});
