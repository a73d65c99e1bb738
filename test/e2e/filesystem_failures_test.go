//go:build linux

package e2e

// The file system says no. Black-box tests written from
// docs/tools.md ("Errors are results … a message that tells the model how to
// correct the call"; edit/write "atomic (temp file in the same directory,
// fsync, rename)"; "leaves no half-written file") and docs/tools.md (edit,
// write, read, ls, find, grep). The refusals come from the kernel, in ways
// root cannot bypass: chattr +i/+a, a file size limit (ulimit -f), an
// unprivileged user (setpriv) and a read-only bind mount, all Linux.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// fsFailRoot skips unless running as root (chattr, mount and setpriv need it).
func fsFailRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create the refusal (chattr/mount/setpriv)")
	}
}

// fsFailTool returns the path of a program or skips, saying why.
func fsFailTool(t *testing.T, name, why string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed (%s)", name, why)
	}
	return p
}

// fsFailWS makes a workspace (symlinks resolved) holding files.
func fsFailWS(t *testing.T, files map[string]string) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fsFailPut(t, ws, files, 0o644)
	return ws
}

func fsFailPut(t *testing.T, ws string, files map[string]string, mode os.FileMode) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // umask-proof
			t.Fatal(err)
		}
	}
}

// fsFailStart starts agentls on ws in acceptEdits (edits and writes run
// without a tools/confirm question this client could not answer).
func fsFailStart(t *testing.T, ws string, env ...string) (*harness.Client, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	t.Cleanup(cancel)
	c := harness.Start(t, harness.Options{Root: ws, Env: env, Process: true})
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}})
	return c, ctx
}

// fsFailCall runs a tool and logs its text, so the report can quote it.
func fsFailCall(t *testing.T, ctx context.Context, c *harness.Client, tool string, args map[string]any) harness.Result {
	t.Helper()
	r := c.CallTool(ctx, tool, args)
	t.Logf("%s %v → isError=%v\n%s", tool, fsFailShort(args), r.IsError, r.Text())
	return r
}

// fsFailShort is args as JSON, cut for the log (a 1 MiB content would drown it).
func fsFailShort(args map[string]any) string {
	b, _ := json.Marshal(args)
	if len(b) > 160 {
		return fmt.Sprintf("%s… (%d bytes)", b[:160], len(b))
	}
	return string(b)
}

// fsFailRead reads path and fails unless the read works.
func fsFailRead(t *testing.T, ctx context.Context, c *harness.Client, path string) {
	t.Helper()
	if r := fsFailCall(t, ctx, c, "read", map[string]any{"path": path}); r.IsError {
		t.Fatalf("read %s failed: %s", path, r.Text())
	}
}

// fsFailEditArgs replaces oldText by newText in path.
func fsFailEditArgs(path, oldText, newText string) map[string]any {
	return map[string]any{"path": path, "edits": []any{map[string]any{"oldText": oldText, "newText": newText}}}
}

// fsFailRefused asserts an isError result whose text names the path and one of
// the causes (case-insensitive).
func fsFailRefused(t *testing.T, what string, r harness.Result, path string, causes ...string) {
	t.Helper()
	if !r.IsError {
		t.Errorf("%s: want isError, got success: %q", what, r.Text())
		return
	}
	low := strings.ToLower(r.Text())
	if path != "" && !strings.Contains(r.Text(), path) {
		t.Errorf("%s: error does not name %q: %q", what, path, r.Text())
	}
	for _, c := range causes {
		if strings.Contains(low, strings.ToLower(c)) {
			return
		}
	}
	t.Errorf("%s: error names none of the causes %q: %q", what, causes, r.Text())
}

// fsFailSame asserts a file still holds want.
func fsFailSame(t *testing.T, what, p, want string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Errorf("%s: %s unreadable afterwards: %v", what, p, err)
		return
	}
	if string(b) != want {
		t.Errorf("%s: %s changed: got %d bytes %.60q, want %.60q", what, p, len(b), b, want)
	}
}

// fsFailNames lists dir's entries, sorted: a temp file left behind shows here.
func fsFailNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func fsFailSameNames(t *testing.T, what, dir string, want []string) {
	t.Helper()
	if got := fsFailNames(t, dir); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("%s: %s holds %q, want exactly %q (temp file left behind?)", what, dir, got, want)
	}
}

func fsFailAbsent(t *testing.T, what, p string) {
	t.Helper()
	if _, err := os.Lstat(p); err == nil {
		t.Errorf("%s: %s exists, want nothing left", what, p)
	}
}

// fsFailAlive asserts the process is running and still answers a normal read.
func fsFailAlive(t *testing.T, ctx context.Context, c *harness.Client, path, want string) {
	t.Helper()
	select {
	case <-c.Exited():
		t.Fatalf("agentls exited with code %d", c.Wait(0))
	default:
	}
	r, err := c.TryCallTool(ctx, "read", map[string]any{"path": path})
	if err != nil {
		t.Fatalf("server gone after the refusal: %v", err)
	}
	if r.IsError || !strings.Contains(r.Text(), want) {
		t.Fatalf("read %s after the refusal: isError=%v %q", path, r.IsError, r.Text())
	}
}

// fsFailChattr sets a file attribute (+i, +a) and clears it at cleanup, before
// TempDir's removal (which would fail on an immutable entry).
func fsFailChattr(t *testing.T, attr, p string) {
	t.Helper()
	bin := fsFailTool(t, "chattr", "e2fsprogs sets the immutable/append-only attributes")
	if out, err := exec.Command(bin, "+"+attr, p).CombinedOutput(); err != nil {
		t.Skipf("chattr +%s unsupported here: %v %s", attr, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(bin, "-"+attr, p).CombinedOutput(); err != nil {
			t.Errorf("chattr -%s %s: %v %s", attr, p, err, out)
		}
	})
}

// fsFailShareDir makes a directory everyone can enter and write (outside
// t.TempDir, whose parents are 0700), removed at cleanup.
func fsFailShareDir(t *testing.T, pattern string) string {
	t.Helper()
	d, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	d, err = filepath.EvalSymlinks(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			os.Chmod(p, 0o777)
			return nil
		})
		os.Chmod(d, 0o777)
		if err := os.RemoveAll(d); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return d
}

// fsFailWrapper points AGENTLS_BIN at a /bin/sh script that runs the real
// agentls (copied where any user can execute it) after prefix (a ulimit, or
// "setpriv … " as the exec prefix). Not parallel: it sets the environment.
func fsFailWrapper(t *testing.T, setup, execPrefix string) {
	t.Helper()
	real := harness.Binary(t)
	dir := fsFailShareDir(t, "fsfail-bin-")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "agentls")
	src, err := os.Open(real)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "wrap.sh")
	body := fmt.Sprintf("#!/bin/sh\n%s\nexec %s %q \"$@\"\n", setup, execPrefix, bin)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTLS_BIN", script)
}

// ---------------------------------------------------------------- chattr

func TestFilesystemImmutableFile(t *testing.T) {
	fsFailRoot(t)
	const body = "alpha\nbeta\ngamma\n"
	ws := fsFailWS(t, map[string]string{"lock.txt": body, "ok.txt": "ok here\n"})
	p := filepath.Join(ws, "lock.txt")
	// Made immutable before the read: chattr changes the ctime, which the
	// edit guard would rightly call a change since the read.
	fsFailChattr(t, "i", p)
	names := fsFailNames(t, ws)
	c, ctx := fsFailStart(t, ws)
	fsFailRead(t, ctx, c, "lock.txt")

	cases := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"edit", "edit", fsFailEditArgs("lock.txt", "beta", "BETA")},
		{"write", "write", map[string]any{"path": "lock.txt", "content": "replaced\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := fsFailCall(t, ctx, c, tc.tool, tc.args)
			fsFailRefused(t, tc.name, r, "lock.txt", "operation not permitted", "immutable", "permission denied")
			fsFailSame(t, tc.name, p, body)
			fsFailSameNames(t, tc.name, ws, names)
		})
	}
	fsFailAlive(t, ctx, c, "ok.txt", "ok here")
	// A normal write next to it still works.
	if r := fsFailCall(t, ctx, c, "write", map[string]any{"path": "fresh.txt", "content": "new\n"}); r.IsError {
		t.Errorf("write of a new file after the refusals: %q", r.Text())
	}
	fsFailSame(t, "fresh write", filepath.Join(ws, "fresh.txt"), "new\n")
}

func TestFilesystemImmutableDir(t *testing.T) {
	fsFailRoot(t)
	const body = "one\ntwo\nthree\n"
	ws := fsFailWS(t, map[string]string{"frozen/a.txt": body, "ok.txt": "ok here\n"})
	dir := filepath.Join(ws, "frozen")
	// The directory takes no new entries (no temp file) and no renames; the
	// file itself stays writable in place, which an atomic write must not use.
	fsFailChattr(t, "i", dir)
	names := fsFailNames(t, dir)
	c, ctx := fsFailStart(t, ws)
	fsFailRead(t, ctx, c, "frozen/a.txt")

	cases := []struct {
		name   string
		tool   string
		args   map[string]any
		path   string // named in the error
		absent string // must not exist afterwards
	}{
		{"edit existing", "edit", fsFailEditArgs("frozen/a.txt", "two", "TWO"), "frozen/a.txt", ""},
		{"write existing", "write", map[string]any{"path": "frozen/a.txt", "content": "x\n"}, "frozen/a.txt", ""},
		{"write new file", "write", map[string]any{"path": "frozen/new.txt", "content": "x\n"}, "frozen/new.txt", "frozen/new.txt"},
		{"write new file in new subdir", "write", map[string]any{"path": "frozen/sub/new.txt", "content": "x\n"}, "frozen/sub", "frozen/sub"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := fsFailCall(t, ctx, c, tc.tool, tc.args)
			fsFailRefused(t, tc.name, r, tc.path, "operation not permitted", "immutable", "permission denied")
			fsFailSame(t, tc.name, filepath.Join(dir, "a.txt"), body)
			fsFailSameNames(t, tc.name, dir, names)
			if tc.absent != "" {
				fsFailAbsent(t, tc.name, filepath.Join(ws, tc.absent))
			}
		})
	}
	fsFailAlive(t, ctx, c, "ok.txt", "ok here")
}

func TestFilesystemAppendOnlyFile(t *testing.T) {
	fsFailRoot(t)
	const body = "log line 1\nlog line 2\n"
	ws := fsFailWS(t, map[string]string{"app.log": body, "ok.txt": "ok here\n"})
	p := filepath.Join(ws, "app.log")
	fsFailChattr(t, "a", p)
	names := fsFailNames(t, ws)
	c, ctx := fsFailStart(t, ws)
	fsFailRead(t, ctx, c, "app.log")

	cases := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"edit", "edit", fsFailEditArgs("app.log", "line 1", "line ONE")},
		// Even content that only appends must go through the atomic path,
		// which an append-only file refuses (no rename onto it).
		{"write appending", "write", map[string]any{"path": "app.log", "content": body + "log line 3\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := fsFailCall(t, ctx, c, tc.tool, tc.args)
			fsFailRefused(t, tc.name, r, "app.log", "operation not permitted", "append-only", "append only", "permission denied")
			fsFailSame(t, tc.name, p, body)
			fsFailSameNames(t, tc.name, ws, names)
		})
	}
	fsFailAlive(t, ctx, c, "ok.txt", "ok here")
}

// docs/tools.md: "A write-protected file (no owner write bit, e.g. chmod
// a-w) is refused with its mode and `chmod u+w` as the way out; the rename
// would replace it otherwise." Root bypasses the mode bits, so only
// agentls's own check stands between the model and the file here.
func TestFilesystemWriteProtectedAsRoot(t *testing.T) {
	fsFailRoot(t)
	const body = "keep\nme\n"
	ws := fsFailWS(t, map[string]string{"ok.txt": "ok here\n"})
	fsFailPut(t, ws, map[string]string{"prot.txt": body}, 0o444)
	p := filepath.Join(ws, "prot.txt")
	names := fsFailNames(t, ws)
	c, ctx := fsFailStart(t, ws)
	fsFailRead(t, ctx, c, "prot.txt")
	cases := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"edit", "edit", fsFailEditArgs("prot.txt", "me", "you")},
		{"write", "write", map[string]any{"path": "prot.txt", "content": "other\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := fsFailCall(t, ctx, c, tc.tool, tc.args)
			fsFailRefused(t, tc.name, r, "prot.txt", "chmod u+w")
			if r.IsError && !strings.Contains(r.Text(), "444") && !strings.Contains(r.Text(), "r--r--r--") {
				t.Errorf("%s: the refusal does not give the file's mode: %q", tc.name, r.Text())
			}
			fsFailSame(t, tc.name, p, body)
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm() != 0o444 {
				t.Errorf("%s: mode changed to %v", tc.name, fi.Mode().Perm())
			}
			fsFailSameNames(t, tc.name, ws, names)
		})
	}
	fsFailAlive(t, ctx, c, "ok.txt", "ok here")
}

// ---------------------------------------------------------------- ulimit -f

func TestFilesystemFileSizeLimit(t *testing.T) {
	// sh's ulimit -f counts 512-byte blocks (dash) or KiB (bash): 32 or 64
	// KiB, both far below the 1 MiB written.
	fsFailWrapper(t, "ulimit -f 64 || exit 97", "")
	const body = "old content\n"
	ws := fsFailWS(t, map[string]string{"big.txt": body, "ok.txt": "ok here\n"})
	p := filepath.Join(ws, "big.txt")
	names := fsFailNames(t, ws)
	c, ctx := fsFailStart(t, ws)
	if lim, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", c.Process().Pid)); err == nil {
		for _, l := range strings.Split(string(lim), "\n") {
			if strings.HasPrefix(l, "Max file size") {
				t.Logf("agentls %s", l)
				if strings.Contains(l, "unlimited") {
					t.Fatal("the wrapper did not lower the file size limit")
				}
			}
		}
	}
	fsFailRead(t, ctx, c, "big.txt")
	huge := strings.Repeat(strings.Repeat("x", 63)+"\n", 1<<14) // 1 MiB

	t.Run("write over existing", func(t *testing.T) {
		r := fsFailCall(t, ctx, c, "write", map[string]any{"path": "big.txt", "content": huge})
		fsFailRefused(t, "write 1 MiB", r, "big.txt", "file too large", "too large", "size limit", "efbig")
		fsFailSame(t, "write 1 MiB", p, body)
		fsFailSameNames(t, "write 1 MiB", ws, names)
		fsFailAlive(t, ctx, c, "ok.txt", "ok here")
	})
	t.Run("edit growing past the limit", func(t *testing.T) {
		r := fsFailCall(t, ctx, c, "edit", fsFailEditArgs("big.txt", "old content", huge))
		fsFailRefused(t, "edit to 1 MiB", r, "big.txt", "file too large", "too large", "size limit", "efbig")
		fsFailSame(t, "edit to 1 MiB", p, body)
		fsFailSameNames(t, "edit to 1 MiB", ws, names)
		fsFailAlive(t, ctx, c, "ok.txt", "ok here")
	})
	t.Run("create in new dirs", func(t *testing.T) {
		r := fsFailCall(t, ctx, c, "write", map[string]any{"path": "newdir/deep/huge.txt", "content": huge})
		fsFailRefused(t, "create 1 MiB", r, "huge.txt", "file too large", "too large", "size limit", "efbig")
		// docs/tools.md write: parent directories "removed again (those still
		// empty) when the file is not (a cancelled or failed write leaves nothing)".
		fsFailAbsent(t, "create 1 MiB", filepath.Join(ws, "newdir"))
		fsFailSameNames(t, "create 1 MiB", ws, names)
		fsFailAlive(t, ctx, c, "ok.txt", "ok here")
	})
	t.Run("next small write works", func(t *testing.T) {
		r := fsFailCall(t, ctx, c, "write", map[string]any{"path": "big.txt", "content": "small new\n"})
		if r.IsError {
			t.Fatalf("small write after the refusals: %q", r.Text())
		}
		fsFailSame(t, "small write", p, "small new\n")
		fsFailSameNames(t, "small write", ws, names)
	})
}

// ---------------------------------------------------------------- nobody

// fsFailNobody starts agentls as uid/gid 65534 over ws (a shared directory),
// with every state directory it may write pointed somewhere nobody can.
func fsFailNobody(t *testing.T, ws string) (*harness.Client, context.Context) {
	t.Helper()
	fsFailRoot(t)
	sp := fsFailTool(t, "setpriv", "util-linux drops root to an unprivileged user")
	fsFailWrapper(t, "", sp+" --reuid=65534 --regid=65534 --clear-groups")
	home := fsFailShareDir(t, "fsfail-home-")
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home + "/config", "XDG_CACHE_HOME=" + home + "/cache",
		"XDG_STATE_HOME=" + home + "/state", "AGENTLS_AUDIT_DIR=" + home + "/audit"}
	c, ctx := fsFailStart(t, ws, env...)
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Process().Pid))
	if err != nil || !strings.Contains(string(st), "Uid:\t65534") {
		t.Fatalf("agentls does not run as nobody (%v):\n%s", err, st)
	}
	return c, ctx
}

func TestFilesystemUnprivUnreadableFile(t *testing.T) {
	ws := fsFailShareDir(t, "fsfail-ws-")
	const secret = "top secret\n"
	fsFailPut(t, ws, map[string]string{"ok.txt": "ok here\n"}, 0o666)
	fsFailPut(t, ws, map[string]string{"secret.txt": secret}, 0o000)
	p := filepath.Join(ws, "secret.txt")
	names := fsFailNames(t, ws)
	c, ctx := fsFailNobody(t, ws)

	t.Run("read", func(t *testing.T) {
		r := fsFailCall(t, ctx, c, "read", map[string]any{"path": "secret.txt"})
		fsFailRefused(t, "read mode 000", r, "secret.txt", "permission denied")
		if strings.Contains(r.Text(), "top secret") {
			t.Errorf("read leaked the content: %q", r.Text())
		}
	})
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"edit", "edit", fsFailEditArgs("secret.txt", "top", "bottom")},
		{"write", "write", map[string]any{"path": "secret.txt", "content": "mine now\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fsFailCall(t, ctx, c, tc.tool, tc.args)
			// Refused either as unread (no stamp could be taken) or as unreadable.
			fsFailRefused(t, tc.name, r, "secret.txt", "permission denied", "write-protected", "not permitted")
			fsFailSame(t, tc.name, p, secret)
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm() != 0 {
				t.Errorf("%s: mode changed to %v", tc.name, fi.Mode().Perm())
			}
			fsFailSameNames(t, tc.name, ws, names)
		})
	}
	t.Run("grep skips it", func(t *testing.T) {
		r := fsFailCall(t, ctx, c, "grep", map[string]any{"pattern": "ok|secret"})
		if r.IsError || !strings.Contains(r.Text(), "ok.txt:1:") {
			t.Errorf("grep over a workspace with an unreadable file: isError=%v %q", r.IsError, r.Text())
		}
		i := strings.Index(r.Text(), "[Not searched:")
		if i < 0 || !strings.Contains(r.Text()[i:], "secret.txt") || !strings.Contains(r.Text()[i:], "permission denied") {
			t.Errorf("grep does not say it could not read secret.txt: %q", r.Text())
		}
	})
	// Named as the path, the unreadable file is an error from either
	// backend, not "No matches".
	for _, backend := range []string{"rg", "go"} {
		t.Run("grep path is it/"+backend, func(t *testing.T) {
			cc, cctx := c, ctx
			if backend == "go" {
				home := fsFailShareDir(t, "fsfail-home-")
				cc, cctx = fsFailStart(t, ws, "AGENTLS_GREP_BACKEND=go", "HOME="+home, "XDG_CONFIG_HOME="+home,
					"XDG_CACHE_HOME="+home, "XDG_STATE_HOME="+home, "AGENTLS_AUDIT_DIR="+home)
			}
			r := fsFailCall(t, cctx, cc, "grep", map[string]any{"pattern": "secret", "path": "secret.txt"})
			if !r.IsError || !strings.Contains(strings.ToLower(r.Text()), "permission denied") || !strings.Contains(r.Text(), "secret.txt") {
				t.Errorf("grep (%s) of the unreadable file: isError=%v %q", backend, r.IsError, r.Text())
			}
		})
	}
	fsFailAlive(t, ctx, c, "ok.txt", "ok here")
}

func TestFilesystemUnprivUnreadableDir(t *testing.T) {
	ws := fsFailShareDir(t, "fsfail-ws-")
	fsFailPut(t, ws, map[string]string{"ok.txt": "needle ok\n", "locked/inner.txt": "needle inner\n", "zz/last.txt": "needle last\n"}, 0o666)
	for _, d := range []string{"zz"} {
		os.Chmod(filepath.Join(ws, d), 0o777)
	}
	if err := os.Chmod(filepath.Join(ws, "locked"), 0o000); err != nil {
		t.Fatal(err)
	}
	c, ctx := fsFailNobody(t, ws)

	t.Run("ls root lists it", func(t *testing.T) {
		r := fsFailCall(t, ctx, c, "ls", map[string]any{})
		if r.IsError || !strings.Contains(r.Text(), "locked/") || !strings.Contains(r.Text(), "ok.txt") {
			t.Errorf("ls of the root: isError=%v %q", r.IsError, r.Text())
		}
	})
	t.Run("ls of it", func(t *testing.T) {
		r := fsFailCall(t, ctx, c, "ls", map[string]any{"path": "locked"})
		fsFailRefused(t, "ls mode-000 dir", r, "locked", "permission denied")
	})
	t.Run("find skips it", func(t *testing.T) {
		r := fsFailCall(t, ctx, c, "find", map[string]any{"pattern": "*.txt"})
		if r.IsError {
			t.Fatalf("find failed the whole search: %q", r.Text())
		}
		for _, want := range []string{"ok.txt", "zz/last.txt"} {
			if !strings.Contains(r.Text(), want) {
				t.Errorf("find lost %s around the unreadable dir: %q", want, r.Text())
			}
		}
		fsFailNotSearched(t, "find", r.Text())
	})
	t.Run("grep skips it", func(t *testing.T) {
		r := fsFailCall(t, ctx, c, "grep", map[string]any{"pattern": "needle"})
		if r.IsError {
			t.Fatalf("grep failed the whole search: %q", r.Text())
		}
		for _, want := range []string{"ok.txt:1:", "zz/last.txt:1:"} {
			if !strings.Contains(r.Text(), want) {
				t.Errorf("grep lost %s around the unreadable dir: %q", want, r.Text())
			}
		}
		fsFailNotSearched(t, "grep", r.Text())
	})
	t.Run("grep go backend", func(t *testing.T) {
		// The fallback searcher must agree; it is selected per process, so a
		// second server is started with AGENTLS_GREP_BACKEND=go.
		home := fsFailShareDir(t, "fsfail-home-")
		c2, ctx2 := fsFailStart(t, ws, "AGENTLS_GREP_BACKEND=go", "HOME="+home, "XDG_CONFIG_HOME="+home,
			"XDG_CACHE_HOME="+home, "XDG_STATE_HOME="+home, "AGENTLS_AUDIT_DIR="+home)
		r := fsFailCall(t, ctx2, c2, "grep", map[string]any{"pattern": "needle"})
		if r.IsError {
			t.Fatalf("grep (go) failed the whole search: %q", r.Text())
		}
		for _, want := range []string{"ok.txt:1:", "zz/last.txt:1:"} {
			if !strings.Contains(r.Text(), want) {
				t.Errorf("grep (go) lost %s around the unreadable dir: %q", want, r.Text())
			}
		}
		fsFailNotSearched(t, "grep (go)", r.Text())
		r = fsFailCall(t, ctx2, c2, "grep", map[string]any{"pattern": "needle", "path": "locked"})
		if !strings.Contains(strings.ToLower(r.Text()), "permission denied") || !strings.Contains(r.Text(), "locked") {
			t.Errorf("grep (go) on the unreadable dir does not say it could not be read: isError=%v %q", r.IsError, r.Text())
		}
	})
	// Named explicitly, an unreadable directory must not come back as a plain
	// "no matches": the model would take the needle for absent. An error or a
	// note naming the refusal both do.
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"grep path is it", "grep", map[string]any{"pattern": "needle", "path": "locked"}},
		{"find path is it", "find", map[string]any{"pattern": "*.txt", "path": "locked"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fsFailCall(t, ctx, c, tc.tool, tc.args)
			if !strings.Contains(strings.ToLower(r.Text()), "permission denied") || !strings.Contains(r.Text(), "locked") {
				t.Errorf("%s on the unreadable dir does not say it could not be read: isError=%v %q", tc.tool, r.IsError, r.Text())
			}
		})
	}
	t.Run("read inside it", func(t *testing.T) {
		r := fsFailCall(t, ctx, c, "read", map[string]any{"path": "locked/inner.txt"})
		fsFailRefused(t, "read in mode-000 dir", r, "locked/inner.txt", "permission denied")
	})
	fsFailAlive(t, ctx, c, "ok.txt", "needle ok")
}

func TestFilesystemUnprivReadOnlyDir(t *testing.T) {
	ws := fsFailShareDir(t, "fsfail-ws-")
	const body = "line a\nline b\n"
	fsFailPut(t, ws, map[string]string{"ok.txt": "ok here\n", "ro/f.txt": body}, 0o666)
	dir := filepath.Join(ws, "ro")
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	names := fsFailNames(t, dir)
	c, ctx := fsFailNobody(t, ws)
	fsFailRead(t, ctx, c, "ro/f.txt")
	for _, tc := range []struct {
		name   string
		tool   string
		args   map[string]any
		path   string
		absent string
	}{
		{"write new file", "write", map[string]any{"path": "ro/new.txt", "content": "x\n"}, "ro/new.txt", "ro/new.txt"},
		{"write new subdir", "write", map[string]any{"path": "ro/sub/new.txt", "content": "x\n"}, "ro/sub", "ro/sub"},
		// The file is writable in place (0666), but no temp file can be made
		// next to it: an atomic edit cannot happen.
		{"edit writable file", "edit", fsFailEditArgs("ro/f.txt", "line b", "line B"), "ro/f.txt", ""},
		{"write writable file", "write", map[string]any{"path": "ro/f.txt", "content": "x\n"}, "ro/f.txt", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fsFailCall(t, ctx, c, tc.tool, tc.args)
			fsFailRefused(t, tc.name, r, tc.path, "permission denied")
			fsFailSame(t, tc.name, filepath.Join(dir, "f.txt"), body)
			fsFailSameNames(t, tc.name, dir, names)
			if tc.absent != "" {
				fsFailAbsent(t, tc.name, filepath.Join(ws, tc.absent))
			}
		})
	}
	fsFailAlive(t, ctx, c, "ok.txt", "ok here")
}

func TestFilesystemUnprivReadOnlyRoot(t *testing.T) {
	ws := fsFailShareDir(t, "fsfail-ws-")
	const body = "root a\nroot b\n"
	fsFailPut(t, ws, map[string]string{"a.txt": body, "ok.txt": "ok here\n"}, 0o666)
	if err := os.Chmod(ws, 0o555); err != nil {
		t.Fatal(err)
	}
	names := fsFailNames(t, ws)
	c, ctx := fsFailNobody(t, ws)
	fsFailRead(t, ctx, c, "a.txt")
	for _, tc := range []struct {
		name   string
		tool   string
		args   map[string]any
		path   string
		absent string
	}{
		{"edit", "edit", fsFailEditArgs("a.txt", "root b", "root B"), "a.txt", ""},
		{"write existing", "write", map[string]any{"path": "a.txt", "content": "x\n"}, "a.txt", ""},
		{"write new", "write", map[string]any{"path": "new.txt", "content": "x\n"}, "new.txt", "new.txt"},
		{"write new dir", "write", map[string]any{"path": "d/new.txt", "content": "x\n"}, "d", "d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fsFailCall(t, ctx, c, tc.tool, tc.args)
			fsFailRefused(t, tc.name, r, tc.path, "permission denied")
			fsFailSame(t, tc.name, filepath.Join(ws, "a.txt"), body)
			fsFailSameNames(t, tc.name, ws, names)
			if tc.absent != "" {
				fsFailAbsent(t, tc.name, filepath.Join(ws, tc.absent))
			}
		})
	}
	fsFailAlive(t, ctx, c, "ok.txt", "ok here")
}

// A root-owned 0644 file in a directory nobody may write: nobody cannot
// write the file, but could rename over it. docs/tools.md lists "denied
// permission" among the errors; docs/tools.md refuses a write-protected file
// because "the rename would replace it otherwise".
func TestFilesystemUnprivForeignFile(t *testing.T) {
	ws := fsFailShareDir(t, "fsfail-ws-")
	const body = "owned by root\n"
	fsFailPut(t, ws, map[string]string{"ok.txt": "ok here\n"}, 0o666)
	fsFailPut(t, ws, map[string]string{"root.txt": body}, 0o644)
	p := filepath.Join(ws, "root.txt")
	names := fsFailNames(t, ws)
	c, ctx := fsFailNobody(t, ws)
	fsFailRead(t, ctx, c, "root.txt")
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"edit", "edit", fsFailEditArgs("root.txt", "root", "nobody")},
		{"write", "write", map[string]any{"path": "root.txt", "content": "nobody's now\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fsFailCall(t, ctx, c, tc.tool, tc.args)
			fsFailRefused(t, tc.name, r, "root.txt", "permission denied", "not writable", "write-protected", "owned by")
			fsFailSame(t, tc.name, p, body)
			if fi, err := os.Stat(p); err == nil {
				if st, ok := fsFailOwner(fi); ok && st != 0 {
					t.Errorf("%s: the file now belongs to uid %d (replaced by rename)", tc.name, st)
				}
			}
			fsFailSameNames(t, tc.name, ws, names)
		})
	}
	fsFailAlive(t, ctx, c, "ok.txt", "ok here")
}

// ---------------------------------------------------------------- ro mount

func TestFilesystemReadOnlyMount(t *testing.T) {
	fsFailRoot(t)
	mount := fsFailTool(t, "mount", "a read-only bind mount needs mount(8)")
	umount := fsFailTool(t, "umount", "a read-only bind mount needs umount(8)")
	const body = "mounted a\nmounted b\n"
	src := fsFailWS(t, map[string]string{"a.txt": body})
	ws := fsFailWS(t, map[string]string{"ok.txt": "ok here\n", "mnt/.keep": ""})
	mnt := filepath.Join(ws, "mnt")
	if out, err := exec.Command(mount, "--bind", src, mnt).CombinedOutput(); err != nil {
		t.Skipf("mount --bind not permitted here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(umount, mnt).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v %s; lazy", mnt, err, out)
			exec.Command(umount, "-l", mnt).Run()
		}
	})
	if out, err := exec.Command(mount, "-o", "remount,ro,bind", mnt).CombinedOutput(); err != nil {
		t.Skipf("remount,ro,bind not permitted here: %v %s", err, out)
	}
	names := fsFailNames(t, mnt)
	c, ctx := fsFailStart(t, ws)
	fsFailRead(t, ctx, c, "mnt/a.txt")
	for _, tc := range []struct {
		name   string
		tool   string
		args   map[string]any
		path   string
		absent string
	}{
		{"edit", "edit", fsFailEditArgs("mnt/a.txt", "mounted b", "mounted B"), "mnt/a.txt", ""},
		{"write existing", "write", map[string]any{"path": "mnt/a.txt", "content": "x\n"}, "mnt/a.txt", ""},
		{"write new", "write", map[string]any{"path": "mnt/new.txt", "content": "x\n"}, "mnt/new.txt", "mnt/new.txt"},
		{"write new dir", "write", map[string]any{"path": "mnt/d/new.txt", "content": "x\n"}, "mnt/d", "mnt/d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fsFailCall(t, ctx, c, tc.tool, tc.args)
			fsFailRefused(t, tc.name, r, tc.path, "read-only file system")
			fsFailSame(t, tc.name, filepath.Join(mnt, "a.txt"), body)
			fsFailSameNames(t, tc.name, mnt, names)
			if tc.absent != "" {
				fsFailAbsent(t, tc.name, filepath.Join(ws, tc.absent))
			}
		})
	}
	fsFailAlive(t, ctx, c, "ok.txt", "ok here")
	if r := fsFailCall(t, ctx, c, "write", map[string]any{"path": "beside.txt", "content": "fine\n"}); r.IsError {
		t.Errorf("write outside the mount after the refusals: %q", r.Text())
	}
}

// fsFailOwner returns a file's owner uid.
func fsFailOwner(fi os.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// fsFailNotSearched checks that a search over a tree holding the unreadable
// directory "locked" says it went past it, with the reason: a result that
// passes for complete would let the model take a needle for absent.
func fsFailNotSearched(t *testing.T, what, text string) {
	t.Helper()
	i := strings.Index(text, "[Not searched:")
	if i < 0 {
		t.Errorf("%s does not say what it could not read: %q", what, text)
		return
	}
	note := text[i:]
	for _, want := range []string{"1 path could not be read", "permission denied", "locked"} {
		if !strings.Contains(note, want) {
			t.Errorf("%s's note lacks %q: %q", what, want, note)
		}
	}
}
