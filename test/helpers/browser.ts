// A real headless Chromium for tests, from the @sparticuz/chromium npm package (the binary ships
// inside it and is unpacked to the temp dir on first use: no download), driven by puppeteer-core.
import chromium from "@sparticuz/chromium";
import puppeteer, { type Browser } from "puppeteer-core";

/** Flags of the package's list that weaken the page's security model: a report test must not have them. */
const WEAKENING = new Set([
  "--disable-web-security",
  "--allow-running-insecure-content",
  "--disable-site-isolation-trials",
]);

export async function launchBrowser(): Promise<Browser> {
  const executablePath = await chromium.executablePath();
  // --no-sandbox: Chromium refuses to start its sandbox as root (as on CI containers and this machine).
  const args = [...chromium.args.filter((arg) => !WEAKENING.has(arg)), "--no-sandbox"];
  return puppeteer.launch({ executablePath, args, headless: "shell", defaultViewport: { width: 1280, height: 900 } });
}
