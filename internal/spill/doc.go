// Package spill owns the per-process directory where commands' full output is saved when
// the tail shown to the model had to be cut.
//
// The directory lives in the user cache directory (never inside the workspace, so the
// workspace's status and file watchers stay quiet), is named after the workspace and the
// server's pid, is capped at MaxTotalBytes (oldest files removed first) and is removed when
// the server shuts down. CleanStale removes the directories left by servers that died.
package spill
