package e2e

// Contract tests: the awkward files a real workspace holds
// (special files, odd names, odd contents, files changing under a call),
// against every file tool and the watcher. Written from docs/tools.md and
// docs/protocol.md only. What one `agentls call` can show is a script under
// cmd/agentls/testdata/script; left here: files made unreadable (an
// unprivileged agentls) and the watcher.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// specialCallTimeout catches hangs: every call must return well within it.
const specialCallTimeout = 10 * time.Second

// specialStart starts agentls on ws in bypass mode (nothing asks).
func specialStart(t *testing.T, ws string, env ...string) *harness.Client {
	t.Helper()
	c, _ := startIn(t, ws, bypass(), env...)
	return c
}

// specialStartNoDAC starts agentls as root without CAP_DAC_OVERRIDE and
// CAP_DAC_READ_SEARCH, so file modes bind it as they bind a normal user.
// Not parallel-safe (it sets AGENTLS_BIN for this test).
func specialStartNoDAC(t *testing.T, ws string) *harness.Client {
	t.Helper()
	if os.Geteuid() != 0 {
		return specialStart(t, ws) // modes already bind a normal user
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("running as root without setpriv: cannot make file modes bind agentls")
	}
	real := harness.Binary(t)
	wrapper := filepath.Join(t.TempDir(), "agentls-nodac")
	script := "#!/bin/sh\nexec " + setpriv + " --bounding-set -dac_override,-dac_read_search " + real + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTLS_BIN", wrapper)
	c, _ := startOpts(t, harness.Options{Root: ws, Process: true}, bypass())
	return c
}

// specialCall runs one tool call and fails the test when it does not return
// within specialCallTimeout (a hang) or fails at the protocol level.
func specialCall(t *testing.T, c *harness.Client, name string, args map[string]any) harness.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), specialCallTimeout)
	defer cancel()
	start := time.Now()
	r, err := c.TryCallTool(ctx, name, args)
	if err != nil {
		t.Fatalf("%s %v: no result after %v (hang?): %v", name, args, time.Since(start).Round(time.Millisecond), err)
	}
	return r
}

// specialBytesEqual compares the file's bytes with want.
func specialBytesEqual(t *testing.T, what, p string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: bytes on disk\n got %q\nwant %q", what, specialShort(got), specialShort(want))
	}
}

func specialShort(b []byte) []byte {
	if len(b) > 300 {
		return append(append([]byte{}, b[:300]...), "…"...)
	}
	return b
}

func specialMkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

func specialLmode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatalf("lstat %s: %v", p, err)
	}
	return fi.Mode()
}

// TestSpecialUnreadable: mode 000 files and directories give a clear
// permission error or are skipped; nothing is written; the rest is listed.
func TestSpecialUnreadable(t *testing.T) {
	ws := t.TempDir()
	writeBytes(t, filepath.Join(ws, "ok.txt"), []byte("needle ok\n"))
	writeBytes(t, filepath.Join(ws, "locked.txt"), []byte("needle locked\n"))
	writeBytes(t, filepath.Join(ws, "later.txt"), []byte("needle later\n"))
	writeBytes(t, filepath.Join(ws, "zdir", "z.txt"), []byte("needle z\n"))
	writeBytes(t, filepath.Join(ws, "closed", "hidden.txt"), []byte("needle hidden\n"))
	locked, later, closed := filepath.Join(ws, "locked.txt"), filepath.Join(ws, "later.txt"), filepath.Join(ws, "closed")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chmod(locked, 0))
	must(os.Chmod(closed, 0))
	t.Cleanup(func() { os.Chmod(closed, 0o755); os.Chmod(locked, 0o644); os.Chmod(later, 0o644) })
	c := specialStartNoDAC(t, ws)

	wantResult(t, "read mode 000", specialCall(t, c, "read", map[string]any{"path": "locked.txt"}), true, "permission")
	wantResult(t, "write over mode 000", specialCall(t, c, "write", map[string]any{"path": "locked.txt", "content": "new\n"}), true)

	// Read, then lock: the edit must fail on the file's mode, not write.
	wantResult(t, "read later", specialCall(t, c, "read", map[string]any{"path": "later.txt"}), false, "needle later")
	must(os.Chmod(later, 0))
	r := specialCall(t, c, "edit", editCall("later.txt", "later", "LATER"))
	wantResult(t, "edit after chmod 000", r, true, "write-protected (mode 0000)", "chmod u+w")
	must(os.Chmod(later, 0o644))
	specialBytesEqual(t, "later.txt after refused edit", later, []byte("needle later\n"))
	must(os.Chmod(locked, 0o644))
	specialBytesEqual(t, "locked.txt after refused write", locked, []byte("needle locked\n"))
	must(os.Chmod(locked, 0))

	r = specialCall(t, c, "grep", map[string]any{"pattern": "needle"})
	wantResult(t, "grep with unreadable file and dir", r, false, "ok.txt:1: needle ok", "zdir/z.txt:1: needle z")
	wantLacks(t, "grep", r.Text(), "needle hidden", "needle locked")
	r = specialCall(t, c, "find", map[string]any{"pattern": "*.txt"})
	wantResult(t, "find with unreadable dir", r, false, "ok.txt", "zdir/z.txt")
	r = specialCall(t, c, "ls", map[string]any{})
	wantResult(t, "ls with unreadable dir", r, false, "closed/", "ok.txt", "zdir/")
	wantResult(t, "ls of the unreadable dir", specialCall(t, c, "ls", map[string]any{"path": "closed"}), true, "permission")
}

// TestSpecialReadOnlyAfterRead: a file made read-only after the read
// is not replaced by edit; the file and its mode stay.
func TestSpecialReadOnlyAfterRead(t *testing.T) {
	ws := t.TempDir()
	p := filepath.Join(ws, "ro.txt")
	writeBytes(t, p, []byte("keep me\n"))
	t.Cleanup(func() { os.Chmod(p, 0o644) })
	c := specialStartNoDAC(t, ws)
	wantResult(t, "read", specialCall(t, c, "read", map[string]any{"path": "ro.txt"}), false, "keep me")
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	wantResult(t, "edit read-only", specialCall(t, c, "edit", editCall("ro.txt", "keep", "lose")), true)
	specialBytesEqual(t, "ro.txt", p, []byte("keep me\n"))
	if m := specialLmode(t, p); m.Perm() != 0o444 {
		t.Errorf("mode changed to %v", m.Perm())
	}
	wantResult(t, "write read-only", specialCall(t, c, "write", map[string]any{"path": "ro.txt", "content": "lost\n"}), true)
	specialBytesEqual(t, "ro.txt after write", p, []byte("keep me\n"))
}

// TestSpecialWatcher: workspace/externalChange for read files with
// odd names, and special files in the tree do not stop the watcher.
func TestSpecialWatcher(t *testing.T) {
	ws := t.TempDir()
	writeBytes(t, filepath.Join(ws, "with space.txt"), []byte("v1\n"))
	writeBytes(t, filepath.Join(ws, "-rf.txt"), []byte("v1\n"))
	writeBytes(t, filepath.Join(ws, "sub", "x.txt"), []byte("v1\n"))
	specialMkfifo(t, filepath.Join(ws, "pipe"))
	symlink(t, "loopb", filepath.Join(ws, "loopa"))
	symlink(t, "loopa", filepath.Join(ws, "loopb"))
	c := specialStart(t, ws)
	for _, p := range []string{"with space.txt", "-rf.txt", "sub/x.txt"} {
		wantResult(t, "read "+p, specialCall(t, c, "read", map[string]any{"path": p}), false, "v1")
	}
	wait := func(rel, kind string, since time.Time) map[string]any {
		t.Helper()
		want := filepath.Join(ws, rel)
		var got map[string]any
		_, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
			if n.Method != "workspace/externalChange" || n.At.Before(since) {
				return false
			}
			var p map[string]any
			json.Unmarshal(n.Params, &p)
			s, _ := p["uri"].(string)
			u, err := url.Parse(s)
			if err != nil || u.Scheme != "file" || filepath.Clean(u.Path) != want || p["kind"] != kind {
				return false
			}
			got = p
			return true
		})
		if !ok {
			var all []string
			for _, n := range c.Notes("workspace/externalChange") {
				all = append(all, string(n.Params))
			}
			t.Fatalf("no workspace/externalChange {%s, %s} for %q within 5 s; got:\n%s", rel, kind, want, strings.Join(all, "\n"))
		}
		return got
	}
	since := time.Now()
	writeBytes(t, filepath.Join(ws, "with space.txt"), []byte("v2 changed\n"))
	if p := wait("with space.txt", "changed", since); p["readStale"] != true {
		t.Errorf("readStale = %v, want true: %v", p["readStale"], p)
	}
	since = time.Now()
	writeBytes(t, filepath.Join(ws, "-rf.txt"), []byte("v2 changed\n"))
	wait("-rf.txt", "changed", since)
	since = time.Now()
	if err := os.Remove(filepath.Join(ws, "sub", "x.txt")); err != nil {
		t.Fatal(err)
	}
	wait("sub/x.txt", "deleted", since)
	// A new fifo in the tree must not block the watcher either.
	specialMkfifo(t, filepath.Join(ws, "sub", "pipe2"))
	since = time.Now()
	writeBytes(t, filepath.Join(ws, "with space.txt"), []byte("v3 changed again\n"))
	wait("with space.txt", "changed", since)
}
