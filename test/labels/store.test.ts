// The labels file as `judge label` writes it: read by `judge check`'s reader, one answer per labeller
// and item (a changed answer replaces the labeller's own), and two runs writing at once keep both.
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readLabelledFile } from "../../src/judge/index.ts";
import { judgedItems, type LabelItem, LabelStore } from "../../src/labels/index.ts";
import { judgedReport } from "./fixture.ts";

const items = judgedItems([
  judgedReport(
    Array.from({ length: 20 }, (_, i) => ({
      rubric: "greets the caller",
      verdict: i % 3 === 0 ? ("fail" as const) : ("pass" as const),
      transcript: [`agent: Hello (call ${i}).`],
    })),
  ),
]);
const at = new Date("2026-11-29T08:00:00Z");

describe("the labels file", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-labels-store-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps a labeller's latest answer to an item, another labeller's beside it, and comments already there", async () => {
    const file = path.join(dir, "labels.yaml");
    await writeFile(file, "# labels of the greeting rubric\nitems: []\n");
    const store = new LabelStore(file, dir);
    await store.answer(items[0] as LabelItem, "pass", "ann", "", at);
    await store.answer(items[0] as LabelItem, "fail", "ann", "changed my mind", at);
    await store.answer(items[0] as LabelItem, "pass", "bob", "", at);
    const labelled = await readLabelledFile(file, dir);
    expect(labelled.items.map((i) => [i.labeller, i.human, i.note])).toEqual([
      ["ann", "fail", "changed my mind"],
      ["bob", "pass", undefined],
    ]);
    expect(labelled.items[0]?.labelled_at).toBe("2026-11-29T08:00:00.000Z");
    expect(labelled.items[0]?.judge).toEqual({ verdict: "fail", model: "judge-model-e5b1" });
    expect(await readFile(file, "utf8")).toMatch(/^# labels of the greeting rubric\n/);
  });

  it("two runs answering at once on one file keep every answer, and leave no temporary file or lock", async () => {
    const file = path.join(dir, "shared.yaml");
    const ann = new LabelStore(file, dir);
    const bob = new LabelStore(file, dir);
    await Promise.all(
      items.flatMap((item) => [
        ann.answer(item as LabelItem, "pass", "ann", "", at),
        bob.answer(item as LabelItem, "fail", "bob", "", at),
      ]),
    );
    const labelled = await readLabelledFile(file, dir);
    expect(labelled.items.filter((i) => i.labeller === "ann")).toHaveLength(20);
    expect(labelled.items.filter((i) => i.labeller === "bob")).toHaveLength(20);
    expect((await readdir(dir)).filter((f) => f.startsWith("shared.yaml"))).toEqual(["shared.yaml"]);
  });
});
