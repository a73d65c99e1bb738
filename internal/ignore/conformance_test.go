package ignore

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fixture is the conformance workspace: path → content. A key ending in "/"
// is an empty directory. ".git/info/exclude" entries are written after
// `git init` of their repository (root, and nested/ which holds a repo).
var fixtureFiles = map[string]string{
	".gitignore": strings.Join([]string{
		"# a comment, and the next line is blank",
		"",
		"#comment.txt",
		"*.log",
		"!keep.log",
		"/anchored.txt",
		"build/",
		"doc/*.pdf",
		"**/leading",
		"trail/**",
		"!trail/keep.txt",
		"mid/**/deep.txt",
		"fil?.q",
		"[!x]not.txt",
		"[a-c]range.txt",
		`with\ space.txt`,
		"trailing.txt   ",
		`\#hash.txt`,
		`\!bang.txt`,
		`\*star.txt`,
		"parent-ignored/",
		"!parent-ignored/inside.txt",
		"*.gen",
		"generated/",
		"*.tmp/",
		"Upper.TXT",
		".env",
		"x/**/y/",
		"!not-excluded.txt",
		"!force.ig",
		"dotall/**/",
		"/*.anc",
		"/?q.anc",
	}, "\n") + "\n",
	"a.anc":                     "",
	"xq.anc":                    "",
	"sub/b.anc":                 "",
	"sub/x/c.anc":               "",
	"sub/yq.anc":                "",
	"#comment.txt":              "",
	"a.log":                     "",
	"keep.log":                  "",
	"dir/b.log":                 "",
	"dir/keep.log":              "",
	"anchored.txt":              "",
	"sub/anchored.txt":          "",
	"build/x.o":                 "",
	"other/build":               "file named build, not a dir",
	"doc/a.pdf":                 "",
	"doc/sub/b.pdf":             "",
	"x/doc/a.pdf":               "",
	"leading":                   "",
	"deep/er/leading":           "",
	"trail/a.txt":               "",
	"trail/keep.txt":            "",
	"trail/deeper/z.txt":        "",
	"mid/deep.txt":              "",
	"mid/x/y/deep.txt":          "",
	"other/mid/deep.txt":        "",
	"file.q":                    "",
	"fi.q":                      "",
	"fiXX.q":                    "",
	"anot.txt":                  "",
	"xnot.txt":                  "",
	"brange.txt":                "",
	"drange.txt":                "",
	"with space.txt":            "",
	"withspace.txt":             "",
	"trailing.txt":              "",
	"#hash.txt":                 "",
	"!bang.txt":                 "",
	"*star.txt":                 "",
	"xstar.txt":                 "",
	"parent-ignored/inside.txt": "",
	"parent-ignored/other.txt":  "",
	"x.gen":                     "",
	"sub/.gitignore":            "!*.gen\ninner/only.txt\n/top.txt\n!generated/\n",
	"sub/y.gen":                 "",
	"sub/inner/only.txt":        "",
	"inner/only.txt":            "",
	"sub/top.txt":               "",
	"sub/deeper/top.txt":        "",
	"sub/generated/g.txt":       "",
	"generated/g.txt":           "",
	"a/.gitignore":              "ignored.txt\n",
	"a/ignored.txt":             "",
	"b/ignored.txt":             "",
	"cache.tmp/c":               "",
	"x.tmp":                     "",
	"upper.txt":                 "",
	"Upper.TXT":                 "",
	".env":                      "",
	".hidden/file":              "",
	"x/y/f":                     "",
	"x/q/r/y/f":                 "",
	"x/z/y":                     "a file named y",
	"only-keep/.gitignore":      "*\n!*/\n!*.keep\n",
	"only-keep/a.txt":           "",
	"only-keep/b.keep":          "",
	"only-keep/x/y.keep":        "",
	"only-keep/x/z.txt":         "",
	"excluded.txt":              "",
	"not-excluded.txt":          "",
	"dotall/f":                  "",
	"dotall/d/f":                "",
	"crlf/.gitignore":           "one.txt\r\ntwo.txt\r\n",
	"crlf/one.txt":              "",
	"crlf/two.txt":              "",
	"crlf/three.txt":            "",
	"empty-dir/":                "",
	"brackets/.gitignore":       "[ab\n[é\nx[!é]\n",
	"brackets/[ab":              "",
	"brackets/[é":               "",
	"brackets/a":                "",
	"brackets/xa":               "",
	"brackets/xé":               "",
	".git/info/exclude":         "excluded.txt\nnot-excluded.txt\n",
	"multistar/.gitignore": strings.Join([]string{
		"*a*b*c", "a*b*", "*.min.*.js", "*[0-9]*x", "d*/*e*f", "*o*o*/",
		"!*a*keep*c", "*a*a*a*a*a*a*a*a*b", "**/g*h*i",
	}, "\n") + "\n",
	"multistar/xaybzc":                           "",
	"multistar/cba":                              "",
	"multistar/ab-notes":                         "",
	"multistar/ba":                               "",
	"multistar/app.min.v2.js":                    "",
	"multistar/app.min.js":                       "",
	"multistar/v1-x":                             "",
	"multistar/vx1":                              "",
	"multistar/" + strings.Repeat("a", 40):       "",
	"multistar/x" + strings.Repeat("a", 9) + "b": "",
	"multistar/d1/xeyf":                          "",
	"multistar/d1/xfye":                          "",
	"multistar/foo-bo/in":                        "",
	"multistar/zoo-o":                            "",
	"multistar/xabkeepc":                         "",
	"multistar/deep/gxhyi":                       "",
	"multistar/deep/gxiyh":                       "",
	"nested/.gitignore":                          "*.nest\n",
	"nested/n.log":                               "",
	"nested/x.nest":                              "",
	"nested/nex.txt":                             "",
	"nested/anchored.txt":                        "",
	"nested/sub/deep.nest":                       "",
	"nested/.git/info/exclude":                   "nex.txt\n",
	".ignore":                                    "!unhide.log\n!secret/\n*.ig\n",
	".agentlsignore":                             "secret/\n",
	"unhide.log":                                 "",
	"force.ig":                                   "",
	"y.ig":                                       "",
	"secret/s.txt":                               "",
	"sub/.agentlsignore":                         "local.txt\n",
	"sub/local.txt":                              "",
	"local.txt":                                  "",
	"sub/.ignore":                                "!y.gen\nlater.txt\n",
	"sub/later.txt":                              "",
	"sub/deeper/.gitignore":                      "!later.txt\n",
	"sub/deeper/later.txt":                       "",
}

// expectedNonGit are verdicts for rules git does not know (.ignore,
// .agentlsignore); git is not asked about these paths.
var expectedNonGit = map[string]bool{
	"unhide.log":           false, // .ignore's "!unhide.log" beats .gitignore's "*.log"
	"force.ig":             true,  // .ignore's "*.ig" beats .gitignore's "!force.ig"
	"y.ig":                 true,
	"secret":               true, // .agentlsignore "secret/" beats .ignore "!secret/"
	"secret/s.txt":         true,
	"sub/local.txt":        true, // sub/.agentlsignore is scoped to sub
	"local.txt":            false,
	"sub/later.txt":        true,  // sub/.ignore
	"sub/deeper/later.txt": true,  // .ignore beats a deeper .gitignore (ripgrep's order)
	"sub/y.gen":            false, // also !*.gen in sub/.gitignore; .ignore agrees
}

// spotChecks name the tricky cases of the fixture; each must hold for the
// reference (git, or expectedNonGit) and so for the Matcher.
var spotChecks = []struct {
	name    string
	path    string
	ignored bool
}{
	{"comment line is not a pattern", "#comment.txt", false},
	{"star suffix", "a.log", true},
	{"star suffix at depth", "dir/b.log", true},
	{"negation re-includes", "keep.log", false},
	{"negation re-includes at depth", "dir/keep.log", false},
	{"leading slash anchors", "anchored.txt", true},
	{"anchored does not match deeper", "sub/anchored.txt", false},
	{"anchored wildcard matches at its own level", "a.anc", true},
	{"anchored wildcard does not cross a slash", "sub/b.anc", false},
	{"anchored wildcard does not match deeper", "sub/x/c.anc", false},
	{"anchored ? does not cross a slash", "sub/yq.anc", false},
	{"dir-only matches dir", "build", true},
	{"dir-only hides contents", "build/x.o", true},
	{"dir-only skips file of that name", "other/build", false},
	{"middle slash anchors", "doc/a.pdf", true},
	{"middle slash not at depth", "x/doc/a.pdf", false},
	{"star does not cross slash", "doc/sub/b.pdf", false},
	{"leading ** at root", "leading", true},
	{"leading ** at depth", "deep/er/leading", true},
	{"trailing ** matches inside", "trail/a.txt", true},
	{"trailing ** leaves the dir itself", "trail", false},
	{"trailing ** allows negation inside", "trail/keep.txt", false},
	{"middle ** matches zero dirs", "mid/deep.txt", true},
	{"middle ** matches many dirs", "mid/x/y/deep.txt", true},
	{"middle ** is anchored", "other/mid/deep.txt", false},
	{"question mark one char", "file.q", true},
	{"question mark not zero chars", "fi.q", false},
	{"negated class matches", "anot.txt", true},
	{"negated class excludes", "xnot.txt", false},
	{"range matches", "brange.txt", true},
	{"range excludes", "drange.txt", false},
	{"escaped space", "with space.txt", true},
	{"escaped space is a space", "withspace.txt", false},
	{"trailing spaces trimmed", "trailing.txt", true},
	{"escaped hash", "#hash.txt", true},
	{"escaped bang", "!bang.txt", true},
	{"escaped star is literal", "*star.txt", true},
	{"escaped star only literal", "xstar.txt", false},
	{"negation cannot re-include under excluded dir", "parent-ignored/inside.txt", true},
	{"nested gitignore negates parent pattern", "sub/y.gen", false},
	{"parent pattern outside nested scope", "x.gen", true},
	{"nested middle slash relative to its dir", "sub/inner/only.txt", true},
	{"nested middle slash not at root", "inner/only.txt", false},
	{"nested anchored", "sub/top.txt", true},
	{"nested anchored not deeper", "sub/deeper/top.txt", false},
	{"nested negates parent dir-only pattern", "sub/generated/g.txt", false},
	{"parent dir-only pattern applies at root", "generated/g.txt", true},
	{"nested scope: sibling unaffected", "b/ignored.txt", false},
	{"nested scope: own dir", "a/ignored.txt", true},
	{"dir-only glob on dir", "cache.tmp", true},
	{"dir-only glob not on file", "x.tmp", false},
	{"case sensitive", "upper.txt", false},
	{"hidden file pattern", ".env", true},
	{"** dir-only zero dirs", "x/y", true},
	{"** dir-only many dirs", "x/q/r/y", true},
	{"** dir-only not a file", "x/z/y", false},
	{"ignore all but dirs and .keep", "only-keep/a.txt", true},
	{"re-included by extension", "only-keep/x/y.keep", false},
	{"re-included dirs still filter files", "only-keep/x/z.txt", true},
	{"info/exclude", "excluded.txt", true},
	{".gitignore beats info/exclude", "not-excluded.txt", false},
	{"trailing **/ is dirs only", "dotall/f", false},
	{"trailing **/ hides subdirs", "dotall/d/f", true},
	{"unterminated bracket never matches", "brackets/[ab", false},
	{"unterminated bracket ending in a multi-byte rune", "brackets/[é", false},
	{"negated class with a multi-byte rune", "brackets/xa", true},
	{"negated class excludes a multi-byte rune", "brackets/xé", false},
	{"CRLF line endings", "crlf/one.txt", true},
	{"CRLF last line", "crlf/two.txt", true},
	{"nested repo drops parent rules", "nested/n.log", false},
	{"nested repo drops parent anchored rule", "nested/anchored.txt", false},
	{"nested repo own gitignore", "nested/x.nest", true},
	{"nested repo own gitignore deeper", "nested/sub/deep.nest", true},
	{"nested repo own info/exclude", "nested/nex.txt", true},
	{".ignore negation beats .gitignore", "unhide.log", false},
	{".ignore beats .gitignore negation", "force.ig", true},
	{"multi-star name", "multistar/xaybzc", true},
	{"multi-star name wrong order", "multistar/cba", false},
	{"multi-star prefix", "multistar/ab-notes", true},
	{"multi-star prefix wrong order", "multistar/ba", false},
	{"multi-star with literal dots", "multistar/app.min.v2.js", true},
	{"multi-star needs every literal", "multistar/app.min.js", false},
	{"multi-star with class", "multistar/v1-x", true},
	{"multi-star with class wrong order", "multistar/vx1", false},
	{"backtracking pattern, no match", "multistar/" + strings.Repeat("a", 40), false},
	{"backtracking pattern, match", "multistar/x" + strings.Repeat("a", 9) + "b", true},
	{"multi-star path", "multistar/d1/xeyf", true},
	{"multi-star path wrong order", "multistar/d1/xfye", false},
	{"multi-star dir-only on dir", "multistar/foo-bo", true},
	{"multi-star dir-only not on file", "multistar/zoo-o", false},
	{"multi-star negation re-includes", "multistar/xabkeepc", false},
	{"** then multi-star", "multistar/deep/gxhyi", true},
	{"** then multi-star wrong order", "multistar/deep/gxiyh", false},
	{".agentlsignore beats .ignore", "secret/s.txt", true},
	{".agentlsignore scoped", "local.txt", false},
	{".ignore beats deeper .gitignore", "sub/deeper/later.txt", true},
}

// gitEnv keeps the user's and system's git config (core.excludesFile,
// ~/.config/git/ignore) out of the comparison.
func gitEnv(home string) []string {
	return append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"HOME="+home, "XDG_CONFIG_HOME="+home)
}

func runGit(t *testing.T, dir, home string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(home)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// check-ignore exits 1 when nothing is ignored; that is not a failure.
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("git %v in %s: %v\n%s", args, dir, err, stderr.String())
		}
	}
	return out
}

func writeFixture(t *testing.T, root string, files map[string]string, skip func(string) bool) {
	t.Helper()
	for name, content := range files {
		if skip(name) {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gitVerdicts asks `git check-ignore --no-index -v -n -z --stdin` in dir
// about paths (relative to dir) and returns path → ignored.
func gitVerdicts(t *testing.T, dir, home string, paths []string) map[string]bool {
	t.Helper()
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	out := runGit(t, dir, home, in.Bytes(), "check-ignore", "--no-index", "-v", "-n", "-z", "--stdin")
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(fields) != 4*len(paths) {
		t.Fatalf("git check-ignore: %d fields for %d paths: %q", len(fields), len(paths), out)
	}
	verdicts := make(map[string]bool, len(paths))
	for i := 0; i < len(fields); i += 4 {
		source, pattern, p := fields[i], fields[i+2], fields[i+3]
		verdicts[p] = source != "" && !strings.HasPrefix(pattern, "!")
	}
	return verdicts
}

type checkedPath struct {
	rel   string
	isDir bool
}

// fixturePaths lists every file and directory below root (not .git/…).
func fixturePaths(t *testing.T, root string) []checkedPath {
	t.Helper()
	var paths []checkedPath
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		paths = append(paths, checkedPath{filepath.ToSlash(rel), d.IsDir()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

func TestConformanceWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	root := t.TempDir()
	home := t.TempDir()
	isExclude := func(name string) bool { return strings.HasSuffix(name, ".git/info/exclude") }
	writeFixture(t, root, fixtureFiles, isExclude)
	runGit(t, root, home, nil, "init", "-q")
	runGit(t, filepath.Join(root, "nested"), home, nil, "init", "-q")
	writeFixture(t, root, fixtureFiles, func(name string) bool { return !isExclude(name) })

	all := fixturePaths(t, root)
	var parentPaths, nestedPaths []string
	for _, p := range all {
		if _, ok := expectedNonGit[p.rel]; ok {
			continue
		}
		if rest, ok := strings.CutPrefix(p.rel, "nested/"); ok {
			nestedPaths = append(nestedPaths, rest)
			continue
		}
		parentPaths = append(parentPaths, p.rel)
	}
	want := gitVerdicts(t, root, home, parentPaths)
	// git in the parent does not apply the nested repository's rules (nor
	// stop applying its own), so ask the nested repository itself.
	for p, ign := range gitVerdicts(t, filepath.Join(root, "nested"), home, nestedPaths) {
		want["nested/"+p] = ign
	}
	for p, ign := range expectedNonGit {
		want[p] = ign
	}

	// The named cases pin what the fixture is meant to exercise; the
	// reference must agree with them too, or the fixture is wrong.
	for _, c := range spotChecks {
		if w, ok := want[c.path]; !ok || w != c.ignored {
			t.Errorf("%s: reference says ignored(%q)=%v (known=%v), case expects %v", c.name, c.path, w, ok, c.ignored)
		}
	}

	m := NewMatcher(os.DirFS(root), Outer{})
	var disagree []string
	ignored := 0
	for _, p := range all {
		w, ok := want[p.rel]
		if !ok {
			t.Fatalf("no verdict for %q", p.rel)
		}
		if w {
			ignored++
		}
		if got := m.Ignored(p.rel, p.isDir); got != w {
			disagree = append(disagree, p.rel)
			t.Errorf("Ignored(%q, dir=%v) = %v, reference says %v", p.rel, p.isDir, got, w)
		}
	}
	t.Logf("%d paths checked, %d ignored, %d disagreements", len(all), ignored, len(disagree))
	if len(all) < 100 || ignored < 40 || len(all)-ignored < 40 {
		t.Errorf("fixture too thin: %d paths, %d ignored", len(all), ignored)
	}

	// Walk must visit exactly the paths that are not ignored, in byte order.
	var walked []string
	err := m.Walk(context.Background(), "", WalkOptions{}, func(rel string, d fs.DirEntry) error {
		if rel != "." {
			walked = append(walked, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Walk order: byte order of the paths, a directory sorting as "name/".
	var kept []string
	for _, p := range all {
		if !want[p.rel] {
			key := p.rel
			if p.isDir {
				key += "/"
			}
			kept = append(kept, key)
		}
	}
	slices.Sort(kept)
	for i := range kept {
		kept[i] = strings.TrimSuffix(kept[i], "/")
	}
	if !slices.Equal(walked, kept) {
		t.Errorf("Walk visited\n%q\nwant\n%q", walked, kept)
	}
	// A fresh matcher that only walks (loading rules from listings) agrees.
	var walked2 []string
	_ = NewMatcher(os.DirFS(root), Outer{}).Walk(context.Background(), "", WalkOptions{}, func(rel string, d fs.DirEntry) error {
		if rel != "." {
			walked2 = append(walked2, rel)
		}
		return nil
	})
	if !slices.Equal(walked2, kept) {
		t.Errorf("Walk on a fresh matcher visited\n%q\nwant\n%q", walked2, kept)
	}
}

// globalFixture exercises the user's global excludes file (core.excludesFile,
// here git's XDG default $XDG_CONFIG_HOME/git/ignore) in a repository and in
// a nested repository, against the rule files that outrank it.
var globalFixture = struct {
	global string
	files  map[string]string
}{
	global: strings.Join([]string{
		"*.glob", "!keep.glob", "/anchored.g", "dir-only/", "sub/mid.g",
		"gi-ignored.txt", "!gi-reincluded.txt", "excl-neg.txt", "nested/outer-scope.txt",
	}, "\n") + "\n",
	files: map[string]string{
		".gitignore":             "!back.glob\ngi-reincluded.txt\n",
		".git/info/exclude":      "!excl-neg.txt\n",
		"a.glob":                 "",
		"keep.glob":              "",
		"back.glob":              "",
		"sub/b.glob":             "",
		"anchored.g":             "",
		"sub/anchored.g":         "",
		"dir-only/f":             "",
		"sub/dir-only/f":         "",
		"other/dir-only":         "a file, not a dir",
		"sub/mid.g":              "",
		"x/sub/mid.g":            "",
		"gi-ignored.txt":         "",
		"gi-reincluded.txt":      "",
		"excl-neg.txt":           "",
		"plain.txt":              "",
		"nested/n.glob":          "",
		"nested/anchored.g":      "",
		"nested/sub/mid.g":       "",
		"nested/back.glob":       "",
		"nested/.gitignore":      "!n2.glob\n",
		"nested/n2.glob":         "",
		"nested/excl-neg.txt":    "",
		"nested/plain.txt":       "",
		"nested/outer-scope.txt": "",
	},
}

// The global excludes file ranks below .gitignore and info/exclude (a "!x"
// there re-includes what it ignores; it cannot re-include what they ignore),
// is anchored at the repository root, and applies again, relative to its
// own root, in a nested repository: every verdict agrees with git.
func TestGlobalExcludesConformWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	root, home := t.TempDir(), t.TempDir()
	isExclude := func(name string) bool { return strings.HasSuffix(name, ".git/info/exclude") }
	writeFixture(t, root, globalFixture.files, isExclude)
	runGit(t, root, home, nil, "init", "-q")
	runGit(t, filepath.Join(root, "nested"), home, nil, "init", "-q")
	writeFixture(t, root, globalFixture.files, func(name string) bool { return !isExclude(name) })
	// gitEnv sets XDG_CONFIG_HOME=home: this is git's default global file.
	writeFixture(t, home, map[string]string{"git/ignore": globalFixture.global}, func(string) bool { return false })

	all := fixturePaths(t, root)
	var parentPaths, nestedPaths []string
	for _, p := range all {
		if rest, ok := strings.CutPrefix(p.rel, "nested/"); ok {
			nestedPaths = append(nestedPaths, rest)
		} else {
			parentPaths = append(parentPaths, p.rel)
		}
	}
	want := gitVerdicts(t, root, home, parentPaths)
	for p, ign := range gitVerdicts(t, filepath.Join(root, "nested"), home, nestedPaths) {
		want["nested/"+p] = ign
	}

	named := []struct {
		name    string
		path    string
		ignored bool
	}{
		{"global pattern", "a.glob", true},
		{"global pattern at depth", "sub/b.glob", true},
		{"global negation", "keep.glob", false},
		{".gitignore negation re-includes what the global file ignores", "back.glob", false},
		{"global negation cannot re-include what .gitignore ignores", "gi-reincluded.txt", true},
		{"info/exclude negation re-includes what the global file ignores", "excl-neg.txt", false},
		{"global anchored at the repository root", "anchored.g", true},
		{"global anchored not deeper", "sub/anchored.g", false},
		{"global middle slash from the root", "sub/mid.g", true},
		{"global middle slash not deeper", "x/sub/mid.g", false},
		{"global dir-only", "dir-only/f", true},
		{"global dir-only not a file", "other/dir-only", false},
		{"nested repository gets the global file", "nested/n.glob", true},
		{"global anchored at the nested root", "nested/anchored.g", true},
		{"global middle slash from the nested root", "nested/sub/mid.g", true},
		{"nested .gitignore negation beats the global file", "nested/n2.glob", false},
		{"parent .gitignore does not reach the nested repository", "nested/back.glob", true},
		{"parent info/exclude does not reach the nested repository", "nested/excl-neg.txt", true},
		{"the global file is scoped to the nested root, not the outer one", "nested/outer-scope.txt", false},
		{"unmatched", "plain.txt", false},
	}
	m := NewMatcher(os.DirFS(root), Outer{Files: []OuterFile{{Name: GlobalExcludesFile, Data: []byte(globalFixture.global)}}})
	for _, c := range named {
		if w, ok := want[c.path]; !ok || w != c.ignored {
			t.Errorf("%s: git says ignored(%q)=%v (known=%v), case expects %v", c.name, c.path, w, ok, c.ignored)
		}
	}
	for _, p := range all {
		if got := m.Ignored(p.rel, p.isDir); got != want[p.rel] {
			t.Errorf("Ignored(%q, dir=%v) = %v, git says %v", p.rel, p.isDir, got, want[p.rel])
		}
	}
	// Walk, which loads rules from listings, keeps exactly what git keeps.
	var walked, kept []string
	err := NewMatcher(os.DirFS(root), Outer{Files: []OuterFile{{Name: GlobalExcludesFile, Data: []byte(globalFixture.global)}}}).
		Walk(context.Background(), "", WalkOptions{}, func(rel string, d fs.DirEntry) error {
			if rel != "." && !d.IsDir() {
				walked = append(walked, rel)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if !p.isDir && !want[p.rel] {
			kept = append(kept, p.rel)
		}
	}
	slices.Sort(walked)
	slices.Sort(kept)
	if !slices.Equal(walked, kept) {
		t.Errorf("Walk visited files\n%q\nwant\n%q", walked, kept)
	}
}
