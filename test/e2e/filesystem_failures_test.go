//go:build linux

package e2e

// The file system says no: file modes, chattr +i/+a, a file size limit
// (ulimit -f), another owner (setpriv to nobody), a read-only bind mount.
// Each refusal is an isError naming the path and the cause; the file and
// its directory stay as they were (no half write, no temp file, no new
// directory) and the server keeps answering.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

func fsFailPut(t *testing.T, ws string, files map[string]string, mode os.FileMode) {
	t.Helper()
	writeFiles(t, ws, files)
	for rel := range files {
		if err := os.Chmod(filepath.Join(ws, rel), mode); err != nil { // umask-proof
			t.Fatal(err)
		}
	}
}

// fsFailStart starts agentls on ws in acceptEdits (edits and writes run
// without a tools/confirm question this client could not answer).
func fsFailStart(t *testing.T, ws string, env ...string) (*harness.Client, context.Context) {
	t.Helper()
	ctx := testCtx(t, 40*time.Second)
	c := harness.Start(t, harness.Options{Root: ws, Env: env, Process: true})
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}})
	return c, ctx
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

// fsFailAlive asserts the process is running and still answers a normal read.
func fsFailAlive(t *testing.T, ctx context.Context, c *harness.Client, path, want string) {
	t.Helper()
	r, err := c.TryCallTool(ctx, "read", map[string]any{"path": path})
	if err != nil {
		t.Fatalf("server gone after the refusal: %v", err)
	}
	wantResult(t, "read "+path+" after the refusal", r, false, want)
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
	b, err := os.ReadFile(real)
	if err == nil {
		err = os.WriteFile(bin, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "wrap.sh")
	body := fmt.Sprintf("#!/bin/sh\n%s\nexec %s %q \"$@\"\n", setup, execPrefix, bin)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTLS_BIN", script)
}

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

// fsFailModesBind starts agentls so that file modes bind it as they bind a
// user: as root through setpriv without CAP_DAC_OVERRIDE and
// CAP_DAC_READ_SEARCH (it still writes its own state and coverage), as
// anyone else directly.
func fsFailModesBind(t *testing.T, ws string, env ...string) (*harness.Client, context.Context) {
	t.Helper()
	if os.Geteuid() == 0 {
		sp := fsFailTool(t, "setpriv", "util-linux drops the capabilities that bypass file modes")
		fsFailWrapper(t, "", sp+" --bounding-set -dac_override,-dac_read_search")
	}
	return fsFailStart(t, ws, env...)
}

// fsFault is one way the file system refuses: the files (beside ok.txt)
// and modes it starts with, how it is made to refuse, the file read first
// and the calls it must refuse.
type fsFault struct {
	name   string
	files  map[string]string
	modes  map[string]os.FileMode // chmod after writing (files and directories)
	setup  func(t *testing.T, ws string)
	bound  bool   // file modes bind agentls (fsFailModesBind)
	nobody bool   // agentls runs as uid 65534
	read   string // read before the calls ("": none)
	keep   string // the file that must not change; its directory must hold the same names
	causes []string
	calls  []fsCall
}

// fsCall is one refused call: the path its error names and what must not
// exist afterwards.
type fsCall struct {
	tool         string
	args         map[string]any
	path, absent string
}

func fsEdit(p, o, n string) fsCall { return fsCall{tool: "edit", args: editCall(p, o, n), path: p} }
func fsWrite(p, content string) fsCall {
	return fsCall{tool: "write", args: writeCall(p, content), path: p}
}
func fsCreate(p, named, absent string) fsCall {
	return fsCall{tool: "write", args: writeCall(p, "x\n"), path: named, absent: absent}
}

func TestFilesystemRefusalsLeaveFilesWhole(t *testing.T) {
	chattr := func(attr, rel string) func(*testing.T, string) {
		return func(t *testing.T, ws string) { fsFailRoot(t); fsFailChattr(t, attr, filepath.Join(ws, rel)) }
	}
	huge := strings.Repeat(strings.Repeat("x", 63)+"\n", 1<<14) // 1 MiB
	perm := []string{"permission denied"}
	for _, f := range []fsFault{
		// Made immutable before the read: chattr changes the ctime, which
		// the edit guard would rightly call a change since the read.
		{name: "immutable file", files: map[string]string{"lock.txt": "alpha\nbeta\n"}, setup: chattr("i", "lock.txt"),
			read: "lock.txt", keep: "lock.txt", causes: []string{"operation not permitted", "immutable", "permission denied"},
			calls: []fsCall{fsEdit("lock.txt", "beta", "BETA"), fsWrite("lock.txt", "replaced\n")}},
		// The directory takes no temp file and no rename; the file itself
		// stays writable in place, which an atomic write must not use.
		{name: "immutable directory", files: map[string]string{"frozen/a.txt": "one\ntwo\n"}, setup: chattr("i", "frozen"),
			read: "frozen/a.txt", keep: "frozen/a.txt", causes: []string{"operation not permitted", "immutable", "permission denied"},
			calls: []fsCall{fsEdit("frozen/a.txt", "two", "TWO"), fsWrite("frozen/a.txt", "x\n"),
				fsCreate("frozen/new.txt", "frozen/new.txt", "frozen/new.txt"), fsCreate("frozen/sub/new.txt", "frozen/sub", "frozen/sub")}},
		// Even content that only appends goes through the atomic rename,
		// which an append-only file refuses.
		{name: "append-only file", files: map[string]string{"app.log": "log 1\nlog 2\n"}, setup: chattr("a", "app.log"),
			read: "app.log", keep: "app.log", causes: []string{"operation not permitted", "append-only", "append only", "permission denied"},
			calls: []fsCall{fsEdit("app.log", "log 1", "log ONE"), fsWrite("app.log", "log 1\nlog 2\nlog 3\n")}},
		// sh's ulimit -f counts 512-byte blocks (dash) or KiB (bash): 32 or
		// 64 KiB, far below the 1 MiB written. Parent directories made for a
		// failed write are removed again.
		{name: "file size limit", files: map[string]string{"big.txt": "old content\n"},
			setup: func(t *testing.T, ws string) { fsFailWrapper(t, "ulimit -f 64 || exit 97", "") },
			read:  "big.txt", keep: "big.txt", causes: []string{"file too large", "too large", "size limit", "efbig"},
			calls: []fsCall{fsWrite("big.txt", huge), fsEdit("big.txt", "old content", huge),
				{tool: "write", args: writeCall("newdir/deep/huge.txt", huge), path: "huge.txt", absent: "newdir"}}},
		{name: "read-only bind mount", files: map[string]string{"mnt/a.txt": "mounted a\n"}, setup: fsReadOnlyMount,
			read: "mnt/a.txt", keep: "mnt/a.txt", causes: []string{"read-only file system"},
			calls: []fsCall{fsEdit("mnt/a.txt", "mounted a", "mounted B"), fsWrite("mnt/a.txt", "x\n"),
				fsCreate("mnt/new.txt", "mnt/new.txt", "mnt/new.txt"), fsCreate("mnt/d/new.txt", "mnt/d", "mnt/d")}},
		// Refused either as unread (no stamp could be taken) or as unreadable.
		{name: "unreadable file", bound: true, files: map[string]string{"secret.txt": "top secret\n"},
			modes: map[string]os.FileMode{"secret.txt": 0}, keep: "secret.txt", causes: []string{"permission denied", "write-protected", "not permitted"},
			calls: []fsCall{{tool: "read", args: map[string]any{"path": "secret.txt"}, path: "secret.txt"},
				fsEdit("secret.txt", "top", "bottom"), fsWrite("secret.txt", "mine now\n")}},
		// The file is writable in place (0666), but no temp file can be made
		// next to it: an atomic edit cannot happen.
		{name: "read-only directory", bound: true, files: map[string]string{"ro/f.txt": "line a\n"},
			modes: map[string]os.FileMode{"ro": 0o555}, read: "ro/f.txt", keep: "ro/f.txt", causes: perm,
			calls: []fsCall{fsCreate("ro/new.txt", "ro/new.txt", "ro/new.txt"), fsCreate("ro/sub/new.txt", "ro/sub", "ro/sub"),
				fsEdit("ro/f.txt", "line a", "line B"), fsWrite("ro/f.txt", "x\n")}},
		{name: "read-only workspace root", bound: true, files: map[string]string{"a.txt": "root a\n"},
			modes: map[string]os.FileMode{".": 0o555}, read: "a.txt", keep: "a.txt", causes: perm,
			calls: []fsCall{fsEdit("a.txt", "root a", "root B"), fsWrite("a.txt", "x\n"),
				fsCreate("new.txt", "new.txt", "new.txt"), fsCreate("d/new.txt", "d", "d")}},
		// A root-owned 0644 file in a directory nobody may write: nobody
		// cannot write the file but could rename over it.
		{name: "foreign file as nobody", nobody: true, files: map[string]string{"root.txt": "owned by root\n"},
			modes: map[string]os.FileMode{"root.txt": 0o644}, read: "root.txt", keep: "root.txt",
			causes: []string{"permission denied", "not writable", "write-protected", "owned by"},
			calls:  []fsCall{fsEdit("root.txt", "root", "nobody"), fsWrite("root.txt", "nobody's now\n")}},
	} {
		t.Run(f.name, func(t *testing.T) {
			ws := fsFailShareDir(t, "fsfail-ws-")
			fsFailPut(t, ws, map[string]string{"ok.txt": "ok here\n"}, 0o666)
			fsFailPut(t, ws, f.files, 0o666)
			for rel, m := range f.modes {
				if err := os.Chmod(filepath.Join(ws, rel), m); err != nil {
					t.Fatal(err)
				}
			}
			if f.setup != nil {
				f.setup(t, ws)
			}
			keep, dir := filepath.Join(ws, f.keep), filepath.Dir(filepath.Join(ws, f.keep))
			before, names := readFile(t, keep), dirNames(t, dir)
			st0, _ := os.Stat(keep)
			var c *harness.Client
			var ctx context.Context
			switch {
			case f.nobody:
				c, ctx = fsFailNobody(t, ws)
			case f.bound:
				c, ctx = fsFailModesBind(t, ws)
			default:
				c, ctx = fsFailStart(t, ws)
			}
			if f.read != "" {
				wantResult(t, "read "+f.read, c.CallTool(ctx, "read", map[string]any{"path": f.read}), false)
			}
			for _, call := range f.calls {
				r := c.CallTool(ctx, call.tool, call.args)
				what := fmt.Sprintf("%s %s", call.tool, call.path)
				fsFailRefused(t, what, r, call.path, f.causes...)
				if strings.Contains(r.Text(), "top secret") {
					t.Errorf("%s leaked the content: %q", what, r.Text())
				}
				if got := readFile(t, keep); got != before {
					t.Errorf("%s: %s changed: %d bytes %.60q, want %.60q", what, f.keep, len(got), got, before)
				}
				if st, _ := os.Stat(keep); st.Mode() != st0.Mode() || !os.SameFile(st, st0) {
					t.Errorf("%s: %s replaced or its mode changed (%v, was %v)", what, f.keep, st.Mode(), st0.Mode())
				}
				if got := dirNames(t, dir); strings.Join(got, "\x00") != strings.Join(names, "\x00") {
					t.Errorf("%s: %s holds %q, want exactly %q (temp file left behind?)", what, dir, got, names)
				}
				if _, err := os.Lstat(filepath.Join(ws, call.absent)); call.absent != "" && err == nil {
					t.Errorf("%s: %s exists, want nothing left", what, call.absent)
				}
			}
			fsFailAlive(t, ctx, c, "ok.txt", "ok here")
			if !f.nobody && !f.bound {
				wantResult(t, "a small write beside", c.CallTool(ctx, "write", writeCall("beside.txt", "fine\n")), false)
			}
		})
	}
}

// fsReadOnlyMount bind-mounts ws/mnt onto itself read-only.
func fsReadOnlyMount(t *testing.T, ws string) {
	fsFailRoot(t)
	mount := fsFailTool(t, "mount", "a read-only bind mount needs mount(8)")
	umount := fsFailTool(t, "umount", "a read-only bind mount needs umount(8)")
	mnt := filepath.Join(ws, "mnt")
	if out, err := exec.Command(mount, "--bind", mnt, mnt).CombinedOutput(); err != nil {
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
}
