// Package jobs owns a session's background commands (bash with
// run_in_background): the job table (ids job-1, job-2, …), its limits (at
// most MaxRunning running, finished jobs kept KeepFinished or until MaxKept
// exist), each job's bounded output (a ring of the last lines within the
// session's bash line and byte limits, plus a spill file holding every line
// once the ring has let one go), reading what is new since the last read
// (waiting for it, filtered), killing, and ending every job when the
// session closes.
//
// A job is started through the caller's Exec, the same start path as a
// foreground command (process group, environment, subreaper, kill
// escalation all come from internal/proc); the package does not decide
// what may run.
package jobs
