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

/**
 * Where config comes from, as the plan names a change of it: the stack file's place (Pulumi.yaml's
 * stackConfigDir), its ESC environment, the project's declaration of a guarded setting. Each is a
 * guarded change: it moves the guarded settings, and an environment's values cannot be read offline.
 */
export const SOURCE_KEYS = {
  stackFile: "stack file (stackConfigDir)",
  environment: "environment (ESC)",
  declared: (key: string) => `project config ${key}`,
} as const;

const SOURCE_CONSEQUENCES: readonly [(key: string) => boolean, (key: string, stack: string, to: string) => string][] = [
  [
    (key) => key === SOURCE_KEYS.stackFile,
    (_, stack, to) => `\`${stack}\` reads every setting from the stack file ${to}`,
  ],
  [
    (key) => key === SOURCE_KEYS.environment,
    (_, stack, to) =>
      `\`${stack}\` takes settings from the ESC environment ${to}, whose values this plan cannot read offline`,
  ],
  [
    (key) => key.startsWith(SOURCE_KEYS.declared("")),
    (key, stack, to) =>
      `\`${stack}\` takes ${key.slice(SOURCE_KEYS.declared("").length)} from Pulumi.yaml's declaration ${to} where its stack file sets none`,
  ],
];

export const isGuarded = (key: string): boolean => Object.hasOwn(GUARDED_SETTINGS, key);

/** After merge, what a change of guarded `key` to `to` makes the stack's deploy do. */
export function guardedConsequence(key: string, stack: string, to: string): string {
  const consequence = GUARDED_SETTINGS[key];
  const source = SOURCE_CONSEQUENCES.find(([matches]) => matches(key))?.[1];
  const what = consequence ? consequence(stack, to) : source ? source(key, stack, to) : `\`${stack}\` uses ${to}`;
  return `after merge, ${what}`;
}
