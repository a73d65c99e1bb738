// The pure part of answering workspace/applyEdit (docs/protocol.md,
// "Text document sync"): which documents an LSP WorkspaceEdit targets, whether
// the editor still has the versions it was computed against, and which
// documents to save afterwards.

export interface LspTextDocumentEdit {
  textDocument: { uri: string; version?: number | null };
  edits: unknown[];
}

/** The parts of an LSP WorkspaceEdit this extension looks at. */
export interface LspWorkspaceEdit {
  /** Text document edits, or file operations ({kind: "create" | "rename" | "delete"}). */
  documentChanges?: Array<LspTextDocumentEdit | { kind: string }>;
  changes?: Record<string, unknown[]>;
}

export interface Target {
  uri: string;
  /** The document version the edit was computed against; undefined: any. */
  version: number | undefined;
}

/**
 * The documents an edit changes. documentChanges wins over changes, as in
 * languageclient's converter: a server sending both means the same edits.
 */
export function editTargets(edit: LspWorkspaceEdit | undefined): Target[] {
  const out: Target[] = [];
  if (edit?.documentChanges) {
    for (const c of edit.documentChanges) {
      if (!("textDocument" in c) || typeof c.textDocument?.uri !== "string") continue;
      const v = c.textDocument.version;
      out.push({ uri: c.textDocument.uri, version: typeof v === "number" && v >= 0 ? v : undefined });
    }
    return out;
  }
  for (const uri of Object.keys(edit?.changes ?? {})) out.push({ uri, version: undefined });
  return out;
}

/**
 * Why the edit must not be applied: a target open at another version than the
 * one the edit was computed against (the user typed since). undefined: apply.
 */
export function staleReason(targets: Target[], openVersion: (uri: string) => number | undefined): string | undefined {
  for (const t of targets) {
    const v = openVersion(t.uri);
    if (t.version !== undefined && v !== undefined && v !== t.version) {
      return `${t.uri} changed in the editor (version ${v}, the edit is for version ${t.version})`;
    }
  }
  return undefined;
}

/**
 * The documents to save after the edit: those without unsaved changes before
 * it (open and clean, or not open), so that an edit of a clean document lands
 * on disk while one with the user's unsaved work stays unsaved.
 */
export function toSave(targets: Target[], dirtyBefore: (uri: string) => boolean): string[] {
  return [...new Set(targets.map((t) => t.uri))].filter((u) => !dirtyBefore(u));
}
