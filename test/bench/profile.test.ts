// The profile breakdown of `npm run bench -- --profile` (scripts/bench-profile.ts): who a sample
// belongs to, on hand-made stacks; and on a real Node process started the way the benchmark starts
// the engine's children, stopped with SIGINT the way the engine stops a provider.
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type CpuProfile,
  childrenCpuSeconds,
  ownerOf,
  pprofTotalSeconds,
  profilingNodeOptions,
  roleOf,
  summarizeProfile,
} from "../../scripts/bench-profile.ts";

const root = "/work/checkout";
const frame = (url: string, functionName = "f") => ({ functionName, url });

describe("ownerOf", () => {
  it("gives YAML parsing called by agent-iac to agent-iac, not to the library", () => {
    const stack = [
      frame(`file://${root}/node_modules/yaml/dist/parse/lexer.js`),
      frame("node:internal/util"),
      frame(`file://${root}/src/definitions/load.ts`),
      frame(`file://${root}/node_modules/@pulumi/pulumi/cmd/run/run.js`),
    ];
    expect(ownerOf(stack, root)).toBe("agent-iac");
  });

  it("gives a stack trace the SDK captures to source-map-support, nearest the leaf", () => {
    const stack = [
      frame(`file://${root}/node_modules/source-map-support/source-map-support.js`),
      frame(`file://${root}/node_modules/@pulumi/pulumi/runtime/debuggable.js`),
      frame(`file://${root}/src/program.ts`),
    ];
    expect(ownerOf(stack, root)).toBe("stack traces (source-map-support)");
  });

  it("names module loading, the SDK, gRPC, other libraries, GC and unattributed native time", () => {
    expect(ownerOf([frame("node:internal/modules/cjs/loader")], root)).toBe("module loading");
    expect(ownerOf([frame(`file://${root}/node_modules/@pulumi/pulumi/runtime/rpc.js`)], root)).toBe("Pulumi SDK");
    expect(ownerOf([frame(`file://${root}/node_modules/google-protobuf/google-protobuf.js`)], root)).toBe(
      "gRPC and protobuf",
    );
    expect(ownerOf([frame(`file://${root}/node_modules/semver/index.js`)], root)).toBe("other libraries");
    expect(ownerOf([frame("", "(garbage collector)")], root)).toBe("garbage collection");
    expect(ownerOf([frame("", "(program)")], root)).toBe("native (V8 and Node, unattributed)");
    // Another checkout's src/ is not ours.
    expect(ownerOf([frame("file:///elsewhere/src/x.ts")], root)).toBe("other");
  });
});

describe("summarizeProfile", () => {
  it("counts a sample until the next one, leaves (idle) out of busy time, and finds the role", () => {
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame("", "(root)"), children: [2, 3, 4] },
        { id: 2, callFrame: frame(`file://${root}/node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js`) },
        { id: 3, callFrame: frame("", "(idle)") },
        { id: 4, callFrame: frame(`file://${root}/src/provider/runtime.ts`) },
      ],
      samples: [2, 3, 4, 4],
      timeDeltas: [0, 1000, 500_000, 250_000],
      startTime: 0,
      endTime: 2_000_000,
    };
    const summary = summarizeProfile(profile, root);
    expect(summary.role).toBe("provider");
    expect(summary.livedS).toBe(2);
    // Sample 0 (SDK) lasts 1 ms, sample 1 (idle) 500 ms, sample 2 (ours) 250 ms, the last one 0.
    expect(summary.categories).toEqual({ "Pulumi SDK": 0.001, "agent-iac": 0.25 });
    expect(summary.busyS).toBeCloseTo(0.251, 6);
    const only = (url: string) => ({ ...profile, nodes: [{ id: 1, callFrame: frame(url) }] });
    expect(roleOf(only("file:///x/node_modules/@pulumi/pulumi/cmd/run/index.js"))).toBe("program");
    expect(roleOf(only("file:///x/node_modules/@pulumi/pulumi/cmd/run-policy-pack/run.js"))).toBe("policy pack");
    expect(roleOf(only("node:internal/main/eval_string"))).toBe("other");
  });
});

describe("the engine's figures", () => {
  it("reads pprof's total and bash's children times", () => {
    expect(pprofTotalSeconds("File: pulumi\nDuration: 9.41s, Total samples = 4.21s (44.74%)\n")).toBe(4.21);
    expect(pprofTotalSeconds("Duration: 1.2s, Total samples = 830ms (69%)")).toBe(0.83);
    expect(pprofTotalSeconds("no profile")).toBeUndefined();
    expect(childrenCpuSeconds("0m0.001s 0m0.002s\n1m2.500s 0m1.250s\n")).toBe(63.75);
    expect(childrenCpuSeconds("")).toBeUndefined();
  });
});

describe("profiling a process the engine stops with SIGINT", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("writes its profile, and the busy loop in src/ is agent-iac's", async () => {
    const fake = await mkdtemp(path.join(os.tmpdir(), "agent-iac-profile-"));
    dirs.push(fake);
    await mkdir(path.join(fake, "src"));
    const profiles = path.join(fake, "profiles");
    await mkdir(profiles);
    // Busy for 300 ms in a file under src/, then waits the way a provider waits for requests.
    await writeFile(
      path.join(fake, "src", "hot.cjs"),
      [
        "function spin() { const end = Date.now() + 300; let x = 0; while (Date.now() < end) x += Math.sqrt(x + 1); return x; }",
        "spin();",
        "process.stdout.write('ready\\n');",
        "setInterval(() => {}, 1000);",
      ].join("\n"),
    );
    const child = spawn(process.execPath, [path.join(fake, "src", "hot.cjs")], {
      env: { ...process.env, NODE_OPTIONS: await profilingNodeOptions(profiles) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    const written = (await readdir(profiles)).filter((f) => f.endsWith(".cpuprofile"));
    expect(written).toHaveLength(1);
    const profile = JSON.parse(await readFile(path.join(profiles, written[0] as string), "utf8")) as CpuProfile;
    const summary = summarizeProfile(profile, fake);
    expect(summary.role).toBe("other");
    expect(summary.categories["agent-iac"]).toBeGreaterThan(0.2);
    expect(summary.busyS).toBeLessThanOrEqual(summary.livedS);
  });
});
