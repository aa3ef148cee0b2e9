import { driftBench, driftTable } from "/work/wt/drift/scripts/bench-drift.ts";

const t = Date.now();
const d = driftBench();
console.log(driftTable(d).join("\n"));
console.error("ms", Date.now() - t);
