// Extension-host tests, run inside a real VS Code (code-server) by
// test/vscode/run.sh. Results go to $AGENTLS_TEST_OUT/results.jsonl, one
// line per test: {name, status: "pass"|"fail"|"skip", ms, error?}.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { sleep, until } from "./wait";
import { extensionContractTests } from "./extension_contract";
import { diagnosticsTests } from "./diagnostics";
import { jobsTests } from "./jobs";
import { nativeConfirmTests } from "./nativeConfirm";

const OUT = process.env.AGENTLS_TEST_OUT ?? "/tmp";
const results = path.join(OUT, "results.jsonl");

class Skip extends Error {}
const skip = (why: string): never => {
  throw new Skip(why);
};

const ws = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const text = (r: vscode.LanguageModelToolResult) => r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : "")).join("");
const invoke = (name: string, input: object, token?: vscode.CancellationToken) =>
  vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }, token ?? new vscode.CancellationTokenSource().token);

async function setMode(mode: string): Promise<void> {
  const cfg = vscode.workspace.getConfiguration("agentls");
  if (cfg.get("mode") !== mode) await cfg.update("mode", mode, vscode.ConfigurationTarget.Workspace);
  await sleep(300); // the restart is triggered by the configuration event
  await until("sidecar ready", async () => ((await vscode.commands.executeCommand<{ state: string }>("agentls._test.state")).state === "ready"), 15_000);
}

interface Deco { uri: string; inserted: number[]; removed: number[]; keys: { inserted: string; removed: string } }
const decorations = async (file: string) =>
  (await vscode.commands.executeCommand<Deco[]>("agentls._test.decorations")).find((d) => vscode.Uri.parse(d.uri).fsPath === file);

async function editWithHighlights(name: string, before: string, oldText: string, newText: string): Promise<{ file: string; deco: Deco }> {
  const file = path.join(ws(), name);
  fs.writeFileSync(file, before);
  const doc = await vscode.workspace.openTextDocument(file);
  await vscode.window.showTextDocument(doc, { preview: false });
  assert.match(text(await invoke("agentls_read", { path: name })), /1→/);
  const r = text(await invoke("agentls_edit", { path: name, edits: [{ oldText, newText }] }));
  assert.match(r, /Edited/, r);
  const deco = await until("decorations", async () => {
    const d = await decorations(file);
    return d && d.inserted.length > 0 ? d : undefined;
  });
  return { file, deco };
}

const tests: Array<[string, () => Promise<void>]> = [
  ["the extension activates and the sidecar is ready", async () => {
    const ext = vscode.extensions.getExtension("agentls.agentls");
    assert.ok(ext, "extension agentls.agentls not found");
    await ext.activate();
    await until("ready", async () => ((await vscode.commands.executeCommand<{ state: string }>("agentls._test.state")).state === "ready"), 20_000);
  }],
  ["vscode.lm.tools lists every agentls tool with its schema", async () => {
    const contributed = vscode.extensions.getExtension("agentls.agentls")!.packageJSON.contributes.languageModelTools as Array<{ name: string; inputSchema: object }>;
    assert.ok(contributed.length >= 6);
    for (const c of contributed) {
      const t = vscode.lm.tools.find((x) => x.name === c.name);
      assert.ok(t, `${c.name} missing from vscode.lm.tools`);
      assert.deepEqual(t.inputSchema, c.inputSchema);
    }
  }],
  ["agentls_read returns the file's numbered text", async () => {
    fs.writeFileSync(path.join(ws(), "hello.txt"), "alpha\nbeta\n");
    const r = text(await invoke("agentls_read", { path: "hello.txt" }));
    assert.match(r, /1→alpha/);
    assert.match(r, /2→beta/);
  }],
  ["agentls_edit (acceptEdits) changes the file and highlights exactly the changed lines", async () => {
    await setMode("acceptEdits");
    const { file, deco } = await editWithHighlights("edit.txt", "one\ntwo\nthree\nfour\n", "two\nthree", "TWO\nthree\nextra");
    assert.equal(fs.readFileSync(file, "utf8"), "one\nTWO\nthree\nextra\nfour\n");
    assert.deepEqual(deco.inserted, [1, 3]);
  }],
  ["Show diff opens a diff editor and Revert restores the old bytes", async () => {
    const file = path.join(ws(), "edit.txt");
    await vscode.commands.executeCommand("agentls.showDiff", vscode.Uri.file(file));
    await until("diff tab", () => vscode.window.tabGroups.activeTabGroup.activeTab?.input instanceof vscode.TabInputTextDiff);
    const input = vscode.window.tabGroups.activeTabGroup.activeTab!.input as vscode.TabInputTextDiff;
    assert.equal(input.original.scheme, "agentls-old");
    assert.equal(input.modified.fsPath, file);
    await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
    assert.equal(await vscode.commands.executeCommand("agentls.revert", vscode.Uri.file(file)), true);
    assert.equal(fs.readFileSync(file, "utf8"), "one\ntwo\nthree\nfour\n");
  }],
  ["editing a highlighted line clears its highlights", async () => {
    const { file } = await editWithHighlights("clear.txt", "a\nb\nc\n", "b", "B");
    const editor = vscode.window.visibleTextEditors.find((e) => e.document.uri.fsPath === file)!;
    await editor.edit((b) => b.insert(new vscode.Position(1, 1), "!"));
    await until("highlights cleared", async () => (await decorations(file))?.inserted.length === 0);
    await vscode.commands.executeCommand("workbench.action.revertAndCloseActiveEditor");
  }],
  ["default mode: Deny through tools/confirm leaves the file unchanged and the model sees why", async () => {
    await setMode("default");
    const file = path.join(ws(), "deny.txt");
    fs.writeFileSync(file, "keep\n");
    await invoke("agentls_read", { path: "deny.txt" });
    const hooks = await vscode.commands.executeCommand<{ confirmAnswers: object[]; confirmRequests: Array<{ tool: string }> }>("agentls._test.hooks");
    hooks.confirmRequests.length = 0;
    hooks.confirmAnswers.push({ decision: "rejectOnce", message: "not in this test" });
    const r = text(await invoke("agentls_edit", { path: "deny.txt", edits: [{ oldText: "keep", newText: "changed" }] }));
    if (hooks.confirmRequests.length === 0) {
      fs.writeFileSync(file, "keep\n");
      hooks.confirmAnswers.length = 0;
      skip(`server sent no tools/confirm for an edit in default mode (permission gate not wired yet); the edit answered: ${r.slice(0, 80)}`);
    }
    assert.equal(hooks.confirmRequests[0].tool, "edit");
    assert.equal(fs.readFileSync(file, "utf8"), "keep\n");
    assert.match(r, /denied/i);
    assert.match(r, /not in this test/);
  }],
  ["cancelling agentls_bash kills the process", async () => {
    if (!vscode.lm.tools.some((t) => t.name === "agentls_bash")) skip("the server has no bash tool yet (agentls tools --format vscode lists none)");
    await setMode("bypass");
    const pidFile = path.join(ws(), "sleep.pid");
    fs.rmSync(pidFile, { force: true });
    const cts = new vscode.CancellationTokenSource();
    const p = invoke("agentls_bash", { command: `echo $$ > sleep.pid; exec sleep 100` }, cts.token);
    const pid = await until("pid file", () => fs.existsSync(pidFile) && Number(fs.readFileSync(pidFile, "utf8").trim()), 10_000);
    cts.cancel();
    await p.then(() => undefined, () => undefined);
    await until("process gone", () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 5_000);
  }],
  ["a long bash shows progress with the latest output line", async () => {
    if (!vscode.lm.tools.some((t) => t.name === "agentls_bash")) skip("the server has no bash tool yet");
    await setMode("bypass");
    const hooks = await vscode.commands.executeCommand<{ progressMessages: string[] }>("agentls._test.hooks");
    hooks.progressMessages.length = 0;
    const r = text(await invoke("agentls_bash", { command: "for i in 1 2 3 4 5 6; do echo step$i; sleep 0.4; done" }));
    assert.match(r, /step6/);
    if (hooks.progressMessages.length === 0) skip("the server sent no tools/progress for bash output");
    assert.ok(hooks.progressMessages.every((m) => /^step\d$/.test(m)), hooks.progressMessages.join(","));
  }],
  ["cancelling a call closes its pending confirmation", async () => {
    await setMode("default");
    const file = path.join(ws(), "pending.txt");
    fs.writeFileSync(file, "keep\n");
    await invoke("agentls_read", { path: "pending.txt" });
    const hooks = await vscode.commands.executeCommand<{ confirmAnswers: object[]; confirmShown: number; confirmClosedByCancel: number }>("agentls._test.hooks");
    hooks.confirmAnswers.length = 0;
    const shown = hooks.confirmShown;
    const closed = hooks.confirmClosedByCancel;
    const cts = new vscode.CancellationTokenSource();
    const p = invoke("agentls_edit", { path: "pending.txt", edits: [{ oldText: "keep", newText: "changed" }] }, cts.token);
    await until("confirmation shown", () => hooks.confirmShown > shown, 10_000);
    cts.cancel();
    await p.then(() => undefined, () => undefined);
    await until("confirmation closed by the cancel", () => hooks.confirmClosedByCancel > closed, 5_000);
    assert.equal(fs.readFileSync(file, "utf8"), "keep\n");
  }],
  ["syncOpenFiles: an edit of a clean open file goes through the editor and is saved", async () => {
    await setMode("acceptEdits");
    const file = path.join(ws(), "synced.txt");
    fs.writeFileSync(file, "one\ntwo\nthree\n");
    const doc = await vscode.workspace.openTextDocument(file);
    await vscode.window.showTextDocument(doc, { preview: false });
    assert.match(text(await invoke("agentls_read", { path: "synced.txt" })), /2→two/);
    const r = text(await invoke("agentls_edit", { path: "synced.txt", edits: [{ oldText: "two", newText: "TWO" }] }));
    assert.match(r, /Edited synced\.txt in the editor/, r);
    assert.equal(doc.getText(), "one\nTWO\nthree\n");
    assert.equal(doc.isDirty, false, "the edit of a clean document is saved");
    assert.equal(fs.readFileSync(file, "utf8"), "one\nTWO\nthree\n");
  }],
  ["syncOpenFiles: read sees unsaved text; an edit merges into it and leaves it unsaved", async () => {
    await setMode("acceptEdits");
    const file = path.join(ws(), "dirty.txt");
    fs.writeFileSync(file, "a\nb\nc\n");
    const doc = await vscode.workspace.openTextDocument(file);
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    assert.ok(await editor.edit((b) => b.replace(new vscode.Range(0, 0, 0, 1), "A unsaved")));
    assert.ok(doc.isDirty);
    const read = text(await invoke("agentls_read", { path: "dirty.txt" }));
    assert.match(read, /1→A unsaved/, read);
    assert.match(read, /unsaved text from the editor/, read);
    const r = text(await invoke("agentls_edit", { path: "dirty.txt", edits: [{ oldText: "c", newText: "C" }] }));
    assert.match(r, /Edited dirty\.txt in the editor/, r);
    assert.equal(doc.getText(), "A unsaved\nb\nC\n");
    assert.equal(doc.isDirty, true, "the user's unsaved work is not saved by the agent's edit");
    assert.equal(fs.readFileSync(file, "utf8"), "a\nb\nc\n");
    const deco = await until("highlights of the unsaved change", async () => {
      const d = await decorations(file);
      return d && d.inserted.length > 0 ? d : undefined;
    });
    assert.deepEqual(deco.inserted, [2]);
    await vscode.commands.executeCommand("workbench.action.revertAndCloseActiveEditor");
  }],
  ["syncOpenFiles off: agentls sees only the disk", async () => {
    const cfg = vscode.workspace.getConfiguration("agentls");
    await cfg.update("syncOpenFiles", false, vscode.ConfigurationTarget.Workspace);
    try {
      await sleep(300); // the restart is triggered by the configuration event
      await until("sidecar ready", async () => ((await vscode.commands.executeCommand<{ state: string }>("agentls._test.state")).state === "ready"), 15_000);
      const file = path.join(ws(), "unsynced.txt");
      fs.writeFileSync(file, "disk\n");
      const doc = await vscode.workspace.openTextDocument(file);
      const editor = await vscode.window.showTextDocument(doc, { preview: false });
      assert.ok(await editor.edit((b) => b.replace(new vscode.Range(0, 0, 0, 4), "buffer")));
      const read = text(await invoke("agentls_read", { path: "unsynced.txt" }));
      assert.match(read, /1→disk/, read);
      await vscode.commands.executeCommand("workbench.action.revertAndCloseActiveEditor");
    } finally {
      await cfg.update("syncOpenFiles", undefined, vscode.ConfigurationTarget.Workspace);
      await sleep(300);
      await until("sidecar ready", async () => ((await vscode.commands.executeCommand<{ state: string }>("agentls._test.state")).state === "ready"), 15_000);
    }
  }],
  ["screenshot: an edited file with inline highlights and the CodeLens", async () => {
    await setMode("acceptEdits");
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    const src = [
      "export function greet(name: string): string {",
      "  const greeting = \"Hello\";",
      "  return greeting + \", \" + name;",
      "}",
      "",
      "export function farewell(name: string): string {",
      "  return \"Bye, \" + name;",
      "}",
      "",
    ].join("\n");
    const { deco } = await editWithHighlights("greet.ts", src, "  const greeting = \"Hello\";\n  return greeting + \", \" + name;", "  const greeting = name.length > 0 ? \"Hello\" : \"Hi\";\n  const punctuation = \"!\";\n  return `${greeting}, ${name}${punctuation}`;");
    // A clean picture: no chat panel, the Agent changes view open.
    await vscode.commands.executeCommand("workbench.action.closeAuxiliaryBar").then(undefined, () => undefined);
    await vscode.commands.executeCommand("agentls.changes.focus").then(undefined, () => undefined);
    await vscode.window.showTextDocument(vscode.Uri.file(path.join(ws(), "greet.ts")), { preview: false });
    fs.writeFileSync(path.join(OUT, "screenshot-ready.json"), JSON.stringify(deco));
    // run.sh's browser driver takes the picture and checks the DOM.
    await until("screenshot", () => fs.existsSync(path.join(OUT, "screenshot-done")), 30_000);
  }],
];

export async function run(): Promise<void> {
  let failed = 0;
  // AGENTLS_VSCODE_ONLY (a regular expression) runs the matching tests only,
  // after the first (activation).
  const only = process.env.AGENTLS_VSCODE_ONLY ? new RegExp(process.env.AGENTLS_VSCODE_ONLY) : undefined;
  const all = [...tests, ...extensionContractTests(skip), ...diagnosticsTests(skip), ...(require("./commands_contract") as typeof import("./commands_contract")).commandsContractTests(skip), ...nativeConfirmTests(skip), ...jobsTests()];
  for (const [name, f] of all.filter(([n], i) => i === 0 || !only || only.test(n))) {
    const t0 = Date.now();
    let status = "pass";
    let error: string | undefined;
    try {
      await f();
    } catch (e) {
      if (e instanceof Skip) {
        status = "skip";
        error = e.message;
      } else {
        status = "fail";
        error = e instanceof Error ? e.stack ?? e.message : String(e);
        failed++;
      }
    }
    fs.appendFileSync(results, JSON.stringify({ name, status, ms: Date.now() - t0, error }) + "\n");
  }
  if (failed > 0) throw new Error(`${failed} extension-host test(s) failed`);
}
