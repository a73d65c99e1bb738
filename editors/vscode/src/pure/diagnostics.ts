// The pure parts of the tools/diagnostics answer (docs/protocol.md,
// "tools/diagnostics"): VS Code diagnostics as LSP JSON, what could report on
// a file (so the answer waits only when something can), and the settle
// timer (a change, then QUIET_MS without another, capped at waitMs).

/** After a diagnostics change, the answer waits this long for no further change. */
export const QUIET_MS = 150;
/** A waitMs above this is taken as this (agentls asks for a few seconds at most). */
export const MAX_WAIT_MS = 60_000;
/** Files, extensions and languages remembered; beyond it the oldest are forgotten. */
export const MAX_TRACKED = 10_000;
/** Baselines (callId → time) remembered until their call's second request. */
export const MAX_BASELINES = 100;
/** Language ids no language server reports on: an open document of one does not make the answer wait. */
export const SILENT_LANGUAGES: readonly string[] = ["plaintext"];

export interface LspPosition {
  line: number;
  character: number;
}

/** An LSP Diagnostic: 0-based lines, UTF-16 characters, severity 1 error … 4 hint. */
export interface LspDiagnostic {
  range: { start: LspPosition; end: LspPosition };
  severity: 1 | 2 | 3 | 4;
  message: string;
  source?: string;
  code?: string | number;
}

/** The fields of a vscode.Diagnostic this needs (its positions are UTF-16 already). */
export interface DiagnosticLike {
  range: { start: LspPosition; end: LspPosition };
  /** vscode.DiagnosticSeverity: Error 0, Warning 1, Information 2, Hint 3. */
  severity: number;
  message: string;
  source?: string;
  code?: string | number | { value: string | number; target?: unknown };
}

const pos = (p: LspPosition): LspPosition => ({ line: p.line, character: p.character });

/** A VS Code diagnostic as LSP JSON; an unknown severity is an error. */
export function toLspDiagnostic(d: DiagnosticLike): LspDiagnostic {
  const sev = Number.isInteger(d.severity) && d.severity >= 0 && d.severity <= 3 ? ((d.severity + 1) as 1 | 2 | 3 | 4) : 1;
  const out: LspDiagnostic = { range: { start: pos(d.range.start), end: pos(d.range.end) }, severity: sev, message: String(d.message ?? "") };
  if (typeof d.source === "string" && d.source !== "") out.source = d.source;
  const code = typeof d.code === "object" && d.code !== null ? d.code.value : d.code;
  if (typeof code === "string" || typeof code === "number") out.code = code;
  return out;
}

/** The extension of a URI's path, lower case with its dot ("" when none). */
export function extensionOf(uri: string): string {
  const p = uri.replace(/[?#].*$/, "");
  const base = p.slice(p.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(dot).toLowerCase() : "";
}

/** A Map used as a bounded, insertion-ordered record: a set key moves to the end. */
function remember<K, V>(m: Map<K, V>, k: K, v: V, max: number): void {
  m.delete(k);
  m.set(k, v);
  while (m.size > max) m.delete(m.keys().next().value as K);
}

/** A file as the tracker sees it: its URI (as vscode.Uri.toString gives it) and, when open, its language. */
export interface FileRef {
  uri: string;
  languageId?: string;
}

/** A file in a diagnostics change, and whether it has diagnostics after it. */
export interface ChangedFile extends FileRef {
  /** Some diagnostics now: a change that clears them says nothing about who reports on the file. */
  reported: boolean;
}

/**
 * What this window has seen of diagnostics and edits: which files, file
 * extensions and languages have had diagnostics reported (something can
 * report on them), when each file's diagnostics and text last changed, and
 * when each call asked for its baseline. Times are the caller's clock.
 */
export class DiagnosticsTracker {
  private readonly diagAt = new Map<string, number>();
  private readonly reported = new Map<string, true>();
  private readonly textAt = new Map<string, number>();
  private readonly exts = new Map<string, true>();
  /** Extensions with diagnostics reported for a file that was not open: their servers report on closed files. */
  private readonly closedExts = new Map<string, true>();
  private readonly languages = new Map<string, true>();
  private readonly baselines = new Map<string, number>();

  /** onDidChangeDiagnostics: these files' diagnostics changed at now. */
  diagnosticsChanged(files: ChangedFile[], now: number): void {
    for (const f of files) {
      remember(this.diagAt, f.uri, now, MAX_TRACKED);
      if (!f.reported) continue;
      remember(this.reported, f.uri, true, MAX_TRACKED);
      const ext = extensionOf(f.uri);
      if (ext) remember(this.exts, ext, true, MAX_TRACKED);
      if (ext && !f.languageId) remember(this.closedExts, ext, true, MAX_TRACKED);
      if (f.languageId) remember(this.languages, f.languageId, true, MAX_TRACKED);
    }
  }

  /** onDidChangeTextDocument: the editor's text of uri changed at now. */
  textChanged(uri: string, now: number): void {
    remember(this.textAt, uri, now, MAX_TRACKED);
  }

  /** A waitMs 0 request: the call's file is about to change. */
  baseline(callId: string, now: number): void {
    remember(this.baselines, callId, now, MAX_BASELINES);
  }

  /** Forgets a call's baseline (its second request came). */
  endCall(callId: string): void {
    this.baselines.delete(callId);
  }

  /**
   * Why something could report on f, or undefined when nothing could.
   * An open file: it, its extension or its language has had diagnostics in
   * this window, or it is open in a language other than plain text (a
   * language server may be attached that has not reported yet). A closed
   * file: it has diagnostics now (hasNow), or its extension has had
   * diagnostics for a file that was not open. Many servers (TypeScript's)
   * report on open files only: waiting for them after every edit of a
   * closed file would cost the whole wait and tell nothing.
   */
  couldReport(f: FileRef, open: boolean, hasNow = false): string | undefined {
    const ext = extensionOf(f.uri);
    if (!open) {
      if (hasNow) return "the file has diagnostics";
      if (ext && this.closedExts.has(ext)) return `${ext} files have had diagnostics while closed`;
      return undefined;
    }
    if (this.reported.has(f.uri)) return "the file has had diagnostics";
    if (ext && this.exts.has(ext)) return `${ext} files have had diagnostics`;
    if (f.languageId && this.languages.has(f.languageId)) return `${f.languageId} files have had diagnostics`;
    if (f.languageId && !SILENT_LANGUAGES.includes(f.languageId)) return `the file is open as ${f.languageId}`;
    return undefined;
  }

  /**
   * The time of uri's last diagnostics change after the call's change: after
   * both its baseline and the last change of the editor's text. A language
   * server can report before the second request arrives; that change counts.
   * undefined when there was none, or nothing tells when the change was.
   */
  changedAfterEdit(uri: string, callId: string): number | undefined {
    const since = Math.max(this.baselines.get(callId) ?? -Infinity, this.textAt.get(uri) ?? -Infinity);
    const at = this.diagAt.get(uri);
    return since > -Infinity && at !== undefined && at > since ? at : undefined;
  }
}

/** Timers and time, injected so the settle logic runs under a fake clock in tests. */
export interface Clock {
  now(): number;
  setTimeout(f: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export type SettleEnd = "settled" | "timeout" | "cancelled";

/**
 * Waits for a diagnostics change followed by QUIET_MS without another, or
 * waitMs in all, or cancel(), whichever comes first. lastChangeAt: a change
 * that already happened (its quiet time counts from then).
 */
export class Settle {
  readonly done: Promise<SettleEnd>;
  private resolve!: (e: SettleEnd) => void;
  private ended = false;
  private deadlineTimer: unknown;
  private quietTimer: unknown;

  constructor(private readonly clock: Clock, waitMs: number, lastChangeAt?: number) {
    this.done = new Promise((r) => (this.resolve = r));
    const wait = Math.max(0, Math.min(MAX_WAIT_MS, Number.isFinite(waitMs) ? waitMs : 0));
    this.deadlineTimer = clock.setTimeout(() => this.end("timeout"), wait);
    if (lastChangeAt !== undefined) this.arm(Math.max(0, QUIET_MS - (clock.now() - lastChangeAt)));
  }

  /** A diagnostics change for one of the files: the quiet time starts again. */
  changed(): void {
    this.arm(QUIET_MS);
  }

  cancel(): void {
    this.end("cancelled");
  }

  private arm(ms: number): void {
    if (this.ended) return;
    if (this.quietTimer !== undefined) this.clock.clearTimeout(this.quietTimer);
    this.quietTimer = this.clock.setTimeout(() => this.end("settled"), ms);
  }

  private end(e: SettleEnd): void {
    if (this.ended) return;
    this.ended = true;
    this.clock.clearTimeout(this.deadlineTimer);
    if (this.quietTimer !== undefined) this.clock.clearTimeout(this.quietTimer);
    this.resolve(e);
  }
}
