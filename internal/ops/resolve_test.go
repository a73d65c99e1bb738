package ops_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/ops/opstest"
)

// workspace is an on-disk fixture: base holds the workspace "ws", a sibling
// "ws2" (same name prefix), a directory "outside" and "wslink" -> ws.
type workspace struct {
	base string // symlink-free temp dir
	root string // base/ws, the real root
	link string // base/wslink, the root as the client names it
}

// newWorkspace builds the fixture with real symlinks. Every hostile link
// has a readable target so a wrong answer would actually leak.
func newWorkspace(t testing.TB) workspace {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := workspace{base: base, root: filepath.Join(base, "ws"), link: filepath.Join(base, "wslink")}
	files := map[string]string{
		"ws/a.go":              "package a\n",
		"ws/src/a.go":          "package src\n",
		"ws/a/b/c.txt":         "c\n",
		"ws/dir/f.txt":         "inside\n",
		"ws/my file.txt":       "spaced\n",
		"ws2/f":                "ws2 secret\n",
		"outside/secret.txt":   "secret\n",
		"outside/dir/f.txt":    "outside\n",
		"ws/sub/keep.txt":      "",
		"ws/.git/keep":         "",
		"ws/node_modules/keep": "",
	}
	for name, content := range files {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"wslink":        w.root,
		"ws/passwd":     "/etc/passwd",
		"ws/sib":        filepath.Join(base, "outside"),
		"ws/sub/climb":  "../../outside",
		"ws/absin":      filepath.Join(w.root, "src", "a.go"),
		"ws/srclink":    "src",
		"ws/loopa":      "loopb",
		"ws/loopb":      "loopa",
		"ws/dangout":    filepath.Join(base, "nowhere", "deep"),
		"ws/dangin":     "newtarget.txt",
		"ws/dangclimb":  "../outside/new.txt",
		"ws/ws2link":    filepath.Join(base, "ws2"),
		"ws/sub/uproot": "..",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(base, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func newLocal(t testing.TB, specs ...ops.FolderSpec) *ops.Local {
	t.Helper()
	l, err := ops.NewLocal(specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// inside reports whether the OS path p lies in root, comparing whole
// elements.
func inside(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

func TestLocalResolve(t *testing.T) {
	w := newWorkspace(t)
	// Opened through the symlinked spelling: Root must still be the real dir.
	l := newLocal(t, ops.FolderSpec{Path: w.link})
	if got := l.Folders()[0].Root; got != w.root {
		t.Fatalf("Folder.Root = %q, want the symlink-free %q", got, w.root)
	}
	ws, base := w.root, w.base

	tests := []struct {
		name    string
		input   string
		wantRel string   // for accepted inputs
		wantErr []string // substrings of the refusal's reason; nil means accepted
		content string   // when set, ReadFile of the result must return it
	}{
		// Normal and leniently normalized inputs.
		{name: "relative file", input: "a.go", wantRel: "a.go", content: "package a\n"},
		{name: "relative nested", input: "src/a.go", wantRel: "src/a.go", content: "package src\n"},
		{name: "leading @ stripped", input: "@src/a.go", wantRel: "src/a.go"},
		{name: "dot is the root", input: ".", wantRel: "."},
		{name: "dot segments", input: "./a/./b", wantRel: "a/b"},
		{name: "dotdot that stays inside", input: "a/b/../b/c.txt", wantRel: "a/b/c.txt", content: "c\n"},
		{name: "trailing slash", input: "a/b/", wantRel: "a/b"},
		{name: "surrounding spaces trimmed", input: "  a.go\t", wantRel: "a.go"},
		{name: "NBSP normalized", input: "my\u00a0file.txt", wantRel: "my file.txt", content: "spaced\n"},
		{name: "narrow NBSP normalized", input: "my\u202ffile.txt", wantRel: "my file.txt"},
		{name: "missing file in existing dir", input: "src/new.go", wantRel: "src/new.go"},
		{name: "missing file in missing dirs", input: "a/b/new/deeper.txt", wantRel: "a/b/new/deeper.txt"},
		// Windows separators are not separators on unix: "a\b" is one
		// (harmless) file name in the root, so even "..\..\x" cannot climb.
		{name: "backslash is a name char", input: `a\b`, wantRel: `a\b`},
		{name: "backslash dotdot is a name", input: `..\..\etc\passwd`, wantRel: `..\..\etc\passwd`},

		// Absolute inputs inside.
		{name: "absolute inside", input: ws + "/src/a.go", wantRel: "src/a.go", content: "package src\n"},
		{name: "absolute root itself", input: ws, wantRel: "."},
		{name: "absolute via symlinked root", input: w.link + "/src/a.go", wantRel: "src/a.go", content: "package src\n"},
		{name: "absolute symlinked root itself", input: w.link + "/", wantRel: "."},
		{name: "absolute dotdot staying inside", input: ws + "/a/../src/a.go", wantRel: "src/a.go"},
		{name: "file URI inside", input: "file://" + ws + "/a.go", wantRel: "a.go", content: "package a\n"},
		{name: "file URI percent-encoded", input: "file://" + ws + "/my%20file.txt", wantRel: "my file.txt", content: "spaced\n"},
		{name: "file URI localhost", input: "file://localhost" + ws + "/a.go", wantRel: "a.go"},

		// Symlinks that stay inside resolve to the real file.
		{name: "absolute symlink pointing inside", input: "absin", wantRel: "src/a.go", content: "package src\n"},
		{name: "symlinked dir inside", input: "srclink/a.go", wantRel: "src/a.go", content: "package src\n"},
		{name: "symlinked dir itself", input: "srclink", wantRel: "src"},
		{name: "link to parent stays inside", input: "sub/uproot/a.go", wantRel: "a.go"},
		{name: "dangling link inside names its target", input: "dangin", wantRel: "newtarget.txt"},

		// ".." escapes.
		{name: "dotdot", input: "..", wantErr: []string{"climbs out", `".."`}},
		{name: "dotdot file", input: "../x", wantErr: []string{`".."`}},
		{name: "dotdot after dir", input: "a/../../x", wantErr: []string{`".."`}},
		{name: "dotdot chain to passwd", input: "a/b/../../../etc/passwd", wantErr: []string{`".."`}},
		{name: "dotdot to sibling root", input: "../ws2/f", wantErr: []string{`".."`}},

		// Absolute outside.
		{name: "absolute outside", input: "/etc/passwd", wantErr: []string{"outside the workspace"}},
		{name: "sibling with root as prefix", input: base + "/ws2/f", wantErr: []string{"outside the workspace"}},
		{name: "absolute dotdot out", input: ws + "/../outside/secret.txt", wantErr: []string{"outside the workspace"}},
		{name: "symlinked root dotdot out", input: w.link + "/../outside/secret.txt", wantErr: []string{"outside the workspace"}},
		{name: "at plus absolute outside", input: "@/etc/passwd", wantErr: []string{"outside the workspace"}},
		{name: "file URI outside", input: "file:///etc/passwd", wantErr: []string{"outside the workspace"}},
		{name: "root slash", input: "/", wantErr: []string{"outside the workspace"}},

		// Symlinks that leave.
		{name: "symlink to etc passwd", input: "passwd", wantErr: []string{"symlink", "outside the workspace"}},
		{name: "symlink to sibling dir", input: "sib", wantErr: []string{"symlink", "outside"}},
		{name: "file under outward dir link", input: "sib/secret.txt", wantErr: []string{"symlink", "outside"}},
		{name: "relative link climbing out", input: "sub/climb/secret.txt", wantErr: []string{"symlink", "outside"}},
		{name: "absolute through outward link", input: ws + "/sib/secret.txt", wantErr: []string{"symlink", "outside"}},
		{name: "link to sibling root", input: "ws2link/f", wantErr: []string{"symlink", "outside"}},
		{name: "missing file under outward dir link", input: "sib/newfile.txt", wantErr: []string{"symlink", "outside"}},
		{name: "missing dir under outward dir link", input: "sib/newdir/x.txt", wantErr: []string{"symlink", "outside"}},
		// Regression: a dangling link resolved to itself and was accepted,
		// though writing through it creates its (outside) target.
		{name: "dangling link outside", input: "dangout", wantErr: []string{"symlink", "outside"}},
		{name: "under dangling link outside", input: "dangout/x.txt", wantErr: []string{"symlink", "outside"}},
		{name: "dangling relative link climbing out", input: "dangclimb", wantErr: []string{"symlink", "outside"}},

		// Refused without looking at the disk.
		{name: "NUL byte", input: "a\x00.go", wantErr: []string{"NUL"}},
		{name: "NUL byte percent-encoded", input: "file://" + ws + "/a%00.go", wantErr: []string{"NUL"}},
		{name: "below a file", input: "a.go/x", wantErr: []string{"not a directory"}},
		{name: "symlink loop", input: "loopa", wantErr: []string{"loop"}},
		{name: "under symlink loop", input: "loopb/x", wantErr: []string{"loop"}},
		{name: "tilde", input: "~", wantErr: []string{`"~"`}},
		{name: "tilde slash", input: "~/x", wantErr: []string{`"~"`}},
		{name: "tilde user", input: "~root", wantErr: []string{`"~"`}},
		{name: "at tilde", input: "@~/.ssh/id_rsa", wantErr: []string{`"~"`}},
		{name: "empty", input: "", wantErr: []string{"empty"}},
		{name: "only spaces", input: " \u00a0 ", wantErr: []string{"empty"}},
		{name: "dev null", input: "/dev/null", wantErr: []string{"device"}},
		{name: "proc environ", input: "/proc/self/environ", wantErr: []string{"device"}},
		{name: "sys", input: "/sys/kernel/notes", wantErr: []string{"device"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := l.Resolve(tc.input)
			if tc.wantErr != nil {
				var pe *ops.PathError
				if !errors.As(err, &pe) {
					t.Fatalf("Resolve(%q) = %+v, %v; want *ops.PathError", tc.input, p, err)
				}
				if pe.Input != tc.input {
					t.Errorf("PathError.Input = %q, want %q", pe.Input, tc.input)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(pe.Reason, s) {
						t.Errorf("reason %q does not say %q", pe.Reason, s)
					}
				}
				if p != (ops.Path{}) {
					t.Errorf("refusal returned a non-zero Path %+v", p)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.input, err)
			}
			if p.Rel != tc.wantRel {
				t.Errorf("Rel = %q, want %q", p.Rel, tc.wantRel)
			}
			if !inside(w.root, p.OS()) {
				t.Fatalf("OS() = %q escapes the root %q", p.OS(), w.root)
			}
			// The Path names the real file: no symlink left in what exists.
			if real, err := filepath.EvalSymlinks(p.OS()); err == nil && real != p.OS() {
				t.Errorf("OS() = %q still goes through a symlink to %q", p.OS(), real)
			}
			if tc.content != "" {
				got, err := l.ReadFile(p)
				if err != nil || string(got) != tc.content {
					t.Errorf("ReadFile = %q, %v; want %q", got, err, tc.content)
				}
			}
		})
	}
}

// TestLocalResolveFolders covers choices that depend on the folder set.
func TestLocalResolveFolders(t *testing.T) {
	w := newWorkspace(t)
	ws2 := filepath.Join(w.base, "ws2")
	spill := filepath.Join(w.base, "outside")

	t.Run("no folder open", func(t *testing.T) {
		l := newLocal(t)
		_, err := l.Resolve("a.go")
		var pe *ops.PathError
		if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "no workspace folder") {
			t.Fatalf("err = %v, want a PathError about no workspace folder", err)
		}
	})
	t.Run("only a read-only root", func(t *testing.T) {
		l := newLocal(t)
		if err := l.AddReadOnlyRoot(spill); err != nil {
			t.Fatal(err)
		}
		// Relative paths have no default root to resolve against.
		if _, err := l.Resolve("secret.txt"); err == nil {
			t.Fatal("relative path resolved against a read-only root")
		}
	})
	t.Run("link into a second folder lands in that folder", func(t *testing.T) {
		l := newLocal(t, ops.FolderSpec{Path: w.root}, ops.FolderSpec{Path: ws2})
		p, err := l.Resolve("ws2link/f")
		if err != nil {
			t.Fatal(err)
		}
		if p.Folder.Root != ws2 || p.Rel != "f" {
			t.Fatalf("got %s in %s, want f in %s", p.Rel, p.Folder.Root, ws2)
		}
	})
	t.Run("absolute path in a second folder", func(t *testing.T) {
		l := newLocal(t, ops.FolderSpec{Path: w.root}, ops.FolderSpec{Path: ws2})
		p, err := l.Resolve(ws2 + "/f")
		if err != nil || p.Folder.Root != ws2 || p.Rel != "f" {
			t.Fatalf("got %+v, %v", p, err)
		}
		if _, err := l.Resolve("../ws2/f"); err == nil {
			t.Fatal("relative .. into a second folder accepted; relative paths belong to the first")
		}
	})
	t.Run("read-only root is readable by absolute path", func(t *testing.T) {
		l := newLocal(t, ops.FolderSpec{Path: w.root})
		if err := l.AddReadOnlyRoot(spill); err != nil {
			t.Fatal(err)
		}
		p, err := l.Resolve(spill + "/secret.txt")
		if err != nil {
			t.Fatal(err)
		}
		if !p.Folder.ReadOnly || p.Display() != filepath.Join(spill, "secret.txt") {
			t.Fatalf("got %+v display %q, want a read-only Path shown absolute", p, p.Display())
		}
		// And the outward link now lands in the read-only root.
		p, err = l.Resolve("sib/secret.txt")
		if err != nil || !p.Folder.ReadOnly || p.Rel != "secret.txt" {
			t.Fatalf("sib/secret.txt = %+v, %v; want secret.txt in the read-only root", p, err)
		}
	})
}

// BenchmarkResolve measures Resolve against its own dominant cost,
// filepath.EvalSymlinks of the same path, run as the reference.
func BenchmarkResolve(b *testing.B) {
	w := newWorkspace(b)
	l, err := ops.NewLocal([]ops.FolderSpec{{Path: w.root}})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	m := opstest.NewMem("/ws", map[string]string{"a/b/c.txt": ""})
	for _, input := range []string{"a/b/c.txt", "srclink/a.go", "a/b/new/deeper.txt"} {
		b.Run("Local/"+input, func(b *testing.B) {
			for b.Loop() {
				if _, err := l.Resolve(input); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("EvalSymlinks/"+input, func(b *testing.B) {
			abs := filepath.Join(w.root, input)
			for b.Loop() {
				filepath.EvalSymlinks(abs)
			}
		})
	}
	b.Run("Mem/a/b/c.txt", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.Resolve("a/b/c.txt"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A folder equal to or inside an earlier one owns no file; an earlier
// folder inside a later one keeps its subtree.
func TestShares(t *testing.T) {
	a := &ops.Folder{Root: "/w/a"}
	in := &ops.Folder{Root: "/w/a/in"}
	again := &ops.Folder{Root: "/w/a"}
	b := &ops.Folder{Root: "/w/b"}
	sh := ops.Shares([]*ops.Folder{in, a, again, b})
	for i, want := range []struct {
		covered bool
		owns    map[string]bool
	}{
		{false, map[string]bool{"x.txt": true}},
		{false, map[string]bool{"x.txt": true, "in": false, "in/x.txt": false, "inside/x.txt": true}},
		{true, map[string]bool{"x.txt": false}},
		{false, map[string]bool{"in/x.txt": true}},
	} {
		if sh[i].Covered != want.covered {
			t.Errorf("%s: covered %v, want %v", sh[i].Folder.Root, sh[i].Covered, want.covered)
		}
		for rel, owns := range want.owns {
			if got := sh[i].Owns(rel); got != owns {
				t.Errorf("%s: owns %q = %v, want %v", sh[i].Folder.Root, rel, got, owns)
			}
		}
	}
}
