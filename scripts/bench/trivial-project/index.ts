// The engine's own cost for the agents' shape: `count` parents and as many children, each child
// depending on one parent, with a dynamic provider whose create only waits 50 ms (the simulator's
// latency) and returns an id. With `bench:bodies` (a JSON file of the agents' request bodies, in
// pairs) each resource carries the same body as its agent, so the state holds the same payload,
// once; a changed body replaces the resource (create the new one, drop the old), as an agent's does.
import { readFileSync } from "node:fs";
import * as pulumi from "@pulumi/pulumi";

const config = new pulumi.Config("bench");
/** `single`: one resource, the reference for a 1-agent stack. */
const single = config.get("shape") === "single";
const bodiesFile = config.get("bodies");
type Bodies = { procedural: Record<string, unknown>[]; conversational: Record<string, unknown>[] };
const bodies: Bodies | undefined = bodiesFile ? JSON.parse(readFileSync(bodiesFile, "utf8")) : undefined;
const count = bodies ? bodies.procedural.length : Number(config.get("count") ?? "50");

const provider: pulumi.dynamic.ResourceProvider = {
  async create(inputs) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    return { id: `${inputs.label}-${Math.random().toString(36).slice(2)}`, outs: { ref: inputs.label } };
  },
};

class Trivial extends pulumi.dynamic.Resource {
  declare readonly ref: pulumi.Output<string>;
  constructor(name: string, props: { label: string; parent?: pulumi.Input<string>; body?: unknown }) {
    // No diff method: the engine compares the inputs itself; any change replaces.
    super(provider, name, { ...props, ref: undefined }, { replaceOnChanges: ["*"] });
  }
}

const refs: Record<string, pulumi.Output<string>> = {};
if (single) refs.only = new Trivial("only", { label: "only" }).ref;
for (let i = 0; i < (single ? 0 : count); i++) {
  const parent = new Trivial(`parent-${i}`, { label: `parent-${i}`, body: bodies?.procedural[i] });
  const childBody = bodies?.conversational[i];
  if (bodies && !childBody) continue;
  const child = new Trivial(`child-${i}`, { label: `child-${i}`, parent: parent.ref, body: childBody });
  refs[`child-${i}`] = child.ref;
}
export const created = Object.keys(refs).length;
