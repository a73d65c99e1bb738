// Background jobs inside a real VS Code: a job the model starts shows in
// the status bar item and the job list, its output opens, and kill stops it.
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import type { JobEntry } from "../pure/jobs";
import { sleep, until } from "./wait";

type Test = [string, () => Promise<void>];

const text = (r: vscode.LanguageModelToolResult) => r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : "")).join("");
const invoke = (name: string, input: object) => vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }, new vscode.CancellationTokenSource().token);

interface JobsState {
  entries: JobEntry[];
  status: { text: string; tooltip: string };
}
const state = () => vscode.commands.executeCommand<JobsState>("agentls._test.jobs");

export function jobsTests(): Test[] {
  return [
    ["background jobs: the job list shows a running job, its output, and kill stops it", async () => {
      const cfg = vscode.workspace.getConfiguration("agentls");
      if (cfg.get("mode") !== "bypass") {
        await cfg.update("mode", "bypass", vscode.ConfigurationTarget.Workspace);
        await sleep(300);
      }
      await until("sidecar ready", async () => (await vscode.commands.executeCommand<{ state: string }>("agentls._test.state")).state === "ready", 15_000);
      const started = text(await invoke("agentls_bash", { command: "echo job says hello; sleep 60", run_in_background: true }));
      const id = /(job-\d+) is running in the background/.exec(started)?.[1];
      assert.ok(id, started);
      const running = await until("job listed", async () => {
        const s = await state();
        return s.entries.find((e) => e.job === id && e.running) ? s : undefined;
      });
      assert.match(running.status.text, /1 job/);
      const out = await vscode.commands.executeCommand<{ output: string; status: string }>("agentls._test.jobOutput", id);
      assert.match(out.output, /job says hello/);
      assert.equal(out.status, "running");
      const killed = await vscode.commands.executeCommand<string>("agentls._test.jobKill", id);
      assert.equal(killed, "killed by SIGTERM");
      const after = await until("job shown as ended", async () => {
        const s = await state();
        return s.entries.find((e) => e.job === id && !e.running) ? s : undefined;
      });
      assert.equal(after.status.text, "", "the status bar item still counts a killed job");
      // The model reads the same end.
      assert.match(text(await invoke("agentls_bash_output", { job: id })), /killed by SIGTERM/);
    }],
  ];
}
