import assert from "node:assert/strict";
import { test } from "node:test";
import { statusView } from "../../src/pure/status";

test("statusView: the status bar names every state of the sidecar", async (t) => {
  const cases = [
    { name: "stopped", in: { state: "stopped", running: 0 }, text: "$(circle-slash) agentls", tip: "agentls is stopped" },
    { name: "starting", in: { state: "starting", running: 0 }, text: "$(sync~spin) agentls", tip: "agentls is starting" },
    { name: "failed", in: { state: "failed", running: 0 }, text: "$(error) agentls", tip: "agentls is not available: see the log" },
    { name: "ready names the binary", in: { state: "ready", running: 0, watcher: "inotify", binaryPath: "/bin/agentls" }, text: "$(check) agentls", tip: "agentls is ready (/bin/agentls)" },
    { name: "watcher degraded", in: { state: "ready", running: 0, watcher: "degraded" }, text: "$(warning) agentls: watcher degraded", tip: "agentls cannot watch files: external changes may go unnoticed" },
    { name: "one tool running", in: { state: "ready", running: 1, watcher: "degraded" }, text: "$(loading~spin) agentls: 1 running", tip: "agentls is running 1 tool" },
    { name: "sandbox enabled but unavailable", in: { state: "ready", running: 0, sandbox: { enabled: true, active: false, reason: "the kernel offers no usable Landlock" } }, text: "$(warning) agentls: sandbox off", tip: "the sandbox is enabled but off: the kernel offers no usable Landlock (commands run unsandboxed)" },
    { name: "sandbox unavailable with failIfUnavailable", in: { state: "ready", running: 0, sandbox: { enabled: true, active: false, reason: "x", failIfUnavailable: true } }, text: "$(warning) agentls: sandbox off", tip: "the sandbox is enabled but off: x (failIfUnavailable: bash runs no command)" },
    { name: "sandbox on", in: { state: "ready", running: 0, binaryPath: "/bin/agentls", sandbox: { enabled: true, active: true } }, text: "$(check) agentls", tip: "agentls is ready (/bin/agentls); bash commands run sandboxed" },
    { name: "several tools running", in: { state: "ready", running: 3 }, text: "$(loading~spin) agentls: 3 running", tip: "agentls is running 3 tools" },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const v = statusView(c.in);
      assert.equal(v.text, c.text);
      assert.equal(v.tooltip, c.tip + " — click to show the log");
    });
  }
});
