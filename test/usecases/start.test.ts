// What `start` says after its report of the post_url deliveries that failed (start.ts): a hook's
// address is shown without its query or credentials (a post_url may carry a token), and the
// service's own words (a procedure id, an error) are escaped for the terminal. Pure: no run.
import { describe, expect, it } from "vitest";
import { failedDeliveriesText } from "../../src/usecases/start.ts";

const delivery = (n: number, extra: Record<string, unknown> = {}) => ({
  procedure_id: `pa_${n}`,
  conversation_id: `conv_${n}`,
  url: `https://hooks.example.test/calls/${n}`,
  ok: false,
  status: 500,
  ...extra,
});

describe("failedDeliveriesText", () => {
  it("none failed: nothing said", () => {
    expect(failedDeliveriesText([], 3)).toBe("");
  });

  it("a hook's token and credentials are never shown; the service's words are escaped", () => {
    const text = failedDeliveriesText(
      [
        delivery(1, { url: "https://user:pw-7f3a@hooks.example.test/in?token=sk-hook-91c2e0&x=1" }),
        delivery(2, { procedure_id: "pa_\u001b[31mred", status: null, error: "refused\u001b]0;title\u0007" }),
      ],
      5,
    );
    expect(text).toContain("post_url deliveries: 2 of 5 failed");
    expect(text).toContain("  pa_1 → https://hooks.example.test/in: HTTP 500");
    expect(text).not.toMatch(/sk-hook-91c2e0|pw-7f3a/);
    // No escape sequence of the service's reaches the terminal.
    expect(text).not.toContain("\u001b");
    expect(text).not.toContain("\u0007");
    expect(text).toMatch(/pa_.*red → https:\/\/hooks\.example\.test\/calls\/2: refused/);
  });

  it("more than ten: the first ten, then how many more and where to see them", () => {
    const failed = Array.from({ length: 12 }, (_, i) => delivery(i));
    const lines = failedDeliveriesText(failed, 12).trimEnd().split("\n");
    expect(lines).toHaveLength(12);
    expect(lines.at(-1)).toBe("  … and 2 more (GET /_simulator/deliveries)");
  });
});
