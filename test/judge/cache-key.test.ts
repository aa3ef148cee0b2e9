// The judge cache's signing key when AGENT_IAC_JUDGE_CACHE_KEY is not set: a random key created
// 0600 in the user's config directory, outside the checkout, and reused by the next run; another
// machine's key (another config directory) makes the same entries misses.
import { mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { VoteCache } from "../../src/judge/index.ts";

const KEY = {
  judge: { baseUrl: "http://127.0.0.1:9/v1", model: "m" },
  rubric: "greets the caller",
  lines: ["1: agent: hello"],
  vote: 0,
};
const VOTE = { verdict: "pass" as const, reason: "it greets", lines: [1] };

describe("the judge cache's machine key", () => {
  const dirs: string[] = [];
  const temp = async (name: string) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), `agent-iac-${name}-`));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  it("is created 0600 under XDG_CONFIG_HOME, reused by the next cache, and foreign to another machine", async () => {
    const cacheDir = await temp("cache");
    const config = await temp("config");
    const env = { XDG_CONFIG_HOME: config };
    await new VoteCache(cacheDir, { env, within: cacheDir }).put(KEY, VOTE);
    const file = path.join(config, "agent-iac", "judge-cache.key");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await new VoteCache(cacheDir, { env, within: cacheDir }).get(KEY)).toEqual(VOTE);
    const elsewhere = { XDG_CONFIG_HOME: await temp("other-config") };
    expect(await new VoteCache(cacheDir, { env: elsewhere, within: cacheDir }).get(KEY)).toBeUndefined();
  });
});
