// Regenerates package.json contributes.languageModelTools from
// `agentls tools --format vscode`. With --check, fails when package.json is
// out of date instead of writing it. The binary: $AGENTLS_BIN, else
// `go build` of ../../cmd/agentls into a temp dir.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const check = process.argv.includes("--check");
let bin = process.env.AGENTLS_BIN;
if (!bin) {
  bin = join(mkdtempSync(join(tmpdir(), "agentls-gen-")), "agentls");
  execFileSync("go", ["build", "-o", bin, "./cmd/agentls"], { cwd: new URL("../../..", import.meta.url).pathname, stdio: "inherit", env: { ...process.env, CGO_ENABLED: "0" } });
}
const tools = JSON.parse(execFileSync(bin, ["tools", "--format", "vscode"], { encoding: "utf8" }));
const pkgPath = new URL("../package.json", import.meta.url).pathname;
const text = readFileSync(pkgPath, "utf8");
const pkg = JSON.parse(text);
pkg.contributes.languageModelTools = tools;
const next = JSON.stringify(pkg, null, 2) + "\n";
if (check) {
  if (next !== text) {
    console.error("package.json contributes.languageModelTools is out of date: run `npm run gen-tools` in editors/vscode");
    process.exit(1);
  }
  console.log(`package.json is up to date (${tools.length} tools)`);
} else {
  writeFileSync(pkgPath, next);
  console.log(`wrote ${tools.length} tools to package.json`);
}
