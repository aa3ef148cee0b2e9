// `count` parents and as many children, each child depending on one parent (the agents' two-level
// shape), with a dynamic provider whose create only waits 50 ms: what the engine costs by itself.
import * as pulumi from "@pulumi/pulumi";

const config = new pulumi.Config("bench");
const count = Number(config.get("count") ?? "50");
/** `single`: one resource, the reference for a 1-agent stack. */
const single = config.get("shape") === "single";

const provider: pulumi.dynamic.ResourceProvider = {
  async create(inputs) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    return { id: `${inputs.label}-${Math.random().toString(36).slice(2)}`, outs: { ...inputs, ref: inputs.label } };
  },
};

class Trivial extends pulumi.dynamic.Resource {
  declare readonly ref: pulumi.Output<string>;
  constructor(name: string, props: { label: string; parent?: pulumi.Input<string> }) {
    super(provider, name, { ...props, ref: undefined });
  }
}

const refs: Record<string, pulumi.Output<string>> = {};
if (single) refs.only = new Trivial("only", { label: "only" }).ref;
for (let i = 0; i < (single ? 0 : count); i++) {
  const parent = new Trivial(`parent-${i}`, { label: `parent-${i}` });
  const child = new Trivial(`child-${i}`, { label: `child-${i}`, parent: parent.ref });
  refs[`child-${i}`] = child.ref;
}
export const created = Object.keys(refs).length;
