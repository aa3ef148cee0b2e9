// The comparison base (.agent-iac/comparison-base.<stack>.json) is never lost or misapplied
// silently (issue 41): a damaged base is an error naming the file and the way out (the pending
// comparison is not replaced by a new base without a word), and another stack's base is refused.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordDeployBase } from "../../src/compare/index.ts";

describe("the pending comparison base", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "comparison-base-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const file = (stack: string) => path.join(dir, `comparison-base.${stack}.json`);

  it("is recorded, then carried over to the next deploy while its comparison is pending", async () => {
    const first = await recordDeployBase(dir, "dev", { versions: { support: "ca_a@v1" }, seen: ["support"] });
    expect(first).toEqual({ versions: { support: "ca_a@v1" } });
    const second = await recordDeployBase(dir, "dev", { versions: { support: "ca_a@v2" }, seen: ["support"] });
    expect(second.versions).toEqual({ support: "ca_a@v1" });
    expect(second.carried).toBeDefined();
  });

  it("records what each of its deploys saw the stack hold: the link to the stack where no history is readable", async () => {
    const before = { versions: { support: "ca_a@v1" }, seen: ["support"] };
    await recordDeployBase(dir, "linked", { ...before, after: { support: "ca_b@v1" } });
    // A deploy whose state could not be read after it keeps the last link it had.
    await recordDeployBase(dir, "linked", { versions: { support: "ca_b@v1" }, seen: ["support"] });
    expect(JSON.parse(await readFile(file("linked"), "utf8")).held_after).toEqual({ support: "ca_b@v1" });
    await recordDeployBase(dir, "linked", {
      versions: { support: "ca_b@v1" },
      seen: ["support"],
      after: { support: "ca_c@v1" },
    });
    const recorded = JSON.parse(await readFile(file("linked"), "utf8"));
    expect(recorded.versions).toEqual({ support: "ca_a@v1" });
    expect(recorded.held_after).toEqual({ support: "ca_c@v1" });
    expect(recorded.held_versions.sort()).toEqual(["ca_a@v1", "ca_b@v1", "ca_c@v1"]);
  });

  it("a truncated base is an error naming the file and the way out, and is left as it was", async () => {
    const text = await readFile(file("dev"), "utf8");
    await writeFile(file("dev"), text.slice(0, 20));
    await expect(
      recordDeployBase(dir, "dev", { versions: { support: "ca_a@v3" }, seen: ["support"] }),
    ).rejects.toMatchObject({
      message: expect.stringContaining(`${file("dev")}: the pending comparison base is damaged: it is not JSON`),
      hint: expect.stringContaining(`rm ${file("dev")}`),
    });
    expect(await readFile(file("dev"), "utf8")).toBe(text.slice(0, 20));
    await writeFile(file("dev"), JSON.stringify({ stack: "dev", versions: ["ca_a@v1"] }));
    await expect(recordDeployBase(dir, "dev", { versions: {}, seen: [] })).rejects.toThrow(/damaged: it does not hold/);
  });

  it("another stack's base (a name that maps to the same file) is refused, not applied", async () => {
    await writeFile(
      file("team_dev"),
      JSON.stringify({
        stack: "team/dev",
        versions: { support: "ca_b@v1" },
        seen: ["support"],
        recorded_at: "2026-01-01T00:00:00Z",
      }),
    );
    await expect(
      recordDeployBase(dir, "team_dev", { versions: { support: "ca_c@v1" }, seen: ["support"] }),
    ).rejects.toThrow(/holds the comparison base of stack "team\/dev", not of "team_dev"/);
  });
});
