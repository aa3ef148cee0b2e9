// A smoke report of judged calls, as `smoke --json` writes it (checked against the report schema):
// each call one conversation, one judged rubric, the judge's verdict, reason and model.
import { type Report, reportSchema } from "../../src/results/index.ts";

export type FixtureCall = { rubric: string; verdict: "pass" | "fail"; transcript: string[]; conversation?: string };

/** The judge's reason of each call carries this marker, and its model this name: neither may reach the page before an answer. */
export const REASON_MARK = "JUDGE-REASON-7f3a";
export const JUDGE_MODEL = "judge-model-e5b1";

export function judgedReport(calls: readonly FixtureCall[]): Report {
  return reportSchema.parse({
    format: "agent-iac-report",
    version: 4,
    kind: "smoke",
    results: calls.map((call, i) => ({
      agent: "support",
      scenario: `scenario-${i + 1}`,
      iteration: 1,
      status: call.verdict === "pass" ? "passed" : "failed",
      version_id: "ver_1",
      conversation_id: call.conversation ?? `conv_${String(i + 1).padStart(4, "0")}`,
      transcript: call.transcript,
      tool_calls: [{ name: "lookup_order", arguments: { order: `A-${i + 1}` } }],
      procedures: [{ name: "refund", output: { refunded: i % 2 === 0 } }],
      timings: { duration_ms: 1000 },
      assertions: [
        {
          kind: "judge",
          key: call.rubric,
          description: `judge: ${call.rubric}`,
          passed: call.verdict === "pass",
          judgement: {
            rubric: call.rubric,
            model: JUDGE_MODEL,
            verdict: call.verdict,
            agreement: call.verdict === "pass" ? "3/3" : "0/3",
            votes_for: call.verdict === "pass" ? 3 : 0,
            votes_total: 3,
            reason: `${REASON_MARK} ${call.verdict}`,
            lines: [1],
          },
        },
      ],
    })),
  });
}
