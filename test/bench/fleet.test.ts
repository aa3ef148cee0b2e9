// The fleet benchmark's targets (scripts/bench-fleet.ts) on hand-made points: each target is a ratio
// of the two sides, and one measured on a busy machine says it checked nothing, met or not.
import { describe, expect, it } from "vitest";
import { type CurvePoint, type Measures, targets, targetTable } from "../../scripts/bench-fleet.ts";
import { judgeLoad } from "../../scripts/bench-load.ts";

const measures = (seconds: number, stateBytesPerAgent = 3600): Measures => ({
  upS: seconds,
  noopPreviewS: seconds / 4,
  changePreviewS: seconds / 4,
  changeUpS: seconds / 3,
  stateBytesPerAgent,
  peakProgramBytes: 0,
  peakProviderBytes: 0,
});
const quiet = judgeLoad([{ at: 0, load1: 1, othersCpu: 0.01 }], 2, 0.3);
const busy = judgeLoad([{ at: 0, load1: 9, othersCpu: 0.4 }], 2, 6);
const point = (agents: number, ours: number, control: number, load = quiet): CurvePoint => ({
  backend: "file",
  agents,
  ours: measures(ours),
  control: measures(control),
  load,
});
const references = { file: { upEmptyS: 1, noopPreviewOneS: 1 } };

describe("fleet targets", () => {
  it("takes each ratio at the largest fleet, and B1b and B2 at 100 agents", () => {
    const list = targets([point(100, 3, 2.5), point(1000, 72, 70)], references);
    const byId = Object.fromEntries(list.map((t) => [t.id, t]));
    expect(byId.up).toMatchObject({ value: 72 / 70, met: true, busy: false });
    expect(byId.B1b?.value).toBeCloseTo((3 - 1) / (2.5 - 1), 10);
    expect(byId.B1b?.met).toBe(false);
    expect(byId.B2).toMatchObject({ value: 0.75, met: true });
    expect(targetTable({ points: [], references, targets: list })).toContain("| 1.03 | ≤ 1.3 | met |");
  });

  it("marks a target measured on a busy machine as not checked, whichever way it went", () => {
    const list = targets([point(100, 9, 2, busy), point(1000, 72, 70, busy)], references);
    const table = targetTable({ points: [], references, targets: list });
    expect(list.every((t) => t.busy)).toBe(true);
    expect(table).toContain("| ≤ 1.3 | met on a BUSY machine: not checked |");
    expect(table).toContain("| ≤ 1.2 | missed on a BUSY machine: not checked |");
    expect(table).not.toMatch(/\| met \|$/m);
  });
});
