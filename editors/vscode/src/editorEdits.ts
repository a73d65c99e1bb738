// workspace/applyEdit from agentls: edits of documents open in the editor
// (agentls.syncOpenFiles). Replaces languageclient's default handler, which
// would leave every edited document dirty: here a document that had no
// unsaved changes is saved after the edit, so the agent's change lands on
// disk as it would without sync, while a document with the user's unsaved
// work only gets the edit merged in.
import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { editTargets, type LspWorkspaceEdit, staleReason, toSave } from "./pure/workspaceEdit";

export interface ApplyEditParams {
  label?: string;
  edit: LspWorkspaceEdit;
}

export interface ApplyEditResult {
  applied: boolean;
  failureReason?: string;
}

/** Applies one workspace/applyEdit request; never throws. */
export async function applyWorkspaceEdit(client: LanguageClient, params: ApplyEditParams, log: (s: string) => void): Promise<ApplyEditResult> {
  try {
    const p2c = client.protocol2CodeConverter;
    const targets = editTargets(params.edit).map((t) => ({ ...t, uri: p2c.asUri(t.uri).toString() }));
    const open = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d]));
    // vscode.WorkspaceEdit carries no versions: check them here, or an edit
    // computed before the user's last keystroke would land on the wrong text.
    const stale = staleReason(targets, (u) => open.get(u)?.version);
    if (stale) return { applied: false, failureReason: stale };
    const save = toSave(targets, (u) => open.get(u)?.isDirty ?? false);
    const edit = await p2c.asWorkspaceEdit(params.edit as Parameters<typeof p2c.asWorkspaceEdit>[0]);
    if (!edit) return { applied: false, failureReason: "the edit is empty" };
    if (!(await vscode.workspace.applyEdit(edit))) return { applied: false, failureReason: "VS Code did not apply the edit" };
    for (const u of save) {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(u));
      // The edit is in the document either way; a failed save leaves it
      // dirty, which the user sees, so it is logged, not reported as unapplied.
      if (doc.isDirty && !(await doc.save())) log(`[agentls] applyEdit: could not save ${doc.uri.fsPath}; the change is in the editor, unsaved`);
    }
    return { applied: true };
  } catch (err) {
    log(`[agentls] applyEdit failed: ${String(err)}`);
    return { applied: false, failureReason: String(err instanceof Error ? err.message : err) };
  }
}
