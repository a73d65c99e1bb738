package ignore

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A workspace folder that is a subdirectory of a repository gets the rules
// git applies from above it: every verdict inside the folder agrees with
// `git check-ignore` run in the repository.
func TestOuterRulesAgreeWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	repo, home := t.TempDir(), t.TempDir()
	runGit(t, repo, home, nil, "init", "-q")
	outerFiles := map[string]string{
		".gitignore":        "*.log\n!keep.log\n/top-only.txt\nsub/inner/anchored.txt\nbuild/\n",
		".ignore":           "*.rgskip\n",
		"sub/.gitignore":    "*.tmp\n/inner/sub-anchored.txt\n",
		".git/info/exclude": "*.excluded\n",
	}
	writeFixture(t, repo, outerFiles, func(string) bool { return false })
	writeFixture(t, repo, map[string]string{
		"sub/inner/.gitignore": "!important.log\n",
		"sub/inner/a.log":      "", "sub/inner/keep.log": "", "sub/inner/important.log": "",
		"sub/inner/top-only.txt": "", "sub/inner/anchored.txt": "", "sub/inner/sub-anchored.txt": "",
		"sub/inner/x.tmp": "", "sub/inner/c.excluded": "", "sub/inner/build/f.txt": "",
		"sub/inner/plain.txt": "", "sub/inner/deep/d.log": "", "sub/inner/deep/anchored.txt": "", "sub/inner/skip.rgskip": "",
		"sub/inner/nested/.git/HEAD": "", "sub/inner/nested/n.log": "",
	}, func(string) bool { return false })
	folder := filepath.Join(repo, "sub", "inner")

	outer := Outer{Prefix: "sub/inner"}
	for name, content := range outerFiles {
		dir, base := filepath.Dir(name), filepath.Base(name)
		switch {
		case name == ".git/info/exclude":
			outer.Files = append(outer.Files, OuterFile{Name: ExcludeFile, Data: []byte(content)})
		case dir == ".":
			outer.Files = append(outer.Files, OuterFile{Name: base, Data: []byte(content)})
		default:
			outer.Files = append(outer.Files, OuterFile{Dir: dir, Name: base, Data: []byte(content)})
		}
	}
	m := NewMatcher(os.DirFS(folder), outer)

	var paths []string
	seen := map[string]bool{}
	err := m.Walk(context.Background(), "", WalkOptions{IncludeIgnored: true}, func(rel string, d fs.DirEntry) error {
		if rel != "" && !strings.HasPrefix(rel, "nested/") && filepath.Base(rel) != ".gitignore" {
			paths = append(paths, rel)
			seen[rel] = m.Ignored(rel, d.IsDir())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	inRepo := make([]string, len(paths))
	for i, p := range paths {
		inRepo[i] = "sub/inner/" + p
	}
	git := gitVerdicts(t, repo, home, inRepo)
	for _, p := range paths {
		want := git["sub/inner/"+p]
		if filepath.Ext(p) == ".rgskip" {
			want = true // .ignore: ripgrep's rule file, not git's
		}
		if seen[p] != want {
			t.Errorf("%s: ignored=%v, git check-ignore says %v", p, seen[p], want)
		}
	}
	// A nested repository starts fresh: the outer *.log does not reach it.
	if m.Ignored("nested/n.log", false) {
		t.Error("nested/n.log is ignored by a rule from outside its repository")
	}
	if len(paths) < 10 {
		t.Fatalf("walked only %v", paths)
	}
}
