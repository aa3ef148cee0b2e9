// Live traffic per agent version after a release: `watch` (the current versions against the
// previous ones) and `audit` (which versions take calls, and whose they are), read from the
// service's conversation, procedure and feedback lists with their date filters.
export { audit, classify } from "./audit.ts";
export { readVersionsFile, versionsIn } from "./baseline.ts";
export { figures, percentile, Tally } from "./figures.ts";
export { readHistory, type StackHistory, withPreviousVersions } from "./history.ts";
export { type ReadCount, type ResumeOptions, readAll } from "./read.ts";
export { auditReport, watchReport } from "./render.ts";
export { type Thresholds, trafficVerdict, type WatchInput, watch } from "./watch.ts";
export { parseDuration, previousWindow, resolveWindow, type Window, type WindowFlags } from "./window.ts";
