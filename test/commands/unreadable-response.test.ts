// A response the interface's schema does not accept is said in one line a person can read: each
// field at fault with what was expected. zod's own multi-line text reached users with a literal
// `\n` between its issues (every surface escapes control characters in service text).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInProcess } from "../helpers/cli.ts";

const KEY = "sk-unreadable-response-4b1e";

describe("a response that does not have the interface's shape", () => {
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "x-request-id": "req_shape" });
      const item = { id: 5, agent_id: 7, status: 3, created_at: 1 };
      response.end(JSON.stringify({ data: Array.from({ length: 3 }, () => item) }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it("names each field at fault on one line, with no escaped newline, exit 3", async () => {
    const result = await runInProcess(["conversations", "list", "--base-url", url], {
      env: { ...process.env, AGENT_IAC_API_KEY: KEY },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).not.toContain("\\n");
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain(
      "GET /conversations → 200: unexpected response: data[0].id: expected string, received number; data[0].agent_id: expected string, received number;",
    );
    // Bounded: the first five issues, then how many more.
    expect(result.stderr).toMatch(/; and \d+ more/);
    expect(result.stderr).toContain("(request id req_shape)");
  });
});
