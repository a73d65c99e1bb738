package editguard

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/ops"
)

// countFS counts the syscalls the guard makes.
type countFS struct {
	ops.FS
	stats, reads atomic.Int32
}

func (c *countFS) Stat(p ops.Path) (os.FileInfo, error) {
	c.stats.Add(1)
	return c.FS.Stat(p)
}

func (c *countFS) ReadFile(p ops.Path) ([]byte, error) {
	c.reads.Add(1)
	return c.FS.ReadFile(p)
}

type env struct {
	t   *testing.T
	dir string
	fs  *countFS
	g   *Guard
}

func newEnv(t *testing.T, files map[string]string) *env {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := ops.NewLocal([]ops.FolderSpec{{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	c := &countFS{FS: l}
	return &env{t: t, dir: dir, fs: c, g: New(c)}
}

func (e *env) path(rel string) ops.Path {
	e.t.Helper()
	p, err := e.fs.Resolve(rel)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// read stamps rel as the read tool does.
func (e *env) read(rel string) {
	e.t.Helper()
	p := e.path(rel)
	data, err := e.fs.ReadFile(p)
	if err != nil {
		e.t.Fatal(err)
	}
	e.g.RecordRead(p, data)
}

// write changes rel as the edit tool does (queue, atomic write, Wrote).
func (e *env) write(rel, content string) {
	e.t.Helper()
	p := e.path(rel)
	unlock, err := e.g.Lock(context.Background(), p)
	if err != nil {
		e.t.Fatal(err)
	}
	defer unlock()
	if err := e.fs.WriteFile(p, []byte(content), 0o644, nil); err != nil {
		e.t.Fatal(err)
	}
	e.g.Wrote(p, []byte(content))
}

// external changes rel behind the guard's back (another process).
func (e *env) external(rel, content string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.dir, rel), []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) touch(rel string) {
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(e.dir, rel), later, later)
}

// age sets rel's modification time an hour back, so its fingerprint is
// old enough to vouch for its content (RacyWindow).
func (e *env) age(rel string) {
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(e.dir, rel), old, old)
}

const orig = "one\ntwo\nthree\n"

func TestCheck(t *testing.T) {
	cases := []struct {
		name    string
		act     func(e *env)
		wantErr string // "" = the edit may go ahead
	}{
		{"no stamp", func(e *env) {}, "read a.txt first"},
		{"read, unchanged", func(e *env) { e.read("a.txt") }, ""},
		{"touch only", func(e *env) { e.read("a.txt"); e.touch("a.txt") }, ""},
		{"content changed, lines named", func(e *env) {
			e.read("a.txt")
			e.external("a.txt", "one\nTWO\nthree\n")
		}, "a.txt changed since you read it (modified at "},
		{"our own write is recognised", func(e *env) {
			e.read("a.txt")
			e.write("a.txt", "one\n2\nthree\n")
			e.write("a.txt", "one\n22\nthree\n")
		}, ""},
		{"a change the watcher has not reported yet is refused", func(e *env) {
			e.read("a.txt")
			e.external("a.txt", "changed\n")
		}, "changed since you read it"},
		{"a same-size rewrite in the same clock tick is refused", func(e *env) {
			fi, _ := os.Stat(filepath.Join(e.dir, "a.txt"))
			e.read("a.txt")
			e.external("a.txt", "one\nTWO\nthree\n")
			// Size, inode and mtime as they were: only the content differs.
			os.Chtimes(filepath.Join(e.dir, "a.txt"), fi.ModTime(), fi.ModTime())
		}, "line 2 differs from what you read"},
		{"a same-size rewrite of an old file with its mtime put back is refused up front", func(e *env) {
			e.age("a.txt")
			fi, _ := os.Stat(filepath.Join(e.dir, "a.txt"))
			e.read("a.txt")
			e.external("a.txt", "one\nTWO\nthree\n")
			// cp -p, rsync -t: size, inode and the old mtime as they were;
			// only the status change time tells.
			os.Chtimes(filepath.Join(e.dir, "a.txt"), fi.ModTime(), fi.ModTime())
		}, "line 2 differs from what you read"},
		{"event marks it stale", func(e *env) {
			e.read("a.txt")
			e.external("a.txt", "one\ntwo\nthree\nfour\n")
			e.g.Observe(e.path("a.txt"), KindChanged)
		}, "line 4 is new (added after line 3)"},
		{"deleted since the read", func(e *env) {
			e.read("a.txt")
			os.Remove(filepath.Join(e.dir, "a.txt"))
		}, "no such file"},
		{"bash reason is kept", func(e *env) {
			e.read("a.txt")
			e.external("a.txt", "changed\n")
			e.g.MarkStale(e.path("a.txt"), "changed by a bash command")
			e.g.Observe(e.path("a.txt"), KindChanged)
		}, "changed by a bash command"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, map[string]string{"a.txt": orig})
			tc.act(e)
			_, err := e.g.Check(e.path("a.txt"))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Check: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Check = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestStaleMessageNamesChangedLines(t *testing.T) {
	e := newEnv(t, map[string]string{"a.txt": "1\n2\n3\n4\n5\n"})
	e.read("a.txt")
	e.external("a.txt", "1\n2\nx\ny\nz\nw\n5\n")
	_, err := e.g.Check(e.path("a.txt"))
	if err == nil || !strings.Contains(err.Error(), "lines 3-4 differ from what you read (now lines 3-6)") ||
		!strings.Contains(err.Error(), "Read it again before editing") {
		t.Fatalf("Check = %v", err)
	}
}

func TestObserve(t *testing.T) {
	cases := []struct {
		name              string
		act               func(e *env) string // returns the kind to observe
		report            string
		readStale, ignore bool
	}{
		{"no stamp", func(e *env) string { e.external("a.txt", "x"); return KindChanged }, KindChanged, false, true},
		{"touch", func(e *env) string { e.read("a.txt"); e.touch("a.txt"); return KindChanged }, KindChanged, false, true},
		{"external change", func(e *env) string { e.read("a.txt"); e.external("a.txt", "x"); return KindChanged }, KindChanged, true, false},
		{"our own write", func(e *env) string { e.read("a.txt"); e.write("a.txt", "mine\n"); return KindCreated }, KindChanged, false, true},
		{"same-size rewrite of an old file, mtime put back", func(e *env) string {
			e.age("a.txt")
			fi, _ := os.Stat(filepath.Join(e.dir, "a.txt"))
			e.read("a.txt")
			e.external("a.txt", "one\nTWO\nthree\n")
			os.Chtimes(filepath.Join(e.dir, "a.txt"), fi.ModTime(), fi.ModTime())
			return KindChanged
		}, KindChanged, true, false},
		{"chmod only", func(e *env) string {
			e.age("a.txt")
			e.read("a.txt")
			os.Chmod(filepath.Join(e.dir, "a.txt"), 0o600)
			return KindChanged
		}, KindChanged, false, true},
		{"deleted", func(e *env) string { e.read("a.txt"); os.Remove(filepath.Join(e.dir, "a.txt")); return KindDeleted }, KindDeleted, true, false},
		{"atomic save: renamed over, a create event", func(e *env) string {
			e.read("a.txt")
			tmp := filepath.Join(e.dir, "a.txt.swp")
			os.WriteFile(tmp, []byte("saved\n"), 0o644)
			os.Rename(tmp, filepath.Join(e.dir, "a.txt"))
			return KindCreated
		}, KindChanged, true, false},
		{"delete event for a file already back", func(e *env) string {
			e.read("a.txt")
			os.Remove(filepath.Join(e.dir, "a.txt"))
			e.external("a.txt", "new\n")
			return KindDeleted
		}, KindChanged, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, map[string]string{"a.txt": orig})
			kind := tc.act(e)
			report, stale, ign := e.g.Observe(e.path("a.txt"), kind)
			if report != tc.report || stale != tc.readStale || ign != tc.ignore {
				t.Errorf("Observe = (%s, readStale %v, ignore %v), want (%s, %v, %v)", report, stale, ign, tc.report, tc.readStale, tc.ignore)
			}
		})
	}
}

// A file seen gone and then there again is reported as created, even with
// the content the model read (the editor was told it was deleted): the
// model's read is of a file that was deleted, not edited. The first event
// that finds it back says so, even a late one of the deletion itself
// (inotify sends IN_ATTRIB, then IN_DELETE); the rest are changes.
func TestObserveDeletedThenCreated(t *testing.T) {
	for _, late := range []string{KindCreated, KindDeleted, KindChanged} {
		for _, content := range []string{orig, "other\n"} {
			e := newEnv(t, map[string]string{"a.txt": orig})
			e.read("a.txt")
			os.Remove(filepath.Join(e.dir, "a.txt"))
			if report, stale, ign := e.g.Observe(e.path("a.txt"), KindChanged); report != KindDeleted || !stale || ign {
				t.Fatalf("deleted: Observe = (%s, %v, %v)", report, stale, ign)
			}
			e.external("a.txt", content)
			report, stale, ign := e.g.Observe(e.path("a.txt"), late)
			// Announced deleted, so announced back, the same content or
			// not; stale only when the content differs.
			same := content == orig
			if report != KindCreated || ign || stale == same {
				t.Errorf("recreated (same content %v), %s event: Observe = (%s, readStale %v, ignore %v), want created, readStale %v, ignore false", same, late, report, stale, ign, !same)
			}
			if report, _, _ := e.g.Observe(e.path("a.txt"), KindCreated); report != KindChanged {
				t.Errorf("recreated, %s event, then a create event: %s, want changed", late, report)
			}
		}
	}
}

// A check is one stat; the content is read and hashed only when the
// fingerprint moved or is too recent to vouch for it.
func TestCheckCost(t *testing.T) {
	cases := []struct {
		name         string
		act          func(e *env)
		stats, reads int32
	}{
		{"old file, unchanged", func(e *env) { e.age("a.txt"); e.read("a.txt") }, 1, 0},
		{"recently modified file", func(e *env) { e.read("a.txt") }, 1, 1},
		{"touched", func(e *env) { e.age("a.txt"); e.read("a.txt"); e.touch("a.txt") }, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, map[string]string{"a.txt": orig})
			tc.act(e)
			e.fs.stats.Store(0)
			e.fs.reads.Store(0)
			if _, err := e.g.Check(e.path("a.txt")); err != nil {
				t.Fatal(err)
			}
			if n, r := e.fs.stats.Load(), e.fs.reads.Load(); n != tc.stats || r != tc.reads {
				t.Errorf("Check made %d stats and %d reads, want %d and %d", n, r, tc.stats, tc.reads)
			}
		})
	}
}

func TestEventDuringOurWriteIsIgnored(t *testing.T) {
	e := newEnv(t, map[string]string{"a.txt": orig})
	e.read("a.txt")
	p := e.path("a.txt")
	unlock, err := e.g.Lock(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	e.fs.WriteFile(p, []byte("mine\n"), 0o644, nil)
	if _, stale, ign := e.g.Observe(p, KindCreated); stale || !ign {
		t.Errorf("event of our in-flight write: Observe = (%v, %v), want (false, true)", stale, ign)
	}
	e.g.Wrote(p, []byte("mine\n"))
	unlock()
	if _, err := e.g.Check(p); err != nil {
		t.Fatalf("our own write was taken for an external change: %v", err)
	}
}

func TestRecheckAllAfterLostEvents(t *testing.T) {
	e := newEnv(t, map[string]string{"a.txt": orig, "b.txt": orig})
	e.read("a.txt")
	e.read("b.txt")
	// The event for this change was lost in an overflow.
	e.external("a.txt", "changed\n")
	e.g.RecheckAll()
	if _, err := e.g.Check(e.path("a.txt")); err == nil {
		t.Error("a change whose event was lost passed after RecheckAll")
	}
	if _, err := e.g.Check(e.path("b.txt")); err != nil {
		t.Errorf("an unchanged file was refused after RecheckAll: %v", err)
	}
}

// CheckRead returns the current content with one read, whether or not the
// check itself had to read.
func TestCheckReadReadsOnce(t *testing.T) {
	for _, old := range []bool{true, false} {
		e := newEnv(t, map[string]string{"a.txt": orig})
		if old {
			e.age("a.txt")
		}
		e.read("a.txt")
		e.fs.reads.Store(0)
		got, err := e.g.CheckRead(e.path("a.txt"))
		if err != nil || string(got) != orig {
			t.Fatalf("old=%v: CheckRead = %q, %v", old, got, err)
		}
		if n := e.fs.reads.Load(); n != 1 {
			t.Errorf("old=%v: %d reads, want 1", old, n)
		}
	}
}

// A write refused by ops.ReplaceFile's check reads as a stale edit: what
// changed, that nothing was written, and to read again.
func TestChangedWhileEditing(t *testing.T) {
	e := newEnv(t, map[string]string{"a.txt": orig})
	err := ChangedWhileEditing(e.path("a.txt"))
	var stale *StaleError
	if !errors.As(err, &stale) || !strings.Contains(err.Error(), "a.txt changed since you read it") ||
		!strings.Contains(err.Error(), "nothing was written") || !strings.Contains(err.Error(), "Read it again") {
		t.Fatalf("ChangedWhileEditing = %v", err)
	}
}

// Retain forgets the stamps it rejects: their files need a fresh read.
func TestRetainForgetsStamps(t *testing.T) {
	e := newEnv(t, map[string]string{"keep/a.txt": orig, "drop/b.txt": orig})
	e.read("keep/a.txt")
	e.read("drop/b.txt")
	e.g.Retain(func(p string) bool { return !strings.Contains(p, "/drop/") })
	if _, err := e.g.CheckRead(e.path("keep/a.txt")); err != nil {
		t.Errorf("kept stamp: %v", err)
	}
	if _, err := e.g.CheckRead(e.path("drop/b.txt")); err == nil || !strings.Contains(err.Error(), "read drop/b.txt first") {
		t.Errorf("dropped stamp: %v", err)
	}
}

// TestStampedBelow: the stamped files below a directory, relative to it;
// a sibling whose name only starts the same is not below it.
func TestStampedBelow(t *testing.T) {
	e := newEnv(t, map[string]string{"src/a.go": "a\n", "src/deep/b.go": "b\n", "src2/c.go": "c\n", "top.txt": "t\n"})
	for _, f := range []string{"src/a.go", "src/deep/b.go", "src2/c.go", "top.txt"} {
		e.read(f)
	}
	tests := []struct {
		dir  string
		want []string
	}{
		{"src", []string{"a.go", "deep/b.go"}},
		{"src/deep", []string{"b.go"}},
		{"src2", []string{"c.go"}},
		{"top.txt", nil},
		{"missing", nil},
	}
	for _, tc := range tests {
		if got := e.g.StampedBelow(e.path(tc.dir)); !slices.Equal(got, tc.want) {
			t.Errorf("StampedBelow(%s) = %q, want %q", tc.dir, got, tc.want)
		}
	}
}

// An editor's document leaves out a file's UTF-8 BOM and shows UTF-16
// decoded: DocumentText gives that text, and other bytes as they are.
func TestDocumentText(t *testing.T) {
	for _, tc := range []struct{ name, disk, want string }{
		{"plain", "a\r\nb\n", "a\r\nb\n"},
		{"UTF-8 BOM", "\xef\xbb\xbfa\n", "a\n"},
		{"UTF-16LE", "\xff\xfea\x00\n\x00", "a\n"},
		{"UTF-16BE", "\xfe\xff\x00a\x00\n", "a\n"},
		{"invalid UTF-8 kept", "caf\xe9\n", "caf\xe9\n"},
	} {
		if got := string(DocumentText([]byte(tc.disk))); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// An event that arrives while a call holds the file is judged when the
// file is let go: ignored when it was our write, told when the holder was
// an edit refused for that very change (else nobody would hear of it).
func TestEventWhileHeldIsJudgedAtUnlock(t *testing.T) {
	cases := []struct {
		name      string
		during    func(e *env, p ops.Path)
		wantStale bool
	}{
		{"our write", func(e *env, p ops.Path) {
			e.fs.WriteFile(p, []byte("mine\n"), 0o644, nil)
			e.g.Wrote(p, []byte("mine\n"))
		}, false},
		{"an external change the held edit refused", func(e *env, p ops.Path) {
			e.external("a.txt", "theirs\n")
			if _, err := e.g.Check(p); err == nil {
				t.Fatal("Check let an edit over the external change")
			}
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, map[string]string{"a.txt": orig})
			type judged struct{ stale, ignore bool }
			var got []judged
			e.g.OnDeferred(func(p ops.Path, kind string) {
				_, stale, ign := e.g.Observe(p, kind)
				got = append(got, judged{stale, ign})
			})
			e.read("a.txt")
			p := e.path("a.txt")
			unlock, err := e.g.Lock(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			tc.during(e, p)
			if _, stale, ign := e.g.Observe(p, KindChanged); stale || !ign {
				t.Errorf("event while held: Observe = (%v, %v), want it put off", stale, ign)
			}
			if len(got) != 0 {
				t.Fatalf("the put-off event was judged before the unlock")
			}
			unlock()
			if len(got) != 1 {
				t.Fatalf("OnDeferred called %d times at unlock, want once", len(got))
			}
			if got[0].stale != tc.wantStale || got[0].ignore == tc.wantStale {
				t.Errorf("judged at unlock: readStale %v, ignore %v; want readStale %v", got[0].stale, got[0].ignore, tc.wantStale)
			}
		})
	}
}

// The stale message names the lines as the model would find them: changed,
// added or removed, first to last.
func TestChangedLines(t *testing.T) {
	for _, c := range []struct{ name, old, new, want string }{
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", "line 2 differs from what you read"},
		{"lines changed, more now", "1\n2\n3\n4\n5\n", "1\n2\nx\ny\nz\nw\n5\n", "lines 3-4 differ from what you read (now lines 3-6)"},
		{"a line appended", "a\nb\n", "a\nb\nc\n", "line 3 is new (added after line 2)"},
		{"lines inserted in the middle", "a\nb\n", "a\nx\ny\nb\n", "lines 2-3 are new (added after line 1)"},
		{"a line inserted at the start", "a\nb\n", "z\na\nb\n", "line 1 is new (added at the start)"},
		{"a line removed", "a\nb\nc\n", "a\nc\n", "line 2 was removed"},
		{"lines removed at the end", "a\nb\nc\n", "a\n", "lines 2-3 were removed"},
		{"the final newline dropped", "a\nb\n", "a\nb", "line 3 was removed"},
	} {
		if got := changedLines([]byte(c.old), []byte(c.new)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
