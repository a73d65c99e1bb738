package e2e

// Contract tests: the awkward files a real workspace holds
// (special files, odd names, odd contents, files changing under a call),
// against every file tool and the watcher. Written from TOOLS.md and
// PROTOCOL.md only.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/agentls/agentls/test/harness"
)

// a4sCallTimeout catches hangs: every call must return well within it.
const a4sCallTimeout = 10 * time.Second

// a4sStart starts agentls on ws in bypass mode (nothing asks).
func a4sStart(t *testing.T, ws string, env ...string) *harness.Client {
	t.Helper()
	c, _ := startIn(t, ws, bypass(), env...)
	return c
}

// a4sStartNoDAC starts agentls as root without CAP_DAC_OVERRIDE and
// CAP_DAC_READ_SEARCH, so file modes bind it as they bind a normal user.
// Not parallel-safe (it sets AGENTLS_BIN for this test).
func a4sStartNoDAC(t *testing.T, ws string) *harness.Client {
	t.Helper()
	if os.Geteuid() != 0 {
		return a4sStart(t, ws) // modes already bind a normal user
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
	return a4sStart(t, ws)
}

// a4sBackends are grep's two searchers; both must behave the same.
var a4sBackends = []struct{ name, env string }{
	{"rg", "AGENTLS_GREP_BACKEND=rg"},
	{"go", "AGENTLS_GREP_BACKEND=go"},
}

// a4sCall runs one tool call and fails the test when it does not return
// within a4sCallTimeout (a hang) or fails at the protocol level.
func a4sCall(t *testing.T, c *harness.Client, name string, args map[string]any) harness.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), a4sCallTimeout)
	defer cancel()
	start := time.Now()
	r, err := c.TryCallTool(ctx, name, args)
	if err != nil {
		t.Fatalf("%s %v: no result after %v (hang?): %v", name, args, time.Since(start).Round(time.Millisecond), err)
	}
	return r
}

// a4sBytesEqual compares the file's bytes with want.
func a4sBytesEqual(t *testing.T, what, p string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: bytes on disk\n got %q\nwant %q", what, a4sShort(got), a4sShort(want))
	}
}

func a4sShort(b []byte) []byte {
	if len(b) > 300 {
		return append(append([]byte{}, b[:300]...), "…"...)
	}
	return b
}

func a4sMkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

func a4sSocket(t *testing.T, p string) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skipf("socket: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: p}); err != nil {
		t.Skipf("bind %s: %v", p, err)
	}
}

func a4sLmode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatalf("lstat %s: %v", p, err)
	}
	return fi.Mode()
}

// TestSpecialFIFO: a named pipe never blocks a tool; read/edit/write
// refuse it clearly, listing tools skip or show it, and it stays a pipe.
func TestSpecialFIFO(t *testing.T) {
	for _, be := range a4sBackends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel() // a hang costs a4sCallTimeout; pay it once
			ws := t.TempDir()
			writeBytes(t, filepath.Join(ws, "a.txt"), []byte("needle here\n"))
			fifo := filepath.Join(ws, "pipe")
			a4sMkfifo(t, fifo)
			c := a4sStart(t, ws, be.env)

			wantResult(t, "read fifo", a4sCall(t, c, "read", map[string]any{"path": "pipe"}), true, "not a regular file")
			wantResult(t, "grep all", a4sCall(t, c, "grep", map[string]any{"pattern": "needle"}), false, "a.txt:1: needle here")
			wantResult(t, "grep glob=pipe", a4sCall(t, c, "grep", map[string]any{"pattern": "needle", "glob": "pipe"}), false)
			wantResult(t, "find *", a4sCall(t, c, "find", map[string]any{"pattern": "*"}), false, "a.txt")
			wantResult(t, "find path=pipe", a4sCall(t, c, "find", map[string]any{"pattern": "*", "path": "pipe"}), true)
			wantResult(t, "ls", a4sCall(t, c, "ls", map[string]any{}), false, "a.txt", "pipe")
			wantResult(t, "ls path=pipe", a4sCall(t, c, "ls", map[string]any{"path": "pipe"}), true)
			wantResult(t, "edit fifo", a4sCall(t, c, "edit", editCall("pipe", "a", "b")), true)
			wantResult(t, "write fifo", a4sCall(t, c, "write", map[string]any{"path": "pipe", "content": "x"}), true)
			// bash's changed-file report re-stats files; a fifo in the tree must not block it.
			wantResult(t, "bash", a4sCall(t, c, "bash", map[string]any{"command": "echo done"}), false, "done")
			if m := a4sLmode(t, fifo); m&os.ModeNamedPipe == 0 {
				t.Errorf("the fifo was replaced: mode now %v", m)
			}
			// Naming the fifo as grep's path: a clear message or no match, never a hang.
			r := a4sCall(t, c, "grep", map[string]any{"pattern": "needle", "path": "pipe"})
			wantLacks(t, "grep path=pipe", r.Text(), "a.txt")
		})
	}
}

// TestSpecialSocket: a Unix socket is refused by read with the same
// clear reason as any non-regular file; listing tools survive it.
func TestSpecialSocket(t *testing.T) {
	ws := t.TempDir()
	writeBytes(t, filepath.Join(ws, "a.txt"), []byte("needle\n"))
	a4sSocket(t, filepath.Join(ws, "s.sock"))
	c := a4sStart(t, ws)

	wantResult(t, "read socket", a4sCall(t, c, "read", map[string]any{"path": "s.sock"}), true, "not a regular file")
	wantResult(t, "grep", a4sCall(t, c, "grep", map[string]any{"pattern": "needle"}), false, "a.txt:1: needle")
	wantResult(t, "find", a4sCall(t, c, "find", map[string]any{"pattern": "*"}), false, "a.txt")
	wantResult(t, "ls", a4sCall(t, c, "ls", map[string]any{}), false, "a.txt", "s.sock")
	wantResult(t, "write socket", a4sCall(t, c, "write", map[string]any{"path": "s.sock", "content": "x"}), true)
	if m := a4sLmode(t, filepath.Join(ws, "s.sock")); m&os.ModeSocket == 0 {
		t.Errorf("the socket was replaced: mode now %v", m)
	}
}

// TestSpecialSymlinks covers loops, dangling links, a link to a
// directory and a link to a file outside the workspace.
func TestSpecialSymlinks(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	writeBytes(t, filepath.Join(ws, "realdir", "in.txt"), []byte("inner needle\n"))
	writeBytes(t, filepath.Join(ws, "plain.txt"), []byte("plain needle\n"))
	symlink(t, "loopb", filepath.Join(ws, "loopa"))
	symlink(t, "loopa", filepath.Join(ws, "loopb"))
	symlink(t, "nothere.txt", filepath.Join(ws, "dangling"))
	outNew := filepath.Join(outside, "created-by-agentls.txt")
	symlink(t, outNew, filepath.Join(ws, "dangling-out"))
	symlink(t, "realdir", filepath.Join(ws, "dirlink"))
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Skip("no /etc/passwd")
	}
	symlink(t, "/etc/passwd", filepath.Join(ws, "pw"))
	c := a4sStart(t, ws)

	t.Run("loop", func(t *testing.T) {
		wantResult(t, "read loop", a4sCall(t, c, "read", map[string]any{"path": "loopa"}), true, "loop")
		wantResult(t, "write loop", a4sCall(t, c, "write", map[string]any{"path": "loopa", "content": "x"}), true)
		if m := a4sLmode(t, filepath.Join(ws, "loopa")); m&os.ModeSymlink == 0 {
			t.Errorf("loopa is no longer a symlink: %v", m)
		}
	})
	t.Run("dangling", func(t *testing.T) {
		wantResult(t, "read dangling", a4sCall(t, c, "read", map[string]any{"path": "dangling"}), true, "not found")
		// A dangling link pointing outside: writing through it would create a
		// file outside the workspace.
		wantResult(t, "write dangling-out", a4sCall(t, c, "write", map[string]any{"path": "dangling-out", "content": "x"}), true, "outside")
		if _, err := os.Lstat(outNew); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("write through a dangling symlink created %s outside the workspace", outNew)
		}
	})
	t.Run("listing tools survive all links", func(t *testing.T) {
		r := a4sCall(t, c, "ls", map[string]any{})
		wantResult(t, "ls", r, false, "loopa@ -> loopb", "dangling@ -> nothere.txt", "dirlink@ -> realdir", "pw@ -> /etc/passwd", "realdir/")
		r = a4sCall(t, c, "find", map[string]any{"pattern": "*.txt"})
		wantResult(t, "find *.txt", r, false, "realdir/in.txt", "plain.txt")
		wantLacks(t, "find must not follow dirlink", r.Text(), "dirlink/in.txt")
		r = a4sCall(t, c, "grep", map[string]any{"pattern": "needle"})
		wantResult(t, "grep", r, false, "realdir/in.txt:1: inner needle", "plain.txt:1: plain needle")
		wantLacks(t, "grep must not follow dirlink", r.Text(), "dirlink/in.txt")
	})
	t.Run("link to a directory inside", func(t *testing.T) {
		wantResult(t, "read through dirlink", a4sCall(t, c, "read", map[string]any{"path": "dirlink/in.txt"}), false, "inner needle")
	})
	t.Run("link to /etc/passwd", func(t *testing.T) {
		wantResult(t, "read pw", a4sCall(t, c, "read", map[string]any{"path": "pw"}), true, "outside")
		for _, be := range a4sBackends {
			cb := a4sStart(t, ws, be.env)
			r := a4sCall(t, cb, "grep", map[string]any{"pattern": "root:"})
			wantLacks(t, be.name+": grep through pw", r.Text(), "root:x", "pw:1")
			r = a4sCall(t, cb, "grep", map[string]any{"pattern": "root", "path": "pw"})
			wantLacks(t, be.name+": grep path=pw", r.Text(), "root:x", "pw:1")
		}
		wantResult(t, "write pw", a4sCall(t, c, "write", map[string]any{"path": "pw", "content": "hacked\n"}), true)
		wantResult(t, "edit pw", a4sCall(t, c, "edit", editCall("pw", "root", "toor")), true)
		a4sBytesEqual(t, "/etc/passwd", "/etc/passwd", passwd)
		if m := a4sLmode(t, filepath.Join(ws, "pw")); m&os.ModeSymlink == 0 {
			t.Errorf("pw is no longer a symlink: %v", m)
		}
	})
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
	c := a4sStartNoDAC(t, ws)

	wantResult(t, "read mode 000", a4sCall(t, c, "read", map[string]any{"path": "locked.txt"}), true, "permission")
	wantResult(t, "write over mode 000", a4sCall(t, c, "write", map[string]any{"path": "locked.txt", "content": "new\n"}), true)

	// Read, then lock: the edit must fail on the file's mode, not write.
	wantResult(t, "read later", a4sCall(t, c, "read", map[string]any{"path": "later.txt"}), false, "needle later")
	must(os.Chmod(later, 0))
	r := a4sCall(t, c, "edit", editCall("later.txt", "later", "LATER"))
	wantResult(t, "edit after chmod 000", r, true, "write-protected (mode 0000)", "chmod u+w")
	must(os.Chmod(later, 0o644))
	a4sBytesEqual(t, "later.txt after refused edit", later, []byte("needle later\n"))
	must(os.Chmod(locked, 0o644))
	a4sBytesEqual(t, "locked.txt after refused write", locked, []byte("needle locked\n"))
	must(os.Chmod(locked, 0))

	r = a4sCall(t, c, "grep", map[string]any{"pattern": "needle"})
	wantResult(t, "grep with unreadable file and dir", r, false, "ok.txt:1: needle ok", "zdir/z.txt:1: needle z")
	wantLacks(t, "grep", r.Text(), "needle hidden", "needle locked")
	r = a4sCall(t, c, "find", map[string]any{"pattern": "*.txt"})
	wantResult(t, "find with unreadable dir", r, false, "ok.txt", "zdir/z.txt")
	r = a4sCall(t, c, "ls", map[string]any{})
	wantResult(t, "ls with unreadable dir", r, false, "closed/", "ok.txt", "zdir/")
	wantResult(t, "ls of the unreadable dir", a4sCall(t, c, "ls", map[string]any{"path": "closed"}), true, "permission")
}

// TestSpecialReadOnlyAfterRead: a file made read-only after the read
// is not replaced by edit; the file and its mode stay.
func TestSpecialReadOnlyAfterRead(t *testing.T) {
	ws := t.TempDir()
	p := filepath.Join(ws, "ro.txt")
	writeBytes(t, p, []byte("keep me\n"))
	t.Cleanup(func() { os.Chmod(p, 0o644) })
	c := a4sStartNoDAC(t, ws)
	wantResult(t, "read", a4sCall(t, c, "read", map[string]any{"path": "ro.txt"}), false, "keep me")
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	wantResult(t, "edit read-only", a4sCall(t, c, "edit", editCall("ro.txt", "keep", "lose")), true)
	a4sBytesEqual(t, "ro.txt", p, []byte("keep me\n"))
	if m := a4sLmode(t, p); m.Perm() != 0o444 {
		t.Errorf("mode changed to %v", m.Perm())
	}
	wantResult(t, "write read-only", a4sCall(t, c, "write", map[string]any{"path": "ro.txt", "content": "lost\n"}), true)
	a4sBytesEqual(t, "ro.txt after write", p, []byte("keep me\n"))
}

// TestSpecialNames: odd file names through read, grep, find, ls,
// edit, write and bash's changed-file report.
func TestSpecialNames(t *testing.T) {
	ws := t.TempDir()
	long := strings.Repeat("L", 251) + ".txt" // 255 bytes: NAME_MAX
	deepDir := ""
	for i := 0; i < 100; i++ {
		deepDir = filepath.Join(deepDir, "d")
	}
	deep := filepath.Join(deepDir, "deep.txt")
	nfd := "cafe\u0301.txt"
	files := map[string]string{
		"with space.txt":  "hello space\n",
		"-rf.txt":         "hello dash\n",
		"new\nline.txt":   "hello newline\n",
		"bad\xffname.txt": "hello invalid\n",
		nfd:               "hello nfd\n",
		long:              "hello long\n",
		deep:              "hello deep\n",
	}
	for name, body := range files {
		writeBytes(t, filepath.Join(ws, name), []byte(body))
	}
	c := a4sStart(t, ws)

	r := a4sCall(t, c, "grep", map[string]any{"pattern": "hello"})
	wantResult(t, "grep all names", r, false, "with space.txt:1: hello space", "-rf.txt:1: hello dash", nfd+":1: hello nfd", long+":1: hello long", filepath.ToSlash(deep)+":1: hello deep", "hello newline", "hello invalid")
	r = a4sCall(t, c, "find", map[string]any{"pattern": "*.txt"})
	wantResult(t, "find all names", r, false, "with space.txt", "-rf.txt", nfd, long, filepath.ToSlash(deep), "bad")
	r = a4sCall(t, c, "ls", map[string]any{})
	wantResult(t, "ls", r, false, "with space.txt", "-rf.txt", nfd, long, "d/")

	t.Run("leading dash is not a flag", func(t *testing.T) {
		wantResult(t, "grep path=-rf.txt", a4sCall(t, c, "grep", map[string]any{"pattern": "hello", "path": "-rf.txt"}), false, "hello dash")
		wantResult(t, "grep pattern=-rf", a4sCall(t, c, "grep", map[string]any{"pattern": "-rf", "literal": true}), false)
		r := a4sCall(t, c, "find", map[string]any{"pattern": "-rf.txt"})
		wantResult(t, "find -rf.txt", r, false, "-rf.txt")
		wantResult(t, "read -rf.txt", a4sCall(t, c, "read", map[string]any{"path": "-rf.txt"}), false, "hello dash")
		wantResult(t, "edit -rf.txt", a4sCall(t, c, "edit", editCall("-rf.txt", "dash", "DASH")), false)
		a4sBytesEqual(t, "-rf.txt", filepath.Join(ws, "-rf.txt"), []byte("hello DASH\n"))
	})
	t.Run("bash reports changed odd names", func(t *testing.T) {
		for _, p := range []string{"with space.txt", "-rf.txt", long} {
			wantResult(t, "read "+p, a4sCall(t, c, "read", map[string]any{"path": p}), false, "hello")
		}
		r := a4sCall(t, c, "bash", map[string]any{"command": "echo more >> 'with space.txt' && echo more >> ./-rf.txt && echo more >> " + long})
		wantResult(t, "bash changed report", r, false, "with space.txt", "-rf.txt", long)
		// Their stamps are stale now.
		wantResult(t, "edit after bash", a4sCall(t, c, "edit", editCall("with space.txt", "space", "SPACE")), true, "read")
		a4sBytesEqual(t, "with space.txt", filepath.Join(ws, "with space.txt"), []byte("hello space\nmore\n"))
	})
	t.Run("newline in a name", func(t *testing.T) {
		wantResult(t, "read", a4sCall(t, c, "read", map[string]any{"path": "new\nline.txt"}), false, "hello newline")
		wantResult(t, "edit", a4sCall(t, c, "edit", editCall("new\nline.txt", "newline", "NL")), false)
		a4sBytesEqual(t, "new\\nline.txt", filepath.Join(ws, "new\nline.txt"), []byte("hello NL\n"))
	})
	t.Run("NFD and NFC", func(t *testing.T) {
		wantResult(t, "read NFD exact", a4sCall(t, c, "read", map[string]any{"path": nfd}), false, "hello nfd")
		// The NFC spelling names the same visible file: either it opens, or
		// the suggestions name the NFD file.
		r := a4sCall(t, c, "read", map[string]any{"path": "caf\u00e9.txt"})
		if r.IsError && !strings.Contains(r.Text(), nfd) {
			t.Errorf("read NFC spelling: neither opened nor suggested the NFD file:\n%s", r.Text())
		}
	})
	t.Run("255-byte name", func(t *testing.T) {
		wantResult(t, "read", a4sCall(t, c, "read", map[string]any{"path": long}), false, "hello long")
		// The atomic write's temp file must fit NAME_MAX too.
		wantResult(t, "edit", a4sCall(t, c, "edit", editCall(long, "more", "MORE")), false)
		a4sBytesEqual(t, "long", filepath.Join(ws, long), []byte("hello long\nMORE\n"))
		long2 := strings.Repeat("N", 255)
		wantResult(t, "write new 255-byte name", a4sCall(t, c, "write", map[string]any{"path": long2, "content": "new\n"}), false)
		a4sBytesEqual(t, "long2", filepath.Join(ws, long2), []byte("new\n"))
		r := a4sCall(t, c, "write", map[string]any{"path": strings.Repeat("M", 256), "content": "x\n"})
		wantResult(t, "write 256-byte name", r, true)
	})
	t.Run("100 levels deep", func(t *testing.T) {
		wantResult(t, "find deep", a4sCall(t, c, "find", map[string]any{"pattern": "deep.txt"}), false, filepath.ToSlash(deep))
		wantResult(t, "read deep", a4sCall(t, c, "read", map[string]any{"path": filepath.ToSlash(deep)}), false, "hello deep")
		wantResult(t, "edit deep", a4sCall(t, c, "edit", editCall(filepath.ToSlash(deep), "deep", "DEEP")), false)
		a4sBytesEqual(t, "deep", filepath.Join(ws, deep), []byte("hello DEEP\n"))
		nd := filepath.ToSlash(filepath.Join(deepDir, "e", "f", "new.txt"))
		wantResult(t, "write deeper new", a4sCall(t, c, "write", map[string]any{"path": nd, "content": "n\n"}), false)
		a4sBytesEqual(t, "deeper new", filepath.Join(ws, nd), []byte("n\n"))
	})
}

// a4sUTF16 encodes s with a BOM in the given byte order.
func a4sUTF16(s string, bigEndian bool) []byte {
	u := utf16.Encode([]rune("\ufeff" + s))
	out := make([]byte, 0, 2*len(u))
	for _, x := range u {
		if bigEndian {
			out = append(out, byte(x>>8), byte(x))
		} else {
			out = append(out, byte(x), byte(x>>8))
		}
	}
	return out
}

// TestSpecialEditBytes: read then edit files with awkward bytes; only
// the matched text changes, BOM / line endings / final newline stay.
func TestSpecialEditBytes(t *testing.T) {
	cases := []struct {
		name      string
		file      []byte
		oldText   string
		newText   string
		want      []byte // nil: the edit must fail and the file stay as it was
		readWants []string
		errWants  []string // what a failed edit must say
	}{
		{name: "no final newline", file: []byte("a\nb"), oldText: "b", newText: "c", want: []byte("a\nc")},
		{name: "only a newline", file: []byte("\n"), oldText: "\n", newText: "x\n", want: []byte("x\n")},
		{name: "CRLF keeps CRLF in new lines", file: []byte("one\r\ntwo\r\nthree\r\n"), oldText: "two", newText: "2a\n2b", want: []byte("one\r\n2a\r\n2b\r\nthree\r\n"), readWants: []string{"1→one", "3→three"}},
		{name: "mixed endings: other lines untouched", file: []byte("a\r\nb\nc\r\nd\n"), oldText: "c", newText: "C", want: []byte("a\r\nb\nC\r\nd\n")},
		{name: "lone CR", file: []byte("one\rtwo\rthree\r"), oldText: "two", newText: "TWO", want: []byte("one\rTWO\rthree\r")},
		{name: "BOM and CRLF", file: []byte("\xef\xbb\xbfalpha\r\nbeta\r\n"), oldText: "beta", newText: "gamma", want: []byte("\xef\xbb\xbfalpha\r\ngamma\r\n"), readWants: []string{"1→alpha", "bom"}},
		{name: "empty file, oldText", file: []byte{}, oldText: "x", newText: "y", want: nil, readWants: []string{"empty"}, errWants: []string{"empty", "write"}},
		{name: "invalid UTF-8 elsewhere kept", file: []byte("ok \xff\xfe bad\nfix me\n"), oldText: "fix me", newText: "fixed", want: []byte("ok \xff\xfe bad\nfixed\n"), readWants: []string{"\ufffd", "utf-8"}},
	}
	ws := t.TempDir()
	c := a4sStart(t, ws)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.NewReplacer(" ", "_", ",", "", ":", "").Replace(tc.name) + ".txt"
			p := filepath.Join(ws, name)
			writeBytes(t, p, tc.file)
			r := a4sCall(t, c, "read", map[string]any{"path": name})
			wantResult(t, "read", r, false, tc.readWants...)
			if strings.TrimSpace(r.Text()) == "" {
				t.Errorf("read returned empty text")
			}
			r = a4sCall(t, c, "edit", editCall(name, tc.oldText, tc.newText))
			if tc.want == nil {
				wantResult(t, "edit", r, true, tc.errWants...)
				a4sBytesEqual(t, name, p, tc.file)
				return
			}
			wantResult(t, "edit", r, false, "edited")
			a4sBytesEqual(t, name, p, tc.want)
		})
	}
}

// TestSpecialEmptyFile: read says the file is empty; write over it
// after the read works.
func TestSpecialEmptyFile(t *testing.T) {
	ws := t.TempDir()
	p := filepath.Join(ws, "empty.txt")
	writeBytes(t, p, nil)
	c := a4sStart(t, ws)
	wantResult(t, "write before read", a4sCall(t, c, "write", map[string]any{"path": "empty.txt", "content": "x\n"}), true, "read")
	a4sBytesEqual(t, "empty after refused write", p, []byte{})
	wantResult(t, "read empty", a4sCall(t, c, "read", map[string]any{"path": "empty.txt"}), false, "empty")
	wantResult(t, "edit empty", a4sCall(t, c, "edit", editCall("empty.txt", "x", "y")), true)
	wantResult(t, "write after read", a4sCall(t, c, "write", map[string]any{"path": "empty.txt", "content": "now full\n"}), false)
	a4sBytesEqual(t, "empty after write", p, []byte("now full\n"))
}

// TestSpecialUTF16: read decodes UTF-16 with a BOM; edit either
// works and keeps the encoding, or refuses and leaves the bytes.
func TestSpecialUTF16(t *testing.T) {
	ws := t.TempDir()
	c := a4sStart(t, ws)
	for _, tc := range []struct {
		name string
		be   bool
		eol  string
	}{{"utf16le.txt", false, "\r\n"}, {"utf16be.txt", true, "\n"}} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(ws, tc.name)
			orig := a4sUTF16("hello wörld"+tc.eol+"second line"+tc.eol, tc.be)
			writeBytes(t, p, orig)
			r := a4sCall(t, c, "read", map[string]any{"path": tc.name})
			wantResult(t, "read", r, false, "1→hello wörld", "2→second line", "utf-16")
			r = a4sCall(t, c, "edit", editCall(tc.name, "second", "2nd"))
			if r.IsError {
				// The model copied oldText from what read showed, so a refusal
				// must give the real reason (the encoding), not "not found".
				wantResult(t, "refused edit", r, true, "utf-16")
				wantLacks(t, "refused edit", r.Text(), "not found")
				a4sBytesEqual(t, "refused edit", p, orig)
				return
			}
			a4sBytesEqual(t, "edit keeps UTF-16 and BOM", p, a4sUTF16("hello wörld"+tc.eol+"2nd line"+tc.eol, tc.be))
		})
	}
	t.Run("grep decodes UTF-16", func(t *testing.T) {
		wantResult(t, "grep", a4sCall(t, c, "grep", map[string]any{"pattern": "wörld"}), false, "utf16be.txt:1: hello wörld", "utf16le.txt:1: hello wörld")
	})
}

// TestSpecialBinaryRule: a NUL after the first 8 KiB does not make a
// file binary; one inside it does.
func TestSpecialBinaryRule(t *testing.T) {
	ws := t.TempDir()
	late := append(append(bytes.Repeat([]byte("a"), 9000), '\n'), []byte("tail\x00end\nlast line\n")...)
	writeBytes(t, filepath.Join(ws, "late.txt"), late)
	writeBytes(t, filepath.Join(ws, "early.dat"), []byte("head\x00\nlast line\n"))
	c := a4sStart(t, ws)
	r := a4sCall(t, c, "read", map[string]any{"path": "late.txt", "offset": 3})
	wantResult(t, "read NUL after 8 KiB", r, false, "3→last line")
	r = a4sCall(t, c, "read", map[string]any{"path": "early.dat"})
	wantResult(t, "read NUL in first 8 KiB", r, true, "binary")
	wantLacks(t, "binary read", r.Text(), "last line")
}

// TestSpecialHugeLine: a 3 MB single line.
func TestSpecialHugeLine(t *testing.T) {
	ws := t.TempDir()
	line := append([]byte("needle"), bytes.Repeat([]byte("q"), 3_000_000-6)...)
	writeBytes(t, filepath.Join(ws, "big.txt"), append(line, '\n'))
	c := a4sStart(t, ws)
	r := a4sCall(t, c, "read", map[string]any{"path": "big.txt"})
	if strings.TrimSpace(r.Text()) == "" {
		t.Fatalf("read of a 3 MB line returned an empty text")
	}
	wantResult(t, "read 3 MB line", r, false, "3000000 bytes", "51200", "cut -b")
	if len(r.Text()) > 51200 {
		t.Errorf("read returned %d bytes for an over-limit line", len(r.Text()))
	}
	r = a4sCall(t, c, "grep", map[string]any{"pattern": "needle"})
	wantResult(t, "grep 3 MB line", r, false, "big.txt:1: needle")
	first := strings.SplitN(r.Text(), "\n", 2)[0]
	body := strings.TrimPrefix(first, "big.txt:1: ")
	if n := strings.Count(body, "q") + len("needle"); n != 500 {
		t.Errorf("grep kept %d characters of the line, want 500:\n%.700s", n, first)
	}
}

// TestSpecialManyLines: 100k short lines page with exact offsets.
func TestSpecialManyLines(t *testing.T) {
	ws := t.TempDir()
	var b bytes.Buffer
	for i := 1; i <= 100_000; i++ {
		b.WriteString("l")
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	writeBytes(t, filepath.Join(ws, "many.txt"), b.Bytes())
	c := a4sStart(t, ws)
	cases := []struct {
		name  string
		args  map[string]any
		wants []string
		nots  []string
	}{
		{"first page", map[string]any{"path": "many.txt"}, []string{"lines 1-1998 of 100000", "1998→l1998", "offset=1999"}, []string{"l1999"}},
		{"middle window", map[string]any{"path": "many.txt", "offset": 50001, "limit": 10}, []string{"lines 50001-50010 of 100000", " 50001→l50001", " 50010→l50010", "offset=50011"}, []string{"l50011"}},
		{"last page", map[string]any{"path": "many.txt", "offset": 98002}, []string{"lines 98002-100000 of 100000", "100000→l100000"}, []string{"offset="}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := a4sCall(t, c, "read", tc.args)
			wantResult(t, tc.name, r, false, tc.wants...)
			wantLacks(t, tc.name, r.Text(), tc.nots...)
		})
	}
	wantResult(t, "offset past end", a4sCall(t, c, "read", map[string]any{"path": "many.txt", "offset": 100002}), true, "100000")
}

// TestSpecialChangedUnderTheCall: a file deleted, replaced by a
// directory, or rewritten after the read.
func TestSpecialChangedUnderTheCall(t *testing.T) {
	ws := t.TempDir()
	c := a4sStart(t, ws)
	t.Run("deleted after read", func(t *testing.T) {
		p := filepath.Join(ws, "gone.txt")
		writeBytes(t, p, []byte("soon gone\n"))
		wantResult(t, "read", a4sCall(t, c, "read", map[string]any{"path": "gone.txt"}), false, "soon gone")
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		wantResult(t, "edit deleted", a4sCall(t, c, "edit", editCall("gone.txt", "soon", "now")), true, "gone.txt")
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("edit resurrected the deleted file")
		}
	})
	t.Run("replaced by a directory", func(t *testing.T) {
		p := filepath.Join(ws, "morph")
		writeBytes(t, p, []byte("file first\n"))
		wantResult(t, "read", a4sCall(t, c, "read", map[string]any{"path": "morph"}), false, "file first")
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		writeBytes(t, filepath.Join(p, "child.txt"), []byte("child\n"))
		wantResult(t, "edit dir", a4sCall(t, c, "edit", editCall("morph", "file", "dir")), true)
		wantResult(t, "write dir", a4sCall(t, c, "write", map[string]any{"path": "morph", "content": "x\n"}), true)
		if m := a4sLmode(t, p); !m.IsDir() {
			t.Errorf("morph is no longer a directory: %v", m)
		}
		a4sBytesEqual(t, "child", filepath.Join(p, "child.txt"), []byte("child\n"))
		wantResult(t, "read dir", a4sCall(t, c, "read", map[string]any{"path": "morph"}), true, "ls")
	})
	t.Run("rewritten after read", func(t *testing.T) {
		p := filepath.Join(ws, "moved.txt")
		writeBytes(t, p, []byte("v1\n"))
		wantResult(t, "read", a4sCall(t, c, "read", map[string]any{"path": "moved.txt"}), false, "v1")
		writeBytes(t, p, []byte("v2\n"))
		wantResult(t, "edit stale", a4sCall(t, c, "edit", editCall("moved.txt", "v", "w")), true, "read")
		a4sBytesEqual(t, "moved.txt", p, []byte("v2\n"))
	})
}

// TestSpecialWatcher: workspace/externalChange for read files with
// odd names, and special files in the tree do not stop the watcher.
func TestSpecialWatcher(t *testing.T) {
	ws := t.TempDir()
	writeBytes(t, filepath.Join(ws, "with space.txt"), []byte("v1\n"))
	writeBytes(t, filepath.Join(ws, "-rf.txt"), []byte("v1\n"))
	writeBytes(t, filepath.Join(ws, "sub", "x.txt"), []byte("v1\n"))
	a4sMkfifo(t, filepath.Join(ws, "pipe"))
	symlink(t, "loopb", filepath.Join(ws, "loopa"))
	symlink(t, "loopa", filepath.Join(ws, "loopb"))
	c := a4sStart(t, ws)
	for _, p := range []string{"with space.txt", "-rf.txt", "sub/x.txt"} {
		wantResult(t, "read "+p, a4sCall(t, c, "read", map[string]any{"path": p}), false, "v1")
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
	a4sMkfifo(t, filepath.Join(ws, "sub", "pipe2"))
	since = time.Now()
	writeBytes(t, filepath.Join(ws, "with space.txt"), []byte("v3 changed again\n"))
	wait("with space.txt", "changed", since)
}
