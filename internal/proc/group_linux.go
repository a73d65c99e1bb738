package proc

import (
	"bytes"
	"os"
	"strconv"
)

// procEntry is what /proc/<pid>/stat says about one process.
type procEntry struct {
	pid, ppid, pgrp int
	zombie          bool
}

// scanProcs calls f for every process in /proc; ok is false when /proc
// cannot be read.
func scanProcs(f func(procEntry)) (ok bool) {
	d, err := os.Open("/proc")
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false
	}
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		st, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// Fields after the command name, which may itself contain spaces and ')':
		// state ppid pgrp ...
		i := bytes.LastIndexByte(st, ')')
		if i < 0 {
			continue
		}
		fs := bytes.Fields(st[i+1:])
		if len(fs) < 3 {
			continue
		}
		pid, _ := strconv.Atoi(n)
		ppid, _ := strconv.Atoi(string(fs[1]))
		pgrp, _ := strconv.Atoi(string(fs[2]))
		f(procEntry{pid: pid, ppid: ppid, pgrp: pgrp, zombie: bytes.Equal(fs[0], []byte("Z"))})
	}
	return true
}

// groupAlive reports whether any non-zombie process is in group pgid. Zombies are
// skipped because a container's init may never reap the orphans it inherits, and
// kill(-pgid, 0) would count them forever.
func groupAlive(pgid int) bool {
	alive := false
	if !scanProcs(func(e procEntry) { alive = alive || e.pgrp == pgid && !e.zombie }) {
		return groupSignalable(pgid)
	}
	return alive
}

// escapedGroups returns the process groups, other than pgid, that live
// descendants of pid lead: children that left the command's group (setsid,
// setpgid) and which signalling the group would miss. Only groups a
// descendant leads: a descendant that joined some other existing group
// (the editor's, say) must not get that whole group killed. They must be
// found while pid still runs: once it dies they are re-parented away.
func escapedGroups(pid, pgid int) []int {
	children := map[int][]procEntry{}
	scanProcs(func(e procEntry) {
		if !e.zombie {
			children[e.ppid] = append(children[e.ppid], e)
		}
	})
	var descendants []procEntry
	isDescendant := map[int]bool{}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !isDescendant[c.pid] {
				isDescendant[c.pid] = true
				descendants = append(descendants, c)
				queue = append(queue, c.pid)
			}
		}
	}
	var out []int
	seen := map[int]bool{pgid: true}
	for _, d := range descendants {
		if !seen[d.pgrp] && isDescendant[d.pgrp] {
			seen[d.pgrp] = true
			out = append(out, d.pgrp)
		}
	}
	return out
}
