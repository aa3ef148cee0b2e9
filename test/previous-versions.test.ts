// The program's `previous_versions` output (src/component/previous.ts): the version each agent held
// before its current one, from the outputs the stack's last update left.
import { describe, expect, it } from "vitest";
import { previousVersionsOf, versionsBeforeIn } from "../src/component/index.ts";

describe("previous_versions", () => {
  it("names the old version of a replaced agent, keeps it over updates that do not replace it, and drops removed agents", () => {
    const first = previousVersionsOf({ support: "ca_a@v1", notes: "pa_n@v1" }, versionsBeforeIn({}));
    expect(first).toEqual({});
    const replaced = previousVersionsOf(
      { support: "ca_b@v1", notes: "pa_n@v1" },
      versionsBeforeIn({ versions: { support: "ca_a@v1", notes: "pa_n@v1" }, previous_versions: first }),
    );
    expect(replaced).toEqual({ support: "ca_a@v1" });
    const unchanged = previousVersionsOf(
      { support: "ca_b@v1" },
      versionsBeforeIn({ versions: { support: "ca_b@v1", notes: "pa_n@v1" }, previous_versions: replaced }),
    );
    expect(unchanged).toEqual({ support: "ca_a@v1" });
    const again = previousVersionsOf(
      { support: "ca_c@v1" },
      versionsBeforeIn({ versions: { support: "ca_b@v1" }, previous_versions: unchanged }),
    );
    expect(again).toEqual({ support: "ca_b@v1" });
  });

  it("reads outputs that are not version maps as none (a secret, a hand-edited state)", () => {
    expect(versionsBeforeIn({ versions: "x", previous_versions: { support: 3 } })).toEqual({
      versions: {},
      previous: {},
    });
    expect(versionsBeforeIn(undefined)).toEqual({ versions: {}, previous: {} });
  });
});
