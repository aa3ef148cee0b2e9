import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // End-to-end tests drive the real Pulumi CLI; on a 2-core machine, two files at a time.
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // The JSON report lets .ci/run close with the plain "N passed, N failed" line.
    reporters: ["default", ["json", { outputFile: "reports/vitest.json" }]],
  },
});
