// The one list of guarded settings (issue 49): every agents:* setting the code reads is classified,
// guarded or harmless; a setting whose name says it sends something (an address, a key, a model, a
// message) cannot be filed as harmless; and docs/threat-model.md lists exactly the guarded ones.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GUARDED_SETTINGS, HARMLESS_SETTINGS } from "../../src/settings/guarded.ts";

const root = path.resolve(import.meta.dirname, "../..");

/** Every agents:* setting named in src/: as a key ("agents:x") or through pulumi.Config("agents").get("x"). */
async function settingsInSource(): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const files = (await readdir(path.join(root, "src"), { recursive: true })).filter((f) => f.endsWith(".ts"));
  for (const file of files) {
    const text = await readFile(path.join(root, "src", file), "utf8");
    for (const match of text.matchAll(/\bagents:([a-z][A-Za-z0-9]*)\b/g)) found.set(`agents:${match[1]}`, file);
    for (const match of text.matchAll(/Config\(\s*"agents"\s*\)\.(?:get|require)\w*\(\s*"(\w+)"/g)) {
      found.set(`agents:${match[1]}`, file);
    }
  }
  return found;
}

/** A name that says the setting sends a credential or data somewhere, or names code to run. */
const SENDS =
  /(Url|Uri|Host|Endpoint|Key|Token|Secret|Password|Model|Message|End|Header|Pack|PackConfig|Command|Script)$/;

describe("the guarded settings", () => {
  it("classifies every agents:* setting the code reads, and none twice", async () => {
    const unclassified = [...(await settingsInSource())]
      .filter(([key]) => !(key in GUARDED_SETTINGS) && !(key in HARMLESS_SETTINGS))
      .map(([key, file]) => `${key} (src/${file})`);
    expect(unclassified, "add each to GUARDED_SETTINGS or HARMLESS_SETTINGS in src/settings/guarded.ts").toEqual([]);
    expect(Object.keys(HARMLESS_SETTINGS).filter((key) => key in GUARDED_SETTINGS)).toEqual([]);
    // The scan finds what it must (a scan that finds nothing would pass the check above).
    const found = await settingsInSource();
    for (const key of ["agents:baseUrl", "agents:callerBaseUrl", "agents:callerMessage", "agents:dir"]) {
      expect(found.has(key), key).toBe(true);
    }
  });

  it("resolves every agents:* setting in src/settings: nowhere else names one as a key", async () => {
    const elsewhere: string[] = [];
    const files = (await readdir(path.join(root, "src"), { recursive: true })).filter((f) => f.endsWith(".ts"));
    for (const file of files.filter((f) => !f.startsWith(`settings${path.sep}`))) {
      const text = await readFile(path.join(root, "src", file), "utf8");
      const keys = [
        ...text.matchAll(/["']agents:[a-z][A-Za-z0-9]*["']/g),
        ...text.matchAll(/Config\(\s*"agents"\s*\)/g),
      ];
      for (const [key] of keys) elsewhere.push(`src/${file}: ${key}`);
    }
    expect(elsewhere, "read it through src/settings (a resolver or its keys' constant)").toEqual([]);
  });

  it("files no setting whose name says it sends something as harmless", () => {
    expect(Object.keys(HARMLESS_SETTINGS).filter((key) => SENDS.test(key))).toEqual([]);
    // The rule catches the kinds of names that were once forgotten.
    for (const key of ["agents:callerBaseUrl", "agents:callerApiKey", "agents:callerModel", "agents:callerMessage"]) {
      expect(SENDS.test(key), key).toBe(true);
    }
  });

  it("is the list docs/threat-model.md gives, in its order", async () => {
    const doc = await readFile(path.join(root, "docs", "threat-model.md"), "utf8");
    const section = doc.split("## The guarded settings")[1]?.split("\n## ")[0] ?? "";
    const rows = (marker: string) =>
      [...section.matchAll(/^\| `(agents:\w+)` +\| (guarded|read from the pull request) /gm)]
        .filter((m) => m[2] === marker)
        .map((m) => m[1]);
    expect(rows("guarded")).toEqual(Object.keys(GUARDED_SETTINGS));
    expect(rows("read from the pull request")).toEqual(Object.keys(HARMLESS_SETTINGS));
  });
});
