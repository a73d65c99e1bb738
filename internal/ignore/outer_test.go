package ignore

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
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

// In a folder that is a subdirectory of a repository, the global excludes
// file is anchored at the repository root, not at the folder: every verdict
// agrees with `git check-ignore` run in the repository.
func TestOuterGlobalExcludesAgreeWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	repo, home := t.TempDir(), t.TempDir()
	runGit(t, repo, home, nil, "init", "-q")
	global := "*.glob\n!keep.glob\n/sub/inner/anch.g\n/anch.g\ninner/mid.g\nmid.g/\n"
	writeFixture(t, home, map[string]string{"git/ignore": global}, func(string) bool { return false })
	gitignore := "!back.glob\n"
	writeFixture(t, repo, map[string]string{
		".gitignore":       gitignore,
		"sub/inner/a.glob": "", "sub/inner/keep.glob": "", "sub/inner/back.glob": "",
		"sub/inner/anch.g": "", "sub/inner/d/anch.g": "", "sub/inner/mid.g": "",
		"sub/inner/plain.txt": "", "sub/inner/d/mid.g/f": "",
	}, func(string) bool { return false })
	folder := filepath.Join(repo, "sub", "inner")
	m := NewMatcher(os.DirFS(folder), Outer{Prefix: "sub/inner", Files: []OuterFile{
		{Name: GitIgnoreFile, Data: []byte(gitignore)},
		{Name: GlobalExcludesFile, Data: []byte(global)},
	}})
	paths := []checkedPath{
		{"a.glob", false}, {"keep.glob", false}, {"back.glob", false}, {"anch.g", false},
		{"d/anch.g", false}, {"mid.g", false}, {"plain.txt", false}, {"d/mid.g", true}, {"d/mid.g/f", false},
	}
	inRepo := make([]string, len(paths))
	for i, p := range paths {
		inRepo[i] = "sub/inner/" + p.rel
	}
	git := gitVerdicts(t, repo, home, inRepo)
	ignored := 0
	for _, p := range paths {
		want := git["sub/inner/"+p.rel]
		if want {
			ignored++
		}
		if got := m.Ignored(p.rel, p.isDir); got != want {
			t.Errorf("%s: ignored=%v, git check-ignore says %v", p.rel, got, want)
		}
	}
	if ignored < 3 || ignored > len(paths)-3 {
		t.Fatalf("fixture too thin: git ignores %d of %d", ignored, len(paths))
	}
}

// Outside any repository the global excludes file applies relative to the
// folder root (as other git rules do there), and again relative to each
// nested repository's root.
func TestGlobalExcludesOutsideARepository(t *testing.T) {
	fsys := fstest.MapFS{
		"top.g":            {},
		"d/top.g":          {},
		"d/x.glob":         {},
		"repo/.git/HEAD":   {},
		"repo/top.g":       {},
		"repo/d/top.g":     {},
		"repo/.gitignore":  {Data: []byte("!keep.glob\n")},
		"repo/keep.glob":   {},
		"repo/other.glob":  {},
		"plain/.gitignore": {Data: []byte("!keep.glob\n")},
		"plain/keep.glob":  {},
		"wt/.git":          {Data: []byte("gitdir: ../elsewhere\n")},
		"wt/top.g":         {},
		"wt/sub/top.g":     {},
		"no-global/x.glob": {},
	}
	globalOnly := Outer{Files: []OuterFile{{Name: GlobalExcludesFile, Data: []byte("/top.g\n*.glob\n")}}}
	cases := []struct {
		name    string
		outer   Outer
		path    string
		ignored bool
	}{
		{"anchored at the folder root", globalOnly, "top.g", true},
		{"anchored, not deeper", globalOnly, "d/top.g", false},
		{"unanchored at depth", globalOnly, "d/x.glob", true},
		{"anchored at a nested repository's root", globalOnly, "repo/top.g", true},
		{"anchored at a nested root, not deeper", globalOnly, "repo/d/top.g", false},
		{"nested .gitignore negation wins", globalOnly, "repo/keep.glob", false},
		{"nested repository, unanchored", globalOnly, "repo/other.glob", true},
		{".gitignore negation wins outside a repository too", globalOnly, "plain/keep.glob", false},
		{"a .git file starts a repository too", globalOnly, "wt/top.g", true},
		{"a .git file's repository, not deeper", globalOnly, "wt/sub/top.g", false},
		{"no global file, no rules", Outer{}, "no-global/x.glob", false},
		{"a second global file replaces the first", Outer{Files: []OuterFile{
			{Name: GlobalExcludesFile, Data: []byte("*.glob\n")},
			{Name: GlobalExcludesFile, Data: []byte("/top.g\n")},
		}}, "d/x.glob", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := NewMatcher(fsys, c.outer).Ignored(c.path, false); got != c.ignored {
				t.Fatalf("Ignored(%q) = %v, want %v", c.path, got, c.ignored)
			}
		})
	}
}
