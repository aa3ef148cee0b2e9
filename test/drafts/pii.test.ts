// The scrubber of `scenario derive` and `generate`: each kind of personal data becomes its labelled
// placeholder (the same value, the same label), the channel's numbers their own labels, and the
// numbers the agent file holds, dates and times stay.
import { describe, expect, it } from "vitest";
import { Scrubber } from "../../src/drafts/pii.ts";

describe("personal data replaced by labelled placeholders", () => {
  it("phone numbers, e-mail addresses, card and account numbers, the channel's numbers", () => {
    const scrubber = new Scrubber({ own: ["+15550142100"] });
    scrubber.channel({ callee_no: "+15550142100", caller_no: "+14155550123" });
    expect(scrubber.text("Call me on +1 415 555 0199 or (415) 555-0100, or write to Jane.Doe@example.com.")).toBe(
      "Call me on <phone 1> or <phone 2>, or write to <email 1>.",
    );
    expect(
      scrubber.text(
        "Card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00, account 12345678, again jane.doe@example.com",
      ),
    ).toBe("Card <card 1>, IBAN <account 1>, account <account 2>, again <email 1>");
    expect(scrubber.text("I called from +14155550123 to +15550142100 on 2024-05-01 at 10:30 for 3 people")).toBe(
      "I called from <caller_no> to +15550142100 on 2024-05-01 at 10:30 for 3 people",
    );
  });

  it("the callee_no the agent file does not hold is labelled; --keep-pii replaces nothing", () => {
    const scrubber = new Scrubber();
    scrubber.channel({ callee_no: "+15550001111" });
    expect(scrubber.text("you reached +15550001111")).toBe("you reached <callee_no>");
    const keep = new Scrubber({ keep: true });
    keep.channel({ callee_no: "+15550001111" });
    expect(keep.text("you reached +15550001111, jane@example.com")).toBe("you reached +15550001111, jane@example.com");
  });
});
