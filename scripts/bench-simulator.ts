// The simulator in its own process for the benchmarks, as a real service would be: the Automation
// API's event handling in the benchmark's process must not slow its answers down.
import { spawn } from "node:child_process";
import path from "node:path";
import { projectRoot } from "../src/workspace/index.ts";

export type BenchSimulator = { url: string; apiKey: string; close(): void };

export async function simulatorProcess(latencyMs: number): Promise<BenchSimulator> {
  const apiKey = `sk-bench-${Math.random().toString(36).slice(2)}`;
  const child = spawn(
    process.execPath,
    [
      path.join(projectRoot, "src", "cli.ts"),
      "service",
      "--port",
      "0",
      "--latency-ms",
      String(latencyMs),
      "--event-delay-ms",
      "20",
    ],
    { env: { ...process.env, AGENT_IAC_API_KEY: apiKey }, stdio: ["ignore", "pipe", "ignore"] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let seen = "";
    child.stdout.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(seen);
      if (match?.[1]) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`the simulator exited (${code}) before listening`)));
  });
  return { url, apiKey, close: () => child.kill("SIGTERM") };
}
