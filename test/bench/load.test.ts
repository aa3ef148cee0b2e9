// The benchmark's quiet/busy rule (scripts/bench-load.ts), on hand-made samples.
import { describe, expect, it } from "vitest";
import { busyWarning, describeLoad, judgeLoad, type LoadSample } from "../../scripts/bench-load.ts";

const samples = (load1: number, othersCpu: (number | null)[]): LoadSample[] =>
  othersCpu.map((share, i) => ({ at: i * 1000, load1, othersCpu: share }));

describe("judgeLoad", () => {
  it("calls a machine quiet when the load before was low and other processes stayed under 10 %", () => {
    const verdict = judgeLoad(samples(1.9, [0.02, 0.05, 0.08]), 2, 0.4);
    expect(verdict).toEqual({ quiet: true, load1: 1.9, othersCpu: 0.05, samples: 3, reasons: [] });
    expect(describeLoad(verdict)).toBe("quiet (load 1.9, others 5 % CPU)");
    expect(busyWarning(verdict, "this benchmark")).toBeUndefined();
  });

  it("calls it busy when the load average before the run is above 0.75 × cores", () => {
    const verdict = judgeLoad(samples(0.5, [0.01]), 2, 1.6);
    expect(verdict.quiet).toBe(false);
    expect(verdict.load1).toBe(1.6);
    expect(verdict.reasons).toEqual(["load average 1.60 before the run, above 1.5 (2 cores)"]);
    // 1.6 on 4 cores is quiet.
    expect(judgeLoad(samples(0.5, [0.01]), 4, 1.6).quiet).toBe(true);
  });

  it("calls it busy when other processes used more than 10 % of the CPU on average", () => {
    const verdict = judgeLoad(samples(3.2, [0.05, 0.3, 0.25]), 2);
    expect(verdict.quiet).toBe(false);
    expect(verdict.othersCpu).toBe(0.2);
    expect(verdict.reasons).toEqual(["other processes used 20 % of the CPU, above 10 %"]);
    expect(describeLoad(verdict)).toBe("busy (load 3.2, others 20 % CPU)");
    expect(busyWarning(verdict, "this benchmark")).toContain("WARNING: the machine was BUSY during this benchmark");
    // One short burst does not make a window busy when the mean stays under the limit.
    expect(judgeLoad(samples(1, [0.3, 0, 0, 0]), 2).quiet).toBe(true);
  });

  it("weights each sample's share by the interval it covers", () => {
    const verdict = judgeLoad(
      [
        { at: 1000, load1: 1, othersCpu: 0.5, ms: 100 },
        { at: 2000, load1: 1, othersCpu: 0.02, ms: 900 },
      ],
      2,
    );
    expect(verdict.othersCpu).toBe(0.068);
    expect(verdict.quiet).toBe(true);
  });

  it("says when the other processes' CPU was not measured (not Linux)", () => {
    const verdict = judgeLoad(samples(0.3, [null, null]), 2, 0.2);
    expect(verdict.othersCpu).toBeNull();
    expect(verdict.quiet).toBe(true);
    expect(describeLoad(verdict)).toBe("quiet (load 0.3, others' CPU not measured)");
  });
});
