// Package audit keeps the audit log: one JSON Lines file per session with
// one entry per finished tool call (what ran, with which arguments — secrets
// masked, long strings cut — what the permission step decided and by which
// rule, how long it took, how large the result was).
//
// Files live in one directory (DefaultDir: $AGENTLS_AUDIT_DIR, else
// $XDG_STATE_HOME/agentls/audit, else ~/.local/state/agentls/audit) and are
// named YYYYMMDD-HHMMSS-<pid>.jsonl (UTC, the session's start). The directory
// is kept small: when a log opens (in the background, off the session's
// startup path; Close waits for it), and whenever its file grows past
// MaxFileBytes (the session continues in a new file), the oldest files are
// removed until at most MaxFiles remain and together they hold at most
// MaxTotalBytes — except the file each running agentls is writing: the
// directory is shared by every session.
package audit
