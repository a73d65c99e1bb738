package proc

import (
	"bytes"
	"os"
	"strconv"
)

// groupAlive reports whether any non-zombie process is in group pgid. Zombies are
// skipped because a container's init may never reap the orphans it inherits, and
// kill(-pgid, 0) would count them forever.
func groupAlive(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return groupSignalable(pgid)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return groupSignalable(pgid)
	}
	want := []byte(strconv.Itoa(pgid))
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
		f := bytes.Fields(st[i+1:])
		if len(f) >= 3 && bytes.Equal(f[2], want) && !bytes.Equal(f[0], []byte("Z")) {
			return true
		}
	}
	return false
}
