// The policy pack's entry (PulumiPolicy.yaml, package.json "main"). @pulumi/pulumi's policy-pack
// runner loads it with require(), which cannot wait for an ES module's top-level await: so the rules
// are imported here without awaiting, and a failure to load them ends the process with the reason.
// The checkout runs its TypeScript sources (Node's type stripping); an installed agent-iac ships
// compiled JavaScript under dist/ (Node strips no types under node_modules).
import { existsSync } from "node:fs";

const source = new URL("../src/policy/pack.ts", import.meta.url);
const entry = existsSync(source) ? source : new URL("../dist/policy/pack.js", import.meta.url);

import(entry.href)
  .then((pack) => pack.servePolicyPack())
  .catch((error) => {
    console.error(`agent-iac policy pack: cannot load its rules from ${entry.pathname}: ${error?.stack ?? error}`);
    process.exit(1);
  });
