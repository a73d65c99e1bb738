// Package proc owns running one shell command for the bash tool and extension tools: the
// process group, the timeout and cancellation (SIGTERM, KillGrace, SIGKILL), the single
// interleaved output stream, its cleaning (ANSI escapes stripped, carriage-return
// overwrites resolved), the bounded tail the model sees, progress snapshots, failure lines
// rescued from the cut part, and streaming the raw output to a spill file.
//
// Invariants: memory stays bounded whatever the command prints (a ring of the last
// TailLines lines and TailBytes bytes, lines capped at MaxLineChars); the raw bytes go only
// to the spill file. A Reaper remembers process groups that outlived their shell so the
// server can kill them at shutdown. The package does not decide what is allowed to run.
//
// Orphans (Linux) makes the server the subreaper of its descendants: one whose parent
// exits is re-parented to the server, reaped when it exits, and killed at shutdown. It
// never waits for a child os/exec started (Go holds a pidfd for each until its Wait).
// Shutdown stops groups and adopted processes in one phase (killPhase). The Watchdog
// (Linux) stops them when the server dies without doing so: it finds them by an
// environment token they all inherit (WatchdogEnv).
//
// Known limits: a child that leaves the process group (setsid) after its parent exited
// escapes a timeout's kill, though not the shutdown's; on Windows both kill steps are `taskkill /T /F` on the shell's tree (no job object yet),
// so descendants whose parent already exited are not found, and the Reaper only tracks
// running shells.
package proc
