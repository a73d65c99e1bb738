// package.json's languageModelTools must equal `agentls tools --format vscode`.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { DESCRIBED_LIMITS } from "../../src/pure/limits";

test("package.json languageModelTools are up to date with agentls", (t) => {
  const bin = process.env.AGENTLS_BIN;
  if (!bin) return t.skip("AGENTLS_BIN not set (test/vscode/run.sh and .ci set it)");
  const want = JSON.parse(execFileSync(bin, ["tools", "--format", "vscode"], { encoding: "utf8" }));
  const pkg = JSON.parse(readFileSync(join(process.cwd(), "package.json"), "utf8"));
  const have = pkg.contributes.languageModelTools as Array<{ name: string }>;
  const key = (l: Array<{ name: string }>) => new Map(l.map((t) => [t.name, JSON.stringify(t)]));
  const h = key(have), w = key(want);
  const differ = [...new Set([...h.keys(), ...w.keys()])].filter((n) => h.get(n) !== w.get(n));
  assert.deepEqual(differ, [], `package.json languageModelTools out of date for ${differ.join(", ")}: run \`npm run gen-tools\` in editors/vscode`);
  assert.equal(JSON.stringify(have), JSON.stringify(want), "tool order differs: run `npm run gen-tools`");
  for (const t of pkg.contributes.languageModelTools) assert.match(t.name, /^agentls_[\w-]+$/);
});

test("src/pure/limits.ts states the limits the descriptions were built with", (t) => {
  const bin = process.env.AGENTLS_BIN;
  if (!bin) return t.skip("AGENTLS_BIN not set (test/vscode/run.sh and .ci set it)");
  const want = JSON.parse(execFileSync(bin, ["tools", "--limits"], { encoding: "utf8" }));
  assert.deepEqual({ ...DESCRIBED_LIMITS }, want, "src/pure/limits.ts is out of date: run `npm run gen-tools`");
  const read = JSON.parse(readFileSync(join(process.cwd(), "package.json"), "utf8")).contributes.languageModelTools.find((x: { name: string }) => x.name === "agentls_read");
  assert.ok(read.modelDescription.includes(`A result is at most ${want.readLines} lines`), "read's description states readLines");
});

test("VS Code conventions: activation on first use, an icon and tags per tool, no guard for a guaranteed API", () => {
  const pkg = JSON.parse(readFileSync(join(process.cwd(), "package.json"), "utf8"));
  const tools = pkg.contributes.languageModelTools as Array<{ name: string; icon?: string; tags?: string[]; modelDescription: string }>;
  assert.deepEqual(pkg.activationEvents, tools.map((t) => `onLanguageModelTool:${t.name}`), "activate on each tool's first use, and on nothing at startup");
  for (const t of tools) {
    assert.match(t.icon ?? "", /^\$\([a-z-]+\)$/, `${t.name}: icon`);
    assert.ok((t.tags ?? []).includes("agentls"), `${t.name}: tags ${t.tags}`);
  }
  // Descriptions name the other tools as VS Code's model sees them.
  const read = tools.find((t) => t.name === "agentls_read")!;
  assert.match(read.modelDescription, /Use agentls_grep to find where something is and agentls_find to locate files/);
  for (const t of tools) assert.doesNotMatch(t.modelDescription, /\{\{/, `${t.name}: an unrendered tool mention`);
  // VS Code 1.139 accepts a languageModelToolSets contribution only from an
  // extension that enables the contribLanguageModelToolSets API proposal,
  // which a Marketplace extension cannot: the contribution would only log
  // an error. The tools are grouped by their "agentls" tag instead.
  assert.equal(pkg.contributes.languageModelToolSets, undefined);
  const src = readFileSync(join(process.cwd(), "src/extension.ts"), "utf8");
  assert.doesNotMatch(src, /vscode\.lm\?\./, "engines.vscode ^1.95 guarantees vscode.lm.registerTool");
});
