// The one reader of a stack's config files (src/settings/stack-files.ts), on files held in memory:
// the stack file's name and place as Pulumi's workspace finds it (a qualified name's last segment,
// the project file's extension, stackConfigDir), the project's declared values and defaults, merge
// keys, an ESC environment, secrets dropped in one place, and which values a file read cannot be
// sure of. Then the pull request's changes: each of the four routes of issue 59 is a guarded
// change, and no guarded setting is read from the head. (test/e2e/product/stack-reads.test.ts and
// test/e2e/plan/guard-routes.test.ts check the same against the real Pulumi CLI.)
import { describe, expect, it } from "vitest";
import {
  plainSettings,
  pullRequestChanges,
  type ReadProjectFile,
  stackFiles,
  withBaseSettings,
} from "../../src/settings/index.ts";

const files =
  (texts: Record<string, string>): ReadProjectFile =>
  async (file) =>
    texts[file];

const PROJECT = "name: agents\nruntime: nodejs\n";
const STACK = "config:\n  agents:judgeBaseUrl: https://judge.example/v1\n";

describe("stackFiles: where the stack file is", () => {
  it("names it by the stack's last segment, as Pulumi does for organization/<project>/<stack>", async () => {
    const read = files({ "Pulumi.yaml": PROJECT, "Pulumi.dev.yaml": STACK });
    for (const name of ["dev", "organization/agents/dev", "acme/agents/dev"]) {
      const resolved = await stackFiles(read, name);
      expect(resolved.stackFile, name).toBe("Pulumi.dev.yaml");
      expect(resolved.found, name).toBe(true);
      expect(resolved.settings["agents:judgeBaseUrl"]?.value, name).toBe("https://judge.example/v1");
    }
  });

  it("takes the project file's extension, Pulumi.json first, then Pulumi.yaml, then Pulumi.yml", async () => {
    const json = await stackFiles(files({ "Pulumi.json": '{"name": "agents"}', "Pulumi.yaml": PROJECT }), "dev");
    expect(json.stackFile).toBe("Pulumi.dev.json");
    expect((await stackFiles(files({ "Pulumi.yml": PROJECT }), "dev")).stackFile).toBe("Pulumi.dev.yml");
    const read = files({ "Pulumi.json": '{"name": "agents"}', "Pulumi.dev.json": '{"config": {"agents:dir": "x"}}' });
    expect((await stackFiles(read, "dev")).settings["agents:dir"]?.value).toBe("x");
  });

  it("follows stackConfigDir (and its older name, a `config:` that is a string)", async () => {
    const moved = files({
      "Pulumi.yaml": `${PROJECT}stackConfigDir: elsewhere\n`,
      "Pulumi.dev.yaml": STACK,
      "elsewhere/Pulumi.dev.yaml": "config:\n  agents:judgeBaseUrl: https://other.example/v1\n",
    });
    const resolved = await stackFiles(moved, "dev");
    expect(resolved.stackFile).toBe("elsewhere/Pulumi.dev.yaml");
    expect(resolved.settings["agents:judgeBaseUrl"]?.value).toBe("https://other.example/v1");
    const legacy = files({ "Pulumi.yaml": `${PROJECT}config: old\n` });
    expect((await stackFiles(legacy, "dev")).stackFile).toBe("old/Pulumi.dev.yaml");
  });
});

describe("stackFiles: what the settings are", () => {
  it("puts the project's values and defaults under the stack file's, in the project's namespace", async () => {
    const project = `${PROJECT}config:
  agents:callerBaseUrl:
    type: string
    default: https://default.example/v1
  agents:judgeModel:
    value: judge-2025-01-01
  agents:dir: agents
  plain: 3
  agents:judgeBaseUrl:
    type: string
    default: https://overridden.example/v1
`;
    const resolved = await stackFiles(files({ "Pulumi.yaml": project, "Pulumi.dev.yaml": STACK }), "dev");
    expect(plainSettings(resolved.settings)).toEqual({
      "agents:callerBaseUrl": { value: "https://default.example/v1" },
      "agents:judgeModel": { value: "judge-2025-01-01" },
      "agents:dir": { value: "agents" },
      "agents:plain": { value: "3" },
      "agents:judgeBaseUrl": { value: "https://judge.example/v1" },
    });
    expect(resolved.plain).toBe(true);
    expect(Object.keys(resolved.sources.declared)).toContain("agents:callerBaseUrl");
  });

  it("applies merge keys, inline and through an anchor; an explicit key wins over a merged one", async () => {
    const stack = `defaults: &defaults
  agents:judgeModel: from-anchor
config:
  <<: [*defaults, { agents:callerBaseUrl: https://merged.example/v1, agents:dir: merged }]
  agents:dir: explicit
`;
    const resolved = await stackFiles(files({ "Pulumi.yaml": PROJECT, "Pulumi.dev.yaml": stack }), "dev");
    expect(resolved.settings["agents:callerBaseUrl"]?.value).toBe("https://merged.example/v1");
    expect(resolved.settings["agents:judgeModel"]?.value).toBe("from-anchor");
    expect(resolved.settings["agents:dir"]).toEqual({ value: "explicit", secret: false, exact: true });
    expect(resolved.settings["<<"]).toBeUndefined();
    // A value only a merge key sets is compared, never read by the cheaper config read.
    expect(resolved.settings["agents:callerBaseUrl"]?.exact).toBe(false);
    expect(resolved.plain).toBe(false);
  });

  it("drops secrets in one place, and keeps their ciphertext to compare", async () => {
    const stack =
      "secretsprovider: awskms://alias/agents\nconfig:\n  agents:apiKey:\n    secure: v1:abc\n  agents:dir: a\n";
    const resolved = await stackFiles(files({ "Pulumi.yaml": PROJECT, "Pulumi.dev.yaml": stack }), "dev");
    expect(resolved.settings["agents:apiKey"]).toEqual({ value: "v1:abc", secret: true, exact: true });
    expect(plainSettings(resolved.settings)).toEqual({ "agents:dir": { value: "a" } });
    expect(resolved.secretsProvider).toBe("awskms://alias/agents");
    expect(resolved.plain).toBe(false);
  });

  it("says where an ESC environment adds values it cannot read", async () => {
    const stack = "environment:\n  - team/prod\nconfig:\n  agents:dir: a\n";
    const resolved = await stackFiles(files({ "Pulumi.yaml": PROJECT, "Pulumi.dev.yaml": stack }), "dev");
    expect(resolved.sources.environment).toBe('["team/prod"]');
    expect(resolved.plain).toBe(false);
  });

  it("marks the values Pulumi's YAML reads otherwise (`pulumi config --json` printed each): never plain", async () => {
    // What the CLI prints for each (v3.259.0) differs from the text: a timestamp, octal, a float,
    // 1000, 31, a rounded float. Quoted, a small integer, a boolean or a word: the same string.
    const inexact = [
      "2025-06-19",
      "012",
      "123456789012345678901234",
      "1_000",
      "0x1F",
      "9007199254740993",
      "+5",
      "1.0",
      "!!str 12",
    ];
    const exact = [
      '"2025-06-19"',
      "'012'",
      "12",
      "0",
      "-7",
      "true",
      "False",
      "https://x.example/v1",
      "gpt-4o-2024-08-06",
    ];
    for (const [value, sure] of [...inexact.map((v) => [v, false] as const), ...exact.map((v) => [v, true] as const)]) {
      const stack = `config:\n  agents:serviceVersion: ${value}\n`;
      const resolved = await stackFiles(files({ "Pulumi.yaml": PROJECT, "Pulumi.dev.yaml": stack }), "dev");
      expect(resolved.settings["agents:serviceVersion"]?.exact, value).toBe(sure);
      expect(resolved.plain, value).toBe(sure);
    }
  });

  it("names a file that is no YAML, with where it was read", async () => {
    const read = files({ "Pulumi.yaml": PROJECT, "Pulumi.dev.yaml": "config: [\n" });
    await expect(stackFiles(read, "dev", " at origin/main")).rejects.toThrow(/^Pulumi\.dev\.yaml at origin\/main: /);
  });
});

describe("a pull request's changes, as Pulumi resolves the settings at the base and in the head", () => {
  const SINK = "http://127.0.0.1:9/v1";
  const baseFiles = { "Pulumi.yaml": PROJECT, "Pulumi.staging.yaml": "config:\n  agents:dir: agents\n" };
  /** The changes, and what the preview reads for agents:judgeBaseUrl when Pulumi's head config says the sink. */
  async function pullRequest(head: Record<string, string>, stack = "staging") {
    const versions = pullRequestChanges(
      await stackFiles(files(baseFiles), stack),
      await stackFiles(files({ ...baseFiles, ...head }), stack),
    );
    const read = withBaseSettings((key) => (key === "agents:judgeBaseUrl" ? SINK : undefined), versions);
    return { changes: versions.changes, judge: read("agents:judgeBaseUrl") };
  }

  it("route 1: a project default of a guarded setting is its change, and the declaration's", async () => {
    const project = `${PROJECT}config:\n  agents:judgeBaseUrl:\n    type: string\n    default: ${SINK}\n`;
    const { changes, judge } = await pullRequest({ "Pulumi.yaml": project });
    expect(changes.map((c) => [c.key, c.change, c.guarded])).toEqual([
      ["project config agents:judgeBaseUrl", "added", true],
      ["agents:judgeBaseUrl", "added", true],
    ]);
    expect(judge).toBeUndefined();
  });

  it("route 2: a merge key in the stack file", async () => {
    const stack = `config:\n  agents:dir: agents\n  <<: { agents:judgeBaseUrl: ${SINK} }\n`;
    const { changes, judge } = await pullRequest({ "Pulumi.staging.yaml": stack });
    expect(changes).toEqual([
      { key: "agents:judgeBaseUrl", change: "added", after: SINK, secret: false, guarded: true },
    ]);
    expect(judge).toBeUndefined();
  });

  it("route 3: stackConfigDir pointing at a copy, even one with the same settings", async () => {
    const { changes, judge } = await pullRequest({
      "Pulumi.yaml": `${PROJECT}stackConfigDir: copy\n`,
      "copy/Pulumi.staging.yaml": "config:\n  agents:dir: agents\n",
    });
    expect(changes).toEqual([
      {
        key: "stack file (stackConfigDir)",
        change: "changed",
        before: "Pulumi.staging.yaml",
        after: "copy/Pulumi.staging.yaml",
        secret: false,
        guarded: true,
      },
    ]);
    // The head's Pulumi config (the sink) is not read: where config comes from moved.
    expect(judge).toBeUndefined();
  });

  it("route 4: a qualified stack name reads the stack's own file", async () => {
    const stack = `config:\n  agents:dir: agents\n  agents:judgeBaseUrl: ${SINK}\n`;
    const { changes, judge } = await pullRequest({ "Pulumi.staging.yaml": stack }, "organization/agents/staging");
    expect(changes.map((c) => c.key)).toEqual(["agents:judgeBaseUrl"]);
    expect(judge).toBeUndefined();
  });

  it("a key written without its namespace is the project's (agents:…), as Pulumi reads it", async () => {
    const { changes, judge } = await pullRequest({
      "Pulumi.staging.yaml": `config:\n  agents:dir: agents\n  judgeBaseUrl: ${SINK}\n`,
    });
    expect(changes.map((c) => [c.key, c.guarded])).toEqual([["agents:judgeBaseUrl", true]]);
    expect(judge).toBeUndefined();
  });

  it("a base value the file read is unsure of is never used: unset, the environment's applies", async () => {
    const versions = pullRequestChanges(
      await stackFiles(
        files({ "Pulumi.yaml": PROJECT, "Pulumi.staging.yaml": "config:\n  <<: { agents:judgeModel: m-2025 }\n" }),
        "staging",
      ),
      await stackFiles(
        files({ "Pulumi.yaml": PROJECT, "Pulumi.staging.yaml": "config:\n  agents:judgeModel: other\n" }),
        "staging",
      ),
    );
    expect(versions.changes.map((c) => c.key)).toEqual(["agents:judgeModel"]);
    expect(withBaseSettings(() => "other", versions)("agents:judgeModel")).toBeUndefined();
  });

  it("an ESC environment added is a guarded change; nothing else changed, the head's values are read", async () => {
    const { changes, judge } = await pullRequest({
      "Pulumi.staging.yaml": "environment:\n  - team/collector\nconfig:\n  agents:dir: agents\n",
    });
    expect(changes).toEqual([
      { key: "environment (ESC)", change: "added", after: '["team/collector"]', secret: false, guarded: true },
    ]);
    expect(judge).toBeUndefined();
    expect((await pullRequest({})).judge).toBe(SINK);
  });
});
