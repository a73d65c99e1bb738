package ops

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentls/agentls/internal/ignore"
	"github.com/agentls/agentls/internal/owner"
)

// Temp files of writes: their names, who owns them, and the sweep of
// those a crashed agentls left behind.

// cleanYieldEvery is how many entries CleanTemp visits between yields.
const cleanYieldEvery = 64

// tempName is the temp file name of an atomic write of base by process
// pid: TempPrefix, base, the pid, a random suffix.
func tempName(base string, pid int, rnd string) string {
	suffix := "-" + strconv.Itoa(pid) + "-" + rnd
	// A name may be as long as the file system allows (255 bytes): the temp
	// name keeps only as much of it as fits beside the prefix and suffix.
	if room := maxNameBytes - len(TempPrefix) - len(suffix); len(base) > room {
		cut := max(room, 0)
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	return TempPrefix + base + suffix
}

// maxNameBytes is the longest file name common file systems take (NAME_MAX).
const maxNameBytes = 255

// ownTemp reports whether name is a temp file of process pid (a write of
// it in progress, when pid is this process).
func ownTemp(name string, pid int) bool {
	owner, ok := tempOwner(name)
	return ok && owner == pid
}

// tempOwner is the id of the process whose write made the temp file name
// (tempName: prefix, base, pid, random suffix).
func tempOwner(name string) (int, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return 0, false
	}
	j := strings.LastIndexByte(name[:i], '-')
	if j < 0 {
		return 0, false
	}
	pid, err := strconv.Atoi(name[j+1 : i])
	return pid, err == nil
}

// TempMaxAge is how old a temp file of a running process may be and still
// count as a write in progress; an older one is a leftover whose process
// id has been reused. A write takes seconds, not an hour.
const TempMaxAge = time.Hour

// CleanTemp removes temp files left by a crashed atomic write anywhere
// below f (best effort; .git and node_modules are skipped), and reports how
// many. A temp file whose process still runs is kept unless older than
// TempMaxAge: CleanTemp runs when a session opens, and another agentls (an
// editor's, an agentls call) may be writing in the same folder then; this
// process's own are always kept. It stops early, having cleaned what it
// reached, when ctx ends: the session closes, and a short session
// (agentls call) must not wait for a walk of a big tree.
func (l *Local) CleanTemp(ctx context.Context, f *Folder) int {
	r, _, err := l.root(Path{Folder: f, Rel: "."})
	if err != nil {
		return 0
	}
	n, pid, seen := 0, os.Getpid(), 0
	fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		// A walk of short system calls is seldom preempted: on one CPU a
		// background clean-up would hold every call up until it ends, so
		// it lets others run now and then, and looks whether to stop.
		if seen++; seen%cleanYieldEvery == 0 {
			if ctx.Err() != nil {
				return fs.SkipAll
			}
			runtime.Gosched()
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return fs.SkipDir
		}
		// Each level is opened by path from the root: a deep chain costs
		// the square of its depth (18 s at session open for 3,000 levels).
		if d.IsDir() && strings.Count(p, "/") >= ignore.MaxWalkDepth {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), TempPrefix) && !ownTemp(d.Name(), pid) {
			if pid, ok := tempOwner(d.Name()); ok && owner.Alive(pid) {
				if fi, err := d.Info(); err != nil || time.Since(fi.ModTime()) < TempMaxAge {
					return nil // another process's write in progress
				}
			}
			if r.Remove(filepath.FromSlash(p)) == nil {
				n++
			}
		}
		return nil
	})
	return n
}
