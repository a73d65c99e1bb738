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
// Known limits: a child that leaves the process group (setsid) escapes the group kill;
// on Windows both kill steps are `taskkill /T /F` on the shell's tree (no job object yet),
// so descendants whose parent already exited are not found, and the Reaper only tracks
// running shells.
package proc
