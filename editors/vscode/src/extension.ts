// Entry point: wires the sidecar, the language model tools, confirmations,
// progress, inline diffs, commands and the status bar together.
import { execFile } from "node:child_process";
import * as vscode from "vscode";
import { EditorDiagnostics } from "./diagnostics";
import { InlineDiffs } from "./inlineDiff";
import { Jobs } from "./jobs";
import { applyTextEdits, type TextEdit } from "./pure/ranges";
import { confirmView, withAllowRule, workspaceAllowRule } from "./pure/confirm";
import { Approvals, preparedView } from "./pure/approvals";
import { invocationMessage, TOOL_PREFIX } from "./pure/settings";
import { statusView } from "./pure/status";
import { type ConfirmParams, type ConfirmResult, Sidecar, type ToolResult } from "./sidecar";

/** A bash call still running after this long gets a progress notification. */
export const LONG_CALL_MS = 1000;

interface ToolContribution {
  name: string;
  inputSchema?: unknown;
}

export interface TestHooks {
  confirmAnswers: ConfirmResult[];
  confirmRequests: ConfirmParams[];
  /** Confirmation pickers shown, and closed because the server cancelled them. */
  confirmShown: number;
  confirmClosedByCancel: number;
  /** Messages shown in long-call progress notifications. */
  progressMessages: string[];
  /**
   * prepareInvocation asks agentls (tools/prepare) only when a test turns
   * this on: for vscode.lm.invokeTool without a chat session VS Code shows
   * a confirmation as a modal dialog no test can answer, so tests that
   * drive agentls's own question keep it off.
   */
  nativeConfirm: boolean;
  /** The tools/call params' approved token of each call, in order ("" when none). */
  approvedTokens: string[];
}

export function activate(ctx: vscode.ExtensionContext) {
  const output = vscode.window.createOutputChannel("agentls");
  const testing = process.env.AGENTLS_TEST === "1";
  const hooks: TestHooks = { confirmAnswers: [], confirmRequests: [], confirmShown: 0, confirmClosedByCancel: 0, progressMessages: [], nativeConfirm: false, approvedTokens: [] };
  // Approvals given in VS Code's confirmation, waiting for their invocation.
  const approvals = new Approvals();
  const diffs = new InlineDiffs((s) => output.appendLine(s));
  // Created before the sidecar starts: it learns which files and languages
  // have diagnostics from the first moment of the window.
  const diagnostics = new EditorDiagnostics((s) => output.appendLine(s));
  const progressByCall = new Map<string, (p: { message?: string; output?: string }) => void>();
  let running = 0;

  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  status.command = "agentls.showLog";
  const paint = () => {
    const v = statusView({ state: sidecar.state, running, watcher: sidecar.watcher, binaryPath: sidecar.binaryPath, sandbox: sidecar.sandbox });
    status.text = v.text;
    status.tooltip = v.tooltip;
  };

  const sidecar = new Sidecar(ctx, output, {
    onProgress: (p) => progressByCall.get(p.callId)?.(p),
    onDetails: (p) => {
      if (["edit", "write"].includes(p.tool) || typeof p.details?.uri === "string") void diffs.onDetails(p.tool, p.details);
    },
    onConfirm: (p, token) => confirm(p, token),
    onDiagnostics: (p, token) => diagnostics.answer(p, token),
    onJobChanged: (p) => jobs.onChanged(p),
  });
  const jobs = new Jobs(sidecar);
  sidecar.onState(paint);
  paint();
  status.show();

  async function confirm(p: ConfirmParams, token: vscode.CancellationToken): Promise<ConfirmResult> {
    if (testing) {
      hooks.confirmRequests.push(p);
      const a = hooks.confirmAnswers.shift();
      if (a) return a;
    }
    const items = {
      once: { label: "$(check) Allow once", decision: "allowOnce" as const },
      always: { label: "$(check-all) Always allow", description: `this tool call pattern, for this session`, decision: "allowAlways" as const },
      deny: { label: "$(close) Deny", decision: "rejectOnce" as const },
      workspace: { label: "$(check-all) Always allow in this workspace", description: "", decision: "allowAlways" as const },
      show: { label: "$(diff) Show change", description: "open the previewed diff, then decide" },
    };
    const view = confirmView(p);
    const rule = workspaceAllowRule(p);
    items.workspace.description = rule ? `adds ${rule} to agentls.permissions.allow` : "";
    // A QuickPick, unlike a modal message, can be closed when the server
    // cancels the call; ignoreFocusOut keeps it up until answered.
    for (;;) {
      const qp = vscode.window.createQuickPick<vscode.QuickPickItem & { decision?: ConfirmResult["decision"] }>();
      qp.title = view.title;
      qp.placeholder = view.placeholder;
      qp.ignoreFocusOut = true;
      qp.items = [items.once, items.always, items.deny, ...(view.canShowChange ? [items.show] : []), ...(rule ? [items.workspace] : [])];
      const subs: vscode.Disposable[] = [];
      const pick = await new Promise<(typeof qp.items)[number] | undefined>((resolve) => {
        subs.push(
          qp.onDidAccept(() => resolve(qp.selectedItems[0])),
          qp.onDidHide(() => resolve(undefined)),
          token.onCancellationRequested(() => resolve(undefined)),
        );
        qp.show();
        hooks.confirmShown++;
      });
      subs.forEach((s) => s.dispose());
      qp.dispose();
      if (token.isCancellationRequested) {
        hooks.confirmClosedByCancel++;
        return { decision: "rejectOnce", message: "cancelled" };
      }
      if (!pick) return { decision: "rejectOnce", message: "the user dismissed the confirmation" };
      if (pick === items.workspace && rule) await allowInWorkspace(rule);
      if (pick.decision) return { decision: pick.decision, message: pick.decision === "rejectOnce" ? "the user denied it" : undefined };
      await showPreview(p);
    }
  }

  /**
   * Writes rule to the workspace's agentls.permissions.allow. The running
   * agentls already has it as a session rule (the allowAlways answer), so
   * this change does not restart it: a restart would end the calls in flight.
   */
  let selfWrittenPermissions: string | undefined;
  async function allowInWorkspace(rule: string): Promise<void> {
    const cfg = vscode.workspace.getConfiguration("agentls");
    const next = withAllowRule(cfg.inspect("permissions")?.workspaceValue, rule);
    selfWrittenPermissions = JSON.stringify(next);
    try {
      await cfg.update("permissions", next, vscode.ConfigurationTarget.Workspace);
      output.appendLine(`[agentls] added ${rule} to the workspace's agentls.permissions.allow`);
    } catch (err) {
      selfWrittenPermissions = undefined;
      void vscode.window.showWarningMessage(`agentls: could not write ${rule} to the workspace settings: ${String(err)}; it is allowed for this session only`);
    }
  }

  async function showPreview(p: ConfirmParams): Promise<void> {
    const d = p.preview as { uri?: string; edits?: TextEdit[]; path?: string } | undefined;
    if (!d?.uri) return;
    const uri = vscode.Uri.parse(d.uri);
    let current = "";
    try {
      current = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
    } catch {
      current = "";
    }
    const display = d.path ?? vscode.workspace.asRelativePath(uri);
    const after = applyTextEdits(current, d.edits ?? []);
    await vscode.commands.executeCommand("vscode.diff", diffs.previewUri(display, current), diffs.previewUri(display + " (proposed)", after), `${display} (proposed by agent ${p.tool})`);
  }

  /** Runs one tool call, with progress for long bash calls and cancellation. */
  async function runTool(tool: string, input: unknown, token: vscode.CancellationToken, approved?: string): Promise<ToolResult> {
    const callId = sidecar.newCallId();
    const cts = new vscode.CancellationTokenSource();
    const sub = token.onCancellationRequested(() => cts.cancel());
    running++;
    paint();
    let timer: NodeJS.Timeout | undefined;
    let finish: () => void = () => undefined;
    if (tool === "bash") {
      timer = setTimeout(() => {
        void vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: `agentls: ${invocationMessage(tool, input as Record<string, unknown>)}`, cancellable: true },
          (progress, ptoken) =>
            new Promise<void>((resolve) => {
              finish = resolve;
              ptoken.onCancellationRequested(() => cts.cancel());
              progressByCall.set(callId, (p) => {
                const last = (p.output ?? p.message ?? "").split(/\r?\n/).filter((l) => l.trim() !== "").pop();
                if (!last) return;
                progress.report({ message: last.slice(0, 200) });
                if (testing) hooks.progressMessages.push(last);
              });
            }),
        );
      }, LONG_CALL_MS);
    }
    try {
      if (testing) hooks.approvedTokens.push(approved ?? "");
      return await sidecar.call(tool, input, cts.token, callId, approved);
    } finally {
      clearTimeout(timer);
      finish();
      progressByCall.delete(callId);
      sub.dispose();
      cts.dispose();
      running--;
      paint();
    }
  }

  function toModelResult(r: ToolResult): vscode.LanguageModelToolResult {
    const parts: Array<vscode.LanguageModelTextPart | unknown> = [];
    const api = vscode as unknown as { LanguageModelDataPart?: { image(data: Uint8Array, mime: string): unknown } };
    for (const c of r.content ?? []) {
      if (c.type === "text") parts.push(new vscode.LanguageModelTextPart(c.text));
      else if (c.type === "image" && api.LanguageModelDataPart) parts.push(api.LanguageModelDataPart.image(Buffer.from(c.data, "base64"), c.mimeType));
      else if (c.type === "image") parts.push(new vscode.LanguageModelTextPart(`[image ${c.mimeType}, ${Math.round((c.data.length * 3) / 4)} bytes: this editor cannot pass images to the model]`));
    }
    return new vscode.LanguageModelToolResult(parts as vscode.LanguageModelTextPart[]);
  }

  // Language model tools: one per contribution in package.json.
  const contributed: ToolContribution[] = (ctx.extension.packageJSON?.contributes?.languageModelTools ?? []) as ToolContribution[];
  // The registered implementations, by tool name (the test hook calls them).
  const registered = new Map<string, vscode.LanguageModelTool<Record<string, unknown>>>();
  for (const t of contributed) {
    const tool = t.name.slice(TOOL_PREFIX.length);
    const impl: vscode.LanguageModelTool<Record<string, unknown>> = {
      // agentls says what the call needs; VS Code asks the user (its own
      // confirmation, with its "always allow" choices) and the approval goes
      // with the invocation, so agentls does not ask a second time.
      prepareInvocation: async (opts, token) => {
        const prepared: vscode.PreparedToolInvocation = { invocationMessage: invocationMessage(tool, opts.input) };
        if (testing && !hooks.nativeConfirm) return prepared;
        const view = preparedView(tool, await sidecar.prepare(tool, opts.input, token).catch(() => undefined));
        if (view.verdict) approvals.put(tool, opts.input, view.verdict);
        if (view.confirmation) prepared.confirmationMessages = { title: view.confirmation.title, message: new vscode.MarkdownString(view.confirmation.message) };
        return prepared;
      },
      invoke: async (opts, token) => {
        const verdict = approvals.take(tool, opts.input);
        // deny and fail: the model reads why, and nothing runs.
        if (verdict?.kind === "refused") return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(verdict.text)]);
        try {
          return toModelResult(await runTool(tool, opts.input, token, verdict?.token));
        } catch (err) {
          if (token.isCancellationRequested) throw new vscode.CancellationError();
          throw err;
        }
      },
    };
    registered.set(t.name, impl);
    ctx.subscriptions.push(vscode.lm.registerTool<Record<string, unknown>>(t.name, impl));
  }

  const cmd = (id: string, f: (...a: any[]) => unknown) => ctx.subscriptions.push(vscode.commands.registerCommand(id, f));
  cmd("agentls.restart", () => sidecar.restart());
  cmd("agentls.jobs", () => jobs.pick());
  cmd("agentls.showLog", () => output.show(true));
  cmd("agentls.clearHighlights", () => diffs.clear());
  cmd("agentls.showDiff", (uri?: vscode.Uri) => diffs.showDiff(uri));
  cmd("agentls.revert", (uri?: vscode.Uri) => diffs.revert(uri));
  cmd("agentls.showAudit", () => {
    if (!sidecar.binaryPath) return void vscode.window.showErrorMessage("agentls: the binary is not available");
    execFile(sidecar.binaryPath, ["audit", "--tail", "200"], { cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath }, async (err, stdout, stderr) => {
      const doc = await vscode.workspace.openTextDocument({ content: stdout || stderr || String(err ?? "(empty audit log)"), language: "log" });
      await vscode.window.showTextDocument(doc, { preview: true });
    });
  });
  cmd("agentls.runTool", async () => {
    const pick = await vscode.window.showQuickPick(contributed.map((t) => ({ label: t.name.slice(TOOL_PREFIX.length), schema: t.inputSchema })), { title: "agentls: Run tool…" });
    if (!pick) return;
    const req = ((pick.schema as { required?: string[] })?.required ?? []).map((k) => `"${k}": ""`).join(", ");
    const raw = await vscode.window.showInputBox({ title: `agentls ${pick.label}: arguments (JSON)`, value: `{${req}}`, validateInput: (v) => { try { JSON.parse(v); return undefined; } catch (e) { return String(e); } } });
    if (raw === undefined) return;
    const r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `agentls: ${pick.label}`, cancellable: true }, (_p, token) => runTool(pick.label, JSON.parse(raw), token));
    const text = r.content.map((c) => (c.type === "text" ? c.text : `[image ${c.mimeType}]`)).join("\n");
    const doc = await vscode.workspace.openTextDocument({ content: (r.isError ? "ERROR\n" : "") + text });
    await vscode.window.showTextDocument(doc, { preview: true });
  });

  if (testing) {
    cmd("agentls._test.hooks", () => hooks);
    cmd("agentls._test.state", () => ({ state: sidecar.state, watcher: sidecar.watcher, binary: sidecar.binaryPath, status: { text: status.text, tooltip: status.tooltip } }));
    cmd("agentls._test.decorations", () =>
      vscode.window.visibleTextEditors.map((e) => {
        const c = diffs.get(e.document.uri);
        const painted = !!c && c.highlighted && e.document.getText() === c.newText;
        return {
          uri: e.document.uri.toString(),
          inserted: painted ? diffs.insertedRanges(c!).flatMap((r) => Array.from({ length: r.end.line - r.start.line + 1 }, (_, i) => r.start.line + i)) : [],
          removed: painted ? diffs.removedDecorations(c!).map((d) => d.range.start.line) : [],
          keys: { inserted: diffs.inserted.key, removed: diffs.removed.key },
        };
      }),
    );
    cmd("agentls._test.prepare", async (name: string, input: Record<string, unknown>) => {
      const prepared = await registered.get(name)?.prepareInvocation?.({ input }, new vscode.CancellationTokenSource().token);
      if (!prepared) return undefined;
      const m = prepared.confirmationMessages;
      return m ? { invocationMessage: prepared.invocationMessage, confirmation: { title: m.title, message: typeof m.message === "string" ? m.message : m.message.value } } : { invocationMessage: prepared.invocationMessage };
    });
    cmd("agentls._test.jobs", () => ({ entries: jobs.entries(), status: { text: jobs.item.text, tooltip: jobs.item.tooltip } }));
    cmd("agentls._test.jobOutput", (job: string) => jobs.output(job));
    cmd("agentls._test.jobKill", (job: string) => jobs.kill(job));
    // The registered invoke, as VS Code calls it once the user confirmed.
    cmd("agentls._test.invoke", async (name: string, input: Record<string, unknown>) => {
      const r = await registered.get(name)?.invoke({ input, toolInvocationToken: undefined }, new vscode.CancellationTokenSource().token);
      return r?.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : "")).join("");
    });
    cmd("agentls._test.pendingApprovals", () => approvals.size);
    cmd("agentls._test.changes", () => diffs.all().map((c) => ({ uri: c.uri.toString(), oldText: c.oldText, newText: c.newText, highlighted: c.highlighted })));
  }

  ctx.subscriptions.push(
    output,
    status,
    jobs,
    diffs,
    diagnostics,
    sidecar,
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("agentls")) {
        const others = ["path", "mode", "syncOpenFiles", "diagnostics", "trace.server"].some((k) => e.affectsConfiguration(`agentls.${k}`));
        const mine = selfWrittenPermissions !== undefined && JSON.stringify(vscode.workspace.getConfiguration("agentls").inspect("permissions")?.workspaceValue) === selfWrittenPermissions;
        selfWrittenPermissions = undefined;
        if (!others && mine) return void output.appendLine("[agentls] agentls.permissions gained the rule just allowed; agentls has it already (no restart)");
        output.appendLine("[agentls] settings changed: restarting");
        void sidecar.restart();
      }
    }),
  );
  void sidecar.start();
  return { sidecar, diffs, diagnostics };
}

export function deactivate() {}
