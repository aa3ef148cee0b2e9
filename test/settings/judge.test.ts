// The judge settings: stack config before the environment, nothing by default, exit 2 naming the settings.
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors/index.ts";
import { requireJudge, resolveJudge, secretsInEnvironment } from "../../src/settings/index.ts";

const config =
  (values: Record<string, string>) =>
  (key: string): string | undefined =>
    values[key];

describe("judge settings", () => {
  it("reads stack config first, then the environment; an empty value is unset; no judge by default", () => {
    const env = {
      AGENT_IAC_JUDGE_BASE_URL: "http://env/v1",
      AGENT_IAC_JUDGE_MODEL: "env-model",
      AGENT_IAC_JUDGE_API_KEY: "sk-env-judge",
    };
    expect(
      resolveJudge(config({ "agents:judgeBaseUrl": "https://api.openai.com/v1", "agents:judgeModel": " " }), env),
    ).toEqual({
      baseUrl: "https://api.openai.com/v1",
      model: "env-model",
      apiKey: "sk-env-judge",
      timeoutSec: 60,
    });
    expect(resolveJudge(config({}), {})).toEqual({
      baseUrl: undefined,
      model: undefined,
      apiKey: undefined,
      timeoutSec: 60,
    });
    expect(resolveJudge(config({ "agents:judgeTimeoutSec": "5" }), {}).timeoutSec).toBe(5);
    expect(secretsInEnvironment(env)).toContain("sk-env-judge");
    // Every secret the environment may hold is redacted: the caller model's key and the cache's signing key too.
    const all = { AGENT_IAC_CALLER_API_KEY: "sk-caller", AGENT_IAC_JUDGE_CACHE_KEY: "cache-signing-key" };
    expect(secretsInEnvironment(all)).toEqual(["sk-caller", "cache-signing-key"]);
  });

  it("requireJudge: a configuration error naming both settings and their variables; the key is optional", () => {
    let error: unknown;
    try {
      requireJudge(resolveJudge(config({}), {}), "support/greets has judged expectations", "prod");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe("AGENT_IAC_CONFIG");
    expect((error as Error).message).toMatch(
      /support\/greets has judged expectations, but no judge is configured for stack prod: set agents:judgeBaseUrl \(or AGENT_IAC_JUDGE_BASE_URL\) and agents:judgeModel \(or AGENT_IAC_JUDGE_MODEL\)/,
    );
    const local = requireJudge(
      resolveJudge(
        config({ "agents:judgeBaseUrl": "http://127.0.0.1:11434/v1", "agents:judgeModel": "llama3.1:8b" }),
        {},
      ),
      "x",
    );
    expect(local).toEqual({ baseUrl: "http://127.0.0.1:11434/v1", model: "llama3.1:8b", timeoutSec: 60 });
  });
});
