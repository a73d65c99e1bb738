// tools/diagnostics inside a real VS Code: the handler's own timing (called
// directly), then end to end through the real agentls: an edit whose file
// gets a new error from a language server reports it to the model. The
// language server is a fake: a DiagnosticCollection owned by the test.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import type { DiagnosticsParams, DiagnosticsResult, EditorDiagnostics } from "../diagnostics";
import { QUIET_MS } from "../pure/diagnostics";
import type { Sidecar } from "../sidecar";
import { sleep, until } from "./wait";

type Test = [string, () => Promise<void>];

const ws = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const wsFile = (name: string) => path.join(ws(), name);
const text = (r: vscode.LanguageModelToolResult) => r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : "")).join("");
const invoke = (name: string, input: object) => vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }, new vscode.CancellationTokenSource().token);
const handler = () => (vscode.extensions.getExtension("agentls.agentls")!.exports as { diagnostics: EditorDiagnostics }).diagnostics;

/** How long the fake language server takes to report after a change. */
const LINT_DELAY_MS = 100;
const SOURCE = "fakels";
const WARNING = "pre-existing warning";
const ERROR = "unexpected symbol near 'BROKEN'";

/**
 * A fake language server for diag/*.lua: every file has a warning on line 1;
 * LINT_DELAY_MS after its text changes (in an open document, or on disk for
 * a closed one) each "BROKEN" also gets an error.
 */
class FakeLanguageServer implements vscode.Disposable {
  readonly coll = vscode.languages.createDiagnosticCollection(SOURCE);
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly subs: vscode.Disposable[];

  constructor() {
    const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(ws(), "diag/*.lua"));
    const fromDisk = (uri: vscode.Uri) => {
      if (!vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString())) this.later(uri, () => fs.readFileSync(uri.fsPath, "utf8"));
    };
    this.subs = [
      watcher,
      watcher.onDidChange(fromDisk),
      watcher.onDidCreate(fromDisk),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (/\/diag\/[^/]*\.lua$/.test(e.document.uri.path) && e.contentChanges.length > 0) this.later(e.document.uri, () => e.document.getText());
      }),
    ];
  }

  /** Reports on uri now (the warning only, as for a file the server has just opened). */
  warnNow(uri: vscode.Uri): void {
    this.coll.set(uri, [this.warning()]);
  }

  private warning(): vscode.Diagnostic {
    const w = new vscode.Diagnostic(new vscode.Range(0, 0, 0, 5), WARNING, vscode.DiagnosticSeverity.Warning);
    w.source = SOURCE;
    w.code = { value: "W1", target: vscode.Uri.parse("https://example.com/W1") };
    return w;
  }

  private later(uri: vscode.Uri, read: () => string): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      let lines: string[];
      try {
        lines = read().split("\n");
      } catch {
        return;
      }
      const ds = [this.warning()];
      lines.forEach((l, i) => {
        const at = l.indexOf("BROKEN");
        if (at < 0) return;
        const e = new vscode.Diagnostic(new vscode.Range(i, at, i, at + 6), ERROR, vscode.DiagnosticSeverity.Error);
        e.source = SOURCE;
        ds.push(e);
      });
      this.coll.set(uri, ds);
    }, LINT_DELAY_MS);
    this.timers.add(t);
  }

  dispose(): void {
    for (const t of this.timers) clearTimeout(t);
    for (const s of this.subs) s.dispose();
    this.coll.dispose();
  }
}

interface Answered {
  p: DiagnosticsParams;
  ms: number;
  r: DiagnosticsResult;
}

/** Records every tools/diagnostics request the extension answers while f runs. */
async function recording<T>(f: (log: Answered[]) => Promise<T>): Promise<T> {
  const h = handler();
  const log: Answered[] = [];
  const orig = h.answer;
  h.answer = async (p, token) => {
    const t0 = Date.now();
    const r = await orig.call(h, p, token);
    log.push({ p, ms: Date.now() - t0, r });
    return r;
  };
  try {
    return await f(log);
  } finally {
    h.answer = orig;
  }
}

/** Changes a setting and waits for the sidecar it restarts (a new start, not the old one still ready). */
async function setCfg(key: string, value: unknown): Promise<void> {
  const cfg = vscode.workspace.getConfiguration("agentls");
  if (JSON.stringify(cfg.inspect(key)?.workspaceValue) === JSON.stringify(value)) return;
  const sidecar = (vscode.extensions.getExtension("agentls.agentls")!.exports as { sidecar: Sidecar }).sidecar;
  let restarting = false;
  const sub = sidecar.onState((s) => (restarting ||= s !== "ready"));
  try {
    await cfg.update(key, value, vscode.ConfigurationTarget.Workspace);
    await until("the sidecar restarted", () => restarting && sidecar.state === "ready", 15_000);
  } finally {
    sub.dispose();
  }
}

function writeLua(name: string, content: string): vscode.Uri {
  fs.mkdirSync(wsFile("diag"), { recursive: true });
  fs.writeFileSync(wsFile(name), content);
  return vscode.Uri.file(wsFile(name));
}

/** Times one direct answer. */
async function timed(p: DiagnosticsParams, token?: vscode.CancellationToken): Promise<{ ms: number; r: DiagnosticsResult }> {
  const t0 = Date.now();
  const r = await handler().answer(p, token);
  return { ms: Date.now() - t0, r };
}

async function setMode(mode: string): Promise<void> {
  await setCfg("mode", mode);
}

/** Lets the fake server's report on a file just written settle, so it cannot land inside the call. */
async function quiet(uri: vscode.Uri): Promise<void> {
  await until("the fake server's first report", () => vscode.languages.getDiagnostics(uri).length > 0, 5_000);
  await sleep(800);
}

/** A read then an edit through the language model tools API; the edit's text and its tools/diagnostics requests. */
async function readEdit(name: string, oldText: string, newText: string): Promise<{ r: string; log: Answered[] }> {
  assert.match(text(await invoke("agentls_read", { path: name })), /1→/);
  return recording(async (log) => {
    const r = text(await invoke("agentls_edit", { path: name, edits: [{ oldText, newText }] }));
    assert.match(r, /Edited/, r);
    return { r, log };
  });
}

/** The call's two requests: the baseline, then the wait after the change, which settled before waitMs. */
function assertSettled(log: Answered[], skip: (why: string) => never): Answered {
  if (log.length === 0) skip("the server sent no tools/diagnostics (not wired yet)");
  assert.deepEqual(log.map((a) => a.p.waitMs > 0), [false, true], JSON.stringify(log.map((a) => a.p)));
  const after = log[1];
  assert.ok(after.ms < after.p.waitMs, `the wait took ${after.ms} ms of ${after.p.waitMs}: it timed out instead of settling`);
  return after;
}

export function diagnosticsTests(skip: (why: string) => never): Test[] {
  let ls: FakeLanguageServer | undefined;
  const server = () => (ls ??= new FakeLanguageServer());
  return [
    ["diagnostics: waitMs 0 answers at once with the editor's diagnostics as LSP JSON, one item per uri", async () => {
      const uri = writeLua("diag/base.lua", "local x = 1\n");
      server().warnNow(uri);
      await until("the warning is visible", () => vscode.languages.getDiagnostics(uri).length === 1, 5_000);
      const other = vscode.Uri.file(wsFile("diag/none.nodiag")).toString();
      const { ms, r } = await timed({ callId: "t-base", tool: "edit", uris: [uri.toString(), other, "::not a uri"], waitMs: 0 });
      assert.ok(ms < 500, `baseline took ${ms} ms`);
      assert.deepEqual(r, {
        items: [
          { uri: uri.toString(), diagnostics: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 5 } }, severity: 2, message: WARNING, source: SOURCE, code: "W1" }] },
          { uri: other, diagnostics: [] },
          { uri: "::not a uri", diagnostics: [] },
        ],
      });
    }],
    ["diagnostics: nothing could report on the file → answered at once, not after waitMs", async () => {
      server();
      fs.writeFileSync(wsFile("plain.nodiag"), "x\n");
      const closed = await timed({ callId: "t-none", tool: "edit", uris: [vscode.Uri.file(wsFile("plain.nodiag")).toString()], waitMs: 5000 });
      assert.ok(closed.ms < 500, `a closed file nothing reports on waited ${closed.ms} ms`);
      fs.writeFileSync(wsFile("open-plain.txt"), "x\n");
      const doc = await vscode.workspace.openTextDocument(wsFile("open-plain.txt"));
      assert.equal(doc.languageId, "plaintext");
      const open = await timed({ callId: "t-none2", tool: "edit", uris: [doc.uri.toString()], waitMs: 5000 });
      assert.ok(open.ms < 500, `an open plain text file waited ${open.ms} ms`);
    }],
    ["diagnostics: a file with a diagnostics source waits for its update, then QUIET_MS of quiet", async () => {
      const uri = writeLua("diag/wait.lua", "local x = 1\n");
      server().warnNow(uri);
      await quiet(uri);
      const later = 400;
      const err = new vscode.Diagnostic(new vscode.Range(0, 6, 0, 7), "late error", vscode.DiagnosticSeverity.Error);
      const t = setTimeout(() => server().coll.set(uri, [...vscode.languages.getDiagnostics(uri).filter((d) => d.source === SOURCE), err]), later);
      try {
        const { ms, r } = await timed({ callId: "t-wait", tool: "edit", uris: [uri.toString()], waitMs: 5000 });
        assert.ok(ms >= later + QUIET_MS - 20, `answered after ${ms} ms, before the update (${later} ms) and its quiet time`);
        assert.ok(ms < 3000, `answered after ${ms} ms: it did not settle after the update`);
        assert.deepEqual(r.items[0].diagnostics.map((d) => [d.severity, d.message]), [[2, WARNING], [1, "late error"]]);
      } finally {
        clearTimeout(t);
      }
    }],
    ["diagnostics: the update never comes → answered at waitMs", async () => {
      const uri = writeLua("diag/never.lua", "local x = 1\n");
      server().warnNow(uri);
      await quiet(uri);
      const { ms, r } = await timed({ callId: "t-never", tool: "edit", uris: [uri.toString()], waitMs: 800 });
      assert.ok(ms >= 780, `answered after ${ms} ms, before waitMs`);
      assert.ok(ms < 2000, `answered after ${ms} ms, long after waitMs`);
      assert.equal(r.items[0].diagnostics.length, 1);
    }],
    ["diagnostics: cancelling the request stops the wait and answers with what there is", async () => {
      const uri = writeLua("diag/cancel.lua", "local x = 1\n");
      server().warnNow(uri);
      await quiet(uri);
      const cts = new vscode.CancellationTokenSource();
      setTimeout(() => cts.cancel(), 200);
      const { ms, r } = await timed({ callId: "t-cancel", tool: "edit", uris: [uri.toString()], waitMs: 10_000 }, cts.token);
      assert.ok(ms >= 150 && ms < 2000, `a wait cancelled at 200 ms took ${ms} ms`);
      assert.equal(r.items[0].diagnostics.length, 1);
    }],
    ["diagnostics e2e: an edit of a closed file on disk reports the new error, not the old warning", async () => {
      await setMode("acceptEdits");
      const uri = writeLua("diag/closed.lua", "local a = 1\nlocal b = 2\n");
      server().warnNow(uri);
      await quiet(uri);
      const { r, log } = await readEdit("diag/closed.lua", "local b = 2", "local b = BROKEN");
      assertSettled(log, skip);
      assert.match(r, /The editor reports new problems in diag\/closed\.lua:\n  L2:11 error: unexpected symbol near 'BROKEN' \(fakels\)/, r);
      assert.doesNotMatch(r, new RegExp(WARNING), r);
    }],
    ["diagnostics e2e: an edit of an open document (through workspace/applyEdit) reports the new error", async () => {
      await setMode("acceptEdits");
      const uri = writeLua("diag/open.lua", "local a = 1\nlocal b = 2\nlocal c = 3\n");
      server().warnNow(uri);
      await quiet(uri);
      const doc = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(doc, { preview: false });
      const { r, log } = await readEdit("diag/open.lua", "local c = 3", "local c = BROKEN");
      assert.match(r, /in the editor/, r);
      assertSettled(log, skip);
      assert.match(r, /The editor reports new problems in diag\/open\.lua:\n  L3:11 error: unexpected symbol near 'BROKEN' \(fakels\)/, r);
      assert.doesNotMatch(r, new RegExp(WARNING), r);
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    }],
    ["diagnostics e2e: an edit of a file nothing reports on returns without waiting", async () => {
      await setMode("acceptEdits");
      server();
      fs.writeFileSync(wsFile("quiet.nodiag"), "one\ntwo\n");
      const t0 = Date.now();
      const { r, log } = await readEdit("quiet.nodiag", "two", "BROKEN");
      const ms = Date.now() - t0;
      if (log.length === 0) skip("the server sent no tools/diagnostics (not wired yet)");
      const after = log.find((a) => a.p.waitMs > 0);
      assert.ok(after, "no request after the change");
      assert.ok(after.ms < 300, `the client waited ${after.ms} ms for a file nothing reports on (waitMs ${after.p.waitMs})`);
      assert.ok(ms < after.p.waitMs, `read + edit took ${ms} ms, as long as the wait agentls allows`);
      assert.doesNotMatch(r, /The editor reports/, r);
    }],
    ["diagnostics e2e: agentls.diagnostics off → agentls asks nothing and reports nothing", async () => {
      await setMode("acceptEdits");
      await setCfg("diagnostics", false);
      try {
        const uri = writeLua("diag/off.lua", "local a = 1\n");
        server().warnNow(uri);
        await quiet(uri);
        const { r, log } = await readEdit("diag/off.lua", "local a = 1", "local a = BROKEN");
        assert.equal(log.length, 0, `tools/diagnostics was sent: ${JSON.stringify(log.map((a) => a.p))}`);
        assert.doesNotMatch(r, /The editor reports/, r);
      } finally {
        await setCfg("diagnostics", undefined);
        ls?.dispose();
        ls = undefined;
      }
    }],
  ];
}
