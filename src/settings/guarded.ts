// Every agents:* stack setting agent-iac reads, classified once. A guarded setting sends a
// credential or data (transcripts, the caller's lines) to an address, chooses who receives them, or
// runs code: in a pull request `plan` reads it from the base, the settings diff marks its change
// with what the deploy does after merge, and docs/threat-model.md lists it. A test fails when the
// code reads an agents:* setting that is in neither list, or a harmless one whose name says it
// sends something (an address, key, model or message).

/** What a deploy of `stack` does after merge with `to` (the new value, or what stands in for it). */
type Consequence = (stack: string, to: string) => string;

/** The guarded settings: connection, judge, caller, policy (the plan lists changes in this order). */
export const GUARDED_SETTINGS: Readonly<Record<string, Consequence>> = {
  "agents:baseUrl": (stack, to) => `the \`${stack}\` deploy sends its API key to ${to}`,
  "agents:apiKey": (stack, to) => `the \`${stack}\` deploy sends ${to} as its API key to the service`,
  "agents:judgeBaseUrl": (stack, to) => `the \`${stack}\` smoke calls send the judge key and the transcripts to ${to}`,
  "agents:judgeApiKey": (stack, to) => `the \`${stack}\` smoke calls send ${to} as the judge key with the transcripts`,
  "agents:judgeModel": (stack, to) =>
    `the \`${stack}\` smoke calls ask the model ${to} for verdicts (on a gateway the model chooses who gets the transcripts)`,
  "agents:callerBaseUrl": (stack, to) =>
    `the \`${stack}\` smoke calls send the persona caller's key and the transcripts to ${to}`,
  "agents:callerApiKey": (stack, to) =>
    `the \`${stack}\` smoke calls send ${to} as the persona caller's key with the transcripts`,
  "agents:callerModel": (stack, to) =>
    `the \`${stack}\` smoke calls ask the model ${to} for the persona caller's lines (on a gateway the model chooses who gets the transcripts)`,
  "agents:callerMessage": (stack, to) =>
    `the \`${stack}\` smoke calls send each caller line to the service, with its API key, as ${to}`,
  "agents:callerEnd": (stack, to) => `the \`${stack}\` smoke calls end each scripted call by sending ${to}`,
  "agents:policyPack": (stack, to) =>
    `previews and deploys of \`${stack}\` run the code in ${to}, with their credentials in its environment`,
  "agents:policyPackConfig": (stack, to) => `the \`${stack}\` policy pack runs with ${to}`,
  "agents:alertWebhook": (stack, to) => `the \`${stack}\` drift workflow sends each change of its drift state to ${to}`,
};

/** The settings that send nothing anywhere and run no code, each with why. */
export const HARMLESS_SETTINGS: Readonly<Record<string, string>> = {
  "agents:dir": "which agent files the program reads: a pull request's files are its own, reviewed as such",
  "agents:serviceVersion": "the interface version requested from the service at the guarded address",
  "agents:judgeTimeoutSec": "how long one judge request may take",
};

export const GUARDED_KEYS = Object.keys(GUARDED_SETTINGS);

export const isGuarded = (key: string): boolean => Object.hasOwn(GUARDED_SETTINGS, key);

/** After merge, what a change of guarded `key` to `to` makes the stack's deploy do. */
export function guardedConsequence(key: string, stack: string, to: string): string {
  const consequence = GUARDED_SETTINGS[key];
  return `after merge, ${consequence ? consequence(stack, to) : `\`${stack}\` uses ${to}`}`;
}
