// VS Code's own confirmation, filled by agentls (docs/protocol.md,
// tools/prepare): prepareInvocation asks agentls what a call needs, VS Code
// asks the user, and the approval goes with the invocation so agentls does
// not ask again. The tests call the registered prepareInvocation and invoke
// as VS Code does (vscode.lm.invokeTool without a chat session would show a
// modal dialog no test can answer). Those that need an agentls with
// tools/prepare skip, saying so, against one without it.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import type { Sidecar } from "../sidecar";
import type { TestHooks } from "../extension";
import { sleep, until } from "./wait";

interface Prepared {
  invocationMessage?: string;
  confirmation?: { title: string; message: string };
}

export function nativeConfirmTests(skip: (why: string) => never): Array<[string, () => Promise<void>]> {
  const ws = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const file = (n: string) => path.join(ws(), n);
  const hooks = () => vscode.commands.executeCommand<TestHooks>("agentls._test.hooks");
  const sidecar = () => (vscode.extensions.getExtension("agentls.agentls")!.exports as { sidecar: Sidecar }).sidecar;
  const prepare = (name: string, input: object) => vscode.commands.executeCommand<Prepared>("agentls._test.prepare", name, input);
  const invoke = (name: string, input: object) => vscode.commands.executeCommand<string>("agentls._test.invoke", name, input);
  const ready = async () => {
    await sleep(300); // a settings change restarts the sidecar from its configuration event
    await until("sidecar ready", async () => (await vscode.commands.executeCommand<{ state: string }>("agentls._test.state")).state === "ready", 15_000);
  };
  const setCfg = async (key: string, value: unknown) => {
    const cfg = vscode.workspace.getConfiguration("agentls");
    if (JSON.stringify(cfg.inspect(key)?.workspaceValue) === JSON.stringify(value)) return;
    await cfg.update(key, value, vscode.ConfigurationTarget.Workspace);
    await ready();
  };
  /** Skips unless the running agentls answers tools/prepare. */
  const needPrepare = async () => {
    if ((await sidecar().prepare("read", { path: "x" })) === undefined) skip("this agentls has no tools/prepare (it comes with the approvals change)");
  };
  /** Runs f with prepareInvocation asking agentls, a clean question log, and no scripted answers. */
  const native = async (f: (h: TestHooks) => Promise<void>) => {
    await setCfg("mode", "default");
    const h = await hooks();
    h.confirmRequests.length = 0;
    h.confirmAnswers.length = 0;
    h.approvedTokens.length = 0;
    h.nativeConfirm = true;
    try {
      await f(h);
    } finally {
      h.nativeConfirm = false;
      h.confirmAnswers.length = 0;
    }
  };

  return [
    ["VS Code's confirmation: prepareInvocation for an edit in default mode shows the path and the diff", async () => {
      await native(async () => {
        await needPrepare();
        fs.writeFileSync(file("native-ask.txt"), "keep\nsecond\n");
        await invoke("agentls_read", { path: "native-ask.txt" });
        const p = await prepare("agentls_edit", { path: "native-ask.txt", edits: [{ oldText: "keep", newText: "changed" }] });
        assert.ok(p.confirmation, `no confirmation for an edit in default mode: ${JSON.stringify(p)}`);
        assert.match(p.confirmation.title + p.confirmation.message, /native-ask\.txt/);
        assert.match(p.confirmation.message, /^-keep$/m, p.confirmation.message);
        assert.match(p.confirmation.message, /^\+changed$/m, p.confirmation.message);
        assert.equal(fs.readFileSync(file("native-ask.txt"), "utf8"), "keep\nsecond\n", "tools/prepare changed the file");
      });
    }],
    ["VS Code's confirmation: the approved invocation runs without a second question and without a QuickPick", async () => {
      await native(async (h) => {
        await needPrepare();
        fs.writeFileSync(file("native-run.txt"), "keep\n");
        await invoke("agentls_read", { path: "native-run.txt" });
        const input = { path: "native-run.txt", edits: [{ oldText: "keep", newText: "changed" }] };
        assert.ok((await prepare("agentls_edit", input)).confirmation, "no confirmation to approve");
        const shown = h.confirmShown;
        const pending = await vscode.commands.executeCommand<number>("agentls._test.pendingApprovals");
        const r = await invoke("agentls_edit", input);
        assert.match(r, /Edited/, r);
        assert.equal(fs.readFileSync(file("native-run.txt"), "utf8"), "changed\n");
        assert.equal(h.confirmRequests.length, 0, "agentls asked again (tools/confirm) after VS Code's confirmation");
        assert.equal(h.confirmShown, shown, "a QuickPick was shown");
        assert.notEqual(h.approvedTokens.at(-1), "", "tools/call carried no approval");
        assert.equal(await vscode.commands.executeCommand<number>("agentls._test.pendingApprovals"), pending - 1, "the approval was not used up");
      });
    }],
    ["VS Code's confirmation: a call that would fail gets its failure, not a question, and nothing runs", async () => {
      await native(async (h) => {
        await needPrepare();
        fs.writeFileSync(file("native-unread.txt"), "keep\n");
        const input = { path: "native-unread.txt", edits: [{ oldText: "keep", newText: "changed" }] };
        const p = await prepare("agentls_edit", input); // never read: the edit would fail
        assert.equal(p.confirmation, undefined, `a question for a call that would fail: ${JSON.stringify(p.confirmation)}`);
        const r = await invoke("agentls_edit", input);
        assert.match(r, /read/i, r);
        assert.equal(fs.readFileSync(file("native-unread.txt"), "utf8"), "keep\n");
        assert.equal(h.confirmRequests.length, 0, "agentls asked");
        assert.equal(h.approvedTokens.length, 0, "the call was sent to agentls to run");
      });
    }],
    ["VS Code's confirmation: a deny rule refuses without a question and nothing runs", async () => {
      await setCfg("permissions", { deny: ["Edit(native-deny.txt)"] });
      try {
        await native(async (h) => {
          await needPrepare();
          fs.writeFileSync(file("native-deny.txt"), "keep\n");
          await invoke("agentls_read", { path: "native-deny.txt" });
          const input = { path: "native-deny.txt", edits: [{ oldText: "keep", newText: "changed" }] };
          assert.equal((await prepare("agentls_edit", input)).confirmation, undefined, "a question for a denied call");
          const r = await invoke("agentls_edit", input);
          assert.match(r, /denied/i, r);
          assert.match(r, /native-deny\.txt/, r);
          assert.equal(fs.readFileSync(file("native-deny.txt"), "utf8"), "keep\n");
          assert.equal(h.confirmRequests.length, 0, "agentls asked");
        });
      } finally {
        await setCfg("permissions", undefined);
      }
    }],
    ["VS Code's confirmation: read-only calls run without one", async () => {
      await native(async (h) => {
        fs.writeFileSync(file("native-read.txt"), "hello\n");
        const p = await prepare("agentls_read", { path: "native-read.txt" });
        assert.equal(p.confirmation, undefined, "a question for a read");
        assert.match(p.invocationMessage ?? "", /Reading native-read\.txt/);
        assert.match(await invoke("agentls_read", { path: "native-read.txt" }), /1→hello/);
        assert.equal(h.confirmRequests.length, 0);
      });
    }],
    ["an agentls without tools/prepare: no VS Code confirmation, agentls asks its own question as before", async () => {
      await native(async (h) => {
        if ((await sidecar().prepare("read", { path: "x" })) !== undefined) skip("this agentls has tools/prepare (the fallback is for older binaries; its unit test is in test/unit/approvals.test.ts)");
        fs.writeFileSync(file("native-old.txt"), "keep\n");
        await invoke("agentls_read", { path: "native-old.txt" });
        const input = { path: "native-old.txt", edits: [{ oldText: "keep", newText: "changed" }] };
        assert.equal((await prepare("agentls_edit", input)).confirmation, undefined);
        h.confirmAnswers.push({ decision: "allowOnce" });
        const r = await invoke("agentls_edit", input);
        assert.match(r, /Edited/, r);
        assert.equal(h.confirmRequests.length, 1, "agentls did not ask");
        assert.equal(h.approvedTokens.at(-1), "");
      });
    }],
    ["agentls's pick: Always allow in this workspace writes the rule, without a restart, and it holds after one", async () => {
      await setCfg("mode", "default");
      await setCfg("permissions", undefined);
      const h = await hooks();
      h.confirmAnswers.length = 0;
      h.confirmRequests.length = 0;
      fs.rmSync(file("ws-allowed.txt"), { force: true });
      const pid = () => (sidecar() as unknown as { client?: { _serverProcess?: { pid?: number } } }).client?._serverProcess?.pid;
      const before = pid();
      const shown = h.confirmShown;
      const call = vscode.lm.invokeTool("agentls_bash", { input: { command: "touch ws-allowed.txt" }, toolInvocationToken: undefined }, new vscode.CancellationTokenSource().token);
      try {
        await until("picker shown", () => h.confirmShown > shown, 10_000);
        await sleep(300);
        await vscode.commands.executeCommand("quickInput.first");
        for (let i = 0; i < 3; i++) await vscode.commands.executeCommand("quickInput.next"); // Always allow in this workspace (a command has no Show change)
        await vscode.commands.executeCommand("quickInput.accept");
        await call;
        assert.ok(fs.existsSync(file("ws-allowed.txt")), "the allowed command did not run");
        const written = vscode.workspace.getConfiguration("agentls").inspect<{ allow?: string[] }>("permissions")?.workspaceValue;
        assert.deepEqual(written?.allow, ["Bash(touch ws-allowed.txt)"]);
        await sleep(500);
        assert.equal(pid(), before, "writing the rule restarted agentls");
        await vscode.commands.executeCommand("agentls.restart");
        await ready();
        fs.rmSync(file("ws-allowed.txt"));
        const asked = h.confirmRequests.length;
        h.confirmAnswers.push({ decision: "rejectOnce", message: "the rule should have allowed it" });
        await vscode.lm.invokeTool("agentls_bash", { input: { command: "touch ws-allowed.txt" }, toolInvocationToken: undefined }, new vscode.CancellationTokenSource().token);
        assert.equal(h.confirmRequests.length, asked, "asked again after a restart: the workspace rule did not reach agentls");
        assert.ok(fs.existsSync(file("ws-allowed.txt")));
      } finally {
        h.confirmAnswers.length = 0;
        await setCfg("permissions", undefined);
      }
    }],
  ];
}
