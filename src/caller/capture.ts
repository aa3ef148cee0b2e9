// A real call becomes a regression scenario: the caller's lines (`user.message.received`) become
// `caller.turns`, the tools the agent called become draft expectations by name, and the scenario
// is printed as YAML for the agent file's `smoke:` list. Only the events are read, so a recorded
// call and a replayed stream give the same scenario.
import { stringify } from "yaml";
import type { EventEnvelope } from "../contract/index.ts";

export type CaptureSource = {
  conversationId: string;
  /** The call's channel where it is known (a recording's scenario); the service's list does not show it. */
  channel?: Record<string, unknown> | undefined;
};

/** The scenario, as YAML with a header comment; `notes` are said in that comment. */
export function capturedScenario(envelopes: readonly EventEnvelope[], source: CaptureSource): string {
  const turns: string[] = [];
  const tools: string[] = [];
  for (const { payload } of envelopes) {
    const event = payload as { type: string; text?: unknown; name?: unknown };
    if (event.type === "user.message.received" && typeof event.text === "string") turns.push(event.text);
    if (event.type === "agent.tool_call.created" && typeof event.name === "string") tools.push(event.name);
  }
  const notes = [
    `Captured from conversation ${source.conversationId}: ${turns.length} caller line(s), ${tools.length} tool call(s).`,
    "Draft expectations: the tools the agent called, by name, in order; review them before committing.",
  ];
  if (!source.channel) notes.push("The service does not show the call's number: set channel.callee_no.");
  const scenario = {
    name: `captured-${source.conversationId.replace(/[^A-Za-z0-9-]+/g, "-").toLowerCase()}`.slice(0, 80),
    channel: source.channel ?? { callee_no: "+10000000000" },
    ...(turns.length > 0 ? { transport: "ws", caller: { turns } } : {}),
    expect: { ends: true, no_errors: true, ...(tools.length > 0 ? { tool_calls: tools } : {}) },
  };
  const comment = notes.map((note) => `# ${note}`).join("\n");
  return `${comment}\n${stringify([scenario], { lineWidth: 0 })}`;
}
