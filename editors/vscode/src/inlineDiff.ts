// Inline diffs of agent changes: line highlights + removed-text ghost text
// in every visible editor of a changed file, a CodeLens (Show diff / Revert),
// a virtual document with the old text, and the "Agent changes" view.
import * as path from "node:path";
import * as vscode from "vscode";
import { type ChangeRegion, changeRegions, reverseUnifiedDiff, type TextEdit } from "./pure/ranges";
import { textHash } from "./pure/hash";

export const OLD_SCHEME = "agentls-old";

export interface Change {
  id: number;
  uri: vscode.Uri;
  display: string;
  tool: string;
  kind: string;
  /** The file before the change; undefined when it could not be reconstructed. */
  oldText: string | undefined;
  newText: string;
  regions: ChangeRegion[];
  /** Highlights are on until the user edits those lines or clears them. */
  highlighted: boolean;
  added: number;
  removed: number;
}

/** Ghost text of removed lines is cut to this many characters. */
export const GHOST_MAX = 80;

export class InlineDiffs implements vscode.Disposable, vscode.CodeLensProvider, vscode.TextDocumentContentProvider, vscode.TreeDataProvider<Change> {
  private readonly changes = new Map<string, Change>(); // by uri string
  private readonly oldTexts = new Map<number, string>(); // by change id (also previews)
  private nextId = 0;
  private readonly disposables: vscode.Disposable[] = [];
  readonly inserted = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor("diffEditor.insertedLineBackground"),
    overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.addedForeground"),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
    rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
  });
  readonly removed = vscode.window.createTextEditorDecorationType({
    overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.deletedForeground"),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
    after: {
      color: new vscode.ThemeColor("editor.foreground"),
      backgroundColor: new vscode.ThemeColor("diffEditor.removedTextBackground"),
      textDecoration: "none; opacity: 0.8",
      margin: "0 0 0 2em",
      fontStyle: "italic",
    },
  });
  private readonly lensEmitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensEmitter.event;
  private readonly docEmitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.docEmitter.event;
  private readonly treeEmitter = new vscode.EventEmitter<Change | undefined>();
  readonly onDidChangeTreeData = this.treeEmitter.event;

  constructor(private readonly log: (s: string) => void) {
    this.disposables.push(
      this.inserted,
      this.removed,
      vscode.window.onDidChangeVisibleTextEditors(() => this.render()),
      vscode.workspace.onDidChangeTextDocument((e) => this.onEdit(e)),
      vscode.languages.registerCodeLensProvider({ scheme: "file" }, this),
      vscode.workspace.registerTextDocumentContentProvider(OLD_SCHEME, this),
      vscode.window.registerTreeDataProvider("agentls.changes", this),
    );
  }

  /** Handles a tools/details notification of edit/write/create. */
  async onDetails(tool: string, d: Record<string, unknown>): Promise<void> {
    if (typeof d.uri !== "string" || !Array.isArray(d.edits) || d.dryRun) return;
    const uri = vscode.Uri.parse(d.uri);
    let newText: string;
    // A change made in the editor (details.inEditor, agentls.syncOpenFiles)
    // may not be on disk: the document has the new text.
    const doc = d.inEditor ? vscode.workspace.textDocuments.find((t) => t.uri.toString() === uri.toString()) : undefined;
    try {
      newText = doc ? doc.getText() : new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
    } catch (err) {
      this.log(`[agentls] inline diff: cannot read ${uri.fsPath}: ${String(err)}`);
      return;
    }
    if (typeof d.newHash === "string" && textHash(newText) !== d.newHash) {
      this.log(`[agentls] inline diff: ${uri.fsPath} changed again before it could be shown`);
      return;
    }
    let oldText: string | undefined = d.kind === "create" ? "" : reverseUnifiedDiff(newText, String(d.unifiedDiff ?? ""));
    if (oldText !== undefined && typeof d.oldHash === "string" && textHash(oldText) !== d.oldHash) oldText = undefined;
    if (oldText === undefined) this.log(`[agentls] inline diff: could not reconstruct the old text of ${uri.fsPath}; Show diff/Revert are off`);
    const edits = d.edits as TextEdit[];
    const regions = changeRegions(edits, oldText);
    const diffLines = String(d.unifiedDiff ?? "").split("\n");
    const change: Change = {
      id: ++this.nextId,
      uri,
      display: typeof d.path === "string" ? d.path : vscode.workspace.asRelativePath(uri),
      tool,
      kind: String(d.kind ?? "edit"),
      oldText,
      newText,
      regions,
      highlighted: true,
      added: diffLines.filter((l) => l.startsWith("+") && !l.startsWith("+++")).length,
      removed: diffLines.filter((l) => l.startsWith("-") && !l.startsWith("---")).length,
    };
    if (oldText !== undefined) this.oldTexts.set(change.id, oldText);
    this.changes.set(uri.toString(), change);
    this.render();
    this.lensEmitter.fire();
    this.treeEmitter.fire(undefined);
  }

  /** Registers old text for a preview (confirm "Show change") and returns its virtual URI. */
  previewUri(display: string, text: string): vscode.Uri {
    const id = ++this.nextId;
    this.oldTexts.set(id, text);
    return vscode.Uri.from({ scheme: OLD_SCHEME, path: "/" + display, query: String(id) });
  }

  oldUri(c: Change): vscode.Uri {
    return vscode.Uri.from({ scheme: OLD_SCHEME, path: "/" + c.display, query: String(c.id) });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.oldTexts.get(Number(uri.query)) ?? "";
  }

  get(uri: vscode.Uri): Change | undefined {
    return this.changes.get(uri.toString());
  }

  all(): Change[] {
    return [...this.changes.values()];
  }

  /** Paints every visible editor whose text is the changed file's new text. */
  render(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const c = this.changes.get(editor.document.uri.toString());
      if (!c || !c.highlighted || editor.document.getText() !== c.newText) {
        if (!c || !c.highlighted) {
          editor.setDecorations(this.inserted, []);
          editor.setDecorations(this.removed, []);
        }
        continue;
      }
      editor.setDecorations(this.inserted, this.insertedRanges(c));
      editor.setDecorations(this.removed, this.removedDecorations(c, editor.document));
    }
  }

  insertedRanges(c: Change): vscode.Range[] {
    const out: vscode.Range[] = [];
    for (const r of c.regions) {
      if (r.firstLine < 0) continue;
      out.push(new vscode.Range(r.firstLine, 0, r.lastLine, 0));
    }
    return out;
  }

  removedDecorations(c: Change, doc?: vscode.TextDocument): vscode.DecorationOptions[] {
    const out: vscode.DecorationOptions[] = [];
    for (const r of c.regions) {
      if (r.removed === "" && r.oldRange.start.line === r.oldRange.end.line && r.oldRange.start.character === r.oldRange.end.character) continue;
      const line = r.firstLine >= 0 ? r.lastLine : r.range.start.line;
      const lines = r.removedLines.length > 0 ? r.removedLines : r.removed.split(/\r\n|\r|\n/);
      const first = lines.find((l) => l.trim() !== "")?.trim() ?? "";
      const ghost = first.length > GHOST_MAX ? first.slice(0, GHOST_MAX - 1) + "…" : first;
      const more = lines.length > 1 ? `  (+${lines.length - 1} more removed)` : "";
      const hover = new vscode.MarkdownString();
      hover.appendMarkdown("**Removed by the agent:**\n");
      hover.appendCodeblock(lines.map((l) => "- " + l).join("\n"), "diff");
      out.push({
        range: new vscode.Range(line, 0, line, 0).with({ end: new vscode.Position(line, doc && line < doc.lineCount ? doc.lineAt(line).text.length : 0) }),
        hoverMessage: hover,
        renderOptions: { after: { contentText: `was: ${ghost}${more}` } },
      });
    }
    return out;
  }

  private onEdit(e: vscode.TextDocumentChangeEvent): void {
    const c = this.changes.get(e.document.uri.toString());
    if (!c || !c.highlighted || e.contentChanges.length === 0) return;
    const text = e.document.getText();
    if (text === c.newText) {
      // The editor reloaded the file the agent wrote: now it can be painted.
      this.render();
      this.lensEmitter.fire();
      return;
    }
    // A change to a highlighted line clears the file's highlights; changes
    // above them shift them.
    let touched = false;
    let shift = 0;
    const first = Math.min(...c.regions.map((r) => (r.firstLine >= 0 ? r.firstLine : r.range.start.line)));
    for (const ch of e.contentChanges) {
      const delta = ch.text.split(/\r\n|\r|\n/).length - 1 - (ch.range.end.line - ch.range.start.line);
      for (const r of c.regions) {
        const a = r.firstLine >= 0 ? r.firstLine : r.range.start.line;
        const b = r.firstLine >= 0 ? r.lastLine : r.range.start.line;
        if (ch.range.start.line <= b && ch.range.end.line >= a) touched = true;
      }
      if (ch.range.end.line < first) shift += delta;
    }
    if (touched) {
      this.clear(c.uri);
      return;
    }
    if (shift !== 0) {
      c.regions = c.regions.map((r) => ({
        ...r,
        firstLine: r.firstLine >= 0 ? r.firstLine + shift : r.firstLine,
        lastLine: r.lastLine >= 0 ? r.lastLine + shift : r.lastLine,
        range: {
          start: { line: r.range.start.line + shift, character: r.range.start.character },
          end: { line: r.range.end.line + shift, character: r.range.end.character },
        },
      }));
    }
    c.newText = text;
    this.lensEmitter.fire();
  }

  /** Clears highlights of one file, or of all files. */
  clear(uri?: vscode.Uri): void {
    for (const c of this.changes.values()) {
      if (!uri || c.uri.toString() === uri.toString()) c.highlighted = false;
    }
    this.render();
    this.lensEmitter.fire();
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const c = this.changes.get(doc.uri.toString());
    if (!c || !c.highlighted) return [];
    const lines = c.regions.map((r) => (r.firstLine >= 0 ? r.firstLine : r.range.start.line));
    const line = Math.min(Math.max(0, Math.min(...lines)), Math.max(0, doc.lineCount - 1));
    const range = new vscode.Range(line, 0, line, 0);
    const lenses = [new vscode.CodeLens(range, { title: `agentls ${c.tool}: Show diff`, command: "agentls.showDiff", arguments: [c.uri] })];
    if (c.oldText !== undefined) lenses.push(new vscode.CodeLens(range, { title: "Revert", command: "agentls.revert", arguments: [c.uri] }));
    return lenses;
  }

  async showDiff(uri?: vscode.Uri): Promise<void> {
    const c = uri ? this.get(uri) : this.active();
    if (!c) return void vscode.window.showInformationMessage("agentls: no agent change for this file");
    if (c.oldText === undefined) return void vscode.window.showWarningMessage("agentls: the old text of this change is not available");
    await vscode.commands.executeCommand("vscode.diff", this.oldUri(c), c.uri, `${path.basename(c.display)} (agent ${c.tool})`);
  }

  /**
   * Puts the old text back with one undoable edit, then saves, unless the
   * document has unsaved changes (the user's, or an agent change made in the
   * editor): those stay unsaved, as the change was.
   */
  async revert(uri?: vscode.Uri): Promise<boolean> {
    const c = uri ? this.get(uri) : this.active();
    if (!c || c.oldText === undefined) return false;
    const doc = await vscode.workspace.openTextDocument(c.uri);
    const dirty = doc.isDirty;
    const we = new vscode.WorkspaceEdit();
    we.replace(c.uri, new vscode.Range(0, 0, doc.lineCount, 0), c.oldText);
    if (!(await vscode.workspace.applyEdit(we))) return false;
    if (!dirty) await doc.save();
    this.changes.delete(c.uri.toString());
    this.render();
    for (const e of vscode.window.visibleTextEditors) {
      if (e.document.uri.toString() === c.uri.toString()) {
        e.setDecorations(this.inserted, []);
        e.setDecorations(this.removed, []);
      }
    }
    this.lensEmitter.fire();
    this.treeEmitter.fire(undefined);
    return true;
  }

  private active(): Change | undefined {
    const u = vscode.window.activeTextEditor?.document.uri;
    return u ? this.get(u) : undefined;
  }

  getTreeItem(c: Change): vscode.TreeItem {
    const item = new vscode.TreeItem(c.display, vscode.TreeItemCollapsibleState.None);
    item.resourceUri = c.uri;
    item.description = `${c.kind} +${c.added} −${c.removed}`;
    item.command = { title: "Show diff", command: "agentls.showDiff", arguments: [c.uri] };
    return item;
  }

  getChildren(): Change[] {
    return this.all();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.lensEmitter.dispose();
    this.docEmitter.dispose();
    this.treeEmitter.dispose();
  }
}
