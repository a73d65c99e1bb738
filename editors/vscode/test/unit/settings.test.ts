import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveBinary } from "../../src/pure/binary";
import { initializationOptions, invocationMessage, restartDelay, RESTART_MAX_MS, syncChoice } from "../../src/pure/settings";

test("settings → initializationOptions", async (t) => {
  const cases = [
    { name: "empty", in: {}, out: {}, warnings: 0 },
    { name: "mode and rules", in: { mode: "acceptEdits", permissions: { allow: ["read", " bash(npm test:*) "], ask: [], deny: ["write(.env)"] } }, out: { mode: "acceptEdits", permissions: { allow: ["read", "bash(npm test:*)"], deny: ["write(.env)"] } }, warnings: 0 },
    { name: "unknown mode is dropped with a warning", in: { mode: "yolo" }, out: {}, warnings: 1 },
    { name: "non-array rule list", in: { permissions: { allow: "read" } }, out: {}, warnings: 1 },
    { name: "unknown rule key", in: { permissions: { permit: ["x"] } }, out: {}, warnings: 1 },
    { name: "limits kept when numeric", in: { limits: { readLines: 100, bad: -1 } }, out: { limits: { readLines: 100 } }, warnings: 1 },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const r = initializationOptions(c.in);
      assert.deepEqual(r.options, c.out);
      assert.equal(r.warnings.length, c.warnings, r.warnings.join("; "));
    });
  }
});

test("binary resolution order", async (t) => {
  const base = { extensionDir: "/ext", platform: "linux", arch: "x64", pathEnv: "/usr/bin:/opt/bin", join: (...p: string[]) => p.join("/"), pathDelimiter: ":" };
  const cases: Array<{ name: string; configured: string | undefined; exists: string[]; want: { ok: boolean; path?: string; source?: string } }> = [
    { name: "setting wins", configured: "/my/agentls", exists: ["/my/agentls", "/ext/bin/linux-x64/agentls"], want: { ok: true, path: "/my/agentls", source: "setting" } },
    { name: "bad setting is an error, not a fallback", configured: "/nope", exists: ["/ext/bin/linux-x64/agentls"], want: { ok: false } },
    { name: "bundled before PATH", configured: "", exists: ["/ext/bin/linux-x64/agentls", "/opt/bin/agentls"], want: { ok: true, path: "/ext/bin/linux-x64/agentls", source: "bundled" } },
    { name: "PATH last", configured: undefined, exists: ["/opt/bin/agentls"], want: { ok: true, path: "/opt/bin/agentls", source: "PATH" } },
    { name: "nothing found", configured: undefined, exists: [], want: { ok: false } },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const r = resolveBinary({ ...base, configured: c.configured, isExecutable: (f) => c.exists.includes(f) });
      assert.equal(r.ok, c.want.ok);
      if (r.ok) assert.deepEqual({ ok: r.ok, path: r.path, source: r.source }, c.want);
      else assert.match(r.message, /agentls\.path/);
    });
  }
  await t.test("windows binary name", () => {
    const r = resolveBinary({ ...base, platform: "win32", configured: "", isExecutable: (f) => f === "/ext/bin/win32-x64/agentls.exe" });
    assert.ok(r.ok && r.path.endsWith("agentls.exe"));
  });
});

test("restart backoff doubles up to the cap", () => {
  assert.deepEqual([0, 1, 2, 3].map(restartDelay), [500, 1000, 2000, 4000]);
  assert.equal(restartDelay(30), RESTART_MAX_MS);
});

test("invocation messages name the target", () => {
  assert.equal(invocationMessage("edit", { path: "src/a.ts" }), "Editing src/a.ts");
  assert.equal(invocationMessage("bash", { command: "x".repeat(100) }).length <= 70, true);
});

test("agentls.syncOpenFiles → document selector and applyEdit", async (t) => {
  const folders = ["/ws/a", "/ws/b"];
  const on = {
    documentSelector: [{ scheme: "file", pattern: "/ws/a/**" }, { scheme: "file", pattern: "/ws/b/**" }],
    capabilities: { confirm: true, applyEdit: true },
  };
  const off = { documentSelector: [], capabilities: { confirm: true, applyEdit: false } };
  const cases = [
    { name: "default (unset) is on, one filter per workspace folder", in: undefined, out: on },
    { name: "true", in: true, out: on },
    { name: "false", in: false, out: off },
    { name: "a non-boolean is the default", in: "no", out: on },
  ];
  for (const c of cases) await t.test(c.name, () => assert.deepEqual(syncChoice(c.in, folders), c.out));
  await t.test("no workspace folder: nothing is synced", () => assert.deepEqual(syncChoice(true, []).documentSelector, []));
  await t.test("Windows separators and a trailing slash", () =>
    assert.deepEqual(syncChoice(true, ["C:\\ws\\a\\"]).documentSelector, [{ scheme: "file", pattern: "C:/ws/a/**" }]));
  await t.test("a folder path with glob characters syncs every file", () =>
    assert.deepEqual(syncChoice(true, ["/ws/[x]"]).documentSelector, [{ scheme: "file" }]));
});
