// `agent-iac events` and the list commands against the simulator: in-process through the command
// layer (runInProcess) for their flags, output and exit codes; as real processes where a stack
// on the Pulumi backend gives the connection.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Client, createClient } from "../../../src/api/index.ts";
import { type CliResult, runCli, runInProcess } from "../../helpers/cli.ts";
import { simulatorCall, startTestSimulator } from "../../helpers/simulator.ts";

type Sim = Awaited<ReturnType<typeof startTestSimulator>>;
let sim: Sim;
let client: Client;
let agentId = "";
let paId = "";
let convId = "";
let conv: Awaited<ReturnType<Client["conversations"]["create"]>>;

/**
 * The stack's config comes before AGENT_IAC_BASE_URL (the checkout's dev stack points at
 * 127.0.0.1:8787), so a test that names the simulator by AGENT_IAC_BASE_URL passes it as
 * --base-url, the command line's address that comes before the stack's.
 */
function cli(args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  const clean = {
    ...process.env,
    AGENT_IAC_BASE_URL: undefined,
    AGENT_IAC_API_KEY: undefined,
    AGENT_IAC_STREAM_TOKEN: undefined,
  };
  const { AGENT_IAC_BASE_URL: baseUrl, ...rest } = env;
  const at = baseUrl && !args.includes("--base-url") && !args.includes("--events-url") ? ["--base-url", baseUrl] : [];
  return runInProcess([...args, ...at], { env: { ...clean, ...rest } });
}
const withKey = () => ({ AGENT_IAC_BASE_URL: sim.url, AGENT_IAC_API_KEY: sim.apiKey });
const ndjson = (text: string) =>
  text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));

beforeAll(async () => {
  sim = await startTestSimulator({ port: 0, eventDelayMs: 5, pageSize: 2, quiet: true });
  client = createClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  paId = (
    await client.proceduralAgents.create({
      name: "notes",
      description: "d",
      config: { filter_statuses: ["completed"] },
    })
  ).id;
  agentId = (
    await client.conversationalAgents.create({
      name: "cli-agent",
      description: "d",
      config: { personas: [{ name: "Grace" }], tool: { tools: [{ ns: "syscall", name: "refund" }] } },
      postprocess_agents: [paId],
    })
  ).id;
  for (let i = 0; i < 4; i++) {
    conv = await client.conversations.create({
      agent_id: agentId,
      channel: { type: "phone", callee_no: "+15550100" },
      context: { simulation: { user_turns: ["I want a refund", "Bye."] } },
    });
    await simulatorCall(sim, "POST", "/_simulator/feedbacks", {
      conversation_id: conv.id,
      rating: "good",
      reasons: ["fast"],
      comment: "ok",
    });
  }
  convId = conv.id;
  for await (const _ of client.conversations.events(convId)) {
    // wait for the last conversation to end
  }
});
afterAll(async () => {
  await client?.close();
  await sim?.close();
});

describe("list commands", () => {
  test("conversations list: a table across pages, and NDJSON", async () => {
    const table = await cli(["conversations", "list"], withKey());
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+AGENT_ID\s+STATUS/);
    expect(lines.at(-1)).toBe("4 items");
    expect(table.stdout).toContain(convId);

    const json = await cli(["conversations", "list", "--json", "--created-at-gte", "2000-01-01T00:00:00Z"], withKey());
    expect(json.code).toBe(0);
    const items = ndjson(json.stdout);
    expect(items).toHaveLength(4);
    expect(items.every((c: { agent_id: string }) => c.agent_id.startsWith(agentId))).toBe(true);

    const limited = await cli(["conversations", "list", "--json", "--limit", "3"], withKey());
    expect(ndjson(limited.stdout)).toHaveLength(3);
  });

  test("conversations procedures <id> and procedures list with filters", async () => {
    let items: { status: string }[] = [];
    for (let i = 0; i < 100 && !(items.length === 1 && items[0]?.status === "completed"); i++) {
      items = ndjson((await cli(["conversations", "procedures", convId, "--json"], withKey())).stdout);
      if (items[0]?.status !== "completed") await new Promise((r) => setTimeout(r, 50));
    }
    expect(items).toEqual([expect.objectContaining({ name: "notes", conversation_id: convId, status: "completed" })]);
    const byConv = await cli(["procedures", "list", "--conversation-id", convId], withKey());
    expect(byConv.code).toBe(0);
    expect(byConv.stdout).toMatch(/^ID\s+NAME\s+CONVERSATION_ID/);
    expect(byConv.stdout).toContain("1 item\n");
    const byAgent = ndjson((await cli(["procedures", "list", "--agent-id", paId, "--json"], withKey())).stdout);
    expect(byAgent.length).toBeGreaterThanOrEqual(1);
  });

  test("feedbacks list --service-id, with the reasons line", async () => {
    const out = await cli(["feedbacks", "list", "--service-id", sim.serviceId], withKey());
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^ID\s+CONVERSATION_ID\s+RATING/);
    expect(out.stdout).toContain("4 items");
    const missing = await cli(["feedbacks", "list"], withKey());
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--service-id is required");
  });

  test("usage and configuration errors exit 2; an unreachable service exits 3; the key is never printed", async () => {
    // No key: on a loopback address the simulator's local dev key applies; elsewhere it is a configuration error.
    expect((await cli(["conversations", "list"], { AGENT_IAC_BASE_URL: sim.url })).code).toBe(0);
    const remote = await cli(["conversations", "list", "--base-url", "https://agents.example.invalid"], {});
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/no API key.*agents:apiKey.*AGENT_IAC_API_KEY/);
    expect((await cli(["conversations", "list", "--bogus"], withKey())).code).toBe(2);
    expect((await cli(["conversations", "frobnicate"], withKey())).code).toBe(2);
    expect((await cli(["conversations", "list", "--created-at-gte", "yesterday"], withKey())).code).toBe(2);
    const wrong = await cli(["conversations", "list"], {
      AGENT_IAC_BASE_URL: sim.url,
      AGENT_IAC_API_KEY: "sk_wrong_secret",
    });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("401");
    expect(wrong.stderr + wrong.stdout).not.toContain("sk_wrong_secret");
    const down = await cli(["procedures", "list", "--base-url", "http://127.0.0.1:9"], {
      AGENT_IAC_API_KEY: "sk_x_secret",
    });
    expect(down.code).toBe(3);
    expect(down.stderr).toContain("nothing answers at http://127.0.0.1:9");
    // Every retried request leaves one line: what failed, the route, the wait, attempt n of m.
    expect(down.stderr).toMatch(
      /^retrying GET \/procedures after ECONNREFUSED in \d+(\.\d)? m?s \(attempt 2 of \d\)$/m,
    );
    const help = await cli(["conversations", "list", "--help"], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--completed-at-gte");
  });
});

describe("on the dev stack with no flags", () => {
  let project: string;
  let env: Record<string, string | undefined>;
  beforeAll(async () => {
    // A checkout whose dev stack points at the simulator; the stack is not created on the backend
    // yet (a fresh clone), so its Pulumi.dev.yaml is read.
    project = await mkdtemp(path.join(os.tmpdir(), "agent-iac-operate-"));
    await writeFile(path.join(project, "Pulumi.yaml"), "name: agent-iac-operate\nruntime: nodejs\n");
    await writeFile(path.join(project, "Pulumi.dev.yaml"), `config:\n  agents:baseUrl: ${sim.url}\n`);
    await mkdir(path.join(project, "state"));
    env = {
      ...process.env,
      AGENT_IAC_BASE_URL: undefined,
      AGENT_IAC_API_KEY: undefined,
      PULUMI_BACKEND_URL: `file://${path.join(project, "state")}`,
      PULUMI_CONFIG_PASSPHRASE: "test-passphrase",
      PULUMI_HOME: path.join(project, "home"),
    };
  });
  afterAll(() => rm(project, { recursive: true, force: true }));

  test("conversations list and procedures list work with no flag and no variable (the local dev key)", async () => {
    const list = await runCli(["conversations", "list", "--json"], { cwd: project, env });
    expect(list.code, list.stderr).toBe(0);
    expect(ndjson(list.stdout)).toHaveLength(4);
    const procedures = await runCli(["procedures", "list"], { cwd: project, env });
    expect(procedures.code, procedures.stderr).toBe(0);
    expect(procedures.stdout).toMatch(/^ID\s+NAME/);
  });

  test("nothing listening at the stack's loopback address: exit 3, and how to start the simulator", async () => {
    await writeFile(path.join(project, "Pulumi.down.yaml"), "config:\n  agents:baseUrl: http://127.0.0.1:9\n");
    const down = await runCli(["conversations", "list", "--stack", "down"], { cwd: project, env });
    expect(down.code).toBe(3);
    expect(down.stderr).toContain("nothing answers at http://127.0.0.1:9");
    expect(down.stderr).toContain("npm run service");
    expect(down.stderr).not.toMatch(/^\s+at /m);
  });
});

describe("agent-iac events", () => {
  test("prints the transcript and exits 0 after conversation.ended", async () => {
    const out = await cli(["events", convId], withKey());
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("agent: Hello, this is Grace. How can I help you today?\n");
    expect(out.stdout).toContain("user: I want a refund\n");
    expect(out.stdout).toMatch(/tool refund\(.*\) → \{"ok":true,"tool":"refund"\}/);
    expect(out.stdout).toContain("agent: I have used refund for you.\n");
    expect(out.stdout.trimEnd().endsWith("(conversation ended)")).toBe(true);
  });

  test("--json prints one envelope per line", async () => {
    const out = await cli(["events", convId, "--json"], withKey());
    expect(out.code).toBe(0);
    const events = ndjson(out.stdout);
    expect(events[0]).toMatchObject({
      id: expect.any(String),
      created_at: expect.any(String),
      payload: { type: "conversation.started" },
    });
    expect(events.at(-1).payload.type).toBe("conversation.ended");
  });

  test("with only a stream token and --events-url; the token is never printed", async () => {
    const out = await cli(["events", conv.id, "--json", "--events-url", conv.channel.events_url], {
      AGENT_IAC_STREAM_TOKEN: conv.channel.token,
    });
    expect(out.code).toBe(0);
    expect(ndjson(out.stdout).at(-1).payload.type).toBe("conversation.ended");
    const other = await client.conversations.create({
      agent_id: agentId,
      channel: { type: "phone", callee_no: "+15550101" },
    });
    const denied = await cli(["events", conv.id, "--events-url", conv.channel.events_url], {
      AGENT_IAC_STREAM_TOKEN: other.channel.token,
    });
    expect(denied.code).toBe(2);
    expect(denied.stderr).toContain("403");
    // The token was refused, not the key (none was sent): the message says which, with the reason.
    expect(denied.stderr).toContain("the service refused the stream token from AGENT_IAC_STREAM_TOKEN");
    expect(denied.stderr).toMatch(/→ 403: .*request id req_/);
    expect(denied.stderr).not.toContain("refused the API key");
    expect(denied.stderr + denied.stdout).not.toContain(other.channel.token);
    // A token the service does not know (401) is the token's fault, not the API key's.
    const wrong = await cli(["events", conv.id, "--events-url", conv.channel.events_url], {
      AGENT_IAC_STREAM_TOKEN: "tok_not_a_token_of_this_service",
    });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("the service refused the stream token from AGENT_IAC_STREAM_TOKEN");
    expect(wrong.stderr).not.toContain("refused the API key");
    expect(wrong.stderr + wrong.stdout).not.toContain("tok_not_a_token_of_this_service");
  });

  test("an unknown conversation exits 2; an unreachable stream exits 3", async () => {
    expect((await cli(["events", "conv_nope"], withKey())).code).toBe(2);
    const down = await cli(["events", "conv_x", "--base-url", "http://127.0.0.1:9"], {
      AGENT_IAC_API_KEY: "sk_x_secret",
    });
    expect(down.code).toBe(3);
    expect((await cli(["events"], withKey())).code).toBe(2);
  });
});
