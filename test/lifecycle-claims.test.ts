// The report files a run claims at its first moment (issue 41), in-process: which files the
// arguments ask for (inputs never), and a CommandIO that holds a signal until its run has claimed
// them, then ends the run saying which earlier files were removed.
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askedReportFiles, PLAN_REPORT_FLAGS, RUN_REPORT_FLAGS, startReportFiles } from "../src/commands/flags.ts";
import { CommandIO } from "../src/commands/index.ts";

describe("the report files a run's arguments ask for", () => {
  it("reads every report flag, in both spellings, a bare name under reports/", () => {
    expect(
      askedReportFiles(RUN_REPORT_FLAGS, [
        "--stack",
        "ci",
        "--json=a.json",
        "--junit",
        "out/a.xml",
        "--html",
        "a.html",
      ]),
    ).toEqual(["out/a.xml", "reports/a.json", "reports/a.html"]);
    expect(
      askedReportFiles(PLAN_REPORT_FLAGS, ["--behave", "--behave-report", "b.json", "--markdown", "p.md"]),
    ).toEqual(["reports/p.md", "reports/b.json"]);
  });

  it("claims nothing for --help, and never a file the run reads", () => {
    expect(askedReportFiles(RUN_REPORT_FLAGS, ["--json", "a.json", "--help"])).toEqual([]);
    expect(startReportFiles(["--stack", "dev", "-h"])).toEqual([]);
    expect(startReportFiles(["--no-smoke"])).toEqual([]);
    expect(startReportFiles(["--stack", "prod"])).toEqual([
      "reports/smoke.junit.xml",
      "reports/smoke.json",
      "reports/smoke.html",
    ]);
    const old = path.join("reports", "old.json");
    expect(
      askedReportFiles(RUN_REPORT_FLAGS, ["--compare", old, "--json", "old.json", "--junit", "x.xml"], {
        flags: ["compare"],
        cwd: "/p",
      }),
    ).toEqual(["reports/x.xml"]);
    expect(
      askedReportFiles(RUN_REPORT_FLAGS, ["merge", "reports/m.json", "--json", "m.json"], {
        positionals: true,
        cwd: "/p",
      }),
    ).toEqual([]);
    // An input named by its absolute path is the report of the same name in the run's directory
    // (never the process's): not claimed.
    const args = ["merge", "/p/reports/m.json", "--json", "m.json"];
    expect(askedReportFiles(RUN_REPORT_FLAGS, args, { positionals: true, cwd: "/p" })).toEqual([]);
    expect(askedReportFiles(RUN_REPORT_FLAGS, args, { positionals: true, cwd: "/q" })).toEqual(["reports/m.json"]);
  });
});

describe("CommandIO.claimReports", () => {
  let dir: string;
  const cwd = process.cwd();
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "claims-"));
    process.chdir(dir);
  });
  afterAll(async () => {
    process.chdir(cwd);
    await rm(dir, { recursive: true, force: true });
  });

  it("holds a signal until the run has claimed its reports, then ends the run naming the earlier files removed", async () => {
    await writeFile("earlier.json", "earlier green run\n");
    await writeFile("kept.txt", "not a report of this run\n");
    const idle: [string, string][] = [];
    const io = new CommandIO({ stdout: { write: () => true }, stderr: { write: () => true } }, (signal, note) => {
      idle.push([signal, note]);
    });
    io.signal("SIGINT");
    expect(idle).toEqual([]);
    expect(io.interruptedBy).toBeUndefined();
    await io.claimReports(["earlier.json", "never-written.xml"]);
    expect(idle).toEqual([["SIGINT", "; no report written (earlier.json, never-written.xml removed: not this run's)"]]);
    await expect(stat("earlier.json")).rejects.toMatchObject({ code: "ENOENT" });
    expect(await readFile("kept.txt", "utf8")).toBe("not a report of this run\n");
    // A run claims once: a second claim removes nothing.
    await writeFile("earlier.json", "this run's own\n");
    await io.claimReports(["earlier.json"]);
    expect(await readFile("earlier.json", "utf8")).toBe("this run's own\n");
    // A report the run wrote itself is not said to be removed.
    io.signal("SIGTERM");
    expect(idle.at(-1)).toEqual(["SIGTERM", "; no report written (never-written.xml removed: not this run's)"]);
  });
});
