package ignore

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// opaqueFS hides that its files are *os.File, which forces the walk onto
// the portable fs.ReadDir path.
type opaqueFS struct{ fsys fs.FS }

type opaqueFile struct{ fs.ReadDirFile }

func (o opaqueFS) Open(name string) (fs.File, error) {
	f, err := o.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	return opaqueFile{f.(fs.ReadDirFile)}, nil
}

func (o opaqueFS) Lstat(name string) (fs.FileInfo, error) { return fs.Lstat(o.fsys, name) }

func (o opaqueFS) ReadLink(name string) (string, error) { return fs.ReadLink(o.fsys, name) }

// TestWalkReadPathsAgree walks one on-disk tree through every way the
// walk can read directories (descriptors via os.DirFS and os.Root.FS, the
// portable fs.ReadDir path) and requires the same visits: paths, order,
// types and Info sizes. The tree is deeper than maxOpenDepth, so the
// by-path fallback below the descriptor limit is covered too.
func TestWalkReadPathsAgree(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".gitignore", "*.log\nbuild/\n!keep.log\n")
	write("a/.gitignore", "*.gen\n")
	write("a/x.gen", "gen")
	write("a/x.go", "package a")
	write("a/keep.log", "kept")
	write("a/drop.log", "dropped")
	write("a.txt", "sorts before a/")
	write("build/out.bin", "ignored dir")
	write(".hidden/h.txt", "hidden")
	write(".git/HEAD", "never visited")
	deep := strings.Repeat("d/", maxOpenDepth+6)
	write(deep+"bottom.txt", "deep")
	write(deep+".gitignore", "bottom.txt\n")
	write(deep+"other.txt", "deep and kept")
	if err := os.Symlink("a", filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(root, "linkfile")); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	visits := func(t *testing.T, fsys fs.FS, start string) []string {
		t.Helper()
		var got []string
		err := NewMatcher(fsys, Outer{}).Walk(context.Background(), start, WalkOptions{}, func(rel string, d fs.DirEntry) error {
			info, err := d.Info()
			if err != nil {
				t.Fatalf("Info(%s): %v", rel, err)
			}
			if info.Mode().Type() != d.Type() {
				t.Errorf("%s: Info type %v, listing type %v", rel, info.Mode().Type(), d.Type())
			}
			size := int64(-1)
			if d.Type().IsRegular() {
				size = info.Size()
			}
			got = append(got, fmt.Sprintf("%s %v %d", rel, d.Type(), size))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, start := range []string{"", "a", "d/d"} {
		t.Run("start="+start, func(t *testing.T) {
			want := visits(t, opaqueFS{os.DirFS(root)}, start)
			for _, tc := range []struct {
				name string
				fsys fs.FS
			}{
				{"os.DirFS", os.DirFS(root)},
				{"os.Root.FS", r.FS()},
			} {
				if got := visits(t, tc.fsys, start); !slices.Equal(got, want) {
					t.Errorf("%s:\n got %q\nwant %q", tc.name, got, want)
				}
			}
			if start != "" {
				return
			}
			for _, must := range []string{"a.txt ", "a/keep.log ", "a/x.go ", "linkdir L", "linkfile L", deep + "other.txt "} {
				if !slices.ContainsFunc(want, func(s string) bool { return strings.HasPrefix(s, must) }) {
					t.Errorf("missing %q in %q", must, want)
				}
			}
			for _, mustNot := range []string{"a/x.gen ", "a/drop.log ", "build ", ".git ", ".git/", "linkdir/", deep + "bottom.txt "} {
				if slices.ContainsFunc(want, func(s string) bool { return strings.HasPrefix(s, mustNot) }) {
					t.Errorf("%q visited: %q", mustNot, want)
				}
			}
		})
	}
}
