//go:build linux

package e2e

// Staleness, black-box: "an edit needs a fresh read and an external change
// is caught before it is overwritten", in the hard cases: same-size rewrites
// whose mtime is restored (stat alone cannot see them), ignored, hidden and
// new directories, hard links, symlinks, a swapped parent directory and a
// burst of 200 changes.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

const (
	staleEditOld  = "alpha"
	staleEditNew  = "omega"
	staleWritten  = "written by the agent\n"
	staleNoteWait = 2 * time.Second
)

// staleRereadRE: a refusal must tell the model to read the file again.
var staleRereadRE = regexp.MustCompile(`(?i)\bre-?read\b|\bread\b.*\b(again|first)\b`)

// staleTimes returns the access and modification times of p (following links).
func staleTimes(t *testing.T, p string) (atime, mtime time.Time) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return time.Unix(st.Atim.Sec, st.Atim.Nsec), fi.ModTime()
}

// staleBackdate makes p an old file: mtime and atime an hour ago.
func staleBackdate(t *testing.T, p string) {
	t.Helper()
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// staleRewrite writes body in place through writePath (same inode, no
// truncation; body must be the same size) and restores statPath's atime and
// mtime, so size, inode and mtime all match what was read.
func staleRewrite(t *testing.T, writePath, statPath, body string) {
	t.Helper()
	at, mt := staleTimes(t, statPath)
	if fi, _ := os.Stat(statPath); fi.Size() != int64(len(body)) {
		t.Fatalf("staleRewrite %s: new body %d bytes, file %d", writePath, len(body), fi.Size())
	}
	stalePlain(t, writePath, body)
	if err := os.Chtimes(statPath, at, mt); err != nil {
		t.Fatal(err)
	}
	if _, mt2 := staleTimes(t, statPath); !mt2.Equal(mt) {
		t.Fatalf("mtime not restored: %v != %v", mt2, mt)
	}
}

// stalePlain rewrites p in place with a same-size body and lets the mtime
// move: the change a stat can see.
func stalePlain(t *testing.T, p, body string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteAt([]byte(body), 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// staleWantRefused calls tool (edit: an oldText the disk text contains;
// write) on rel and requires a refusal that asks for a re-read, with the
// disk unchanged.
func staleWantRefused(t *testing.T, ctx context.Context, c *harness.Client, tool, rel, abs, what string) {
	t.Helper()
	before := readFile(t, abs)
	args := writeCall(rel, staleWritten)
	if tool == "edit" {
		args = editCall(rel, staleEditOld, staleEditNew)
	}
	r := c.CallTool(ctx, tool, args)
	after := readFile(t, abs)
	if !r.IsError {
		t.Errorf("%s: %s %s after an external change was applied: %q; disk now %q (was %q)", what, tool, rel, r.Text(), after, before)
	} else if !staleRereadRE.MatchString(r.Text()) {
		t.Errorf("%s: %s %s refused without telling the model to read again: %q", what, tool, rel, r.Text())
	}
	if after != before {
		t.Errorf("%s: %s %s changed the disk: %q -> %q", what, tool, rel, before, after)
	}
}

// waitStale waits for a workspace/externalChange {readStale: true} of one
// of paths, received at any time.
func waitStale(c *harness.Client, d time.Duration, paths ...string) (extChange, bool) {
	e, _, ok := waitExt(c, d, time.Time{}, staleOf(paths...))
	return e, ok
}

// staleBody is a file body of a fixed size whose tag differs between versions.
func staleBody(name, tag string) string {
	return fmt.Sprintf("alpha %s %s\nsecond line stays\n", name, tag)
}

// staleLocations are where the rewritten files live: the root, two ignored
// directories, a hidden one.
var staleLocations = []struct {
	dir     string
	watched bool // docs: the watcher honours the ignore rules
}{
	{"", true},
	{"dist/", false},
	{"node_modules/pkg/", false},
	{".cache/", true},
}

// staleRewriteCase: read, change in place (same size, times restored), then
// edit one file and write another; in a watched location the edited one's
// readStale notification comes. (A change that moves the mtime:
// edit/stale_after_external_change_refused.txtar.)
func staleRewriteCase(t *testing.T, backdate, sleep bool) {
	files := map[string]string{".gitignore": "dist/\nnode_modules/\n"}
	for _, l := range staleLocations {
		files[l.dir+"e.txt"], files[l.dir+"w.txt"] = staleBody(l.dir+"e.txt", "AAAA"), staleBody(l.dir+"w.txt", "AAAA")
	}
	ws := resolvedWorkspace(t, files)
	if backdate {
		for rel := range files {
			staleBackdate(t, filepath.Join(ws, rel))
		}
	}
	c, ctx := startIn(t, ws, bypass())
	for rel := range files {
		mustRead(t, c, ctx, rel)
	}
	if sleep {
		time.Sleep(2500 * time.Millisecond) // deliberate: the read is no longer recent
	}
	for _, l := range staleLocations {
		for _, n := range []string{"e.txt", "w.txt"} {
			p := filepath.Join(ws, l.dir+n)
			staleRewrite(t, p, p, staleBody(l.dir+n, "BBBB"))
		}
	}
	deadline := time.Now().Add(staleNoteWait) // one wait for all, so missing notes cost 2 s once
	for _, l := range staleLocations {
		what := "dir " + l.dir
		staleWantRefused(t, ctx, c, "edit", l.dir+"e.txt", filepath.Join(ws, l.dir+"e.txt"), what)
		staleWantRefused(t, ctx, c, "write", l.dir+"w.txt", filepath.Join(ws, l.dir+"w.txt"), what)
		pe := filepath.Join(ws, l.dir+"e.txt")
		if _, ok := waitStale(c, max(time.Until(deadline), 100*time.Millisecond), pe); l.watched && !ok {
			t.Errorf("%q: no workspace/externalChange {readStale: true} for a same-size rewrite with the mtime restored (%s); got %+v", l.dir, pe, extChanges(c, pe))
		}
	}
}

// A same-size rewrite with the times restored, soon after the read, after
// the read is no longer recent, and of a file an hour old.
func TestStaleRewriteTimesRestored(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		backdate, sleep bool
	}{{"soon", false, false}, {"after sleep", false, true}, {"backdated", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.sleep {
				slow(t)
			}
			t.Parallel()
			staleRewriteCase(t, tc.backdate, tc.sleep)
		})
	}
}

// A same-size rewrite with the times restored that reaches the read file
// another way: in a directory made after the session started, through a
// hard link, through a symlink or its target, or in a directory swapped in
// for the one read. The edit (of e) and the write (of w) are refused, the
// disk stays, and e's readStale notification comes; soon after the read and
// for files an hour old.
func TestStaleChangeThroughAnotherPath(t *testing.T) {
	t.Parallel()
	two := func(dir, prefix string) map[string]string {
		return map[string]string{dir + prefix + "e.txt": staleBody("e", "AAAA"), dir + prefix + "w.txt": staleBody("w", "AAAA")}
	}
	links := func(link func(string, string) error, from, to string) func(*testing.T, string) {
		return func(t *testing.T, ws string) {
			for _, n := range []string{"e", "w"} {
				if err := link(filepath.Join(ws, from+n+".txt"), filepath.Join(ws, to+n+".txt")); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	relSymlink := func(target, link string) error { return os.Symlink(filepath.Base(target), link) }
	for _, tc := range []struct {
		name          string
		files         map[string]string // written before the session starts
		before        func(t *testing.T, ws string)
		after         func(t *testing.T, ws string) // after it starts, before the reads
		read, through string                        // prefixes of the names read and written through
		target        string                        // prefix of the files whose bytes and times count
		swap          bool
	}{
		{name: "new directory", files: map[string]string{"keep.txt": "x\n"}, after: func(t *testing.T, ws string) {
			for rel, body := range two("fresh/sub/", "") {
				writeFile(t, filepath.Join(ws, rel), body)
			}
		}, read: "fresh/sub/", through: "fresh/sub/", target: "fresh/sub/"},
		{name: "hard link", files: two("", ""), before: links(os.Link, "", "other-"), read: "", through: "other-", target: ""},
		{name: "symlink read, target changed", files: two("", "real-"), before: links(relSymlink, "real-", "link-"), read: "link-", through: "real-", target: "real-"},
		{name: "target read, symlink changed", files: two("", "real-"), before: links(relSymlink, "real-", "link-"), read: "real-", through: "link-", target: "real-"},
		{name: "parent directory swapped", files: two("d/", ""), read: "d/", through: "d/", target: "d/", swap: true},
	} {
		for _, backdate := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, backdated %v", tc.name, backdate), func(t *testing.T) {
				t.Parallel()
				ws := resolvedWorkspace(t, tc.files)
				if tc.before != nil {
					tc.before(t, ws)
				}
				c, ctx := startIn(t, ws, bypass())
				if tc.after != nil {
					tc.after(t, ws)
				}
				target := func(n string) string { return filepath.Join(ws, tc.target+n+".txt") }
				for _, n := range []string{"e", "w"} {
					if backdate {
						staleBackdate(t, target(n))
					}
					// The read may come before the watcher has seen a new
					// directory; the guard must not depend on it.
					mustRead(t, c, ctx, tc.read+n+".txt")
				}
				if tc.swap {
					if err := os.Rename(filepath.Join(ws, "d"), filepath.Join(ws, "d-away")); err != nil {
						t.Fatal(err)
					}
				}
				for _, n := range []string{"e", "w"} {
					if !tc.swap {
						staleRewrite(t, filepath.Join(ws, tc.through+n+".txt"), target(n), staleBody(n, "BBBB"))
						continue
					}
					at, mt := staleTimes(t, filepath.Join(ws, "d-away", n+".txt")) // new files at the read paths, with the old times
					if writeFile(t, target(n), staleBody(n, "BBBB")); os.Chtimes(target(n), at, mt) != nil {
						t.Fatal("chtimes")
					}
				}
				staleWantRefused(t, ctx, c, "edit", tc.read+"e.txt", target("e"), tc.name)
				staleWantRefused(t, ctx, c, "write", tc.read+"w.txt", target("w"), tc.name)
				if tc.swap && readFile(t, filepath.Join(ws, "d-away/e.txt")) != staleBody("e", "AAAA") {
					t.Errorf("the moved-away file changed")
				}
				if fi, err := os.Lstat(filepath.Join(ws, "link-e.txt")); err == nil && fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("link-e.txt is no longer a symlink")
				}
				if tc.name == "hard link" {
					return // the watcher sees the other name's inode; no promise for the read name
				}
				if _, ok := waitStale(c, staleNoteWait, target("e"), filepath.Join(ws, tc.read+"e.txt")); !ok {
					t.Errorf("no workspace/externalChange {readStale: true} for %se.txt; got %+v", tc.read, extChanges(c, ""))
				}
			})
		}
	}
}

// TestStaleBurst: 200 old files read, all rewritten from outside in a
// tight loop (same sizes, mtimes restored): every edit and write is refused
// and each file gets its own externalChange.
func TestStaleBurst(t *testing.T) {
	t.Parallel()
	for _, restore := range []bool{true, false} {
		t.Run(fmt.Sprint("mtime restored ", restore), func(t *testing.T) { t.Parallel(); staleBurst(t, restore) })
	}
}

func staleBurst(t *testing.T, restore bool) {
	const n = 200
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("b/f%03d.txt", i)] = staleBody(fmt.Sprintf("f%03d", i), "AAAA")
	}
	ws := resolvedWorkspace(t, files)
	for rel := range files {
		staleBackdate(t, filepath.Join(ws, rel))
	}
	c, ctx := startIn(t, ws, bypass())
	var reads []map[string]any
	for i := range n {
		reads = append(reads, batchCall("read", map[string]any{"path": fmt.Sprintf("b/f%03d.txt", i)}, ""))
	}
	for i, r := range callBatch(t, ctx, c, reads...) {
		if r.IsError {
			t.Fatalf("read %d: %s", i, r.Text())
		}
	}
	for i := range n {
		p := filepath.Join(ws, fmt.Sprintf("b/f%03d.txt", i))
		if restore {
			staleRewrite(t, p, p, staleBody(fmt.Sprintf("f%03d", i), "BBBB"))
		} else {
			stalePlain(t, p, staleBody(fmt.Sprintf("f%03d", i), "BBBB"))
		}
	}
	// Even files: edit; odd files: write. One batch, so no time for events.
	var calls []map[string]any
	for i := range n {
		rel := fmt.Sprintf("b/f%03d.txt", i)
		if i%2 == 0 {
			calls = append(calls, batchCall("edit", editCall(rel, staleEditOld, staleEditNew), ""))
		} else {
			calls = append(calls, batchCall("write", writeCall(rel, staleWritten), ""))
		}
	}
	results := callBatch(t, ctx, c, calls...)
	applied := 0
	for i, r := range results {
		rel := fmt.Sprintf("b/f%03d.txt", i)
		want := staleBody(fmt.Sprintf("f%03d", i), "BBBB")
		if got := readFile(t, filepath.Join(ws, rel)); !r.IsError || got != want {
			applied++
			if applied <= 3 {
				t.Errorf("%s: isError=%v %q; disk %q", rel, r.IsError, r.Text(), got)
			}
		}
	}
	if applied > 0 {
		t.Errorf("burst: %d of %d results overwrote an external change", applied, n)
	}
	// Each of the 200 gets a readStale notification.
	missing := func() []string {
		seen := map[string]bool{}
		for _, p := range extChanges(c, "") {
			if p.ReadStale {
				seen[p.URI] = true
			}
		}
		var out []string
		for i := range n {
			if u := fileURI(filepath.Join(ws, fmt.Sprintf("b/f%03d.txt", i))); !seen[u] {
				out = append(out, u)
			}
		}
		return out
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(missing()) > 0 && time.Now().Before(deadline) {
		c.WaitNote(200*time.Millisecond, func(harness.Note) bool { return false })
	}
	if m := missing(); len(m) > 0 {
		t.Errorf("burst: %d of %d files got no workspace/externalChange {readStale: true}, e.g. %v", len(m), n, m[0])
	}
}
