//go:build unix && !linux

package proc

// groupAlive reports whether group pgid has a member (zombies included).
func groupAlive(pgid int) bool { return groupSignalable(pgid) }

// escapedGroups finds no escaped descendants here: only Linux's /proc lists
// parents cheaply. The command's own group is still signalled.
func escapedGroups(pid, pgid int) []int { return nil }
