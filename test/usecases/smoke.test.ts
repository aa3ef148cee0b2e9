// What the smoke use case decides before it opens a stack: the `--shard I/N` text is its to read
// (smoke-prologue.ts suiteShard), a bad one is bad input naming the field (the CLI says the flag,
// exit 2), before anything is read or placed.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { flagNaming } from "../../src/commands/errors.ts";
import { InvalidInputError } from "../../src/errors/index.ts";
import { suiteShard } from "../../src/usecases/smoke-prologue.ts";
import { runInProcess } from "../helpers/cli.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "usecase-smoke-shard-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("suiteShard", () => {
  it("I/N with 1 ≤ I ≤ N is the shard; no text, no shard", () => {
    expect(suiteShard("2/3")).toEqual({ index: 2, count: 3 });
    expect(suiteShard(" 1/1 ")).toEqual({ index: 1, count: 1 });
    expect(suiteShard(undefined)).toBeUndefined();
  });

  it.each(["0/2", "3/2", "1/0", "2", "a/b", ""])("%j is bad input naming the shard field", (text) => {
    let error: unknown;
    try {
      suiteShard(text);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ field: "shard", value: text });
    expect((error as InvalidInputError).describe(flagNaming).message).toBe(
      `--shard must be I/N with 1 ≤ I ≤ N (e.g. 2/3), not "${text}"`,
    );
  });

  it("`smoke --shard 3/2`: exit 2 with the flag's words, before any stack is read", async () => {
    const result = await runInProcess(["smoke", "--shard", "3/2"], { cwd: dir, env: { PATH: process.env.PATH } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--shard must be I/N with 1 ≤ I ≤ N (e.g. 2/3), not "3/2"');
    expect(result.stderr).not.toMatch(/Pulumi\.yaml|stack/i);
  });
});
