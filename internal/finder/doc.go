// Package finder owns the logic of the ls and find tools: listing one
// directory and globbing file paths, both through the workspace's ignore
// rules (internal/ignore). It is pure over an fs.FS and an ignore.Matcher:
// no other I/O, no formatting of tool output beyond the entry strings.
package finder
