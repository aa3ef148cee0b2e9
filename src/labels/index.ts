// `judge label`: people label a seeded, stratified sample of a report's judged expectations on a
// blind page served on loopback, each answer written at once to the labels file `judge check` reads.
export { judgedItems, type LabelItem, stratifiedSample } from "./sample.ts";
export { startLabelServer } from "./server.ts";
export { disagreements, LabelStore } from "./store.ts";
