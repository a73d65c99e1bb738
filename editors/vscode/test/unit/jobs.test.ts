import assert from "node:assert/strict";
import { test } from "node:test";
import { applyJobEvent, type JobEntry, jobItems, jobsStatusView } from "../../src/pure/jobs";

test("jobs: the status bar shows running jobs only, and the list puts them first", () => {
  const table = new Map<string, JobEntry>();
  assert.equal(jobsStatusView(table.values()).visible, false);
  applyJobEvent(table, { job: "job-1", status: "running", command: "npm run dev" });
  applyJobEvent(table, { job: "job-2", status: "running", command: "go test ./..." });
  let v = jobsStatusView(table.values());
  assert.equal(v.visible, true);
  assert.equal(v.text, "$(server-process) 2 jobs");
  assert.match(v.tooltip, /job-1, job-2/);
  applyJobEvent(table, { job: "job-2", status: "exited 0", command: "go test ./..." });
  v = jobsStatusView(table.values());
  assert.equal(v.text, "$(server-process) 1 job");
  const items = jobItems(table.values());
  assert.deepEqual(items.map((i) => [i.job, i.running, i.description]), [["job-1", true, "running"], ["job-2", false, "exited 0"]]);
  applyJobEvent(table, { job: "job-1", status: "killed by SIGTERM", command: "npm run dev" });
  assert.equal(jobsStatusView(table.values()).visible, false);
});

test("jobs: a long command is cut in the list", () => {
  const table = new Map<string, JobEntry>();
  applyJobEvent(table, { job: "job-1", status: "running", command: "x".repeat(500) });
  assert.equal(jobItems(table.values())[0].detail.length, 200);
});
