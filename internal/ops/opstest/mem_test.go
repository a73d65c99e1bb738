package opstest_test

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/ops/opstest"
)

// Mem-only behaviour; what Mem shares with Local is in fs_test.go.

func TestMemResolve(t *testing.T) {
	m := opstest.NewMem("/ws", map[string]string{"a.go": "a", "src/b.go": "b"})
	tests := []struct {
		name, input, wantRel string
		wantErr              string
	}{
		{name: "relative", input: "src/b.go", wantRel: "src/b.go"},
		{name: "at", input: "@src/b.go", wantRel: "src/b.go"},
		{name: "NBSP is part of the name", input: "my\u00a0file", wantRel: "my\u00a0file"},
		{name: "trailing slash", input: "src/", wantRel: "src"},
		{name: "root", input: "/ws", wantRel: "."},
		{name: "absolute inside", input: "/ws/src/../a.go", wantRel: "a.go"},
		{name: "file URI encoded", input: "file:///ws/my%20file", wantRel: "my file"},
		// Unlike Local on unix, Mem treats "\" as a separator: it models
		// paths abstractly, and ".." must stay refused however spelled.
		{name: "backslash separator", input: `src\b.go`, wantRel: "src/b.go"},
		{name: "backslash dotdot", input: `..\..\etc\passwd`, wantErr: `".."`},
		{name: "dotdot", input: "../x", wantErr: `".."`},
		{name: "dotdot chain", input: "a/b/../../../etc/passwd", wantErr: `".."`},
		{name: "outside", input: "/etc/passwd", wantErr: "outside the workspace"},
		{name: "sibling prefix", input: "/ws2/f", wantErr: "outside the workspace"},
		{name: "absolute dotdot out", input: "/ws/../ws2/f", wantErr: "outside the workspace"},
		{name: "NUL", input: "a\x00b", wantErr: "NUL"},
		{name: "tilde", input: "~", wantErr: `"~"`},
		{name: "tilde user", input: "~root/x", wantErr: `"~"`},
		{name: "empty", input: "  ", wantErr: "empty"},
		{name: "proc", input: "/proc/self/environ", wantErr: "device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := m.Resolve(tc.input)
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
			if p.Folder.Root != "/ws" {
				t.Errorf("Folder.Root = %q", p.Folder.Root)
			}
		})
	}
}

// TestMemForeignPath: a Path Mem did not hand out (zero, or of another FS)
// is an error, not a panic or a write into some other folder.
func TestMemForeignPath(t *testing.T) {
	m := opstest.NewMem("/ws", map[string]string{"a.go": "a"})
	for name, p := range map[string]ops.Path{
		"zero":    {},
		"foreign": {Folder: &ops.Folder{Root: "/ws"}, Rel: "a.go"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := m.ReadFile(p); err == nil {
				t.Error("ReadFile succeeded")
			}
			if _, err := m.Stat(p); err == nil {
				t.Error("Stat succeeded")
			}
			if err := m.WriteFile(p, nil, 0o644, nil); err == nil {
				t.Error("WriteFile succeeded")
			}
			if err := m.MkdirAll(p, 0o755); err == nil {
				t.Error("MkdirAll succeeded")
			}
			if err := m.Remove(p); err == nil {
				t.Error("Remove succeeded")
			}
		})
	}
	if b, _ := m.ReadFile(resolve(t, m, "a.go")); string(b) != "a" {
		t.Errorf("a.go = %q after foreign writes", b)
	}
}

func TestMemRenameIntoItself(t *testing.T) {
	m := opstest.NewMem("/ws", map[string]string{"d/f": "f", "e/g": "g"})
	if err := m.Rename(resolve(t, m, "d"), resolve(t, m, "d/sub")); err == nil {
		t.Error("moving a directory into itself succeeded")
	}
	if err := m.Rename(resolve(t, m, "d"), resolve(t, m, "e")); !errors.Is(err, fs.ErrExist) {
		t.Errorf("renaming onto a non-empty dir: %v, want ErrExist", err)
	}
	if b, err := m.ReadFile(resolve(t, m, "d/f")); err != nil || string(b) != "f" {
		t.Errorf("d/f = %q, %v after refused renames", b, err)
	}
}

func TestMemFolderFSIsSnapshot(t *testing.T) {
	m := opstest.NewMem("/ws", map[string]string{"a.go": "v1"})
	snap := m.FolderFS(m.Folders()[0])
	if err := m.WriteFile(resolve(t, m, "a.go"), []byte("v2"), 0o644, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := fs.ReadFile(snap, "a.go"); err != nil || string(b) != "v1" {
		t.Errorf("snapshot = %q, %v; want the content at FolderFS time", b, err)
	}
	if b, err := fs.ReadFile(m.FolderFS(m.Folders()[0]), "a.go"); err != nil || string(b) != "v2" {
		t.Errorf("fresh FolderFS = %q, %v", b, err)
	}
}

func TestMemConcurrent(t *testing.T) {
	m := opstest.NewMem("/ws", nil)
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			p, err := m.Resolve(fmt.Sprintf("f%d", i))
			if err != nil {
				t.Error(err)
				return
			}
			if err := m.WriteFile(p, []byte{byte(i)}, 0o644, nil); err != nil {
				t.Error(err)
			}
			root, _ := m.Resolve(".")
			m.ReadDir(root) // concurrent readers, for -race
			m.FolderFS(p.Folder)
		})
	}
	wg.Wait()
	if es, err := m.ReadDir(resolve(t, m, ".")); err != nil || len(es) != n {
		t.Errorf("ReadDir = %d entries, %v; want %d", len(es), err, n)
	}
}

func resolve(t *testing.T, fsys ops.FS, input string) ops.Path {
	t.Helper()
	p, err := fsys.Resolve(input)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", input, err)
	}
	return p
}
