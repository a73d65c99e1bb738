// Cross-compiles agentls for each target and packages one platform-specific
// .vsix per target with @vscode/vsce (the binary under bin/<platform>-<arch>/).
// AGENTLS_TARGETS=linux-x64,... limits the targets; AGENTLS_PACKAGE_OUT sets
// the output directory (default dist/).
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const TARGETS = {
  "linux-x64": ["linux", "amd64"],
  "linux-arm64": ["linux", "arm64"],
  "darwin-arm64": ["darwin", "arm64"],
  "darwin-x64": ["darwin", "amd64"],
  "win32-x64": ["windows", "amd64"],
};
const ext = new URL("..", import.meta.url).pathname;
const root = join(ext, "../..");
const out = process.env.AGENTLS_PACKAGE_OUT ?? join(ext, "dist");
const targets = (process.env.AGENTLS_TARGETS ?? Object.keys(TARGETS).join(",")).split(",").filter(Boolean);
mkdirSync(out, { recursive: true });
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: "inherit", ...opts });

run("node", ["scripts/build.mjs", "--minify"], { cwd: ext });
for (const target of targets) {
  const [goos, goarch] = TARGETS[target] ?? [];
  if (!goos) throw new Error(`unknown target ${target}; known: ${Object.keys(TARGETS).join(", ")}`);
  rmSync(join(ext, "bin"), { recursive: true, force: true });
  const exe = join(ext, "bin", target, goos === "windows" ? "agentls.exe" : "agentls");
  run("go", ["build", "-trimpath", "-ldflags=-s -w", "-o", exe, "./cmd/agentls"], { cwd: root, env: { ...process.env, GOOS: goos, GOARCH: goarch, CGO_ENABLED: "0" } });
  if (goos === "linux") {
    // The small launcher of sandboxed commands, next to agentls (which uses
    // it when present; without it agentls launches them itself, slower).
    run("go", ["build", "-trimpath", "-ldflags=-s -w", "-o", join(ext, "bin", target, "agentls-sandbox"), "./cmd/agentls-sandbox"], { cwd: root, env: { ...process.env, GOOS: goos, GOARCH: goarch, CGO_ENABLED: "0" } });
  }
  chmodSync(exe, 0o755);
  run(join(ext, "node_modules/.bin/vsce"), ["package", "--no-dependencies", "--target", target, "--out", join(out, `agentls-${target}.vsix`), "--skip-license", "--allow-missing-repository"], { cwd: ext });
}
rmSync(join(ext, "bin"), { recursive: true, force: true });
