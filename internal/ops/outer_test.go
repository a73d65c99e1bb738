package ops

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/ignore"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func outerOf(t *testing.T, folder string) ignore.Outer {
	t.Helper()
	l, err := NewLocal([]FolderSpec{{Path: folder}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.OuterIgnore(l.Folders()[0])
}

func describeOuter(o ignore.Outer) string {
	var files []string
	for _, f := range o.Files {
		files = append(files, f.Dir+":"+f.Name+"="+strings.TrimSpace(string(f.Data)))
	}
	sort.Strings(files)
	return o.Prefix + " " + strings.Join(files, " ")
}

// The rules above a folder are those of its repository, from the root down
// to the folder's parent, plus info/exclude; git looks no further.
func TestOuterIgnoreFindsTheEnclosingRepository(t *testing.T) {
	top := t.TempDir()
	isolateGit(t, t.TempDir()) // no global excludes of this machine's user
	writeTree(t, top, map[string]string{
		".gitignore":              "above-the-repo",
		"repo/.git/HEAD":          "",
		"repo/.git/info/exclude":  "excluded",
		"repo/.gitignore":         "root-rule",
		"repo/pkg/.ignore":        "pkg-rule",
		"repo/pkg/web/.gitignore": "own-rule",
		"repo/pkg/web/src/x.go":   "",
		"worktree/.git":           "gitdir: ../repo/.git\n",
		"worktree/.gitignore":     "wt-rule",
		"worktree/sub/y.go":       "",
		"plain/dir/z.go":          "",
	})
	cases := []struct {
		name, folder, want string
	}{
		{"subdirectory", "repo/pkg/web", "pkg/web :.gitignore=root-rule :info/exclude=excluded pkg:.ignore=pkg-rule"},
		{"deeper", "repo/pkg/web/src", "pkg/web/src :.gitignore=root-rule :info/exclude=excluded pkg/web:.gitignore=own-rule pkg:.ignore=pkg-rule"},
		{"the repository root itself", "repo", " "},
		{"a worktree's .git file", "worktree/sub", "sub :.gitignore=wt-rule :info/exclude=excluded"},
		{"outside any repository", "plain/dir", " "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			real, err := filepath.EvalSymlinks(filepath.Join(top, tc.folder))
			if err != nil {
				t.Fatal(err)
			}
			got := describeOuter(outerOf(t, real))
			if got != tc.want {
				t.Fatalf("OuterIgnore = %q, want %q", got, tc.want)
			}
		})
	}
}
