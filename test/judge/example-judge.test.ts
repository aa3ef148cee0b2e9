// scripts/example-judge.ts as a user starts it: on a port something else holds (the developer's own
// example judge on its documented 8788, say) it says so in one line and exits 2, no stack trace.
import { execFile } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../src/workspace/index.ts";

const SCRIPT = path.join(projectRoot, "scripts", "example-judge.ts");

function run(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, ...args], { timeout: 30_000 }, (error, _stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? -1) : 0, stderr }),
    );
  });
}

describe("the example judge on a busy port", () => {
  const holder = net.createServer();
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    port = (holder.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it("exits 2 with one line naming the port and the way out", async () => {
    const { code, stderr } = await run(["--port", String(port)]);
    expect(code).toBe(2);
    expect(stderr).toBe(`example judge: 127.0.0.1:${port} is already in use; stop what serves it or pass --port N\n`);
  });
});
