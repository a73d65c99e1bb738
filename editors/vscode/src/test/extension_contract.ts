// Contract tests of the VS Code extension (issue #7, README, package.json),
// run after the tests in index.ts by the same runner, inside a real VS Code.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { sleep, until } from "./wait";

type Test = [string, () => Promise<void>];

const OUT = process.env.AGENTLS_TEST_OUT ?? "/tmp";

// The tools VS Code lists: declared statically in package.json, so the
// background-job tools are there from the start (elsewhere they are
// deferred until a job exists).
const CORE = ["read", "ls", "grep", "find", "edit", "write", "bash", "tool_search", "bash_output", "bash_kill"];
const COMMANDS = ["agentls.restart", "agentls.showLog", "agentls.showAudit", "agentls.runTool", "agentls.clearHighlights", "agentls.showDiff", "agentls.revert"];

const ws = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const wsFile = (name: string) => path.join(ws(), name);
const text = (r: vscode.LanguageModelToolResult) => r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : "")).join("");
const invoke = (name: string, input: object, token?: vscode.CancellationToken) =>
  vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }, token ?? new vscode.CancellationTokenSource().token);
const settle = <T>(p: Thenable<T>) => Promise.resolve(p).then((v) => ({ ok: true as const, v }), (e: unknown) => ({ ok: false as const, e }));

interface State { state: string; watcher?: string; binary?: string }
const state = () => vscode.commands.executeCommand<State>("agentls._test.state");
interface Hooks { confirmAnswers: object[]; confirmRequests: Array<{ tool: string; reason: string; arguments: Record<string, unknown>; preview?: Record<string, unknown> }>; confirmShown: number; progressMessages: string[] }
const hooks = () => vscode.commands.executeCommand<Hooks>("agentls._test.hooks");
interface Deco { uri: string; inserted: number[]; removed: number[] }
const decoAll = async (file: string) => (await vscode.commands.executeCommand<Deco[]>("agentls._test.decorations")).filter((d) => vscode.Uri.parse(d.uri).fsPath === file);
const deco = async (file: string) => (await decoAll(file))[0];
// The extension's exports: {sidecar, diffs} (extension.ts activate()).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const api = () => vscode.extensions.getExtension("agentls.agentls")!.exports as { sidecar: any; diffs: any };

/** Live sidecar processes: children of this extension host running the binary. */
function sidecarPids(bin: string): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (f[0] === "Z" || Number(f[1]) !== process.pid) continue;
      if (fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0")[0] === bin) out.push(Number(d));
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The agentls output channel as VS Code writes it (file-backed output channel under the user-data dir run.sh makes). */
function outputLog(): string | undefined {
  const root = path.join(path.dirname(OUT), "ud", "logs");
  let best: { f: string; t: number } | undefined;
  const walk = (dir: string) => {
    let ents: fs.Dirent[];
    try {
      ents = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of ents) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/^\d+-agentls\.log$/.test(e.name) && dir.includes("output_logging_")) {
        const t = fs.statSync(p).mtimeMs;
        if (!best || t > best.t) best = { f: p, t };
      }
    }
  };
  walk(root);
  return best ? fs.readFileSync(best.f, "utf8") : undefined;
}

/** Runs action, then waits until a new sidecar process is ready. */
async function restarted(action: () => Thenable<unknown> | Promise<unknown>): Promise<number> {
  const before = new Set(sidecarPids((await state()).binary ?? ""));
  await action();
  return until("a new ready sidecar", async () => {
    const s = await state();
    if (s.state !== "ready" || !s.binary) return undefined;
    return sidecarPids(s.binary).find((p) => !before.has(p));
  }, 15_000);
}

async function setCfg(key: string, value: unknown): Promise<void> {
  const cfg = vscode.workspace.getConfiguration("agentls");
  const cur = cfg.inspect(key)?.workspaceValue;
  if (JSON.stringify(cur) === JSON.stringify(value)) return;
  await restarted(() => cfg.update(key, value, vscode.ConfigurationTarget.Workspace));
}
const setMode = (m: string) => setCfg("mode", m);

async function openFile(name: string, content: string, column = vscode.ViewColumn.One): Promise<vscode.TextEditor> {
  fs.writeFileSync(wsFile(name), content);
  const doc = await vscode.workspace.openTextDocument(wsFile(name));
  return vscode.window.showTextDocument(doc, { preview: false, viewColumn: column });
}

async function agentEdit(name: string, oldText: string, newText: string): Promise<string> {
  assert.match(text(await invoke("agentls_read", { path: name })), /1→/);
  const r = text(await invoke("agentls_edit", { path: name, edits: [{ oldText, newText }] }));
  assert.match(r, /Edited/, r);
  return r;
}

const closeAll = () => vscode.commands.executeCommand("workbench.action.closeAllEditors");
async function revertCloseAll(): Promise<void> {
  for (const d of vscode.workspace.textDocuments) {
    if (d.isDirty && !d.isUntitled) {
      await vscode.window.showTextDocument(d);
      await vscode.commands.executeCommand("workbench.action.files.revert");
    } else if (d.isDirty && d.isUntitled) {
      await vscode.window.showTextDocument(d);
      await vscode.commands.executeCommand("workbench.action.revertAndCloseActiveEditor");
    }
  }
  await closeAll();
}

/** Temporarily replaces a vscode.window function (the extension shares this API object). */
function patchWindow<K extends keyof typeof vscode.window>(key: K, f: (typeof vscode.window)[K]): () => void {
  const w = vscode.window as unknown as Record<string, unknown>;
  const orig = w[key];
  w[key] = f;
  assert.equal(w[key], f, `vscode.window.${String(key)} cannot be replaced in this host`);
  return () => void (w[key] = orig);
}

export function extensionContractTests(skip: (why: string) => never): Test[] {
  return [
    ["every core tool is contributed and registered with its name, description and schema", async () => {
      const contributed = vscode.extensions.getExtension("agentls.agentls")!.packageJSON.contributes.languageModelTools as Array<Record<string, unknown>>;
      for (const core of CORE) {
        const name = `agentls_${core}`;
        const c = contributed.find((x) => x.name === name);
        assert.ok(c, `${name} not contributed in package.json`);
        assert.match(name, /^[\w-]+$/);
        for (const k of ["displayName", "modelDescription", "inputSchema"]) assert.ok(c[k], `${name}.${k} missing`);
        const t = vscode.lm.tools.find((x) => x.name === name);
        assert.ok(t, `${name} missing from vscode.lm.tools`);
        assert.equal(t.description, c.modelDescription, `${name}: vscode.lm.tools description differs from modelDescription`);
        assert.deepEqual(t.inputSchema, c.inputSchema);
      }
    }],
    ["invokeTool round trips for write, ls, grep, find and tool_search", async () => {
      await setMode("acceptEdits");
      fs.mkdirSync(wsFile("rt"), { recursive: true });
      fs.rmSync(wsFile("rt/made.txt"), { force: true });
      const w = text(await invoke("agentls_write", { path: "rt/made.txt", content: "needle-rt\nline2\n" }));
      assert.equal(fs.readFileSync(wsFile("rt/made.txt"), "utf8"), "needle-rt\nline2\n", w);
      assert.match(text(await invoke("agentls_ls", { path: "rt" })), /made\.txt/);
      assert.match(text(await invoke("agentls_grep", { pattern: "needle-rt", path: "rt" })), /made\.txt/);
      assert.match(text(await invoke("agentls_find", { pattern: "*.txt", path: "rt" })), /made\.txt/);
      const ts = text(await invoke("agentls_tool_search", { query: "run a shell command" }));
      assert.ok(ts.length > 0, "tool_search returned nothing");
    }],
    ["an image read reaches the model as an image data part", async () => {
      const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");
      fs.writeFileSync(wsFile("dot.png"), png);
      const DataPart = (vscode as unknown as { LanguageModelDataPart?: new (...a: unknown[]) => { mimeType: string; data: Uint8Array } }).LanguageModelDataPart;
      if (!DataPart) skip("audit: this VS Code has no LanguageModelDataPart (the issue allows text there)");
      const r = await invoke("agentls_read", { path: "dot.png" });
      const parts = r.content as unknown[];
      const img = parts.find((p) => p instanceof DataPart || (typeof p === "object" && p !== null && (p as { mimeType?: string }).mimeType === "image/png")) as { mimeType: string; data: Uint8Array } | undefined;
      assert.ok(img, `no image data part; parts: ${JSON.stringify(parts).slice(0, 200)}`);
      assert.equal(img.mimeType, "image/png");
      assert.deepEqual(Buffer.from(img.data), png);
    }],
    ["every contributed command is registered", async () => {
      const all = new Set(await vscode.commands.getCommands(true));
      const pkg = (vscode.extensions.getExtension("agentls.agentls")!.packageJSON.contributes.commands as Array<{ command: string }>).map((c) => c.command);
      for (const c of new Set([...COMMANDS, ...pkg])) assert.ok(all.has(c), `${c} not registered`);
    }],
    ["the watch mode is the one agentls/watcherReady reported, not initialize's \"starting\"", async () => {
      const s = await until("the watch mode", async () => { const s = await state(); return s.watcher && s.watcher !== "starting" ? s : undefined; }, 10_000);
      assert.equal(s.watcher, "inotify");
    }],
    ["agentls.restart starts a new sidecar process and tools work after it", async () => {
      const old = sidecarPids((await state()).binary!);
      assert.equal(old.length, 1, `expected one sidecar, found ${old.join(",")}`);
      await restarted(() => vscode.commands.executeCommand("agentls.restart"));
      await until("old process gone", () => !alive(old[0]), 5_000);
      assert.match(text(await invoke("agentls_read", { path: "hello.txt" })), /1→alpha/);
    }],
    ["agentls.showLog reveals the agentls output channel", async () => {
      const shown = () => vscode.window.visibleTextEditors.some((e) => e.document.uri.scheme === "output" && /agentls/i.test(e.document.uri.toString()));
      await vscode.commands.executeCommand("workbench.action.closePanel");
      await until("the output panel closed", () => !shown(), 3_000);
      await vscode.commands.executeCommand("agentls.showLog");
      await until("the agentls output channel visible", shown, 3_000);
      await vscode.commands.executeCommand("workbench.action.closePanel");
    }],
    ["agentls.showAudit opens the audit log with the latest calls", async () => {
      await setMode("acceptEdits");
      fs.writeFileSync(wsFile("audited.txt"), "x\n");
      await invoke("agentls_read", { path: "audited.txt" });
      const before = new Set(vscode.workspace.textDocuments);
      await vscode.commands.executeCommand("agentls.showAudit");
      const doc = await until("the audit document", () => vscode.workspace.textDocuments.find((d) => !before.has(d) && d.isUntitled), 10_000);
      assert.match(doc.getText(), /read\b.*audited\.txt/, doc.getText().slice(-400));
      await closeAll();
    }],
    ["agentls.runTool runs the picked tool with the entered JSON and shows the result", async () => {
      let offered: string[] = [];
      let prefilled: string | undefined;
      const undo1 = patchWindow("showQuickPick", (async (items: readonly vscode.QuickPickItem[]) => {
        const list = await items;
        offered = list.map((i) => i.label);
        return list.find((i) => i.label === "read");
      }) as unknown as typeof vscode.window.showQuickPick);
      const undo2 = patchWindow("showInputBox", (async (o?: vscode.InputBoxOptions) => {
        prefilled = o?.value;
        return JSON.stringify({ path: "hello.txt" });
      }) as typeof vscode.window.showInputBox);
      try {
        const before = new Set(vscode.workspace.textDocuments);
        await vscode.commands.executeCommand("agentls.runTool");
        const doc = await until("the result document", () => vscode.workspace.textDocuments.find((d) => !before.has(d) && d.isUntitled), 10_000);
        assert.deepEqual(new Set(offered), new Set(CORE));
        assert.equal(JSON.parse(prefilled ?? "null").path, "", `prefilled arguments: ${prefilled}`);
        assert.match(doc.getText(), /1→alpha/);
      } finally {
        undo1();
        undo2();
        await closeAll();
      }
    }],
    ["the CodeLens sits at the first changed line with Show diff and Revert, and its commands work", async () => {
      await setMode("acceptEdits");
      await closeAll();
      const ed = await openFile("lens.txt", "l0\nl1\nl2\nl3\nl4\n");
      await agentEdit("lens.txt", "l2\nl3", "L2\nL3");
      await until("decorations", async () => (await deco(ed.document.uri.fsPath))?.inserted.length);
      const lenses = await until("lenses", async () => {
        const l = await vscode.commands.executeCommand<vscode.CodeLens[]>("vscode.executeCodeLensProvider", ed.document.uri, 10);
        return l.filter((x) => x.command?.command.startsWith("agentls.")).length >= 2 ? l.filter((x) => x.command?.command.startsWith("agentls.")) : undefined;
      });
      assert.deepEqual(lenses.map((l) => l.range.start.line), [2, 2]);
      assert.match(lenses.map((l) => l.command!.title).join("|"), /Show diff.*\|Revert/);
      const show = lenses.find((l) => /Show diff/.test(l.command!.title))!.command!;
      await vscode.commands.executeCommand(show.command, ...(show.arguments ?? []));
      await until("diff tab", () => vscode.window.tabGroups.activeTabGroup.activeTab?.input instanceof vscode.TabInputTextDiff);
      const input = vscode.window.tabGroups.activeTabGroup.activeTab!.input as vscode.TabInputTextDiff;
      assert.equal((await vscode.workspace.openTextDocument(input.original)).getText(), "l0\nl1\nl2\nl3\nl4\n");
      await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
      const rev = lenses.find((l) => l.command!.title === "Revert")!.command!;
      assert.equal(await vscode.commands.executeCommand(rev.command, ...(rev.arguments ?? [])), true);
      assert.equal(fs.readFileSync(wsFile("lens.txt"), "utf8"), "l0\nl1\nl2\nl3\nl4\n");
      await until("lenses gone", async () => !(await vscode.commands.executeCommand<vscode.CodeLens[]>("vscode.executeCodeLensProvider", ed.document.uri)).some((x) => x.command?.command.startsWith("agentls.")));
    }],
    ["removed text shows as ghost text and hover on the changed line", async () => {
      await closeAll();
      const ed = await openFile("ghost.txt", "keep\nold line here\nkeep2\n");
      await agentEdit("ghost.txt", "old line here", "new line");
      const d = await until("decorations", async () => ((await deco(ed.document.uri.fsPath))?.inserted.length ? deco(ed.document.uri.fsPath) : undefined));
      assert.deepEqual(d.inserted, [1]);
      assert.deepEqual(d.removed, [1]);
      const c = api().diffs.get(ed.document.uri);
      const opts = api().diffs.removedDecorations(c, ed.document) as vscode.DecorationOptions[];
      assert.equal(opts.length, 1);
      assert.match(String(opts[0].renderOptions?.after?.contentText), /old line here/);
      assert.match((opts[0].hoverMessage as vscode.MarkdownString).value, /- old line here/);
    }],
    ["highlights show in every visible editor of the file and survive switching tabs", async () => {
      await closeAll();
      const ed = await openFile("split.txt", "a\nb\nc\n");
      await vscode.window.showTextDocument(ed.document, { viewColumn: vscode.ViewColumn.Two, preview: false });
      await agentEdit("split.txt", "b", "B");
      await until("two decorated editors", async () => (await decoAll(ed.document.uri.fsPath)).filter((d) => d.inserted.join() === "1").length === 2);
      await openFile("other.txt", "other\n", vscode.ViewColumn.One);
      await vscode.window.showTextDocument(ed.document, { viewColumn: vscode.ViewColumn.One, preview: false });
      await until("still decorated after switching tabs", async () => (await decoAll(ed.document.uri.fsPath)).filter((d) => d.inserted.join() === "1").length === 2);
      await closeAll();
    }],
    ["a file edited while closed is highlighted when opened", async () => {
      await closeAll();
      fs.writeFileSync(wsFile("later.txt"), "p\nq\nr\n");
      await agentEdit("later.txt", "q", "Q");
      await sleep(200);
      await vscode.window.showTextDocument(vscode.Uri.file(wsFile("later.txt")), { preview: false });
      await until("decorations on open", async () => (await deco(wsFile("later.txt")))?.inserted.join() === "1");
    }],
    ["Revert is one undoable edit", async () => {
      await closeAll();
      const ed = await openFile("undo-revert.txt", "1\n2\n3\n");
      await agentEdit("undo-revert.txt", "2", "two");
      await until("doc has the agent's text", () => ed.document.getText() === "1\ntwo\n3\n");
      assert.equal(await vscode.commands.executeCommand("agentls.revert", ed.document.uri), true);
      assert.equal(ed.document.getText(), "1\n2\n3\n");
      await vscode.window.showTextDocument(ed.document);
      await vscode.commands.executeCommand("undo");
      assert.equal(ed.document.getText(), "1\ntwo\n3\n");
      await vscode.commands.executeCommand("workbench.action.files.revert");
    }],
    ["Clear highlights removes the decorations and the CodeLens", async () => {
      await closeAll();
      const ed = await openFile("clearcmd.txt", "u\nv\n");
      await agentEdit("clearcmd.txt", "v", "V");
      await until("decorations", async () => (await deco(ed.document.uri.fsPath))?.inserted.length);
      await vscode.commands.executeCommand("agentls.clearHighlights");
      assert.deepEqual((await deco(ed.document.uri.fsPath))!.inserted, []);
      const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>("vscode.executeCodeLensProvider", ed.document.uri);
      assert.equal(lenses.filter((l) => l.command?.command.startsWith("agentls.")).length, 0);
    }],
    ["the Agent changes view lists changed files, each opening its diff", async () => {
      const d = api().diffs;
      const items = (d.getChildren() as Array<{ uri: vscode.Uri }>).map((c) => ({ c, item: d.getTreeItem(c) as vscode.TreeItem }));
      for (const f of ["ghost.txt", "split.txt", "later.txt"]) assert.ok(items.some((i) => i.c.uri.fsPath === wsFile(f)), `${f} not listed`);
      const ghost = items.find((i) => i.c.uri.fsPath === wsFile("ghost.txt"))!;
      assert.equal(ghost.item.label, "ghost.txt");
      await closeAll();
      await vscode.commands.executeCommand(ghost.item.command!.command, ...(ghost.item.command!.arguments ?? []));
      await until("diff tab", () => vscode.window.tabGroups.activeTabGroup.activeTab?.input instanceof vscode.TabInputTextDiff);
      await closeAll();
    }],
    ["write of a new file highlights every line; Show diff compares it with an empty file", async () => {
      await closeAll();
      fs.rmSync(wsFile("created.txt"), { force: true });
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(wsFile("hello.txt")));
      const r = text(await invoke("agentls_write", { path: "created.txt", content: "c1\nc2\nc3\n" }));
      assert.equal(fs.readFileSync(wsFile("created.txt"), "utf8"), "c1\nc2\nc3\n", r);
      await vscode.window.showTextDocument(vscode.Uri.file(wsFile("created.txt")), { preview: false });
      await until("all lines highlighted", async () => (await deco(wsFile("created.txt")))?.inserted.join() === "0,1,2");
      await vscode.commands.executeCommand("agentls.showDiff", vscode.Uri.file(wsFile("created.txt")));
      await until("diff tab", () => vscode.window.tabGroups.activeTabGroup.activeTab?.input instanceof vscode.TabInputTextDiff);
      const input = vscode.window.tabGroups.activeTabGroup.activeTab!.input as vscode.TabInputTextDiff;
      assert.equal((await vscode.workspace.openTextDocument(input.original)).getText(), "");
      await closeAll();
    }],
    ["CRLF and multi-line edits highlight exactly the changed lines", async () => {
      await closeAll();
      const ed = await openFile("crlf.txt", "a\r\nb\r\nc\r\nd\r\ne\r\n");
      await agentEdit("crlf.txt", "b\r\nc", "B1\r\nB2\r\nC");
      await until("decorations", async () => (await deco(ed.document.uri.fsPath))?.inserted.join() === "1,2,3");
      assert.equal(fs.readFileSync(wsFile("crlf.txt"), "utf8"), "a\r\nB1\r\nB2\r\nC\r\nd\r\ne\r\n");
    }],
    ["tools/confirm names the tool and reason with a preview; Allow once applies the edit", async () => {
      await setMode("default");
      await closeAll();
      fs.writeFileSync(wsFile("allow.txt"), "before\n");
      await invoke("agentls_read", { path: "allow.txt" });
      const h = await hooks();
      h.confirmRequests.length = 0;
      h.confirmAnswers.length = 0;
      h.confirmAnswers.push({ decision: "allowOnce" });
      const r = text(await invoke("agentls_edit", { path: "allow.txt", edits: [{ oldText: "before", newText: "after" }] }));
      assert.equal(h.confirmRequests.length, 1, r);
      const q = h.confirmRequests[0];
      assert.equal(q.tool, "edit");
      assert.ok(q.reason && q.reason.length > 0, "empty reason");
      assert.equal(typeof q.preview?.uri, "string", "no previewed change for Show change");
      assert.equal(fs.readFileSync(wsFile("allow.txt"), "utf8"), "after\n");
    }],
    ["Always allow stops asking for the same file", async () => {
      await setMode("default");
      fs.writeFileSync(wsFile("always.txt"), "1\n2\n");
      await invoke("agentls_read", { path: "always.txt" });
      const h = await hooks();
      h.confirmRequests.length = 0;
      h.confirmAnswers.length = 0;
      h.confirmAnswers.push({ decision: "allowAlways" });
      assert.match(text(await invoke("agentls_edit", { path: "always.txt", edits: [{ oldText: "1", newText: "one" }] })), /Edited/);
      assert.match(text(await invoke("agentls_edit", { path: "always.txt", edits: [{ oldText: "2", newText: "two" }] })), /Edited/);
      assert.equal(h.confirmRequests.length, 1, "asked again after Always allow");
      assert.equal(fs.readFileSync(wsFile("always.txt"), "utf8"), "one\ntwo\n");
    }],
    ["the real confirmation picker: its 4th item (Show change) opens the proposed diff, its 3rd (Deny) denies", async () => {
      await setMode("default");
      await closeAll();
      fs.writeFileSync(wsFile("picker.txt"), "orig\n");
      await invoke("agentls_read", { path: "picker.txt" });
      const h = await hooks();
      h.confirmAnswers.length = 0;
      const shown = h.confirmShown;
      const cts = new vscode.CancellationTokenSource();
      const p = settle(invoke("agentls_edit", { path: "picker.txt", edits: [{ oldText: "orig", newText: "proposed" }] }, cts.token));
      try {
        await until("picker shown", () => h.confirmShown > shown, 10_000);
        await sleep(300);
        await vscode.commands.executeCommand("quickInput.first");
        for (let i = 0; i < 3; i++) await vscode.commands.executeCommand("quickInput.next"); // Show change (4th; Always allow in this workspace follows)
        await vscode.commands.executeCommand("quickInput.accept");
        await until("proposed diff tab", () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => t.input instanceof vscode.TabInputTextDiff && /proposed/.test(t.input.modified.path)), 5_000);
        const tab = vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextDiff)!;
        const input = tab.input as vscode.TabInputTextDiff;
        assert.equal((await vscode.workspace.openTextDocument(input.original)).getText(), "orig\n");
        assert.equal((await vscode.workspace.openTextDocument(input.modified)).getText(), "proposed\n");
        await until("picker shown again", () => h.confirmShown > shown + 1, 5_000);
        await sleep(300);
        await vscode.commands.executeCommand("quickInput.first");
        await vscode.commands.executeCommand("quickInput.next");
        await vscode.commands.executeCommand("quickInput.next"); // Deny
        await vscode.commands.executeCommand("quickInput.accept");
        const r = await Promise.race([p, sleep(5_000).then(() => undefined)]);
        assert.ok(r?.ok, `the call did not settle after Deny: ${r ? String((r as { e?: unknown }).e) : "timeout"}`);
        assert.match(text(r.v), /denied/i);
        assert.equal(fs.readFileSync(wsFile("picker.txt"), "utf8"), "orig\n");
      } finally {
        cts.cancel();
        await p;
        await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
        await closeAll();
      }
    }],
    ["agentls.mode readOnly refuses edits without asking", async () => {
      await setMode("readOnly");
      try {
        fs.writeFileSync(wsFile("ro.txt"), "ro\n");
        assert.match(text(await invoke("agentls_read", { path: "ro.txt" })), /1→ro/);
        const h = await hooks();
        h.confirmRequests.length = 0;
        const r = text(await invoke("agentls_edit", { path: "ro.txt", edits: [{ oldText: "ro", newText: "rw" }] }));
        assert.equal(h.confirmRequests.length, 0, "asked in readOnly mode");
        assert.match(r, /read-?only|denied/i, r);
        assert.equal(fs.readFileSync(wsFile("ro.txt"), "utf8"), "ro\n");
      } finally {
        await setMode("acceptEdits");
      }
    }],
    ["agentls.mode acceptEdits runs edits without asking but a risky command still asks", async () => {
      await setMode("acceptEdits");
      fs.writeFileSync(wsFile("ae.txt"), "ae\n");
      fs.writeFileSync(wsFile("ae-victim.txt"), "v\n");
      await invoke("agentls_read", { path: "ae.txt" });
      const h = await hooks();
      h.confirmRequests.length = 0;
      h.confirmAnswers.length = 0;
      assert.match(text(await invoke("agentls_edit", { path: "ae.txt", edits: [{ oldText: "ae", newText: "AE" }] })), /Edited/);
      assert.equal(h.confirmRequests.length, 0, "an edit asked in acceptEdits");
      h.confirmAnswers.push({ decision: "rejectOnce", message: "audit" });
      const r = text(await invoke("agentls_bash", { command: "rm -rf ae-victim.txt" }));
      assert.equal(h.confirmRequests.length, 1, `rm -rf did not ask: ${r}`);
      assert.equal(h.confirmRequests[0].tool, "bash");
      assert.ok(fs.existsSync(wsFile("ae-victim.txt")));
    }],
    ["agentls.permissions allow/ask/deny rules reach the server (and changing them restarts it)", async () => {
      await setMode("default");
      const before = sidecarPids((await state()).binary!);
      await setCfg("permissions", { allow: ["Bash(touch:*)"], ask: ["Read(ask-me.txt)"], deny: ["Read(secret-audit.txt)"] });
      try {
        // The old process may take a moment to exit after the restart.
        await until("the old sidecar exited (a restart)", async () => !sidecarPids((await state()).binary!).some((p) => before.includes(p)), 5_000);
        fs.writeFileSync(wsFile("secret-audit.txt"), "s3cr3t\n");
        fs.writeFileSync(wsFile("ask-me.txt"), "asked\n");
        for (const f of ["by-rule.txt", "no-rule.txt"]) fs.rmSync(wsFile(f), { force: true });
        const h = await hooks();
        h.confirmRequests.length = 0;
        h.confirmAnswers.length = 0;
        const denied = text(await invoke("agentls_read", { path: "secret-audit.txt" }));
        assert.doesNotMatch(denied, /s3cr3t/);
        assert.match(denied, /denied|not allowed/i, denied);
        assert.equal(h.confirmRequests.length, 0, "a deny rule asked");
        h.confirmAnswers.push({ decision: "allowOnce" });
        assert.match(text(await invoke("agentls_read", { path: "ask-me.txt" })), /1→asked/);
        assert.equal(h.confirmRequests.length, 1, "the ask rule did not ask");
        assert.match(h.confirmRequests[0].reason, /ask-me/i, h.confirmRequests[0].reason);
        const t = text(await invoke("agentls_bash", { command: "touch by-rule.txt" }));
        assert.equal(h.confirmRequests.length, 1, `the allow rule still asked: ${t}`);
        assert.ok(fs.existsSync(wsFile("by-rule.txt")), t);
        h.confirmAnswers.push({ decision: "rejectOnce", message: "control" });
        await invoke("agentls_bash", { command: "mkdir no-rule.txt" });
        assert.equal(h.confirmRequests.length, 2, "a command without an allow rule did not ask (the control)");
        assert.ok(!fs.existsSync(wsFile("no-rule.txt")));
      } finally {
        (await hooks()).confirmAnswers.length = 0;
        await setCfg("permissions", undefined);
      }
    }],
    ["agentls.trace.server traces the JSON-RPC traffic in the agentls output channel", async () => {
      const log0 = outputLog();
      if (log0 === undefined) skip("audit: the agentls output log file was not found under the run's user-data dir");
      assert.doesNotMatch(log0, /\[Trace/, "trace lines with trace.server off");
      await setCfg("trace.server", "messages");
      try {
        await invoke("agentls_read", { path: "hello.txt" });
        await until("a traced tools/call", () => /Sending request 'tools\/call/.test(outputLog() ?? ""), 5_000);
      } finally {
        await setCfg("trace.server", undefined);
      }
    }],
    ["syncOpenFiles does not sync untitled documents", async () => {
      await setCfg("trace.server", "verbose");
      try {
        const doc = await vscode.workspace.openTextDocument({ content: "UNTITLED-AUDIT-MARKER" });
        await vscode.window.showTextDocument(doc);
        await invoke("agentls_read", { path: "hello.txt" });
        await until("the read traced", () => /Sending request 'tools\/call/.test(outputLog() ?? ""), 5_000);
        await sleep(300);
        assert.doesNotMatch(outputLog() ?? "", /UNTITLED-AUDIT-MARKER/);
      } finally {
        await revertCloseAll();
        await setCfg("trace.server", undefined);
      }
    }],
    ["syncOpenFiles: unsaved text of a file outside the workspace never reaches read", async () => {
      const outside = path.join(os.tmpdir(), `agentls-audit-outside-${process.pid}.txt`);
      fs.writeFileSync(outside, "outside disk\n");
      try {
        const ed = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(outside));
        await ed.edit((b) => b.insert(new vscode.Position(0, 0), "OUTSIDE-UNSAVED "));
        const r = text(await invoke("agentls_read", { path: outside }));
        assert.doesNotMatch(r, /OUTSIDE-UNSAVED/);
        assert.match(r, /outside the workspace/i, r);
      } finally {
        await revertCloseAll();
        fs.rmSync(outside, { force: true });
      }
    }],
    ["syncOpenFiles: the text of files outside the workspace is not sent to agentls", async () => {
      const outside = path.join(os.tmpdir(), `agentls-audit-outside2-${process.pid}.txt`);
      fs.writeFileSync(outside, "OUTSIDE-DISK-MARKER\n");
      await setCfg("trace.server", "verbose");
      try {
        await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(outside));
        await invoke("agentls_read", { path: "hello.txt" });
        await until("the read traced", () => /Sending request 'tools\/call/.test(outputLog() ?? ""), 5_000);
        await sleep(300);
        assert.doesNotMatch(outputLog() ?? "", /OUTSIDE-DISK-MARKER/, "didOpen with the outside file's text was sent");
      } finally {
        await revertCloseAll();
        fs.rmSync(outside, { force: true });
        await setCfg("trace.server", undefined);
      }
    }],
    ["syncOpenFiles: typing after the read makes the edit fail and asks to read again", async () => {
      await setMode("acceptEdits");
      await closeAll();
      const ed = await openFile("typed.txt", "x\ny\n");
      await invoke("agentls_read", { path: "typed.txt" });
      assert.ok(await ed.edit((b) => b.insert(new vscode.Position(0, 1), "!")));
      const r = text(await invoke("agentls_edit", { path: "typed.txt", edits: [{ oldText: "y", newText: "Y" }] }));
      assert.match(r, /changed in the editor since you read it/, r);
      assert.equal(ed.document.getText(), "x!\ny\n");
      await revertCloseAll();
    }],
    ["syncOpenFiles: an agent edit in the editor is one undoable step", async () => {
      await closeAll();
      const ed = await openFile("undo-agent.txt", "k\nl\nm\n");
      await agentEdit("undo-agent.txt", "l\nm", "L\nM");
      assert.equal(ed.document.getText(), "k\nL\nM\n");
      await vscode.window.showTextDocument(ed.document);
      await vscode.commands.executeCommand("undo");
      assert.equal(ed.document.getText(), "k\nl\nm\n");
      await revertCloseAll();
    }],
    ["syncOpenFiles: grep sees the disk, not unsaved text", async () => {
      await closeAll();
      const ed = await openFile("grepdisk.txt", "on disk\n");
      await ed.edit((b) => b.insert(new vscode.Position(0, 0), "UNSAVEDGREPMARK "));
      await invoke("agentls_read", { path: "grepdisk.txt" });
      const r = text(await invoke("agentls_grep", { pattern: "UNSAVEDGREPMARK" }));
      assert.doesNotMatch(r, /grepdisk\.txt/, r);
      await revertCloseAll();
    }],
    ["syncOpenFiles: after the document is closed, read sees the disk again", async () => {
      await closeAll();
      const ed = await openFile("closed.txt", "disk1\n");
      await ed.edit((b) => b.replace(new vscode.Range(0, 0, 0, 5), "buffer"));
      assert.match(text(await invoke("agentls_read", { path: "closed.txt" })), /1→buffer/);
      await vscode.commands.executeCommand("workbench.action.revertAndCloseActiveEditor");
      // VS Code sends didClose only when it disposes the model (minutes later for
      // a document an extension opened); until then the clean model follows the disk.
      fs.writeFileSync(wsFile("closed.txt"), "disk2\n");
      await until("read sees disk2", async () => /1→disk2/.test(text(await invoke("agentls_read", { path: "closed.txt" }))), 5_000);
      assert.doesNotMatch(text(await invoke("agentls_read", { path: "closed.txt" })), /unsaved/);
    }],
    ["syncOpenFiles off: edit writes the disk while the file is open with unsaved changes", async () => {
      await setMode("acceptEdits");
      await closeAll();
      await setCfg("syncOpenFiles", false);
      try {
        const ed = await openFile("offdirty.txt", "one\ntwo\n");
        assert.ok(await ed.edit((b) => b.insert(new vscode.Position(0, 0), "mine ")));
        await invoke("agentls_read", { path: "offdirty.txt" });
        const r = text(await invoke("agentls_edit", { path: "offdirty.txt", edits: [{ oldText: "two", newText: "TWO" }] }));
        assert.equal(fs.readFileSync(wsFile("offdirty.txt"), "utf8"), "one\nTWO\n", r);
        assert.equal(ed.document.getText(), "mine one\ntwo\n");
        assert.ok(ed.document.isDirty);
      } finally {
        await revertCloseAll();
        await setCfg("syncOpenFiles", undefined);
      }
    }],
    ["syncOpenFiles: write of an open file goes through the editor", async () => {
      await closeAll();
      const ed = await openFile("wopen.txt", "old\n");
      await invoke("agentls_read", { path: "wopen.txt" });
      const r = text(await invoke("agentls_write", { path: "wopen.txt", content: "new\n" }));
      assert.match(r, /in the editor/, r);
      assert.equal(ed.document.getText(), "new\n");
      assert.equal(ed.document.isDirty, false);
      assert.equal(fs.readFileSync(wsFile("wopen.txt"), "utf8"), "new\n");
      await closeAll();
    }],
    ["cancelling an invokeTool token rejects the call promptly", async () => {
      await setMode("bypass");
      const pidFile = wsFile("cancel2.pid");
      fs.rmSync(pidFile, { force: true });
      const cts = new vscode.CancellationTokenSource();
      const p = settle(invoke("agentls_bash", { command: "echo $$ > cancel2.pid; exec sleep 100" }, cts.token));
      const pid = await until("pid", () => fs.existsSync(pidFile) && Number(fs.readFileSync(pidFile, "utf8").trim()), 10_000);
      const t0 = Date.now();
      cts.cancel();
      const r = await Promise.race([p, sleep(5_000).then(() => undefined)]);
      try {
        assert.ok(r, "the call did not settle within 5 s of the cancel");
        assert.equal(r.ok, false, `a cancelled call resolved with a result: ${r.ok ? text(r.v) : ""}`);
        assert.ok(Date.now() - t0 < 3_000);
      } finally {
        if (alive(pid)) process.kill(pid, "SIGKILL");
      }
    }],
    ["cancelling the progress notification of a long bash stops it", async () => {
      await setMode("bypass");
      await vscode.commands.executeCommand("notifications.clearAll");
      const pidFile = wsFile("tick.pid");
      fs.rmSync(pidFile, { force: true });
      const h = await hooks();
      h.progressMessages.length = 0;
      const cts = new vscode.CancellationTokenSource();
      const p = settle(invoke("agentls_bash", { command: "echo $$ > tick.pid; while :; do echo tick; sleep 0.2; done" }, cts.token));
      const pid = await until("pid", () => fs.existsSync(pidFile) && Number(fs.readFileSync(pidFile, "utf8").trim()), 10_000);
      try {
        await until("progress notification with output", () => h.progressMessages.includes("tick"), 5_000);
        await vscode.commands.executeCommand("notification.acceptPrimaryAction"); // the notification's Cancel
        await until("bash stopped", () => !alive(pid), 5_000);
        const r = await Promise.race([p, sleep(3_000).then(() => undefined)]);
        assert.ok(r, "the call did not settle");
      } finally {
        cts.cancel();
        if (alive(pid)) process.kill(pid, "SIGKILL");
        await p;
      }
    }],
    ["the sidecar restarts after a crash with backoff (0.5 s, then 1 s) and a call in flight settles", async () => {
      await setMode("bypass");
      const bin = (await state()).binary!;
      const [first] = sidecarPids(bin);
      const pidFile = wsFile("crash.pid");
      fs.rmSync(pidFile, { force: true });
      const p = settle(invoke("agentls_bash", { command: "echo $$ > crash.pid; exec sleep 30" }));
      const sleeper = await until("pid", () => fs.existsSync(pidFile) && Number(fs.readFileSync(pidFile, "utf8").trim()), 10_000);
      try {
        const crash = async () => {
          const [pid] = sidecarPids(bin);
          const t0 = Date.now();
          process.kill(pid, "SIGKILL");
          await until("state starting during the backoff", async () => (await state()).state === "starting", 450);
          const next = await until("restarted", async () => (await state()).state === "ready" && sidecarPids(bin).find((x) => x !== pid), 15_000);
          return { next, ms: Date.now() - t0 };
        };
        const a = await crash();
        const r = await Promise.race([p, sleep(3_000).then(() => undefined)]);
        assert.ok(r, "a call in flight did not settle when the sidecar crashed");
        const b = await crash();
        assert.notEqual(a.next, first);
        assert.ok(a.ms >= 450, `restarted after ${a.ms} ms, before the 0.5 s backoff`);
        assert.ok(b.ms >= 950, `second restart after ${b.ms} ms: no backoff`);
        const log = outputLog() ?? "";
        assert.match(log, /restarting in 500 ms/);
        assert.match(log, /restarting in 1000 ms/);
        assert.match(text(await invoke("agentls_read", { path: "hello.txt" })), /1→alpha/);
      } finally {
        if (alive(sleeper)) process.kill(sleeper, "SIGKILL");
      }
    }],
    ["agentls.path not executable → one notification with Configure path, which opens the setting", async () => {
      const cfg = vscode.workspace.getConfiguration("agentls");
      const good = cfg.inspect<string>("path")!.workspaceValue;
      const shown: Array<{ message: string; items: string[] }> = [];
      const undo = patchWindow("showErrorMessage", (async (message: string, ...items: unknown[]) => {
        shown.push({ message, items: items.filter((i): i is string => typeof i === "string") });
        return shown.length === 1 ? "Configure path" : undefined;
      }) as unknown as typeof vscode.window.showErrorMessage);
      try {
        await cfg.update("path", "/nonexistent/agentls", vscode.ConfigurationTarget.Workspace);
        await until("failed state", async () => (await state()).state === "failed", 10_000);
        await until("notification", () => shown.length > 0, 5_000);
        assert.match(shown[0].message, /agentls\.path|\/nonexistent\/agentls/);
        assert.deepEqual(shown[0].items, ["Configure path"]);
        await until("settings editor opened", () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => /settings/i.test(t.label)), 5_000);
        const r = await settle(invoke("agentls_read", { path: "hello.txt" }));
        assert.equal(r.ok, false, "a tool call succeeded without a binary");
        assert.match(String((r as { e: unknown }).e), /not available|agentls/i);
        await vscode.commands.executeCommand("agentls.restart");
        await sleep(200);
        assert.equal(shown.length, 1, `notified ${shown.length} times for the same missing binary`);
      } finally {
        undo();
        await restarted(() => cfg.update("path", good, vscode.ConfigurationTarget.Workspace));
        await closeAll();
      }
    }],
  ];
}
