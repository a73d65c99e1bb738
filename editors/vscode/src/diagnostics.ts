// tools/diagnostics from agentls (docs/protocol.md): the editor's
// diagnostics for the files an edit/write changes, so the model hears about
// the errors its change introduced. waitMs 0 is the baseline, answered at
// once; waitMs > 0 waits for the diagnostics to settle after the change when
// something in this window could report on the file.
import * as vscode from "vscode";
import { type ChangedFile, type Clock, DiagnosticsTracker, type LspDiagnostic, Settle, type SettleEnd, toLspDiagnostic } from "./pure/diagnostics";

export interface DiagnosticsParams {
  callId: string;
  tool: string;
  uris: string[];
  waitMs: number;
}

export interface DiagnosticsResult {
  items: Array<{ uri: string; diagnostics: LspDiagnostic[] }>;
}

const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (f, ms) => setTimeout(f, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/**
 * Watches diagnostics and text changes in this window (from construction to
 * dispose) and answers tools/diagnostics requests.
 */
export class EditorDiagnostics implements vscode.Disposable {
  private readonly tracker = new DiagnosticsTracker();
  /** Running waits, told of every diagnostics change (keys: vscode.Uri.toString()). */
  private readonly waiters = new Set<(uris: Set<string>) => void>();
  private readonly subs: vscode.Disposable[];

  constructor(private readonly log: (s: string) => void, private readonly clock: Clock = realClock) {
    this.subs = [
      vscode.languages.onDidChangeDiagnostics((e) => {
        const open = this.openDocuments();
        const files = new Map<string, ChangedFile>();
        for (const u of e.uris) {
          const uri = u.toString();
          if (!files.has(uri)) files.set(uri, { uri, languageId: open.get(uri)?.languageId, reported: this.current(u).length > 0 });
        }
        this.tracker.diagnosticsChanged([...files.values()], this.clock.now());
        const keys = new Set(files.keys());
        for (const w of this.waiters) w(keys);
      }),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length > 0) this.tracker.textChanged(e.document.uri.toString(), this.clock.now());
      }),
    ];    // The extension activates on the first tool call, not at startup: the
    // files that have diagnostics by then count as having had them.
    const open = this.openDocuments();
    const seen = vscode.languages.getDiagnostics().filter(([, d]) => d.length > 0);
    if (seen.length > 0) this.tracker.diagnosticsChanged(seen.map(([u]) => ({ uri: u.toString(), languageId: open.get(u.toString())?.languageId, reported: true })), this.clock.now());
  }

  private openDocuments(): Map<string, vscode.TextDocument> {
    return new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d]));
  }

  /** Answers one request; never throws (a bad URI gets no diagnostics). */
  async answer(p: DiagnosticsParams, token?: vscode.CancellationToken): Promise<DiagnosticsResult> {
    const requested = Array.isArray(p?.uris) ? p.uris.filter((u): u is string => typeof u === "string") : [];
    const parsed = requested.map((raw) => {
      try {
        return { raw, uri: vscode.Uri.parse(raw, true) };
      } catch {
        return { raw, uri: undefined };
      }
    });
    const callId = typeof p?.callId === "string" ? p.callId : "";
    const waitMs = typeof p?.waitMs === "number" && Number.isFinite(p.waitMs) ? p.waitMs : 0;
    try {
      if (waitMs <= 0) {
        if (callId) this.tracker.baseline(callId, this.clock.now());
      } else {
        const t0 = this.clock.now();
        const waited = await this.settle(callId, parsed.flatMap((x) => (x.uri ? [x.uri.toString()] : [])), waitMs, token);
        if (callId) this.tracker.endCall(callId);
        if (waited) this.log(`[agentls] diagnostics for ${p.tool} (${callId}): waited ${this.clock.now() - t0} ms (${waited.end}) for ${waited.why}`);
      }
    } catch (err) {
      this.log(`[agentls] diagnostics: ${String(err)}`);
    }
    return { items: parsed.map(({ raw, uri }) => ({ uri: raw, diagnostics: uri ? this.current(uri) : [] })) };
  }

  private current(uri: vscode.Uri): LspDiagnostic[] {
    try {
      return vscode.languages.getDiagnostics(uri).map((d) => toLspDiagnostic(d as unknown as Parameters<typeof toLspDiagnostic>[0]));
    } catch {
      return [];
    }
  }

  /** Waits for the files something could report on; undefined when there is none. */
  private async settle(callId: string, keys: string[], waitMs: number, token?: vscode.CancellationToken): Promise<{ end: SettleEnd; why: string } | undefined> {
    const open = this.openDocuments();
    const watched = new Map<string, string>();
    for (const uri of keys) {
      const why = this.tracker.couldReport({ uri, languageId: open.get(uri)?.languageId }, open.has(uri), this.current(vscode.Uri.parse(uri)).length > 0);
      if (why) watched.set(uri, `${vscode.Uri.parse(uri).path.split("/").pop()}: ${why}`);
    }
    if (watched.size === 0 || token?.isCancellationRequested) return undefined;
    const already = [...watched.keys()].map((u) => this.tracker.changedAfterEdit(u, callId)).filter((t): t is number => t !== undefined);
    const s = new Settle(this.clock, waitMs, already.length > 0 ? Math.max(...already) : undefined);
    const waiter = (changed: Set<string>) => {
      for (const u of changed) if (watched.has(u)) return s.changed();
    };
    this.waiters.add(waiter);
    const sub = token?.onCancellationRequested(() => s.cancel());
    try {
      return { end: await s.done, why: [...watched.values()].join("; ") };
    } finally {
      this.waiters.delete(waiter);
      sub?.dispose();
    }
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
    this.waiters.clear();
  }
}
