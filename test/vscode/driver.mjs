// Drives code-server's workbench in Debian's chromium: opens the extension
// test payload, answers the screenshot handshake, and waits for
// window.codeAutomationExit. Appends its own checks to results.jsonl.
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const { PORT, WS, EXT, OUT, SHOT, AGENTLS_PLAYWRIGHT_DIR, AGENTLS_CHROMIUM, TIMEOUT_MS = "240000" } = process.env;
const require = createRequire(join(AGENTLS_PLAYWRIGHT_DIR, "noop.js"));
const { chromium } = require("playwright-core");
const results = join(OUT, "results.jsonl");
const record = (name, status, error) => appendFileSync(results, JSON.stringify({ name, status, error }) + "\n");

const remote = (p) => `vscode-remote://127.0.0.1:${PORT}${p}`;
const payload = [
  ["extensionDevelopmentPath", remote(EXT)],
  ["extensionTestsPath", remote(join(EXT, "out/test/index.js"))],
  ["extensionEnvironment", JSON.stringify({ AGENTLS_TEST: "1", AGENTLS_TEST_OUT: OUT, AGENTLS_VSCODE_ONLY: process.env.AGENTLS_VSCODE_ONLY ?? "" })],
];
const url = `http://127.0.0.1:${PORT}/?folder=${encodeURIComponent(WS)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;

const browser = await chromium.launch({
  executablePath: AGENTLS_CHROMIUM,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  headless: true,
});
let code = 2;
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  let done;
  const exited = new Promise((r) => (done = r));
  await page.exposeFunction("codeAutomationExit", (c) => done(c));
  await page.goto(url);
  const deadline = Date.now() + Number(TIMEOUT_MS);
  let shot = false;
  for (;;) {
    const c = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 200))]);
    if (c !== undefined) { code = c; break; }
    if (Date.now() > deadline) { record("extension tests finish in time", "fail", `no codeAutomationExit after ${TIMEOUT_MS} ms`); break; }
    const ready = join(OUT, "screenshot-ready.json");
    if (!shot && existsSync(ready)) {
      shot = true;
      const deco = JSON.parse(readFileSync(ready, "utf8"));
      try {
        // Wait for the decoration class and the CodeLens in the DOM.
        const cls = `ced-${deco.keys.inserted}`;
        await page.waitForFunction((k) => [...document.querySelectorAll(".monaco-editor .view-overlays div, .monaco-editor div")].some((e) => typeof e.className === "string" && e.className.includes(k)), deco.keys.inserted, { timeout: 10_000 })
          .catch(() => page.waitForSelector(`[class*="${cls}"]`, { timeout: 2_000 }));
        record("the workbench renders the highlight decoration (DOM class)", "pass");
      } catch (e) {
        record("the workbench renders the highlight decoration (DOM class)", "fail", String(e));
      }
      try {
        await page.waitForFunction(() => [...document.querySelectorAll(".codelens-decoration")].some((e) => e.textContent.includes("Show diff")), null, { timeout: 10_000 });
        record("the workbench renders the Show diff CodeLens", "pass");
      } catch (e) {
        record("the workbench renders the Show diff CodeLens", "fail", String(e));
      }
      try {
        await page.waitForFunction(() => [...document.querySelectorAll('.monaco-list[aria-label="Agent changes"] .monaco-list-row')].some((e) => e.textContent.includes("greet.ts")), null, { timeout: 10_000 });
        record("the Agent changes view lists the edited file", "pass");
      } catch (e) {
        record("the Agent changes view lists the edited file", "fail", String(e));
      }
      // Every theme colour the extension names must be one the workbench
      // knows: an unknown id renders nothing, silently. The workbench sets
      // a CSS variable for each registered colour the theme gives a value.
      const ids = [];
      for (const f of readdirSync(join(EXT, "src"), { recursive: true }).filter((f) => String(f).endsWith(".ts"))) {
        ids.push(...[...readFileSync(join(EXT, "src", String(f)), "utf8").matchAll(/new vscode\.ThemeColor\("([^"]+)"\)/g)].map((m) => m[1]));
      }
      if (ids.length === 0) record("the extension's theme colour ids are found in its source", "fail", "no new vscode.ThemeColor(...) in src/");
      for (const id of [...new Set(ids)]) {
        const name = "--vscode-" + id.replace(/\./g, "-");
        const value = await page.evaluate((n) => getComputedStyle(document.querySelector(".monaco-workbench") ?? document.body).getPropertyValue(n).trim(), name);
        record(`theme colour ${id} is defined by the workbench`, value ? "pass" : "fail", value ? undefined : `no ${name} on .monaco-workbench`);
      }
      await page.waitForTimeout(500);
      await page.screenshot({ path: SHOT });
      writeFileSync(join(OUT, "dom.html"), await page.content());
      writeFileSync(join(OUT, "screenshot-done"), "");
    }
  }
} finally {
  await browser.close();
}
process.exit(code === 0 ? 0 : 1);
