// Background jobs in the window: a status bar item while jobs run, and a
// list (agentls.jobs) whose entries open a job's output or kill it. Fed by
// jobs/changed; reads through jobs/output, which leaves the model's unread
// output unread.
import * as vscode from "vscode";
import { applyJobEvent, type JobEntry, type JobEvent, jobItems, jobsStatusView } from "./pure/jobs";

export interface JobsClient {
  request<T>(method: string, params: unknown): Promise<T>;
}

interface JobOutput {
  job: string;
  command: string;
  status: string;
  from: number;
  to: number;
  output: string;
  spillPath?: string;
}

export class Jobs implements vscode.Disposable {
  private readonly table = new Map<string, JobEntry>();
  readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 9);

  constructor(private readonly client: JobsClient) {
    this.item.command = "agentls.jobs";
    this.paint();
  }

  /** jobs/changed. */
  onChanged(ev: JobEvent): void {
    applyJobEvent(this.table, ev);
    this.paint();
  }

  /** A new sidecar knows none of the old one's jobs (they ended with it). */
  reset(): void {
    this.table.clear();
    this.paint();
  }

  entries(): JobEntry[] {
    return [...this.table.values()];
  }

  private paint(): void {
    const v = jobsStatusView(this.table.values());
    this.item.text = v.text;
    this.item.tooltip = v.tooltip;
    if (v.visible) this.item.show();
    else this.item.hide();
  }

  /** The list: pick a job, then its output or kill. */
  async pick(): Promise<void> {
    const items = jobItems(this.table.values());
    if (items.length === 0) return void vscode.window.showInformationMessage("agentls: no background jobs");
    const job = await vscode.window.showQuickPick(items, { title: "agentls: background jobs" });
    if (!job) return;
    const actions = [{ label: "$(output) Output", act: "output" }, ...(job.running ? [{ label: "$(close) Kill", act: "kill" }] : [])];
    const a = await vscode.window.showQuickPick(actions, { title: `agentls: ${job.job}` });
    if (a?.act === "output") await this.showOutput(job.job);
    if (a?.act === "kill") await this.kill(job.job);
  }

  async output(job: string): Promise<JobOutput> {
    return this.client.request<JobOutput>("jobs/output", { job });
  }

  async showOutput(job: string): Promise<vscode.TextDocument> {
    const o = await this.output(job);
    const head = `# ${o.job}: ${o.status} — ${o.command}\n# lines ${o.from}-${o.to}${o.spillPath ? `; all output: ${o.spillPath}` : ""}\n`;
    const doc = await vscode.workspace.openTextDocument({ content: head + o.output + "\n", language: "log" });
    await vscode.window.showTextDocument(doc, { preview: true });
    return doc;
  }

  async kill(job: string): Promise<string> {
    const r = await this.client.request<{ job: string; status: string }>("jobs/kill", { job });
    applyJobEvent(this.table, { job, status: r.status, command: this.table.get(job)?.command ?? "" });
    this.paint();
    return r.status;
  }

  dispose(): void {
    this.item.dispose();
  }
}
