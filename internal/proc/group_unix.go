//go:build unix && !linux

package proc

// groupAlive reports whether group pgid has a member (zombies included).
func groupAlive(pgid int) bool { return groupSignalable(pgid) }
