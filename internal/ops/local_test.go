package ops_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/ops/opstest"
)

func resolve(t *testing.T, fsys ops.FS, input string) ops.Path {
	t.Helper()
	p, err := fsys.Resolve(input)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", input, err)
	}
	return p
}

// tempLeftovers lists files of an atomic write left anywhere below root.
func tempLeftovers(t *testing.T, root string) []string {
	t.Helper()
	var left []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ops.TempPrefix) {
			left = append(left, p)
		}
		return nil
	})
	return left
}

func readOS(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLocalWriteFile(t *testing.T) {
	tests := []struct {
		name     string
		existing fs.FileMode // 0: the file does not exist yet
		perm     fs.FileMode
		wantMode fs.FileMode
	}{
		{name: "keeps executable mode", existing: 0o755, perm: 0o644, wantMode: 0o755},
		{name: "keeps private mode", existing: 0o600, perm: 0o644, wantMode: 0o600},
		{name: "new file gets perm", perm: 0o640, wantMode: 0o640},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkspace(t)
			l := newLocal(t, ops.FolderSpec{Path: w.root})
			osPath := filepath.Join(w.root, "sub", "f.sh")
			if tc.existing != 0 {
				if err := os.WriteFile(osPath, []byte("old content that is longer\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(osPath, tc.existing); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.WriteFile(resolve(t, l, "sub/f.sh"), []byte("new\n"), tc.perm, nil); err != nil {
				t.Fatal(err)
			}
			if got := readOS(t, osPath); got != "new\n" {
				t.Errorf("content = %q, want replaced", got)
			}
			fi, err := os.Lstat(osPath)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != tc.wantMode {
				t.Errorf("mode = %v, want %v", fi.Mode(), tc.wantMode)
			}
			if left := tempLeftovers(t, w.root); left != nil {
				t.Errorf("temp files left: %v", left)
			}
		})
	}
}

func TestLocalCreateFile(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		wantErr error // nil: created
		intact  string
	}{
		{name: "new file", input: "src/new.go"},
		{name: "existing file", input: "a.go", wantErr: fs.ErrExist, intact: "package a\n"},
		{name: "existing directory", input: "src", wantErr: fs.ErrExist},
		{name: "missing parent", input: "nodir/x.go", wantErr: fs.ErrNotExist},
		{name: "through dangling link inside creates target", input: "dangin"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkspace(t)
			l := newLocal(t, ops.FolderSpec{Path: w.root})
			p := resolve(t, l, tc.input)
			err := l.CreateFile(p, []byte("created\n"), 0o644, nil)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("CreateFile: %v", err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("CreateFile err = %v, want %v", err, tc.wantErr)
			case tc.wantErr == nil:
				if got := readOS(t, p.OS()); got != "created\n" {
					t.Errorf("content = %q", got)
				}
			}
			if tc.intact != "" {
				if got := readOS(t, p.OS()); got != tc.intact {
					t.Errorf("existing file changed to %q", got)
				}
			}
			if left := tempLeftovers(t, w.root); left != nil {
				t.Errorf("temp files left: %v", left)
			}
		})
	}
}

func TestLocalReadOnlyRoot(t *testing.T) {
	w := newWorkspace(t)
	l := newLocal(t, ops.FolderSpec{Path: w.root})
	spill := filepath.Join(w.base, "outside")
	if err := l.AddReadOnlyRoot(spill); err != nil {
		t.Fatal(err)
	}
	secret := resolve(t, l, spill+"/secret.txt")
	dir := resolve(t, l, spill+"/dir")
	fresh := resolve(t, l, spill+"/fresh.txt")
	if b, err := l.ReadFile(secret); err != nil || string(b) != "secret\n" {
		t.Fatalf("ReadFile = %q, %v; a read-only root must stay readable", b, err)
	}
	writes := []struct {
		name string
		op   func() error
	}{
		{"WriteFile", func() error { return l.WriteFile(secret, []byte("x"), 0o644, nil) }},
		{"CreateFile", func() error { return l.CreateFile(fresh, []byte("x"), 0o644, nil) }},
		{"MkdirAll", func() error { return l.MkdirAll(resolve(t, l, spill+"/newdir"), 0o755) }},
		{"Remove", func() error { return l.Remove(secret) }},
		{"Rename", func() error { return l.Rename(secret, fresh) }},
		{"Remove dir", func() error { return l.Remove(dir) }},
	}
	for _, tc := range writes {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.op(); err == nil || !strings.Contains(err.Error(), "read-only") {
				t.Fatalf("err = %v, want a read-only refusal", err)
			}
		})
	}
	if got := readOS(t, filepath.Join(spill, "secret.txt")); got != "secret\n" {
		t.Errorf("read-only file changed to %q", got)
	}
	for _, name := range []string{"fresh.txt", "newdir"} {
		if _, err := os.Lstat(filepath.Join(spill, name)); err == nil {
			t.Errorf("%s was created in the read-only root", name)
		}
	}
}

func TestLocalMkdirAllReadDir(t *testing.T) {
	w := newWorkspace(t)
	l := newLocal(t, ops.FolderSpec{Path: w.root})
	if err := l.MkdirAll(resolve(t, l, "x/y/z"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := l.MkdirAll(resolve(t, l, "x/y"), 0o755); err != nil {
		t.Errorf("MkdirAll of an existing dir: %v", err)
	}
	if err := l.MkdirAll(resolve(t, l, "a.go"), 0o755); err == nil {
		t.Error("MkdirAll over a file succeeded")
	}
	if fi, err := l.Stat(resolve(t, l, "x/y/z")); err != nil || !fi.IsDir() {
		t.Fatalf("Stat = %v, %v", fi, err)
	}
	if err := l.WriteFile(resolve(t, l, "x/y/z/f.txt"), []byte("f"), 0o644, nil); err != nil {
		t.Fatal(err)
	}

	entries, err := l.ReadDir(resolve(t, l, "x/y"))
	if err != nil || len(entries) != 1 || entries[0].Name() != "z" || !entries[0].IsDir() {
		t.Fatalf("ReadDir(x/y) = %v, %v; want [z/]", entries, err)
	}
	root, err := l.ReadDir(resolve(t, l, "."))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range root {
		n := e.Name()
		if e.Type()&fs.ModeSymlink != 0 {
			n += "@"
		} else if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	// Sorted, symlinks reported as links (not followed).
	want := "a/ a.go absin@ dangclimb@ dangin@ dangout@ dir/ loopa@ loopb@ my file.txt node_modules/ passwd@ sib@ src/ srclink@ sub/ ws2link@ x/"
	if got := strings.Join(names, " "); got != ".git/ "+want {
		t.Errorf("ReadDir(.) =\n%s\nwant\n.git/ %s", got, want)
	}
	if _, err := l.ReadDir(resolve(t, l, "a.go")); err == nil {
		t.Error("ReadDir of a file succeeded")
	}
	if target, err := l.Readlink(resolve(t, l, "sub")); err == nil {
		t.Errorf("Readlink of a dir = %q", target)
	}
}

func TestLocalRenameRemove(t *testing.T) {
	w := newWorkspace(t)
	l := newLocal(t, ops.FolderSpec{Path: w.root}, ops.FolderSpec{Path: filepath.Join(w.base, "ws2")})
	if err := l.Rename(resolve(t, l, "a.go"), resolve(t, l, "src/b.go")); err != nil {
		t.Fatal(err)
	}
	if got := readOS(t, filepath.Join(w.root, "src", "b.go")); got != "package a\n" {
		t.Errorf("renamed content = %q", got)
	}
	if err := l.Rename(resolve(t, l, "src/b.go"), resolve(t, l, w.base+"/ws2/b.go")); err == nil {
		t.Error("rename across workspace folders succeeded")
	}
	if err := l.Remove(resolve(t, l, "src")); err == nil {
		t.Error("Remove of a non-empty dir succeeded")
	}
	if err := l.Remove(resolve(t, l, "src/b.go")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Stat(resolve(t, l, "src/b.go")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat after Remove = %v, want ErrNotExist", err)
	}
}

// CleanTemp stops when its context ends (the session closed): a short
// session does not wait for a walk of the whole tree.
func TestLocalCleanTempStopsWhenCancelled(t *testing.T) {
	w := newWorkspace(t)
	for i := range 500 {
		if err := os.WriteFile(filepath.Join(w.root, fmt.Sprintf("f%03d.txt", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	last := filepath.Join(w.root, "zz", ops.TempPrefix+"a.go-123") // walked last
	os.MkdirAll(filepath.Dir(last), 0o755)
	if err := os.WriteFile(last, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l := newLocal(t, ops.FolderSpec{Path: w.root})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := l.CleanTemp(ctx, l.Folders()[0]); got != 0 {
		t.Errorf("a cancelled CleanTemp removed %d files", got)
	}
	if _, err := os.Lstat(last); err != nil {
		t.Errorf("a cancelled CleanTemp walked to the end: %v", err)
	}
	if got := l.CleanTemp(context.Background(), l.Folders()[0]); got != 1 {
		t.Errorf("CleanTemp = %d, want the 1 leftover", got)
	}
}

func TestLocalCleanTemp(t *testing.T) {
	w := newWorkspace(t)
	l := newLocal(t, ops.FolderSpec{Path: w.root})
	// A process still running (another agentls writing) and one that has
	// exited (a crashed write).
	live := exec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	livePID, deadPID := strconv.Itoa(live.Process.Pid), strconv.Itoa(dead.ProcessState.Pid())
	old := ops.TempPrefix + "old.go-" + livePID + "-0a0b"
	plant := map[string]bool{ // path → should be removed
		ops.TempPrefix + "e.go-" + livePID + "-0a0b": false, // a running process's write in progress
		old: true, // a running process's, but older than TempMaxAge: its pid was reused
		ops.TempPrefix + "d.go-" + deadPID + "-0a0b":                   true, // a crashed process's
		ops.TempPrefix + "a.go-123":                                    true,
		"a/b/" + ops.TempPrefix + "c.txt-456":                          true,
		".git/" + ops.TempPrefix + "x":                                 false, // .git is skipped
		"node_modules/" + ops.TempPrefix + "y":                         false,
		"a/not" + ops.TempPrefix + "z":                                 false, // prefix only
		ops.TempPrefix + "dir/" + ops.TempPrefix + "f-00":              true,  // a dir with the prefix is kept, its temp file not
		ops.TempPrefix + "c.go-" + strconv.Itoa(os.Getpid()) + "-0a0b": false, // ours: a write in progress
	}
	for name := range plant {
		p := filepath.Join(w.root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-ops.TempMaxAge - time.Minute)
	if err := os.Chtimes(filepath.Join(w.root, old), long, long); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, rm := range plant {
		if rm {
			want++
		}
	}
	if got := l.CleanTemp(context.Background(), l.Folders()[0]); got != want {
		t.Errorf("CleanTemp = %d, want %d", got, want)
	}
	for name, rm := range plant {
		_, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(name)))
		if exists := err == nil; exists == rm {
			t.Errorf("%s: exists=%v, want removed=%v", name, exists, rm)
		}
	}
	if _, err := os.Stat(filepath.Join(w.base, "outside", "secret.txt")); err != nil {
		t.Error("CleanTemp reached outside the root through a symlink")
	}
}

// TestLocalSymlinkSwapAfterResolve is the race Resolve alone cannot win:
// a directory replaced by an outward symlink between Resolve and the
// operation. os.Root must refuse instead of following it.
func TestLocalSymlinkSwapAfterResolve(t *testing.T) {
	cases := []struct {
		name string
		rel  string
		op   func(l *ops.Local, p ops.Path) error
	}{
		{"ReadFile", "dir/f.txt", func(l *ops.Local, p ops.Path) error { _, err := l.ReadFile(p); return err }},
		{"ReadFileInfo", "dir/f.txt", func(l *ops.Local, p ops.Path) error { _, _, err := opstest.ReadFileInfo(l, p); return err }},
		{"Stat", "dir/f.txt", func(l *ops.Local, p ops.Path) error { _, err := l.Stat(p); return err }},
		{"ReadDir", "dir", func(l *ops.Local, p ops.Path) error { _, err := l.ReadDir(p); return err }},
		{"WriteFile", "dir/f.txt", func(l *ops.Local, p ops.Path) error { return l.WriteFile(p, []byte("pwned\n"), 0o644, nil) }},
		{"CreateFile", "dir/new.txt", func(l *ops.Local, p ops.Path) error { return l.CreateFile(p, []byte("pwned\n"), 0o644, nil) }},
		{"MkdirAll", "dir/newdir", func(l *ops.Local, p ops.Path) error { return l.MkdirAll(p, 0o755) }},
		{"Remove", "dir/f.txt", func(l *ops.Local, p ops.Path) error { return l.Remove(p) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkspace(t)
			l := newLocal(t, ops.FolderSpec{Path: w.root})
			p := resolve(t, l, tc.rel)
			outside := filepath.Join(w.base, "outside", "dir")
			if err := os.Rename(filepath.Join(w.root, "dir"), filepath.Join(w.root, "dir.old")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(w.root, "dir")); err != nil {
				t.Fatal(err)
			}
			if err := tc.op(l, p); err == nil {
				t.Fatalf("%s followed a swapped-in outward symlink", tc.name)
			}
			entries, _ := os.ReadDir(outside)
			if len(entries) != 1 || readOS(t, filepath.Join(outside, "f.txt")) != "outside\n" {
				t.Errorf("outside dir changed: %v", entries)
			}
		})
	}
}

func TestLocalSetFolders(t *testing.T) {
	w := newWorkspace(t)
	ws2 := filepath.Join(w.base, "ws2")
	spill := filepath.Join(w.base, "outside")
	l := newLocal(t, ops.FolderSpec{Path: w.root})
	if err := l.AddReadOnlyRoot(spill); err != nil {
		t.Fatal(err)
	}
	old := resolve(t, l, "a.go")

	if err := l.SetFolders([]ops.FolderSpec{{Name: "second", Path: ws2}}); err != nil {
		t.Fatal(err)
	}
	folders := l.Folders()
	if len(folders) != 2 || folders[0].Root != ws2 || folders[0].Name != "second" || !folders[1].ReadOnly || folders[1].Root != spill {
		t.Fatalf("Folders = %+v, %+v; want ws2 then the kept read-only root", folders[0], folders[len(folders)-1])
	}
	if b, err := l.ReadFile(resolve(t, l, "f")); err != nil || string(b) != "ws2 secret\n" {
		t.Errorf("relative path after SetFolders = %q, %v; want the new first folder", b, err)
	}
	if _, err := l.ReadFile(old); err == nil {
		t.Error("a Path of a replaced folder still reads")
	}
	if _, err := l.Resolve(w.root + "/a.go"); err == nil {
		t.Error("the replaced folder still resolves")
	}
	if _, err := l.ReadFile(resolve(t, l, spill+"/secret.txt")); err != nil {
		t.Errorf("read-only root lost by SetFolders: %v", err)
	}

	// A bad spec leaves the previous folders in place.
	if err := l.SetFolders([]ops.FolderSpec{{Path: w.root}, {Path: filepath.Join(w.base, "missing")}}); err == nil {
		t.Fatal("SetFolders with a missing folder succeeded")
	}
	if l.Folders()[0].Root != ws2 {
		t.Errorf("failed SetFolders changed folders to %+v", l.Folders()[0])
	}

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ReadFile(ops.Path{Folder: folders[0], Rel: "f"}); err == nil {
		t.Error("ReadFile after Close succeeded")
	}
}

func TestLocalConcurrentWrites(t *testing.T) {
	w := newWorkspace(t)
	l := newLocal(t, ops.FolderSpec{Path: w.root})
	const n = 32
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			p, err := l.Resolve(fmt.Sprintf("sub/f%02d.txt", i))
			if err == nil {
				for round := range 3 { // overwrite too, not just create
					err = errors.Join(err, l.WriteFile(p, fmt.Appendf(nil, "%d/%d", i, round), 0o644, nil))
				}
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
			continue
		}
		if got, want := readOS(t, filepath.Join(w.root, "sub", fmt.Sprintf("f%02d.txt", i))), fmt.Sprintf("%d/2", i); got != want {
			t.Errorf("f%02d = %q, want %q", i, got, want)
		}
	}
	if left := tempLeftovers(t, w.root); left != nil {
		t.Errorf("temp files left: %v", left)
	}
}

func TestLocalFolderFS(t *testing.T) {
	w := newWorkspace(t)
	l := newLocal(t, ops.FolderSpec{Path: w.root})
	fsys := l.FolderFS(l.Folders()[0])
	if b, err := fs.ReadFile(fsys, "src/a.go"); err != nil || string(b) != "package src\n" {
		t.Errorf("FolderFS read = %q, %v", b, err)
	}
	if _, err := fs.ReadFile(fsys, "passwd"); err == nil {
		t.Error("FolderFS followed an outward symlink")
	}
	if _, err := fs.ReadFile(l.FolderFS(&ops.Folder{Root: w.root}), "a.go"); err == nil {
		t.Error("FolderFS of an unknown folder is not empty")
	}
}

// The before hook runs once the new content is ready and can still stop
// the write: the file keeps its content and no temp file is left.
func TestLocalWriteBeforeHook(t *testing.T) {
	refuse := errors.New("refused")
	for _, tc := range []struct {
		name   string
		create bool
	}{{"WriteFile", false}, {"CreateFile", true}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkspace(t)
			l := newLocal(t, ops.FolderSpec{Path: w.root})
			osPath := filepath.Join(w.root, "f.txt")
			if !tc.create {
				if err := os.WriteFile(osPath, []byte("kept\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ran := false
			hook := func() error {
				ran = true
				if left := tempLeftovers(t, w.root); len(left) != 1 {
					t.Errorf("before ran without the temp file in place: %v", left)
				}
				return refuse
			}
			var err error
			if tc.create {
				err = l.CreateFile(resolve(t, l, "f.txt"), []byte("new\n"), 0o644, hook)
			} else {
				err = l.WriteFile(resolve(t, l, "f.txt"), []byte("new\n"), 0o644, hook)
			}
			if !ran || !errors.Is(err, refuse) {
				t.Fatalf("ran %v, err %v; want the hook's error", ran, err)
			}
			got, statErr := os.ReadFile(osPath)
			if tc.create && !os.IsNotExist(statErr) || !tc.create && string(got) != "kept\n" {
				t.Errorf("file after a refused write: %q, %v", got, statErr)
			}
			if left := tempLeftovers(t, w.root); left != nil {
				t.Errorf("temp files left: %v", left)
			}
		})
	}
}

// ReplaceFile replaces a file only while it holds what the caller expects:
// a change found by the content check leaves the file alone, and so does
// one that lands after it, just before the rename (the before hook is that
// moment; the last stat catches it). Nothing is lost either way and no
// temp file stays behind.
func TestLocalReplaceFile(t *testing.T) {
	const read = "as read\n"
	rename := func(t *testing.T, dir, name, body string) {
		t.Helper()
		tmp := filepath.Join(dir, ".editor-save.tmp")
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		// meanwhile runs after the check, as the before hook; nil: no race.
		meanwhile func(t *testing.T, dir string)
		// onDisk is written before the call; the file then holds want.
		onDisk, want string
		err          error
		mode         fs.FileMode
	}{
		{name: "unchanged: replaced, mode kept", onDisk: read, want: "new\n", mode: 0o755},
		{name: "changed before the check", onDisk: "saved by the user\n", want: "saved by the user\n", err: ops.ErrChanged, mode: 0o644},
		{name: "changed before the check, same size", onDisk: "as reaD\n", want: "as reaD\n", err: ops.ErrChanged, mode: 0o644},
		{name: "a save lands after the check", onDisk: read, want: "saved late\n", err: ops.ErrChanged, mode: 0o644,
			meanwhile: func(t *testing.T, dir string) { rename(t, dir, "f.txt", "saved late\n") }},
		{name: "an in-place write lands after the check", onDisk: read, want: "written late\n", err: ops.ErrChanged, mode: 0o644,
			meanwhile: func(t *testing.T, dir string) {
				os.WriteFile(filepath.Join(dir, "f.txt"), []byte("written late\n"), 0o644)
			}},
		{name: "deleted after the check", onDisk: read, want: "", err: ops.ErrChanged, mode: 0o644,
			meanwhile: func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "f.txt")) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkspace(t)
			l := newLocal(t, ops.FolderSpec{Path: w.root})
			osPath := filepath.Join(w.root, "f.txt")
			if err := os.WriteFile(osPath, []byte(tc.onDisk), tc.mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(osPath, tc.mode)
			var before func() error
			if tc.meanwhile != nil {
				before = func() error { tc.meanwhile(t, w.root); return nil }
			}
			err := l.ReplaceFile(resolve(t, l, "f.txt"), []byte("new\n"), 0o644, []byte(read), before)
			if !errors.Is(err, tc.err) || tc.err == nil && err != nil {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			got, rerr := os.ReadFile(osPath)
			if tc.want == "" {
				if !os.IsNotExist(rerr) {
					t.Errorf("file = %q, %v; want it still deleted", got, rerr)
				}
			} else if string(got) != tc.want {
				t.Errorf("file = %q, want %q", got, tc.want)
			}
			if fi, err := os.Stat(osPath); err == nil && tc.err == nil && fi.Mode().Perm() != tc.mode {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), tc.mode)
			}
			if left := tempLeftovers(t, w.root); left != nil {
				t.Errorf("temp files left: %v", left)
			}
		})
	}
}

// A folder keeps the directory it opened; Refresh notices the directory at
// its path is another one and opens that, once, keeping Paths valid.
func TestLocalRefresh(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	put := func(content string) {
		t.Helper()
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("first\n")
	l := newLocal(t, ops.FolderSpec{Path: root})
	f := l.Folders()[0]
	p := resolve(t, l, "f.txt")
	if st := l.Refresh(f); st != ops.FolderOpen {
		t.Fatalf("Refresh of an untouched folder = %v, want FolderOpen", st)
	}

	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if st := l.Refresh(f); st != ops.FolderGone {
		t.Errorf("Refresh of a deleted folder = %v, want FolderGone", st)
	}
	// Something at the path that is not a real directory is not taken.
	if err := os.WriteFile(root, []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := l.Refresh(f); st != ops.FolderGone {
		t.Errorf("Refresh with a file at the folder's path = %v, want FolderGone", st)
	}
	os.Remove(root)
	elsewhere := filepath.Join(base, "elsewhere")
	if err := os.Mkdir(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, root); err != nil {
		t.Fatal(err)
	}
	if st := l.Refresh(f); st != ops.FolderGone {
		t.Errorf("Refresh with a symlink at the folder's path = %v, want FolderGone", st)
	}
	os.Remove(root)

	put("second\n")
	if _, err := l.ReadFile(p); err == nil {
		t.Error("before Refresh, the folder already reads the new directory; the test shows nothing")
	}
	// Calls racing to notice: exactly one opens the folder again.
	var wg sync.WaitGroup
	states := make([]ops.FolderState, 8)
	for i := range states {
		wg.Go(func() { states[i] = l.Refresh(f) })
	}
	wg.Wait()
	reopened := 0
	for _, st := range states {
		switch st {
		case ops.FolderReopened:
			reopened++
		case ops.FolderGone:
			t.Errorf("a racing Refresh said FolderGone")
		}
	}
	if reopened != 1 {
		t.Errorf("%d of %d racing Refresh calls reopened the folder, want 1", reopened, len(states))
	}
	if b, err := l.ReadFile(p); err != nil || string(b) != "second\n" {
		t.Errorf("the Path from before reads %q, %v; want the new directory's file", b, err)
	}
	if err := l.WriteFile(p, []byte("third\n"), 0o644, nil); err != nil {
		t.Errorf("write after Refresh: %v", err)
	}
	if got := readOS(t, filepath.Join(root, "f.txt")); got != "third\n" {
		t.Errorf("the write went elsewhere: the file at the path holds %q", got)
	}
	if st := l.Refresh(f); st != ops.FolderOpen {
		t.Errorf("Refresh after reopening = %v, want FolderOpen", st)
	}

	// A folder no longer in the workspace is gone, whatever its path holds.
	if err := l.SetFolders([]ops.FolderSpec{{Path: elsewhere}}); err != nil {
		t.Fatal(err)
	}
	if st := l.Refresh(f); st != ops.FolderGone {
		t.Errorf("Refresh of a removed folder = %v, want FolderGone", st)
	}
}

// Two agentls processes (two Locals over one folder) replacing the same
// file they both read: while the first is between its final check and its
// rename (its before hook), the second must not get to its own check, and
// once the first renamed, the second sees the new file and replaces
// nothing. Without the lock, both could pass the check before either
// renamed, and one writer's change would be lost.
func TestLocalReplaceFileRacingProcesses(t *testing.T) {
	w := newWorkspace(t)
	osPath := filepath.Join(w.root, "f.txt")
	if err := os.WriteFile(osPath, []byte("as read\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	first, second := newLocal(t, ops.FolderSpec{Path: w.root}), newLocal(t, ops.FolderSpec{Path: w.root})
	entered, release := make(chan struct{}), make(chan struct{})
	firstDone := make(chan error, 1)
	go func() {
		firstDone <- first.ReplaceFile(resolve(t, first, "f.txt"), []byte("first\n"), 0o644, []byte("as read\n"), func() error {
			close(entered)
			<-release
			return nil
		})
	}()
	<-entered
	secondChecked := make(chan struct{})
	secondDone := make(chan error, 1)
	go func() {
		secondDone <- second.ReplaceFile(resolve(t, second, "f.txt"), []byte("second\n"), 0o644, []byte("as read\n"), func() error {
			close(secondChecked)
			return nil
		})
	}()
	select {
	case <-secondChecked:
		t.Fatal("the second replace checked the file while the first was about to rename it")
	case err := <-secondDone:
		t.Fatalf("the second replace finished while the first held the file: %v", err)
	case <-time.After(200 * time.Millisecond): // it waits for the lock
	}
	close(release)
	if err := <-firstDone; err != nil {
		t.Fatalf("first replace: %v", err)
	}
	if err := <-secondDone; !errors.Is(err, ops.ErrChanged) {
		t.Fatalf("second replace after the first renamed: %v, want ErrChanged", err)
	}
	if got := readOS(t, osPath); got != "first\n" {
		t.Errorf("the file holds %q, want the first writer's change", got)
	}
	if left := tempLeftovers(t, w.root); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}
