package e2e

// Changes made outside agentls to files the model has read: the
// workspace/externalChange notifications the watcher sends
// (docs/protocol.md) and the edit guard's refusal of an edit or write based
// on a stale read (docs/tools.md), which does not rest on the watcher.
// The hard cases of same-size rewrites are in staleness_test.go; own writes,
// ignored and renamed directories in watch_tree_changes_test.go.

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// extStep is one change made from outside and the notification kind it
// must cause ("": not waited for).
type extStep struct {
	kind string
	do   func(t *testing.T, p string)
}

// A change after the read is announced and refuses the edit and the write
// with a message naming it and asking for a re-read, the external content
// kept; after a re-read both go through. A change that leaves the content
// as read (touch, chmod, a same-content save or re-create) is let through.
func TestEditGuardExternalChanges(t *testing.T) {
	before := numberedLines(30, func(i int) string { return fmt.Sprintf("line %d", i) })
	changed := strings.Replace(before, "line 20\n", "line 20 changed elsewhere\n", 1)
	stamp := time.Date(2024, 3, 5, 7, 8, 9, 0, time.Local)
	write := func(body string) func(*testing.T, string) {
		return func(t *testing.T, p string) { writeFile(t, p, body) }
	}
	saveAtomically := func(body string) func(*testing.T, string) { // as vim and VS Code save
		return func(t *testing.T, p string) {
			tmp := filepath.Join(filepath.Dir(p), ".editor-save.tmp")
			writeFile(t, tmp, body)
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	remove := func(t *testing.T, p string) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	chtimes := func(tm time.Time) func(*testing.T, string) {
		return func(t *testing.T, p string) {
			if err := os.Chtimes(p, tm, tm); err != nil {
				t.Fatal(err)
			}
		}
	}
	chmod := func(m os.FileMode) func(*testing.T, string) {
		return func(t *testing.T, p string) {
			if err := os.Chmod(p, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	stale := []string{"changed since you read it", "ead it again"}
	cases := []struct {
		name    string
		steps   []extStep
		quiet   bool     // no readStale notification: the content is as read
		refused []string // the edit's refusal; nil: it goes through
		lacks   []string
	}{
		{name: "in-place write names its time and line", steps: []extStep{{"changed", write(changed)}, {"", chtimes(stamp)}},
			refused: append(stale, "07:08:09", "line 20 differs"), lacks: []string{"lines 1-", "lines 19"}},
		{name: "two lines rewritten as one", steps: []extStep{{"changed", write(strings.Replace(before, "line 20\nline 21\n", "lines 20 and 21 joined\n", 1))}},
			refused: append(stale, "lines 20-21 differ from what you read (now line 20)")},
		{name: "same size in place, same mtime", steps: []extStep{{"", func(t *testing.T, p string) {
			st, _ := os.Stat(p)
			write(strings.Replace(before, "line 20\n", "LINE 20\n", 1))(t, p)
			chtimes(st.ModTime())(t, p)
		}}}, refused: stale},
		{name: "atomic save of new content", steps: []extStep{{"changed", saveAtomically(changed)}}, refused: stale},
		{name: "atomic save of the same content", steps: []extStep{{"", saveAtomically(before)}}, quiet: true},
		{name: "same bytes rewritten in place", steps: []extStep{{"", write(before)}}, quiet: true},
		{name: "touch", steps: []extStep{{"", chtimes(time.Now().Add(time.Hour))}}, quiet: true},
		{name: "delete and re-create the same", steps: []extStep{{"deleted", remove}, {"", write(before)}}},
		{name: "delete and re-create different", steps: []extStep{{"deleted", remove}, {"created", write(before + "line 31\n")}}, refused: stale},
		{name: "chmod executable", steps: []extStep{{"", chmod(0o755)}}},
		{name: "chmod read-only", steps: []extStep{{"", chmod(0o444)}}, refused: []string{"chmod u+w"}},
		{name: "deleted", steps: []extStep{{"deleted", remove}}, refused: []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, ws, ctx := start(t, map[string]string{"src/a.txt": before, "barrier.txt": "b\n"})
			p := filepath.Join(ws, "src/a.txt")
			mustRead(t, c, ctx, "src/a.txt")
			mustRead(t, c, ctx, "barrier.txt")
			var kinds []string // the kinds waited for; all of them when exact
			exact := true
			for _, s := range tc.steps {
				mark := time.Now()
				s.do(t, p)
				if s.kind == "" {
					exact = false
					continue
				}
				kinds = append(kinds, s.kind)
				if e, _, ok := waitExt(c, noteWait, mark, extOf(p, s.kind)); !ok {
					t.Fatalf("no workspace/externalChange {kind: %s} within %v; got %+v", s.kind, noteWait, extChanges(c, ""))
				} else if !e.ReadStale {
					t.Errorf("externalChange %s: readStale false, want true", s.kind)
				}
			}
			barrier(t, c, ws)
			if exact {
				// Kinds in order, repeats of one kind as one; a "changed" may
				// follow "created" (os.WriteFile creates the file empty, then
				// writes it: two states).
				var got []string
				for _, e := range extChanges(c, p) {
					if len(got) == 0 || got[len(got)-1] != e.Kind {
						got = append(got, e.Kind)
					}
				}
				if n := len(got); n > 1 && got[n-1] == "changed" && got[n-2] == "created" {
					got = got[:n-1]
				}
				if !reflect.DeepEqual(got, kinds) {
					t.Errorf("externalChange kinds %q, want %q (all: %+v)", got, kinds, extChanges(c, p))
				}
			}
			for _, e := range extChanges(c, p) {
				if tc.quiet && e.ReadStale {
					t.Errorf("externalChange %+v after a change that kept the content, want none with readStale", e)
				}
			}
			after, err := os.ReadFile(p)
			st0, _ := os.Stat(p)
			r := c.CallTool(ctx, "edit", editCall("src/a.txt", "line 1\n", "LINE 1\n"))
			if tc.refused == nil {
				wantResult(t, "edit", r, false)
				if got, want := readFile(t, p), strings.Replace(string(after), "line 1\n", "LINE 1\n", 1); got != want {
					t.Errorf("file %q, want %q", got, want)
				}
				if st, _ := os.Stat(p); st.Mode() != st0.Mode() {
					t.Errorf("mode %v after the edit, was %v", st.Mode(), st0.Mode())
				}
				wantResult(t, "write after the model's own edit", c.CallTool(ctx, "write", writeCall("src/a.txt", "model\n")), false)
				return
			}
			wantRefused(t, "edit", r, tc.refused...)
			wantLacks(t, "edit", r.Text(), tc.lacks...)
			if err != nil {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("refused edit re-created the deleted file")
				}
				return
			}
			if slices.Contains(tc.refused, stale[0]) {
				wantRefused(t, "write", c.CallTool(ctx, "write", writeCall("src/a.txt", "model\n")), stale[0])
			}
			if got := readFile(t, p); got != string(after) {
				t.Errorf("external change lost: file %q, want %q", got, after)
			}
			if st, _ := os.Stat(p); st.Mode() != st0.Mode() {
				t.Errorf("mode changed %v → %v", st0.Mode(), st.Mode())
			}
			wantNames(t, "after refused calls", filepath.Dir(p), "a.txt")
			if st0.Mode()&0o200 == 0 {
				return
			}
			mustRead(t, c, ctx, "src/a.txt")
			wantResult(t, "edit after a re-read", c.CallTool(ctx, "edit", editCall("src/a.txt", "line 1\n", "LINE 1\n")), false)
			wantResult(t, "write after it", c.CallTool(ctx, "write", writeCall("src/a.txt", "model\n")), false)
			if got := readFile(t, p); got != "model\n" {
				t.Errorf("disk after the write: %q", got)
			}
		})
	}
}

// A burst of writes to one read file gives a bounded number of
// notifications, each changed/readStale, and the guard refuses the next
// write. The docs promise no coalescing, so the bound is two per
// os.WriteFile (its truncate and its write are two observable states).
func TestExternalChangeBurstBounded(t *testing.T) {
	for _, writes := range []int{1, 100} {
		t.Run(fmt.Sprintf("%d writes", writes), func(t *testing.T) {
			c, ws, ctx := start(t, map[string]string{"barrier.txt": "barrier\n", "hot.txt": "hot\n"})
			p := filepath.Join(ws, "hot.txt")
			mustRead(t, c, ctx, "barrier.txt")
			mustRead(t, c, ctx, "hot.txt")
			mark := time.Now()
			for i := range writes {
				if err := os.WriteFile(p, []byte(fmt.Sprintf("burst %d\n", i)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, _, ok := waitExt(c, noteWait, mark, extOf(p, "changed")); !ok {
				t.Fatalf("no workspace/externalChange {kind: changed} for hot.txt")
			}
			barrier(t, c, ws)
			got := extChanges(c, p)
			for _, e := range got {
				if e.Kind != "changed" || !e.ReadStale {
					t.Errorf("notification %+v, want kind changed, readStale true", e)
				}
			}
			t.Logf("%d os.WriteFile calls → %d workspace/externalChange notifications", writes, len(got))
			if len(got) > 2*writes {
				t.Errorf("%d writes produced %d workspace/externalChange notifications for the file; want at most two per write", writes, len(got))
			}
			wantRefused(t, "write after the changes", c.CallTool(ctx, "write", writeCall("hot.txt", "model\n")), "changed since you read it")
			if got := readFile(t, p); got != fmt.Sprintf("burst %d\n", writes-1) {
				t.Errorf("external result lost: %q", got)
			}
		})
	}
}

// Changes to a read file are announced within 50 ms (median; the slowest
// of 5 is logged, docs/benchmarks.md), as changed with readStale.
func TestExternalChangeIsAnnounced(t *testing.T) {
	c, ws, ctx := start(t, map[string]string{"w.txt": "v0\n"})
	p := filepath.Join(ws, "w.txt")
	mustRead(t, c, ctx, "w.txt")
	var lat []time.Duration
	for i := 1; i <= 5; i++ {
		mark := time.Now()
		writeFile(t, p, fmt.Sprintf("v%d\n", i))
		e, at, ok := waitExt(c, 3*time.Second, mark, extOf(p, ""))
		if !ok {
			t.Fatalf("change %d: no workspace/externalChange", i)
		}
		if e.Kind != "changed" || !e.ReadStale {
			t.Errorf("change %d: %+v, want kind changed, readStale true", i, e)
		}
		lat = append(lat, at.Sub(mark))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("externalChange latencies: %v; slowest %v", lat, lat[len(lat)-1])
	if lat[len(lat)/2] > 50*time.Millisecond {
		t.Errorf("median latency %v > 50 ms", lat[len(lat)/2])
	}
}

// The watcher follows the directories the model's write creates: an outside
// change to the file made there is announced, and the next write refused.
// (Made outside: the "new directory" row of TestStaleChangeThroughAnotherPath;
// renamed: TestWatchRenameDir.)
func TestExternalChangeInDirectoriesTheModelMade(t *testing.T) {
	c, ws, ctx := start(t, nil)
	wantResult(t, "create", c.CallTool(ctx, "write", writeCall("m/n/o/made.txt", "made\n")), false)
	p := filepath.Join(ws, "m/n/o/made.txt")
	mark := time.Now()
	writeFile(t, p, "changed by someone else\n")
	if _, _, ok := waitExt(c, noteWait, mark, extOf(p, "changed")); !ok {
		t.Fatalf("no workspace/externalChange {kind: changed} for m/n/o/made.txt")
	}
	wantRefused(t, "stale", c.CallTool(ctx, "write", writeCall("m/n/o/made.txt", "x\n")), "changed since you read it")
}

// 20,000 creates in one burst overflow the kernel queue (16,384): the
// change to a read file in the middle of it is not missed, the edit is
// refused as stale and the watcher still works after the rescan.
func TestExternalChangeSurvivesWatcherOverflow(t *testing.T) {
	slow(t)
	c, ws, ctx := start(t, map[string]string{"x.txt": "x0\n", "y.txt": "y0\n"})
	mustRead(t, c, ctx, "x.txt")
	mustRead(t, c, ctx, "y.txt")
	mark := time.Now()
	dir := filepath.Join(ws, "flood")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 20000 {
		if i == 10000 {
			writeFile(t, filepath.Join(ws, "x.txt"), "x1 external\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("created 20,000 files in %v", time.Since(mark))
	if _, _, ok := waitExt(c, 10*time.Second, mark, extOf(filepath.Join(ws, "x.txt"), "")); !ok {
		t.Error("externalChange for x.txt lost in the overflow")
	}
	wantRefused(t, "stale edit after overflow", c.CallTool(ctx, "edit", editCall("x.txt", "x1", "X")), "ead it again")
	mark = time.Now()
	writeFile(t, filepath.Join(ws, "y.txt"), "y1\n")
	if _, _, ok := waitExt(c, 5*time.Second, mark, extOf(filepath.Join(ws, "y.txt"), "")); !ok {
		t.Error("no externalChange after the overflow rescan")
	}
}

// In a user namespace whose inotify watch limit is 1 adding watches fails
// with ENOSPC: the watcher reports degraded (agentls/watcherReady and a
// window/logMessage) and the guard still refuses a stale edit.
func TestExternalChangeGuardWithDegradedWatcher(t *testing.T) {
	wrapper := watchTreeLimitedBinary(t, 1) // watch_tree_changes_test.go
	t.Setenv("AGENTLS_BIN", wrapper)
	files := map[string]string{"a.txt": "one\n"}
	for i := range 5 {
		files[fmt.Sprintf("d%d/e/f.txt", i)] = "x\n"
	}
	ws := newWorkspace(t, files)
	c := harness.Start(t, harness.Options{Root: ws, Process: true})
	ctx := testCtx(t, sessionTimeout)
	res := c.Initialize(ctx, bypass())
	caps, _ := res["capabilities"].(map[string]any)
	exp, _ := caps["experimental"].(map[string]any)
	ag, _ := exp["agentls"].(map[string]any)
	checkWatcherStart(t, ag, c.WatcherMode)
	if c.WatcherMode != "degraded" {
		t.Errorf("agentls/watcherReady watcher = %q, want degraded", c.WatcherMode)
	}
	if _, ok := c.WaitNote(3*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(strings.ToLower(string(n.Params)), "degraded")
	}); !ok {
		t.Error("no window/logMessage reporting the degraded watcher")
	}
	mustRead(t, c, ctx, "a.txt")
	writeFile(t, filepath.Join(ws, "a.txt"), "two external\n")
	wantRefused(t, "stale edit in degraded mode", c.CallTool(ctx, "edit", editCall("a.txt", "two", "three")), "ead it again")
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "two external\n" {
		t.Errorf("file = %q", got)
	}
}

// workspace/externalChange is for files the model read: its own writes,
// edits and creates draw none, nor do changes in ignored directories (a
// read file there is still guarded: the edit is refused as stale), and a
// file never read is never readStale.
func TestExternalChangeOnlyForReadFiles(t *testing.T) {
	c, ws, ctx := start(t, map[string]string{
		"barrier.txt":                "barrier\n",
		"unread.txt":                 "never read\n",
		"own.txt":                    "own\n",
		".gitignore":                 "node_modules/\n",
		"node_modules/pkg/index.js":  "module.exports = 1\n",
		"node_modules/pkg/unread.js": "x\n",
	})
	for _, rel := range []string{"barrier.txt", "own.txt", "node_modules/pkg/index.js"} {
		mustRead(t, c, ctx, rel)
	}
	wantResult(t, "own write", c.CallTool(ctx, "write", writeCall("own.txt", "own 2\n")), false)
	wantResult(t, "own edit", c.CallTool(ctx, "edit", editCall("own.txt", "own 2", "own 3")), false)
	wantResult(t, "own create", c.CallTool(ctx, "write", writeCall("made/by/model.txt", "new\n")), false)
	writeFile(t, filepath.Join(ws, "unread.txt"), "changed, never read\n")
	writeFile(t, filepath.Join(ws, "node_modules/pkg/index.js"), "module.exports = 2 // changed\n")
	writeFile(t, filepath.Join(ws, "node_modules/pkg/unread.js"), "y\n")
	barrier(t, c, ws)
	for _, rel := range []string{"own.txt", "made/by/model.txt", "node_modules/pkg/index.js", "node_modules/pkg/unread.js"} {
		if got := extChanges(c, filepath.Join(ws, rel)); len(got) != 0 {
			t.Errorf("%s: unexpected workspace/externalChange %+v", rel, got)
		}
	}
	for _, e := range extChanges(c, filepath.Join(ws, "unread.txt")) {
		if e.ReadStale {
			t.Errorf("unread.txt (never read): externalChange with readStale true: %+v", e)
		}
	}
	wantRefused(t, "edit in node_modules after an unwatched change",
		c.CallTool(ctx, "edit", editCall("node_modules/pkg/index.js", "module.exports", "exports")), "changed since you read it")
	wantResult(t, "edit after own writes", c.CallTool(ctx, "edit", editCall("own.txt", "own 3", "own 4")), false)
}
