package ignore

import (
	"context"
	"io/fs"
	"path"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// FuzzMatcherOuter drives a whole Matcher (rule files in the folder and in
// a subdirectory, plus Outer rules with an arbitrary Prefix and Dir) with an
// arbitrary path. FuzzRuleFile covers one rule file; this covers how the
// files are combined: no panic, the root and paths leaving it are never
// ignored, .git always is, everything under an ignored directory is, a
// verdict survives Invalidate, and Walk visits exactly the entries Ignored
// lets through.
func FuzzMatcherOuter(f *testing.F) {
	f.Add("*.log\n!keep.log\nbuild/\n", "*.tmp\n/x/\n", "sub/\n!/inner\n", "repo/inner", "inner", "sub/x/f", false)
	f.Add("/*\n!/sub\n", "!*.log\n", "*\n", "", "", "a/b.log", true)
	f.Add("**/f\n", "\\!x\n", "[\n", "a//b/", "a/", "../sub/../a/b", false)
	f.Add("", "", "/inner/*.go\n", "/x", "..", ".git/x", true)
	f.Fuzz(func(t *testing.T, rootRules, subRules, outerRules, prefix, outerDir, p string, isDir bool) {
		fsys := fstest.MapFS{
			".gitignore":    {Data: []byte(rootRules)},
			"sub/.ignore":   {Data: []byte(subRules)},
			"sub/x/f":       {},
			"sub/keep.log":  {},
			"a/b.log":       {},
			"build/out.o":   {},
			"inner/main.go": {},
			".git/HEAD":     {},
		}
		if fs.ValidPath(p) && !strings.Contains(p, ".git") {
			fsys["z/"+p] = &fstest.MapFile{}
		}
		outer := Outer{Prefix: prefix, Files: []OuterFile{
			{Dir: outerDir, Name: GitIgnoreFile, Data: []byte(outerRules)},
			{Name: AgentlsIgnoreFile, Data: []byte(subRules)},
			{Name: ExcludeFile, Data: []byte(outerRules)},
		}}
		start := time.Now()
		m := NewMatcher(fsys, outer)

		got := m.Ignored(p, isDir)
		for _, root := range []string{"", ".", "/", "./"} {
			if m.Ignored(root, true) {
				t.Fatalf("the root %q is ignored", root)
			}
		}
		clean := path.Clean(strings.TrimLeft(p, "/"))
		if (clean == ".." || strings.HasPrefix(clean, "../")) && got {
			t.Fatalf("%q leaves the root but is judged ignored", p)
		}
		if !(clean == ".." || strings.HasPrefix(clean, "../")) && clean != "." && hasGitComponent(clean) && !got {
			t.Fatalf("%q is inside .git but not ignored", p)
		}
		if got && isDir {
			for _, child := range []string{"f", "d/g.go", "keep.log"} {
				if !m.Ignored(p+"/"+child, false) {
					t.Fatalf("%q is an ignored directory but %q under it is not", p, child)
				}
			}
		}
		m.Invalidate(path.Dir(clean))
		if again := m.Ignored(p, isDir); again != got {
			t.Fatalf("Ignored(%q) = %v, after Invalidate %v", p, got, again)
		}

		visited := map[string]bool{}
		err := m.Walk(context.Background(), "", WalkOptions{}, func(rel string, d fs.DirEntry) error {
			if rel == "." {
				return nil
			}
			visited[rel] = true
			if m.Ignored(rel, d.IsDir()) {
				t.Fatalf("Walk visited %q, which Ignored says is ignored", rel)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Walk: %v", err)
		}
		all := map[string]bool{} // every path in fsys → isDir
		for name := range fsys {
			all[name] = false
			for d := path.Dir(name); d != "."; d = path.Dir(d) {
				all[d] = true
			}
		}
		for name, dir := range all {
			if want := !m.Ignored(name, dir); visited[name] != want {
				t.Fatalf("Walk visited %q = %v, Ignored says visible = %v", name, visited[name], want)
			}
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("took %v", d)
		}
	})
}
