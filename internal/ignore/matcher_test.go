package ignore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/fstest"
	"time"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// noGitFS is a workspace with no .git anywhere: .gitignore files still
// apply, as with rg --no-require-git.
func noGitFS() fstest.MapFS {
	return fstest.MapFS{
		".gitignore":          file("*.log\nnode_modules/\n/dist\n"),
		"a.log":               file(""),
		"src/main.go":         file(""),
		"src/debug.log":       file(""),
		"src/.gitignore":      file("!debug.log\ngen/\n"),
		"src/gen/x.go":        file(""),
		"gen/y.go":            file(""),
		"node_modules/m/i.js": file(""),
		"dist/out.js":         file(""),
		"src/dist/keep.js":    file(""),
		".ignore":             file("*.bak\n"),
		"old.bak":             file(""),
		".agentlsignore":      file("private/\n"),
		"private/key":         file(""),
		"notes/.git":          file("gitdir: ../elsewhere\n"),
		"notes/n.log":         file(""),
		"notes/.gitignore":    file("*.tmp\n"),
		"notes/t.tmp":         file(""),
		"sub/.git/config":     file(""),
	}
}

func TestIgnoredOutsideGit(t *testing.T) {
	m := NewMatcher(noGitFS(), Outer{})
	cases := []struct {
		name  string
		path  string
		isDir bool
		want  bool
	}{
		{"root is never ignored", "", true, false},
		{"dot is the root", ".", true, false},
		{"gitignore without a repo", "a.log", false, true},
		{"plain file kept", "src/main.go", false, false},
		{"nested negation", "src/debug.log", false, false},
		{"nested dir-only pattern", "src/gen/x.go", false, true},
		{"nested pattern scoped to its dir", "gen/y.go", false, false},
		{"ignored dir hides contents", "node_modules/m/i.js", false, true},
		{"anchored at root", "dist/out.js", false, true},
		{"anchored not deeper", "src/dist/keep.js", false, false},
		{".ignore file", "old.bak", false, true},
		{".agentlsignore dir", "private", true, true},
		{".agentlsignore contents", "private/key", false, true},
		{".git dir always ignored", "sub/.git", true, true},
		{"inside .git always ignored", "sub/.git/config", false, true},
		{".git file always ignored", "notes/.git", false, true},
		{"gitdir file makes a nested repo", "notes/n.log", false, false},
		{"nested repo keeps own rules", "notes/t.tmp", false, true},
		{"leading ./ tolerated", "./a.log", false, true},
		{"leading / tolerated", "/a.log", false, true},
		{"path leaving the root is not judged", "../a.log", false, false},
		{"missing path still judged by rules", "src/missing.log", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := m.Ignored(c.path, c.isDir); got != c.want {
				t.Errorf("Ignored(%q, %v) = %v, want %v", c.path, c.isDir, got, c.want)
			}
		})
	}
}

func TestInvalidate(t *testing.T) {
	fsys := fstest.MapFS{
		"a/.gitignore": file("*.txt\n"),
		"a/b/x.txt":    file(""),
	}
	m := NewMatcher(fsys, Outer{})
	if !m.Ignored("a/b/x.txt", false) {
		t.Fatal("a/b/x.txt should be ignored")
	}
	fsys["a/.gitignore"] = file("*.md\n")
	if !m.Ignored("a/b/x.txt", false) {
		t.Fatal("rules should stay cached until Invalidate")
	}
	m.Invalidate("a")
	if m.Ignored("a/b/x.txt", false) {
		t.Error("after Invalidate(a) the new rules should apply")
	}
	fsys[".gitignore"] = file("a/\n")
	m.Invalidate("")
	if !m.Ignored("a/b/x.txt", false) {
		t.Error("after Invalidate(root) the root rules should apply")
	}
}

func walkAll(t *testing.T, m *Matcher, rel string, opts WalkOptions) []string {
	t.Helper()
	var got []string
	err := m.Walk(context.Background(), rel, opts, func(rel string, d fs.DirEntry) error {
		got = append(got, rel)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk(%q): %v", rel, err)
	}
	return got
}

func TestWalkOptions(t *testing.T) {
	fsys := fstest.MapFS{
		".gitignore":   file("*.log\n"),
		".git/HEAD":    file(""),
		".hidden/h":    file(""),
		"a.log":        file(""),
		"a.txt":        file(""),
		"a/b.txt":      file(""),
		"a/c.log":      file(""),
		"z/.git":       file("gitdir: x"),
		"z/f":          file(""),
		"node/.keep":   file(""),
		"node/sub/x.y": file(""),
	}
	cases := []struct {
		name string
		rel  string
		opts WalkOptions
		want []string
	}{
		{"default: hidden visited, ignored and .git skipped", "", WalkOptions{},
			[]string{".", ".gitignore", ".hidden", ".hidden/h", "a.txt", "a", "a/b.txt", "node", "node/.keep", "node/sub", "node/sub/x.y", "z", "z/f"}},
		{"include ignored still skips .git", "", WalkOptions{IncludeIgnored: true},
			[]string{".", ".gitignore", ".hidden", ".hidden/h", "a.log", "a.txt", "a", "a/b.txt", "a/c.log", "node", "node/.keep", "node/sub", "node/sub/x.y", "z", "z/f"}},
		{"skip hidden", "", WalkOptions{SkipHidden: true},
			[]string{".", "a.txt", "a", "a/b.txt", "node", "node/sub", "node/sub/x.y", "z", "z/f"}},
		{"subdirectory", "a", WalkOptions{}, []string{"a", "a/b.txt"}},
		{"single file", "a/b.txt", WalkOptions{}, []string{"a/b.txt"}},
		{"ignored file visits nothing", "a/c.log", WalkOptions{}, nil},
		{"ignored file with IncludeIgnored", "a/c.log", WalkOptions{IncludeIgnored: true}, []string{"a/c.log"}},
		{".git is never walked", ".git", WalkOptions{IncludeIgnored: true}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := walkAll(t, NewMatcher(fsys, Outer{}), c.rel, c.opts)
			if !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestWalkControl(t *testing.T) {
	fsys := fstest.MapFS{
		"a/1": file(""), "a/2": file(""), "b/1": file(""), "b/2": file(""), "c": file(""),
	}
	m := NewMatcher(fsys, Outer{})
	cases := []struct {
		name    string
		fn      func(rel string) error
		want    []string
		wantErr error
	}{
		{"SkipDir on a dir", func(rel string) error {
			if rel == "a" {
				return fs.SkipDir
			}
			return nil
		}, []string{".", "a", "b", "b/1", "b/2", "c"}, nil},
		{"SkipDir on a file skips its siblings", func(rel string) error {
			if rel == "a/1" {
				return fs.SkipDir
			}
			return nil
		}, []string{".", "a", "a/1", "b", "b/1", "b/2", "c"}, nil},
		{"SkipAll stops without error", func(rel string) error {
			if rel == "b" {
				return fs.SkipAll
			}
			return nil
		}, []string{".", "a", "a/1", "a/2", "b"}, nil},
		{"other error stops and is returned", func(rel string) error {
			if rel == "a/2" {
				return errBoom
			}
			return nil
		}, []string{".", "a", "a/1", "a/2"}, errBoom},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			err := m.Walk(context.Background(), "", WalkOptions{}, func(rel string, d fs.DirEntry) error {
				got = append(got, rel)
				return c.fn(rel)
			})
			if !errors.Is(err, c.wantErr) || (c.wantErr == nil && err != nil) {
				t.Errorf("err = %v, want %v", err, c.wantErr)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

var errBoom = errors.New("boom")

func TestWalkCancel(t *testing.T) {
	fsys := fstest.MapFS{}
	for i := range 2000 {
		fsys[fmt.Sprintf("d%d/f", i)] = file("")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := NewMatcher(fsys, Outer{}).Walk(ctx, "", WalkOptions{}, func(rel string, d fs.DirEntry) error {
		if n++; n == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n > 10+ctxCheckEvery {
		t.Errorf("walk went on for %d entries after cancel", n-10)
	}
}

func TestWalkErrors(t *testing.T) {
	m := NewMatcher(fstest.MapFS{"a": file("")}, Outer{})
	if err := m.Walk(context.Background(), "missing", WalkOptions{}, func(string, fs.DirEntry) error { return nil }); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing start: err = %v, want ErrNotExist", err)
	}
	if err := m.Walk(context.Background(), "../x", WalkOptions{}, func(string, fs.DirEntry) error { return nil }); err == nil {
		t.Error("start outside the root: want an error")
	}
}

func TestWalkOnDisk(t *testing.T) {
	root := t.TempDir()
	mustWrite := func(rel, s string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite("real/f.txt", "")
	mustWrite("keep.txt", "")
	mustWrite("drop.txt", "")
	if err := os.Symlink("real", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	m := NewMatcher(os.DirFS(root), Outer{})

	t.Run("symlinks reported, not followed", func(t *testing.T) {
		var got []string
		var linkMode fs.FileMode
		_ = m.Walk(context.Background(), "", WalkOptions{}, func(rel string, d fs.DirEntry) error {
			got = append(got, rel)
			if rel == "link" {
				linkMode = d.Type()
			}
			return nil
		})
		want := []string{".", "drop.txt", "keep.txt", "link", "real", "real/f.txt"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
		if linkMode&fs.ModeSymlink == 0 {
			t.Errorf("link reported with type %v, want a symlink", linkMode)
		}
	})

	t.Run("walk notices a changed .gitignore without Invalidate", func(t *testing.T) {
		mustWrite(".gitignore", "drop.txt\n")
		if got := walkAll(t, m, "", WalkOptions{}); slices.Contains(got, "drop.txt") {
			t.Errorf("new .gitignore not applied: %q", got)
		}
		// Same size, different content: the mtime tells.
		mustWrite(".gitignore", "keep.txt\n")
		future := time.Now().Add(time.Hour)
		if err := os.Chtimes(filepath.Join(root, ".gitignore"), future, future); err != nil {
			t.Fatal(err)
		}
		got := walkAll(t, m, "", WalkOptions{})
		if slices.Contains(got, "keep.txt") || !slices.Contains(got, "drop.txt") {
			t.Errorf("changed .gitignore not applied: %q", got)
		}
		if !m.Ignored("keep.txt", false) {
			t.Error("Ignored should see the rules the walk reloaded")
		}
	})
}

func TestConcurrentUse(t *testing.T) {
	m := NewMatcher(noGitFS(), Outer{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 200 {
				if !m.Ignored("src/gen/x.go", false) || m.Ignored("src/debug.log", false) {
					t.Error("wrong verdict under concurrency")
					return
				}
				if i%4 == 0 {
					m.Invalidate("src")
				}
				_ = m.Walk(context.Background(), "src", WalkOptions{}, func(string, fs.DirEntry) error { return nil })
			}
		})
	}
	wg.Wait()
}
