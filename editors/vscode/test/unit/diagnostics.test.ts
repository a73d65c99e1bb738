import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { type Clock, DiagnosticsTracker, extensionOf, MAX_BASELINES, MAX_WAIT_MS, QUIET_MS, Settle, type SettleEnd, toLspDiagnostic } from "../../src/pure/diagnostics";

const range = { start: { line: 2, character: 4 }, end: { line: 2, character: 9 } };

test("toLspDiagnostic: VS Code diagnostics become LSP JSON", async (t) => {
  const cases = [
    { name: "error with a string code", in: { range, severity: 0, message: "undefined: foo", source: "compiler", code: "E1" }, out: { range, severity: 1, message: "undefined: foo", source: "compiler", code: "E1" } },
    { name: "warning with a numeric code", in: { range, severity: 1, message: "unused", code: 6133 }, out: { range, severity: 2, message: "unused", code: 6133 } },
    { name: "information", in: { range, severity: 2, message: "i" }, out: { range, severity: 3, message: "i" } },
    { name: "hint with a {value, target} code", in: { range, severity: 3, message: "h", code: { value: "no-var", target: { scheme: "https" } } }, out: { range, severity: 4, message: "h", code: "no-var" } },
    { name: "an unknown severity is an error", in: { range, severity: 7, message: "x" }, out: { range, severity: 1, message: "x" } },
    { name: "an empty source is left out", in: { range, severity: 0, message: "x", source: "" }, out: { range, severity: 1, message: "x" } },
  ];
  for (const c of cases) await t.test(c.name, () => assert.deepEqual(toLspDiagnostic(c.in), c.out));
});

test("toLspDiagnostic: positions are copied as plain JSON, not the editor's objects", () => {
  class Position {
    constructor(readonly line: number, readonly character: number) {}
    translate() {
      return this;
    }
  }
  const d = toLspDiagnostic({ range: { start: new Position(1, 2), end: new Position(3, 4) }, severity: 0, message: "m" });
  assert.equal(JSON.stringify(d.range), '{"start":{"line":1,"character":2},"end":{"line":3,"character":4}}');
});

test("extensionOf", async (t) => {
  const cases = [
    { name: "plain", uri: "file:///ws/src/a.LUA", ext: ".lua" },
    { name: "query and fragment", uri: "file:///ws/a.ts?x=1#L2", ext: ".ts" },
    { name: "dot file", uri: "file:///ws/.bashrc", ext: "" },
    { name: "no extension", uri: "file:///ws/Makefile", ext: "" },
    { name: "dot in a directory only", uri: "file:///ws/a.d/Makefile", ext: "" },
  ];
  for (const c of cases) await t.test(c.name, () => assert.equal(extensionOf(c.uri), c.ext));
});

test("DiagnosticsTracker.couldReport: wait only when something can report", async (t) => {
  const tr = new DiagnosticsTracker();
  tr.diagnosticsChanged([{ uri: "file:///ws/seen.go", reported: true }, { uri: "file:///ws/x.md", languageId: "markdown", reported: true }], 1);
  tr.diagnosticsChanged([{ uri: "file:///ws/cleared.txt", languageId: "plaintext", reported: false }], 2);
  tr.diagnosticsChanged([{ uri: "file:///ws/open.ts", languageId: "typescript", reported: true }], 3);
  const cases = [
    { name: "a closed file with diagnostics now", f: { uri: "file:///ws/seen.go" }, open: false, hasNow: true, want: "the file has diagnostics" },
    { name: "a closed file whose extension had diagnostics while closed", f: { uri: "file:///ws/other.go" }, open: false, want: ".go files have had diagnostics while closed" },
    { name: "a closed file whose extension had diagnostics only while open (a server for open files)", f: { uri: "file:///ws/closed.ts" }, open: false, want: undefined },
    { name: "an open file whose extension had diagnostics", f: { uri: "file:///ws/b.go", languageId: "go" }, open: true, want: ".go files have had diagnostics" },
    { name: "an open file whose language had diagnostics", f: { uri: "file:///ws/README", languageId: "markdown" }, open: true, want: "markdown files have had diagnostics" },
    { name: "a closed file nothing reported on", f: { uri: "file:///ws/a.txt" }, open: false, want: undefined },
    { name: "an open file in a language (a server may be attached)", f: { uri: "file:///ws/a.rs", languageId: "rust" }, open: true, want: "the file is open as rust" },
    { name: "an open plain text file", f: { uri: "file:///ws/a.txt", languageId: "plaintext" }, open: true, want: undefined },
    { name: "a change that left no diagnostics does not count", f: { uri: "file:///ws/cleared.txt", languageId: "plaintext" }, open: true, want: undefined },
    { name: "nor does it count for its extension", f: { uri: "file:///ws/b.txt" }, open: false, want: undefined },
  ];
  for (const c of cases) await t.test(c.name, () => assert.equal(tr.couldReport(c.f, c.open, "hasNow" in c ? c.hasNow : false), c.want));
});

test("DiagnosticsTracker.changedAfterEdit: a report that beat the second request counts", async (t) => {
  const cases = [
    { name: "report after the baseline", steps: (tr: DiagnosticsTracker) => (tr.baseline("c1", 10), tr.diagnosticsChanged([{ uri: "u", reported: true }], 20)), want: 20 },
    { name: "report before the baseline", steps: (tr: DiagnosticsTracker) => (tr.diagnosticsChanged([{ uri: "u", reported: true }], 5), tr.baseline("c1", 10)), want: undefined },
    { name: "report after the baseline but before the editor's text changed", steps: (tr: DiagnosticsTracker) => (tr.baseline("c1", 10), tr.diagnosticsChanged([{ uri: "u", reported: true }], 20), tr.textChanged("u", 30)), want: undefined },
    { name: "report after the text changed, no baseline", steps: (tr: DiagnosticsTracker) => (tr.textChanged("u", 30), tr.diagnosticsChanged([{ uri: "u", reported: true }], 40)), want: 40 },
    { name: "nothing tells when the change was", steps: (tr: DiagnosticsTracker) => tr.diagnosticsChanged([{ uri: "u", reported: true }], 40), want: undefined },
    { name: "another file's report", steps: (tr: DiagnosticsTracker) => (tr.baseline("c1", 10), tr.diagnosticsChanged([{ uri: "v", reported: true }], 20)), want: undefined },
    { name: "the call ended", steps: (tr: DiagnosticsTracker) => (tr.baseline("c1", 10), tr.endCall("c1"), tr.diagnosticsChanged([{ uri: "u", reported: true }], 20)), want: undefined },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const tr = new DiagnosticsTracker();
      c.steps(tr);
      assert.equal(tr.changedAfterEdit("u", "c1"), c.want);
    });
  }
});

test("DiagnosticsTracker: baselines are bounded, the oldest forgotten", () => {
  const tr = new DiagnosticsTracker();
  for (let i = 0; i <= MAX_BASELINES; i++) tr.baseline(`c${i}`, i);
  tr.diagnosticsChanged([{ uri: "u", reported: true }], 1000);
  assert.equal(tr.changedAfterEdit("u", "c0"), undefined, "the oldest baseline is gone");
  assert.equal(tr.changedAfterEdit("u", `c${MAX_BASELINES}`), 1000);
});

const microtasks = () => new Promise<void>((r) => setImmediate(r));

/** A manual clock: advance(ms) runs due timers in time order, letting promise callbacks run after each. */
class FakeClock implements Clock {
  t = 0;
  private seq = 0;
  private timers = new Map<number, { at: number; f: () => void }>();
  now = () => this.t;
  setTimeout = (f: () => void, ms: number) => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + ms, f });
    return id;
  };
  clearTimeout = (h: unknown) => void this.timers.delete(h as number);
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      const next = [...this.timers.entries()].filter(([, v]) => v.at <= end).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = next[1].at;
      next[1].f();
      await microtasks();
    }
    this.t = end;
  }
  pending = () => this.timers.size;
}

/** When (fake ms) and how a Settle ends, given changes at the listed times. */
async function run(waitMs: number, changesAt: number[], opts: { lastChangeAt?: number; cancelAt?: number } = {}): Promise<{ end: SettleEnd; at: number; pending: number }> {
  const clock = new FakeClock();
  clock.t = 1000;
  const s = new Settle(clock, waitMs, opts.lastChangeAt === undefined ? undefined : 1000 + opts.lastChangeAt);
  let result: { end: SettleEnd; at: number } | undefined;
  void s.done.then((end) => (result = { end, at: clock.t - 1000 }));
  const events = [...changesAt.map((at) => ({ at, f: () => s.changed() })), ...(opts.cancelAt === undefined ? [] : [{ at: opts.cancelAt, f: () => s.cancel() }])].sort((a, b) => a.at - b.at);
  for (const e of events) {
    await clock.advance(1000 + e.at - clock.t);
    e.f();
    await microtasks();
  }
  await clock.advance(MAX_WAIT_MS * 2);
  await s.done;
  return { ...result!, pending: clock.pending() };
}

test("Settle: a change then QUIET_MS of quiet, capped at waitMs", async (t) => {
  const cases = [
    { name: "one change", waitMs: 3000, changes: [100], want: { end: "settled", at: 100 + QUIET_MS } },
    { name: "changes closer than QUIET_MS restart the quiet time", waitMs: 3000, changes: [100, 200, 300], want: { end: "settled", at: 300 + QUIET_MS } },
    { name: "no change: waitMs", waitMs: 800, changes: [], want: { end: "timeout", at: 800 } },
    { name: "changes that never stop: waitMs", waitMs: 500, changes: [100, 200, 300, 400, 490], want: { end: "timeout", at: 500 } },
    { name: "a change just before waitMs: waitMs", waitMs: 500, changes: [450], want: { end: "timeout", at: 500 } },
    { name: "waitMs above the maximum is the maximum", waitMs: MAX_WAIT_MS * 10, changes: [], want: { end: "timeout", at: MAX_WAIT_MS } },
    { name: "a change that already happened counts from then", waitMs: 3000, changes: [], lastChangeAt: -100, want: { end: "settled", at: QUIET_MS - 100 } },
    { name: "an old change: settled at once", waitMs: 3000, changes: [], lastChangeAt: -1000, want: { end: "settled", at: 0 } },
    { name: "a change after an earlier one restarts the quiet time", waitMs: 3000, changes: [60], lastChangeAt: -50, want: { end: "settled", at: 60 + QUIET_MS } },
    { name: "cancel", waitMs: 3000, changes: [100], cancelAt: 120, want: { end: "cancelled", at: 120 } },
  ] as const;
  for (const c of cases) {
    await t.test(c.name, async () => {
      const r = await run(c.waitMs, [...c.changes], { lastChangeAt: "lastChangeAt" in c ? c.lastChangeAt : undefined, cancelAt: "cancelAt" in c ? c.cancelAt : undefined });
      assert.deepEqual({ end: r.end, at: r.at }, c.want);
      assert.equal(r.pending, 0, "no timer is left behind");
    });
  }
});

test("package.json: agentls.diagnostics is a boolean defaulting to true whose text names QUIET_MS", () => {
  const pkg = JSON.parse(readFileSync(join(process.cwd(), "package.json"), "utf8"));
  const s = pkg.contributes.configuration.properties["agentls.diagnostics"];
  assert.equal(s.type, "boolean");
  assert.equal(s.default, true);
  const numbers = (s.markdownDescription as string).match(/\d+/g) ?? [];
  assert.deepEqual(numbers, [String(QUIET_MS)], "every number in the description is an enforced constant");
});

test("README: the agentls.diagnostics section's only number is QUIET_MS", () => {
  const readme = readFileSync(join(process.cwd(), "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Problems after an edit"), readme.indexOf("Commands:"));
  assert.ok(section.includes("agentls.diagnostics"), "the section is missing");
  assert.deepEqual(section.match(/\d+/g), [String(QUIET_MS)]);
});
