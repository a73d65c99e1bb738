// The background jobs view (pure, unit-tested without a window): the job
// table kept from jobs/changed notifications, and what the status bar item
// and the job list show.

export interface JobEvent {
  job: string;
  status: string;
  command: string;
}

export interface JobEntry extends JobEvent {
  running: boolean;
}

/** Applies one jobs/changed notification to the table (by job id, start order kept). */
export function applyJobEvent(table: Map<string, JobEntry>, ev: JobEvent): void {
  table.set(ev.job, { ...ev, running: ev.status === "running" });
}

export interface JobsStatus {
  visible: boolean;
  text: string;
  tooltip: string;
}

/** The status bar item: shown while a job runs, naming how many. */
export function jobsStatusView(jobs: Iterable<JobEntry>): JobsStatus {
  const running = [...jobs].filter((j) => j.running);
  if (running.length === 0) return { visible: false, text: "", tooltip: "" };
  const n = running.length;
  return {
    visible: true,
    text: `$(server-process) ${n} job${n === 1 ? "" : "s"}`,
    tooltip: `agentls: ${n} background job${n === 1 ? "" : "s"} running (${running.map((j) => j.job).join(", ")}) — click to list: output, kill`,
  };
}

export interface JobItem {
  label: string;
  description: string;
  detail: string;
  job: string;
  running: boolean;
}

/** The list's entries, running jobs first, newest first within each. */
export function jobItems(jobs: Iterable<JobEntry>): JobItem[] {
  const all = [...jobs].reverse();
  const order = [...all.filter((j) => j.running), ...all.filter((j) => !j.running)];
  return order.map((j) => ({
    label: `${j.running ? "$(sync~spin)" : "$(circle-outline)"} ${j.job}`,
    description: j.status,
    detail: j.command.length > 200 ? j.command.slice(0, 199) + "…" : j.command,
    job: j.job,
    running: j.running,
  }));
}
