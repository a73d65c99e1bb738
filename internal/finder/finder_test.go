package finder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agentls/agentls/internal/ignore"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func findTree() fstest.MapFS {
	return fstest.MapFS{
		"some/parent/child/file.ext":     file(""),
		"some/parent/child/test.spec.ts": file(""),
		"some/parent/other.ts":           file(""),
		"src/foo/bar/example.spec.ts":    file(""),
		"src/foo/bar/example.ts":         file(""),
		"a/.gitignore":                   file("ignored.txt\n"),
		"a/ignored.txt":                  file(""),
		"b/ignored.txt":                  file(""),
		".hidden/secret.spec.ts":         file(""),
		".env":                           file(""),
		".git/config":                    file(""),
		".git/x.spec.ts":                 file(""),
		".gitignore":                     file("dist/\n"),
		"dist/bundle.spec.ts":            file(""),
	}
}

func TestFind(t *testing.T) {
	fsys := findTree()
	cases := []struct {
		name    string
		pattern string
		dir     string
		want    []string
	}{
		{"name pattern at any depth", "*.spec.ts", "",
			[]string{".hidden/secret.spec.ts", "some/parent/child/test.spec.ts", "src/foo/bar/example.spec.ts"}},
		{"trailing **", "some/parent/child/**", "",
			[]string{"some/parent/child/file.ext", "some/parent/child/test.spec.ts"}},
		{"leading **", "**/parent/child/*", "",
			[]string{"some/parent/child/file.ext", "some/parent/child/test.spec.ts"}},
		{"middle **", "src/**/*.spec.ts", "", []string{"src/foo/bar/example.spec.ts"}},
		{"leading ./ tolerated", "./src/**/*.spec.ts", "", []string{"src/foo/bar/example.spec.ts"}},
		{"leading / tolerated", "/src/**/*.spec.ts", "", []string{"src/foo/bar/example.spec.ts"}},
		{"path pattern relative to dir", "parent/child/*.ts", "some", []string{"some/parent/child/test.spec.ts"}},
		{"name pattern within dir", "*.ts", "src", []string{"src/foo/bar/example.spec.ts", "src/foo/bar/example.ts"}},
		{"nested gitignore is scoped", "ignored.txt", "", []string{"b/ignored.txt"}},
		{"hidden files found", ".env", "", []string{".env"}},
		{".git never searched", "config", "", nil},
		{"ignored dir not searched", "bundle.spec.ts", "", nil},
		{"directories not listed", "child", "", nil},
		{"braces", "*.{ext,ts}", "some", []string{"some/parent/child/file.ext", "some/parent/child/test.spec.ts", "some/parent/other.ts"}},
		{"literal base that does not exist", "nope/**/*.ts", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Find(context.Background(), fsys, ignore.NewMatcher(fsys, ignore.Outer{}), c.pattern, c.dir, 0, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Paths, c.want) || res.Truncated || res.Total != len(c.want) {
				t.Errorf("got %q (truncated=%v, total=%d), want %q", res.Paths, res.Truncated, res.Total, c.want)
			}
		})
	}
}

func TestFindLimit(t *testing.T) {
	fsys := fstest.MapFS{}
	for i := range 50 {
		fsys[fmt.Sprintf("d%02d/f.go", i)] = file("")
	}
	m := ignore.NewMatcher(fsys, ignore.Outer{})
	cases := []struct {
		name      string
		limit     int
		wantLen   int
		truncated bool
	}{
		{"under the limit", 100, 50, false},
		{"exactly the limit", 50, 50, false},
		{"over the limit", 10, 10, true},
		{"default limit", 0, 50, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Find(context.Background(), fsys, m, "*.go", "", c.limit, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Paths) != c.wantLen || res.Truncated != c.truncated {
				t.Errorf("got %d paths, truncated=%v; want %d, %v", len(res.Paths), res.Truncated, c.wantLen, c.truncated)
			}
			if c.truncated && (res.Total <= c.limit || res.Paths[len(res.Paths)-1] != fmt.Sprintf("d%02d/f.go", c.limit-1)) {
				t.Errorf("truncated result should be the first %d in order with Total > limit: %q, total %d", c.limit, res.Paths, res.Total)
			}
		})
	}
}

func TestFindErrors(t *testing.T) {
	fsys := findTree()
	m := ignore.NewMatcher(fsys, ignore.Outer{})
	cases := []struct {
		name    string
		pattern string
		dir     string
		wantMsg []string
		wantIs  error
	}{
		{"unclosed bracket", "[", "", []string{`unclosed "["`, `"src/**/*.spec.ts"`}, nil},
		{"unclosed brace", "*.{ts", "", []string{`unclosed "{"`}, nil},
		{"stray brace", "a}", "", []string{`"}" without`}, nil},
		{"empty pattern", "", "", []string{"empty"}, nil},
		{"dot-dot", "../*.go", "", []string{`".."`, "set path"}, nil},
		{"missing dir", "*.go", "nope", nil, fs.ErrNotExist},
		{"dir is a file", "*.go", ".env", nil, ErrNotDir},
		{"dir leaves the root", "*.go", "../x", []string{"leaves the workspace"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Find(context.Background(), fsys, m, c.pattern, c.dir, 0, false, nil)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, s := range c.wantMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			if c.wantIs != nil && !errors.Is(err, c.wantIs) {
				t.Errorf("error %v is not %v", err, c.wantIs)
			}
		})
	}
}

func TestFindCancelled(t *testing.T) {
	fsys := findTree()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Find(ctx, fsys, ignore.NewMatcher(fsys, ignore.Outer{}), "*", "", 0, false, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestList(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"b.txt", "a.txt", "Z.md", ".env", "dir/x", "node_modules/m", "debug.log", ".git/HEAD", "a/x"} {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("node_modules/\n*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dir", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(root)
	m := ignore.NewMatcher(fsys, ignore.Outer{})
	all := []string{".env", ".gitignore", "Z.md", "a/", "a.txt", "b.txt", "dir/", "link@ -> dir"}
	cases := []struct {
		name  string
		dir   string
		limit int
		want  ListResult
	}{
		{"sorted, dirs with /, symlink target, ignored counted, .git omitted", "", 0,
			ListResult{Entries: all, Total: 8, IgnoredHidden: 2}},
		{"limit", "", 3, ListResult{Entries: all[:3], Total: 8, IgnoredHidden: 2, Truncated: true}},
		{"subdirectory", "dir", 0, ListResult{Entries: []string{"x"}, Total: 1}},
		{"ignored directory listed with everything hidden", "node_modules", 0, ListResult{Total: 0, IgnoredHidden: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := List(context.Background(), fsys, m, c.dir, c.limit, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Entries, c.want.Entries) || got.Total != c.want.Total ||
				got.IgnoredHidden != c.want.IgnoredHidden || got.Truncated != c.want.Truncated {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}

	t.Run("a directory larger than the batches read keeps the first names in byte order", func(t *testing.T) {
		big := t.TempDir()
		var names []string
		for i := range 3*readDirBatch + 17 {
			n := fmt.Sprintf("f%05d", (i*7919)%100000)
			names = append(names, n)
			if err := os.WriteFile(filepath.Join(big, n), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		slices.Sort(names)
		bfs := os.DirFS(big)
		got, err := List(context.Background(), bfs, ignore.NewMatcher(bfs, ignore.Outer{}), "", 7, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Entries, names[:7]) || got.Total != len(names) || !got.Truncated {
			t.Errorf("got %q of %d (truncated %v), want %q of %d", got.Entries, got.Total, got.Truncated, names[:7], len(names))
		}
	})
	t.Run("symlink without ReadLinkFS shows name@", func(t *testing.T) {
		mfs := fstest.MapFS{"l": &fstest.MapFile{Data: []byte("t"), Mode: fs.ModeSymlink}}
		got, err := List(context.Background(), noReadLink{mfs}, ignore.NewMatcher(mfs, ignore.Outer{}), "", 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Entries, []string{"l@"}) {
			t.Errorf("got %q, want [l@]", got.Entries)
		}
	})
	t.Run("file is not a directory", func(t *testing.T) {
		if _, err := List(context.Background(), fsys, m, "a.txt", 0, nil); !errors.Is(err, ErrNotDir) {
			t.Errorf("err = %v, want ErrNotDir", err)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		if _, err := List(context.Background(), fsys, m, "nope", 0, nil); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("err = %v, want ErrNotExist", err)
		}
	})
}

// noReadLink hides a file system's ReadLinkFS methods.
type noReadLink struct{ fsys fs.FS }

func (n noReadLink) Open(name string) (fs.File, error) { return n.fsys.Open(name) }
