// The one connection resolver: precedence of stack config, environment and the local dev key.
import { describe, expect, it } from "vitest";
import { isLoopbackUrl, LOCAL_DEV_KEY, requireConnection, resolveConnection } from "../../src/settings/index.ts";
import { DEV_API_KEY } from "../../src/simulator/index.ts";

type Row = {
  name: string;
  config: Record<string, string>;
  env: Record<string, string>;
  baseUrl: string | undefined;
  apiKey: string | undefined;
  keySource?: string | undefined;
};

const REMOTE = "https://agents.example.com";
const LOCAL = "http://127.0.0.1:8787";

const rows: Row[] = [
  {
    name: "stack config wins over the environment",
    config: { "agents:baseUrl": REMOTE, "agents:apiKey": "k-config" },
    env: { AGENT_IAC_BASE_URL: "http://env.example", AGENT_IAC_API_KEY: "k-env" },
    baseUrl: REMOTE,
    apiKey: "k-config",
    keySource: "stack config",
  },
  {
    name: "the environment when the stack sets nothing",
    config: {},
    env: { AGENT_IAC_BASE_URL: REMOTE, AGENT_IAC_API_KEY: "k-env" },
    baseUrl: REMOTE,
    apiKey: "k-env",
    keySource: "AGENT_IAC_API_KEY",
  },
  {
    name: "an empty config value counts as unset (the environment applies)",
    config: { "agents:baseUrl": "", "agents:apiKey": "" },
    env: { AGENT_IAC_BASE_URL: REMOTE, AGENT_IAC_API_KEY: "k-env" },
    baseUrl: REMOTE,
    apiKey: "k-env",
  },
  {
    name: "an empty environment value counts as unset",
    config: { "agents:baseUrl": REMOTE },
    env: { AGENT_IAC_BASE_URL: "", AGENT_IAC_API_KEY: "" },
    baseUrl: REMOTE,
    apiKey: undefined,
    keySource: undefined,
  },
  {
    name: "a loopback address with no key: the local dev key",
    config: { "agents:baseUrl": LOCAL },
    env: {},
    baseUrl: LOCAL,
    apiKey: LOCAL_DEV_KEY,
    keySource: "the local dev key",
  },
  {
    name: "a loopback address: a configured key still wins over the dev key",
    config: { "agents:baseUrl": "http://localhost:9000" },
    env: { AGENT_IAC_API_KEY: "k-env" },
    baseUrl: "http://localhost:9000",
    apiKey: "k-env",
  },
  {
    name: "a remote address never gets the dev key",
    config: {},
    env: { AGENT_IAC_BASE_URL: REMOTE },
    baseUrl: REMOTE,
    apiKey: undefined,
  },
  { name: "nothing set", config: {}, env: {}, baseUrl: undefined, apiKey: undefined },
];

describe("resolveConnection", () => {
  it.each(rows)("$name", (row) => {
    const connection = resolveConnection((key) => row.config[key], row.env);
    expect(connection.baseUrl).toBe(row.baseUrl);
    expect(connection.apiKey).toBe(row.apiKey);
    if ("keySource" in row) expect(connection.keySource).toBe(row.keySource);
  });

  it("takes the service version from stack config only, empty as unset", () => {
    expect(resolveConnection((k) => ({ "agents:serviceVersion": "2025-06-19" })[k], {}).serviceVersion).toBe(
      "2025-06-19",
    );
    expect(resolveConnection((k) => ({ "agents:serviceVersion": "" })[k], {}).serviceVersion).toBeUndefined();
  });

  it("lets an explicit command-line address come before the stack's", () => {
    const connection = resolveConnection(
      (k) => (k === "agents:baseUrl" ? REMOTE : undefined),
      {},
      { baseUrl: "http://127.0.0.1:1234" },
    );
    expect(connection).toMatchObject({ baseUrl: "http://127.0.0.1:1234", loopback: true, apiKey: LOCAL_DEV_KEY });
  });

  it("knows loopback addresses", () => {
    for (const url of ["http://127.0.0.1:1", "http://127.4.5.6", "http://localhost:8787", "http://[::1]:80"]) {
      expect(isLoopbackUrl(url), url).toBe(true);
    }
    for (const url of [REMOTE, "http://10.0.0.1", "http://127.0.0.1.example.com", "not a url", undefined]) {
      expect(isLoopbackUrl(url), String(url)).toBe(false);
    }
  });

  it("uses the simulator's own dev key", () => {
    expect(LOCAL_DEV_KEY).toBe(DEV_API_KEY);
  });
});

describe("requireConnection", () => {
  it("names both places to set a missing address or key, as a configuration error (AGENT_IAC_CONFIG)", () => {
    expect(() =>
      requireConnection(
        resolveConnection(() => undefined, {}),
        "prod",
      ),
    ).toThrow(
      expect.objectContaining({
        code: "AGENT_IAC_CONFIG",
        message: expect.stringMatching(/agents:baseUrl.*AGENT_IAC_BASE_URL/),
      }),
    );
    expect(() =>
      requireConnection(
        resolveConnection((k) => (k === "agents:baseUrl" ? REMOTE : undefined), {}),
        "prod",
      ),
    ).toThrow(
      expect.objectContaining({
        code: "AGENT_IAC_CONFIG",
        message: expect.stringMatching(/agents:apiKey.*AGENT_IAC_API_KEY/),
      }),
    );
  });
});
