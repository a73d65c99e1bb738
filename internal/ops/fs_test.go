package ops_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/ops/opstest"
)

// The contract tests run every FS implementation through the same cases, so
// unit tests written against Mem hold for Local.

var contractFiles = map[string]string{
	"a.go":      "package a\n",
	"src/a.go":  "package src\n",
	"a/b/c.txt": "c\n",
	"empty/.k":  "",
}

// fixture is one FS with the contract files in its first folder (root) and
// "secret.txt" in a read-only root (spill).
type fixture struct {
	fsys        ops.FS
	root, spill string
}

type impl struct {
	name string
	make func(t *testing.T) fixture
}

var impls = []impl{
	{"Local", func(t *testing.T) fixture {
		base, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		root, spill := filepath.Join(base, "ws"), filepath.Join(base, "spill")
		files := map[string]string{"spill/secret.txt": "secret\n", "ws2/f": "ws2\n"}
		for name, c := range contractFiles {
			files["ws/"+name] = c
		}
		for name, c := range files {
			p := filepath.Join(base, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		l := newLocal(t, ops.FolderSpec{Path: root})
		if err := l.AddReadOnlyRoot(spill); err != nil {
			t.Fatal(err)
		}
		return fixture{l, root, spill}
	}},
	{"Mem", func(t *testing.T) fixture {
		m := newMem(t)
		return fixture{m, "/w/ws", "/w/spill"}
	}},
}

// newMem builds the Mem twin of the Local fixture. Mem has no way to seed a
// read-only root, so the spill folder is written while writable, then
// demoted, which also exercises SetFolders keeping read-only roots.
func newMem(t *testing.T) *opstest.Mem {
	t.Helper()
	m := opstest.NewMem("/w/spill", map[string]string{"secret.txt": "secret\n"})
	if err := m.AddReadOnlyRoot("/w/spill"); err != nil {
		t.Fatal(err)
	}
	if err := m.SetFolders([]ops.FolderSpec{{Path: "/w/ws2"}}); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile(resolve(t, m, "f"), []byte("ws2\n"), 0o644, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.SetFolders([]ops.FolderSpec{{Path: "/w/ws"}}); err != nil {
		t.Fatal(err)
	}
	for name, c := range contractFiles {
		p := resolve(t, m, name)
		if err := m.MkdirAll(resolve(t, m, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteFile(p, []byte(c), 0o644, nil); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func forEachImpl(t *testing.T, test func(t *testing.T, f fixture)) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) { test(t, im.make(t)) })
	}
}

func TestContractResolve(t *testing.T) {
	forEachImpl(t, func(t *testing.T, f fixture) {
		tests := []struct {
			name, input, wantRel string
			wantErr              string
		}{
			{name: "relative", input: "src/a.go", wantRel: "src/a.go"},
			{name: "at", input: "@a/b/c.txt", wantRel: "a/b/c.txt"},
			{name: "NBSP kept when nothing is named either way", input: "new\u00a0file", wantRel: "new\u00a0file"},
			{name: "dot segments", input: "./a/./b/", wantRel: "a/b"},
			{name: "missing", input: "nodir/new.go", wantRel: "nodir/new.go"},
			{name: "absolute inside", input: f.root + "/src/a.go", wantRel: "src/a.go"},
			{name: "file URI", input: "file://" + f.root + "/a.go", wantRel: "a.go"},
			{name: "absolute read-only", input: f.spill + "/secret.txt", wantRel: "secret.txt"},
			{name: "dotdot", input: "a/../../x", wantErr: `".."`},
			{name: "absolute outside", input: "/etc/passwd", wantErr: "outside the workspace"},
			{name: "sibling prefix", input: f.root + "2/f", wantErr: "outside the workspace"},
			{name: "NUL", input: "a\x00", wantErr: "NUL"},
			{name: "tilde", input: "~/x", wantErr: `"~"`},
			{name: "empty", input: "", wantErr: "empty"},
			{name: "device", input: "/dev/null", wantErr: "device"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				p, err := f.fsys.Resolve(tc.input)
				if tc.wantErr != "" {
					var pe *ops.PathError
					if !errors.As(err, &pe) || !strings.Contains(pe.Reason, tc.wantErr) {
						t.Fatalf("Resolve(%q) = %+v, %v; want a PathError saying %q", tc.input, p, err, tc.wantErr)
					}
					return
				}
				if err != nil || p.Rel != tc.wantRel {
					t.Fatalf("Resolve(%q) = %q, %v; want %q", tc.input, p.Rel, err, tc.wantRel)
				}
			})
		}
	})
}

func TestContractWrite(t *testing.T) {
	forEachImpl(t, func(t *testing.T, f fixture) {
		fsys := f.fsys
		// A file created 0755 keeps 0755 when rewritten with 0644.
		sh := resolve(t, fsys, "run.sh")
		if err := fsys.CreateFile(sh, []byte("v1"), 0o755, nil); err != nil {
			t.Fatal(err)
		}
		if err := fsys.WriteFile(sh, []byte("v2"), 0o644, nil); err != nil {
			t.Fatal(err)
		}
		if b, err := fsys.ReadFile(sh); err != nil || string(b) != "v2" {
			t.Errorf("ReadFile = %q, %v; want v2", b, err)
		}
		if fi, err := fsys.Stat(sh); err != nil || fi.Mode().Perm() != 0o755 || fi.Size() != 2 || fi.Name() != "run.sh" {
			t.Errorf("Stat = %v, %v; want run.sh 0755 size 2", fi, err)
		}

		errCases := []struct {
			name string
			op   func() error
			want error // nil: any error
		}{
			{"create existing", func() error { return fsys.CreateFile(resolve(t, fsys, "a.go"), []byte("x"), 0o644, nil) }, fs.ErrExist},
			{"create over dir", func() error { return fsys.CreateFile(resolve(t, fsys, "src"), []byte("x"), 0o644, nil) }, fs.ErrExist},
			{"create missing parent", func() error { return fsys.CreateFile(resolve(t, fsys, "nodir/x"), []byte("x"), 0o644, nil) }, fs.ErrNotExist},
			{"write missing parent", func() error { return fsys.WriteFile(resolve(t, fsys, "nodir/x"), []byte("x"), 0o644, nil) }, fs.ErrNotExist},
			{"write over dir", func() error { return fsys.WriteFile(resolve(t, fsys, "src"), []byte("x"), 0o644, nil) }, nil},
			{"read dir", func() error { _, err := fsys.ReadFile(resolve(t, fsys, "src")); return err }, nil},
			{"read missing", func() error { _, err := fsys.ReadFile(resolve(t, fsys, "nope")); return err }, fs.ErrNotExist},
			{"mkdir over file", func() error { return fsys.MkdirAll(resolve(t, fsys, "a.go"), 0o755) }, nil},
			{"readdir of file", func() error { _, err := fsys.ReadDir(resolve(t, fsys, "a.go")); return err }, nil},
			{"remove non-empty dir", func() error { return fsys.Remove(resolve(t, fsys, "a")) }, nil},
			{"remove missing", func() error { return fsys.Remove(resolve(t, fsys, "nope")) }, fs.ErrNotExist},
			{"readlink of file", func() error { _, err := fsys.Readlink(resolve(t, fsys, "a.go")); return err }, nil},
		}
		for _, tc := range errCases {
			t.Run(tc.name, func(t *testing.T) {
				err := tc.op()
				if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
			})
		}
		// The failures changed nothing.
		want := map[string]string{"a.go": "package a\n", "src/a.go": "package src\n", "a/b/c.txt": "c\n"}
		for name, c := range want {
			if b, err := fsys.ReadFile(resolve(t, fsys, name)); err != nil || string(b) != c {
				t.Errorf("%s = %q, %v after failed writes; want %q", name, b, err, c)
			}
		}
		if fi, err := fsys.Stat(resolve(t, fsys, "src")); err != nil || !fi.IsDir() {
			t.Errorf("src is no longer a directory: %v, %v", fi, err)
		}
	})
}

func TestContractDirs(t *testing.T) {
	forEachImpl(t, func(t *testing.T, f fixture) {
		fsys := f.fsys
		if err := fsys.MkdirAll(resolve(t, fsys, "x/y/z"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := fsys.MkdirAll(resolve(t, fsys, "x/y"), 0o755); err != nil {
			t.Errorf("MkdirAll of an existing dir: %v", err)
		}
		if err := fsys.CreateFile(resolve(t, fsys, "x/y/z/f"), []byte("f"), 0o644, nil); err != nil {
			t.Fatal(err)
		}
		if err := fsys.CreateFile(resolve(t, fsys, "x/g"), []byte("g"), 0o644, nil); err != nil {
			t.Fatal(err)
		}
		if got := listDir(t, fsys, "."); got != "a/ a.go empty/ src/ x/" {
			t.Errorf("ReadDir(.) = %q", got)
		}
		if got := listDir(t, fsys, "x"); got != "g y/" {
			t.Errorf("ReadDir(x) = %q, want sorted, dirs marked", got)
		}

		// Rename moves a directory with its contents.
		if err := fsys.Rename(resolve(t, fsys, "x/y"), resolve(t, fsys, "moved")); err != nil {
			t.Fatal(err)
		}
		if b, err := fsys.ReadFile(resolve(t, fsys, "moved/z/f")); err != nil || string(b) != "f" {
			t.Errorf("moved/z/f = %q, %v", b, err)
		}
		if _, err := fsys.Stat(resolve(t, fsys, "x/y/z/f")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("old path after Rename: %v, want ErrNotExist", err)
		}
		if got := listDir(t, fsys, "x"); got != "g" {
			t.Errorf("ReadDir(x) after moving y out = %q", got)
		}
		// A file renamed over another replaces it.
		if err := fsys.Rename(resolve(t, fsys, "x/g"), resolve(t, fsys, "a.go")); err != nil {
			t.Fatal(err)
		}
		if b, _ := fsys.ReadFile(resolve(t, fsys, "a.go")); string(b) != "g" {
			t.Errorf("a.go after rename over it = %q", b)
		}

		// Remove works bottom-up; an emptied dir can go.
		for _, p := range []string{"moved/z/f", "moved/z", "moved"} {
			if err := fsys.Remove(resolve(t, fsys, p)); err != nil {
				t.Fatalf("Remove(%s): %v", p, err)
			}
		}
		if _, err := fsys.Stat(resolve(t, fsys, "moved")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(moved) after Remove = %v", err)
		}
	})
}

func listDir(t *testing.T, fsys ops.FS, dir string) string {
	t.Helper()
	es, err := fsys.ReadDir(resolve(t, fsys, dir))
	if err != nil {
		t.Fatalf("ReadDir(%s): %v", dir, err)
	}
	var names []string
	for _, e := range es {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	return strings.Join(names, " ")
}

func TestContractReadOnly(t *testing.T) {
	forEachImpl(t, func(t *testing.T, f fixture) {
		fsys := f.fsys
		secret := resolve(t, fsys, f.spill+"/secret.txt")
		fresh := resolve(t, fsys, f.spill+"/fresh")
		if !secret.Folder.ReadOnly || secret.Display() != filepath.Join(f.spill, "secret.txt") {
			t.Fatalf("Path = %+v, Display %q; want read-only, shown absolute", secret, secret.Display())
		}
		if b, err := fsys.ReadFile(secret); err != nil || string(b) != "secret\n" {
			t.Fatalf("ReadFile = %q, %v", b, err)
		}
		for name, op := range map[string]func() error{
			"WriteFile":  func() error { return fsys.WriteFile(secret, nil, 0o644, nil) },
			"CreateFile": func() error { return fsys.CreateFile(fresh, nil, 0o644, nil) },
			"MkdirAll":   func() error { return fsys.MkdirAll(fresh, 0o755) },
			"Remove":     func() error { return fsys.Remove(secret) },
			"Rename":     func() error { return fsys.Rename(secret, fresh) },
		} {
			if err := op(); err == nil || !strings.Contains(err.Error(), "read-only") {
				t.Errorf("%s: err = %v, want a read-only refusal", name, err)
			}
		}
		if b, err := fsys.ReadFile(secret); err != nil || string(b) != "secret\n" {
			t.Errorf("read-only file after refused writes = %q, %v", b, err)
		}
		if _, err := fsys.Stat(fresh); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("refused write created %s: %v", fresh.Rel, err)
		}
	})
}

func TestContractSetFolders(t *testing.T) {
	forEachImpl(t, func(t *testing.T, f fixture) {
		fsys := f.fsys
		old := resolve(t, fsys, "a.go")
		ws2 := filepath.Join(filepath.Dir(f.root), "ws2")
		if err := fsys.SetFolders([]ops.FolderSpec{{Name: "two", Path: ws2}}); err != nil {
			t.Fatal(err)
		}
		folders := fsys.Folders()
		if len(folders) != 2 || folders[0].Name != "two" || folders[0].Root != ws2 || !folders[1].ReadOnly {
			t.Fatalf("Folders = %v; want two, then the kept read-only root", folders)
		}
		if b, err := fsys.ReadFile(resolve(t, fsys, "f")); err != nil || string(b) != "ws2\n" {
			t.Errorf("relative read after SetFolders = %q, %v", b, err)
		}
		if _, err := fsys.ReadFile(old); err == nil {
			t.Error("a Path into the replaced folder still reads")
		}
		if err := fsys.WriteFile(old, []byte("x"), 0o644, nil); err == nil {
			t.Error("a Path into the replaced folder still writes")
		}
		if _, err := fsys.Resolve(f.root + "/a.go"); err == nil {
			t.Error("the replaced folder still resolves")
		}
	})
}

func TestContractFolderFS(t *testing.T) {
	forEachImpl(t, func(t *testing.T, f fixture) {
		folder := f.fsys.Folders()[0]
		if err := fstest.TestFS(f.fsys.FolderFS(folder), "a.go", "src/a.go", "a/b/c.txt", "empty/.k"); err != nil {
			t.Fatal(err)
		}
		// The view is read-only: fs.FS has no write methods, and the read-only
		// root is not mixed into the workspace folder's view.
		if _, err := fs.Stat(f.fsys.FolderFS(folder), "secret.txt"); err == nil {
			t.Error("the read-only root leaks into the folder's FS")
		}
	})
}

// Local and Mem resolve lenient names by one rule: the exact name wins, a
// missing name takes its one variant (odd spaces, NFD, curly quotes), two
// variants are an error naming both, and TakenVariant tells a variant was
// taken for the file's own name.
func TestContractLenientNames(t *testing.T) {
	files := map[string]string{"odd\u00a0name.txt": "1", "two\u00a0ways.txt": "2", "two\u202fways.txt": "3", "both name.txt": "4", "both\u00a0name.txt": "5", "dir\u202fx/in.txt": "6"}
	dir := t.TempDir()
	for name, c := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	local, err := ops.NewLocal([]ops.FolderSpec{{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	for name, fsys := range map[string]ops.FS{"Local": local, "Mem": opstest.NewMem("/ws", files)} {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				input, wantRel, wantErr string
				taken                   bool
			}{
				{input: "odd name.txt", wantRel: "odd\u00a0name.txt", taken: true},
				{input: "odd\u00a0name.txt", wantRel: "odd\u00a0name.txt"},
				{input: "both name.txt", wantRel: "both name.txt"},
				{input: "dir x/in.txt", wantRel: "dir\u202fx/in.txt"},
				{input: "two ways.txt", wantErr: "differ from it only"},
				{input: "new name.txt", wantRel: "new name.txt"},
			} {
				p, err := fsys.Resolve(tc.input)
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "two\u00a0ways.txt") || !strings.Contains(err.Error(), "two\u202fways.txt") {
						t.Errorf("Resolve(%q) = %+v, %v; want an error naming both variants", tc.input, p, err)
					}
					continue
				}
				if err != nil || p.Rel != tc.wantRel {
					t.Errorf("Resolve(%q) = %q, %v; want %q", tc.input, p.Rel, err, tc.wantRel)
					continue
				}
				if _, taken := ops.TakenVariant(tc.input, p); taken != tc.taken {
					t.Errorf("TakenVariant(%q, %q) = %v, want %v", tc.input, p.Rel, taken, tc.taken)
				}
			}
		})
	}
}
