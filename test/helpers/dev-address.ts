// The dev stack's address (127.0.0.1:8787) belongs to the developer: `npm run service` of the same
// checkout may serve it while `npm test` runs (the README suggests exactly that). Tests that run
// `npm start` or the README's recipes in a copy or clone move that copy's dev address to a free
// loopback port first, so they neither reuse nor collide with the developer's simulator.
import { copyFile, cp, readFile, symlink, writeFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";

export const DEV_ADDRESS = "127.0.0.1:8787";
/** The example judge's documented address (docs/judge.md): the developer's may be running too. */
export const JUDGE_ADDRESS = "127.0.0.1:8788";

/**
 * A loopback port nothing listens on, chosen below the kernel's ephemeral range: a test holds it as
 * an address for a while before anything serves it, and every other server of the suite binds port 0,
 * which the kernel picks from the ephemeral range. A port from that range could be taken in between by
 * another test's simulator, answer the probe, then vanish (seen in CI: `npm start` in the recipes'
 * clone reused a parallel test's simulator and then met ECONNREFUSED).
 */
export async function freePort(): Promise<number> {
  const [low] = await ephemeralRange();
  const floor = 10_000;
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = floor + Math.floor(Math.random() * (low - floor));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free loopback port between ${floor} and ${low} after 50 tries`);
}

/** The kernel's ephemeral port range (Linux); the common default where it cannot be read. */
async function ephemeralRange(): Promise<[number, number]> {
  const text = await readFile("/proc/sys/net/ipv4/ip_local_port_range", "utf8").catch(() => "32768 60999");
  const [low = 32768, high = 60999] = text.trim().split(/\s+/).map(Number);
  return [Math.max(low, 10_001), high];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Rewrites the dev address in the project's Pulumi.dev.yaml to a free port; returns that port. */
export async function moveDevAddress(projectDir: string): Promise<number> {
  const port = await freePort();
  const file = path.join(projectDir, "Pulumi.dev.yaml");
  const text = await readFile(file, "utf8");
  if (!text.includes(DEV_ADDRESS)) throw new Error(`${file} does not name ${DEV_ADDRESS}`);
  await writeFile(file, text.replaceAll(DEV_ADDRESS, `127.0.0.1:${port}`));
  return port;
}

/**
 * A README script on moved addresses: the dev stack's URLs and `npm run service` on `port`, the
 * example judge's URLs and `--port` on `judgePort`.
 */
export function onDevPort(script: string, port: number, judgePort: number): string {
  return script
    .replaceAll(DEV_ADDRESS, `127.0.0.1:${port}`)
    .replace(/npm run service( --)?/g, `npm run service -- --port ${port}`)
    .replaceAll(JUDGE_ADDRESS, `127.0.0.1:${judgePort}`)
    .replace(/(npm run example-judge -- .*--port )8788\b/g, `$1${judgePort}`);
}

/**
 * The checkout's dev stack as a newcomer has it (agents, prompts, Pulumi.dev.yaml with its policy
 * pack and config), copied into `projectDir`, on a free port instead of 127.0.0.1:8787: the
 * developer's own `npm run service` may be running.
 */
export async function copyDevStack(projectDir: string, checkout: string): Promise<number> {
  for (const dir of ["agents", "prompts", "policy-config"]) {
    await cp(path.join(checkout, dir), path.join(projectDir, dir), { recursive: true });
  }
  await symlink(path.join(checkout, "policy"), path.join(projectDir, "policy"));
  await copyFile(path.join(checkout, "Pulumi.dev.yaml"), path.join(projectDir, "Pulumi.dev.yaml"));
  return moveDevAddress(projectDir);
}
