package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// The workspace watcher and the edit guard under structural churn
// (docs/tools.md edit guard; docs/protocol.md workspace/externalChange).

// watchTreeChange is one workspace/externalChange notification.
type watchTreeChange struct {
	URI, Kind string
	ReadStale bool `json:"readStale"`
}

// watchTreeChanges lists every workspace/externalChange received so far.
func watchTreeChanges(c *harness.Client) []watchTreeChange {
	var out []watchTreeChange
	for _, n := range c.Notes("workspace/externalChange") {
		var ch watchTreeChange
		json.Unmarshal(n.Params, &ch)
		out = append(out, ch)
	}
	return out
}

// watchTreeWait waits (10 s: a loaded 2-core machine; the docs promise
// ~1 ms) for an externalChange of one of paths, of kind ("": any) and
// readStale when stale.
func watchTreeWait(c *harness.Client, kind string, stale bool, paths ...string) bool {
	return waitUntil(10*time.Second, func() bool {
		return slices.ContainsFunc(watchTreeChanges(c), func(ch watchTreeChange) bool {
			return (kind == "" || ch.Kind == kind) && (!stale || ch.ReadStale) && slices.ContainsFunc(paths, func(p string) bool { return ch.URI == fileURI(p) })
		})
	})
}

// watchTreeStart runs agentls in bypass mode on ws.
func watchTreeStart(t *testing.T, ws string) (*harness.Client, context.Context) {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: ws})
	ctx := testCtx(t, 60*time.Second)
	c.Initialize(ctx, bypass())
	return c, ctx
}

func watchTreeRead(t *testing.T, ctx context.Context, c *harness.Client, path string) {
	t.Helper()
	if r := c.CallTool(ctx, "read", map[string]any{"path": path}); r.IsError {
		t.Fatalf("read %s: %s", path, r.Text())
	}
}

// watchTreeWantStale checks that an edit of path is refused as stale with the
// documented advice (the message may name a link's path or the real one),
// and that the file still holds want.
func watchTreeWantStale(t *testing.T, ctx context.Context, c *harness.Client, ws, path, old, want string) {
	t.Helper()
	wantResult(t, "edit of "+path+" changed outside agentls", c.CallTool(ctx, "edit", editCall(path, old, old+"-edited")), true, "changed since you read it", "read it again")
	if got := readFile(t, filepath.Join(ws, path)); got != want {
		t.Errorf("%s after a refused edit = %q, want the external content %q", path, got, want)
	}
}

func watchTreeWantEdit(t *testing.T, ctx context.Context, c *harness.Client, path, old, new string) {
	t.Helper()
	wantResult(t, "edit of "+path, c.CallTool(ctx, "edit", editCall(path, old, new)), false, "Edited "+path)
}

// mv src lib with read files inside: the old path fails clearly, the new
// path needs a read, and the files read are announced deleted.
func TestWatchRenameDir(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{"src/a.go": "package a\n\nvar A = 1\n", "src/deep/b.go": "package deep\n"})
	c, ctx := watchTreeStart(t, ws)
	watchTreeRead(t, ctx, c, "src/a.go")
	watchTreeRead(t, ctx, c, "src/deep/b.go")
	if err := os.Rename(filepath.Join(ws, "src"), filepath.Join(ws, "lib")); err != nil {
		t.Fatal(err)
	}
	r := c.CallTool(ctx, "edit", editCall("src/a.go", "A = 1", "A = 2"))
	wantResult(t, "edit of the old path", r, true, "src/a.go does not exist")
	r = c.CallTool(ctx, "edit", editCall("lib/a.go", "A = 1", "A = 2"))
	wantResult(t, "edit of the new path before a read", r, true, "read lib/a.go first")
	if got := readFile(t, filepath.Join(ws, "lib/a.go")); got != "package a\n\nvar A = 1\n" {
		t.Errorf("lib/a.go changed by refused edits: %q", got)
	}
	for _, p := range []string{"src/a.go", "src/deep/b.go"} {
		if !watchTreeWait(c, "deleted", false, filepath.Join(ws, p)) {
			t.Errorf("read file %s moved away by mv src lib: no workspace/externalChange kind deleted; got %+v", p, watchTreeChanges(c))
		}
	}
	// The new name is watched, subdirectories included.
	for _, p := range []string{"lib/a.go", "lib/deep/b.go"} {
		watchTreeRead(t, ctx, c, p)
		writeFile(t, filepath.Join(ws, p), "package changed\n")
		if !watchTreeWait(c, "changed", true, filepath.Join(ws, p)) {
			t.Errorf("change to %s in the renamed directory: no externalChange {changed, readStale}; got %+v", p, watchTreeChanges(c))
		}
		watchTreeWantStale(t, ctx, c, ws, p, "package changed", "package changed\n")
	}
	for _, ch := range watchTreeChanges(c) {
		if strings.Contains(ch.URI, "/src/") && ch.Kind != "deleted" {
			t.Errorf("a change in lib/ reported under the old name: %+v", ch)
		}
	}
}

// 5000 files changing under .gitignore'd node_modules/ and build/: no
// notifications for them, reads answer within 1 s during the churn, and
// the guard still catches a changed ignored file the model read.
func TestWatchIgnoredChurn(t *testing.T) {
	slow(t)
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	ws := newWorkspace(t, map[string]string{
		".gitignore":                "node_modules/\nbuild/\n",
		"node_modules/pkg/index.js": "module.exports = 1;\n",
		"build/out.js":              "built 1\n",
		"src/main.go":               "package main\n",
	})
	c, ctx := watchTreeStart(t, ws)
	for _, p := range []string{"node_modules/pkg/index.js", "build/out.js", "src/main.go"} {
		watchTreeRead(t, ctx, c, p)
	}
	done := make(chan error, 1)
	go func() {
		var err error
		for i := 0; i < 2500 && err == nil; i++ {
			for _, top := range []string{"node_modules", "build"} {
				dir := filepath.Join(ws, top, fmt.Sprintf("p%02d", i%50))
				err = errors.Join(err, os.MkdirAll(dir, 0o755), os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.js", i)), []byte("x\n"), 0o644))
			}
			if i%500 == 0 {
				err = errors.Join(err, os.WriteFile(filepath.Join(ws, "node_modules/pkg/index.js"), []byte(fmt.Sprintf("module.exports = %d;\n", i+2)), 0o644),
					os.WriteFile(filepath.Join(ws, "build/out.js"), []byte(fmt.Sprintf("built %d\n", i+2)), 0o644))
			}
		}
		done <- err
	}()
	var slowest time.Duration
	reads := 0
	for churning := true; churning; reads++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			churning = false
		default:
			t0 := time.Now()
			watchTreeRead(t, ctx, c, "src/main.go")
			slowest = max(slowest, time.Since(t0))
		}
	}
	t.Logf("%d reads during the churn, slowest %v", reads, slowest)
	if slowest > time.Second {
		t.Errorf("a read during the churn took %v, want < 1 s", slowest)
	}
	main := filepath.Join(ws, "src/main.go")
	writeFile(t, main, "package main // changed\n")
	if !watchTreeWait(c, "", true, main) {
		t.Fatalf("watcher dead after the churn: no externalChange for src/main.go; got %+v", watchTreeChanges(c))
	}
	for _, ch := range watchTreeChanges(c) {
		if strings.Contains(ch.URI, "/node_modules/") || strings.Contains(ch.URI, "/build/") {
			t.Errorf("externalChange for an ignored path: %+v", ch)
		}
	}
	watchTreeWantStale(t, ctx, c, ws, "node_modules/pkg/index.js", "module.exports", "module.exports = 2002;\n")
	watchTreeWantStale(t, ctx, c, ws, "build/out.js", "built", "built 2002\n")
}

// A symlinked directory inside the workspace: a change through either name
// makes the stamp stale (stamps are per real path), a read under one name
// allows an edit under the other, and an edit through the link replaces
// the target's file, not the link.
func TestWatchSymlinkedDir(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{"real/f.txt": "eff\n", "real/g.txt": "gee\n", "real/h.txt": "aitch\n"})
	symlink(t, "real", filepath.Join(ws, "link"))
	c, ctx := watchTreeStart(t, ws)
	names := func(name string) []string {
		return []string{filepath.Join(ws, "real", name), filepath.Join(ws, "link", name)}
	}

	watchTreeRead(t, ctx, c, "link/f.txt")
	writeFile(t, filepath.Join(ws, "real/f.txt"), "eff changed\n")
	if !watchTreeWait(c, "", true, names("f.txt")...) {
		t.Errorf("read link/f.txt, changed real/f.txt: no externalChange with readStale; got %+v", watchTreeChanges(c))
	}
	watchTreeWantStale(t, ctx, c, ws, "link/f.txt", "eff", "eff changed\n")

	watchTreeRead(t, ctx, c, "real/g.txt")
	writeFile(t, filepath.Join(ws, "link/g.txt"), "gee changed\n")
	if !watchTreeWait(c, "", true, names("g.txt")...) {
		t.Errorf("read real/g.txt, changed link/g.txt: no externalChange with readStale; got %+v", watchTreeChanges(c))
	}
	watchTreeWantStale(t, ctx, c, ws, "real/g.txt", "gee", "gee changed\n")

	watchTreeRead(t, ctx, c, "real/h.txt")
	r := c.CallTool(ctx, "edit", editCall("link/h.txt", "aitch", "aitch 2"))
	wantResult(t, "edit of link/h.txt after reading real/h.txt", r, false, "Edited ")
	watchTreeWantEdit(t, ctx, c, "real/h.txt", "aitch 2", "aitch 3")
	if fi, err := os.Lstat(filepath.Join(ws, "link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link is no longer a symlink after an edit through it: %v %v", fi, err)
	}
	if got := readFile(t, filepath.Join(ws, "real/h.txt")); got != "aitch 3\n" {
		t.Errorf("real/h.txt = %q, want %q", got, "aitch 3\n")
	}
}

// watchTreeLimitedBinary is a wrapper that runs agentls in a new user namespace
// whose inotify watch limit is limit (ucounts are hierarchical, so the
// child cannot exceed it; the host's limit is untouched).
func watchTreeLimitedBinary(t *testing.T, limit int) string {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare not installed")
	}
	probe := exec.Command("unshare", "--user", "--map-root-user", "sh", "-c", "echo 5 > /proc/sys/user/max_inotify_watches")
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("cannot lower the inotify watch limit in a user namespace: %v %s", err, out)
	}
	bin := harness.Binary(t)
	wrapper := filepath.Join(t.TempDir(), "agentls-limited")
	script := fmt.Sprintf("#!/bin/sh\nexec unshare --user --map-root-user sh -c 'echo %d > /proc/sys/user/max_inotify_watches && exec \"$0\" \"$@\"' %q \"$@\"\n", limit, bin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper
}

func watchTreeMentionsLimit(logs []string) bool {
	for _, l := range logs {
		l = strings.ToLower(l)
		if strings.Contains(l, "degraded") || strings.Contains(l, "watch limit") || strings.Contains(l, "max_user_watches") {
			return true
		}
	}
	return false
}

// The watch limit reached after start, by directories created later: a log
// message reports the degradation, and files in unwatched directories are
// still guarded.
func TestWatchLimitReachedLater(t *testing.T) {
	wrapper := watchTreeLimitedBinary(t, 30)
	t.Setenv("AGENTLS_BIN", wrapper)
	ws := newWorkspace(t, map[string]string{"a/f.txt": "a\n"})
	c, ctx := startOpts(t, harness.Options{Root: ws, Process: true}, bypass())
	if w := c.WatcherMode; w != "inotify" {
		t.Fatalf("watcher = %q at start with room for 30 watches, want inotify", w)
	}
	for i := 0; i < 60; i++ {
		p := filepath.Join(ws, fmt.Sprintf("late/n%02d", i))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(p, "f.txt"), "late\n")
	}
	var logs []string
	waitUntil(10*time.Second, func() bool { logs = logMessages(c, 0); return watchTreeMentionsLimit(logs) })
	if !watchTreeMentionsLimit(logs) {
		t.Errorf("60 new directories past a 30-watch limit: no window/logMessage about it; logs: %q", logs)
	}
	watchTreeRead(t, ctx, c, "late/n59/f.txt")
	writeFile(t, filepath.Join(ws, "late/n59/f.txt"), "late changed\n")
	watchTreeWantStale(t, ctx, c, ws, "late/n59/f.txt", "late", "late changed\n")
}

// The tools' own writes, one after another and in one tools/callBatch, are
// not external changes and keep the stamp fresh: the chain needs no re-read.
func TestWatchOwnWritesAreNotExternal(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{"own.txt": "one\n", "sentinel.txt": "s\n"})
	c, ctx := watchTreeStart(t, ws)
	watchTreeRead(t, ctx, c, "own.txt")
	watchTreeRead(t, ctx, c, "sentinel.txt")
	watchTreeWantEdit(t, ctx, c, "own.txt", "one", "ONE")
	wantResult(t, "write after an own edit", c.CallTool(ctx, "write", map[string]any{"path": "own.txt", "content": "written\n"}), false)
	var batch struct {
		Results []harness.Result `json:"results"`
	}
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": []map[string]any{
		{"name": "edit", "arguments": editCall("own.txt", "written", "r1")},
		{"name": "edit", "arguments": editCall("own.txt", "r1", "r2")},
		{"name": "write", "arguments": map[string]any{"path": "own.txt", "content": "final\n"}},
	}}, &batch); err != nil {
		t.Fatal(err)
	}
	for i, res := range batch.Results {
		wantResult(t, fmt.Sprintf("batch call %d", i), res, false)
	}
	sentinel := filepath.Join(ws, "sentinel.txt")
	writeFile(t, sentinel, "s changed\n")
	if !watchTreeWait(c, "", false, sentinel) {
		t.Fatal("no externalChange for the sentinel")
	}
	for _, ch := range watchTreeChanges(c) {
		if ch.URI != fileURI(sentinel) {
			t.Errorf("agentls's own write reported as external: %+v", ch)
		}
	}
	watchTreeWantEdit(t, ctx, c, "own.txt", "final", "after")
}
