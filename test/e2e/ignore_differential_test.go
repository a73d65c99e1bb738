package e2e

// Contract tests of issue 3's ignore rules and of ls/grep/find as docs/tools.md
// and docs/tools.md describe them. The heart is a differential test against
// real git: git ls-files --cached --others --exclude-standard is the set of
// files git does not ignore, git check-ignore the verdict for one entry.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// ignoreDiffWord is planted in every regular file (and as a comment in every rule
// file) so that grep's set of matching files is the set of searched files.
const ignoreDiffWord = "a8iplantedword"

// ignoreDiffWS is a workspace on disk plus what the reference needs to know.
type ignoreDiffWS struct {
	root  string   // the workspace folder given to agentls
	home  string   // HOME/XDG for both git and agentls: no user config leaks in
	repos []string // nested repository roots, relative to root ("" excluded)
}

func ignoreDiffNewWS(t *testing.T) *ignoreDiffWS {
	t.Helper()
	return &ignoreDiffWS{root: t.TempDir(), home: t.TempDir()}
}

// env isolates git and rg from the machine's global configuration.
func (w *ignoreDiffWS) env() []string {
	return []string{
		"HOME=" + w.home,
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + filepath.Join(w.home, ".gitconfig"),
	}
}

func (w *ignoreDiffWS) git(t *testing.T, dir string, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), w.env()...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), fmt.Errorf("git %v in %s: %v: %s", args, dir, err, ee.Stderr)
		}
		return string(out), fmt.Errorf("git %v in %s: %v", args, dir, err)
	}
	return string(out), nil
}

func (w *ignoreDiffWS) mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := w.git(t, dir, "", args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (w *ignoreDiffWS) initRepo(t *testing.T, rel string) {
	t.Helper()
	dir := filepath.Join(w.root, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w.mustGit(t, dir, "init", "-q")
	if rel != "" {
		w.repos = append(w.repos, filepath.ToSlash(rel))
	}
}

// write creates rel under the workspace; rule files get the planted word as
// a comment so that they too are grep hits.
func (w *ignoreDiffWS) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(w.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	base := filepath.Base(rel)
	if base == ".gitignore" || base == ".ignore" || base == ".agentlsignore" {
		content = "# " + ignoreDiffWord + "\n" + content
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (w *ignoreDiffWS) file(t *testing.T, rel string) {
	w.write(t, rel, ignoreDiffWord+" in "+rel+"\n")
}

func (w *ignoreDiffWS) symlink(t *testing.T, target, rel string) {
	t.Helper()
	p := filepath.Join(w.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// repoOf returns the deepest nested repository holding rel ("" = the top).
func (w *ignoreDiffWS) repoOf(rel string) string {
	best := ""
	for _, r := range w.repos {
		if strings.HasPrefix(rel, r+"/") && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// gitFiles is the reference: every path git does not ignore, nested
// repositories listed by their own git (their own rules, not the parent's).
func (w *ignoreDiffWS) gitFiles(t *testing.T) map[string]bool {
	t.Helper()
	set := map[string]bool{}
	var list func(rel string)
	list = func(rel string) {
		out := w.mustGit(t, filepath.Join(w.root, rel), "ls-files", "-z", "--cached", "--others", "--exclude-standard")
		for _, p := range strings.Split(out, "\x00") {
			if p == "" {
				continue
			}
			full := p
			if rel != "" {
				full = rel + "/" + p
			}
			if strings.HasSuffix(p, "/") { // an untracked nested repository
				list(strings.TrimSuffix(full, "/"))
				continue
			}
			set[full] = true
		}
	}
	list("")
	return set
}

// gitIgnored asks git check-ignore about each path, in the repository that
// holds it.
func (w *ignoreDiffWS) gitIgnored(t *testing.T, paths []string) map[string]bool {
	t.Helper()
	byRepo := map[string][]string{}
	for _, p := range paths {
		r := w.repoOf(p)
		byRepo[r] = append(byRepo[r], p)
	}
	ign := map[string]bool{}
	for r, ps := range byRepo {
		var in strings.Builder
		for _, p := range ps {
			q := p
			if r != "" {
				q = strings.TrimPrefix(p, r+"/")
			}
			in.WriteString(q + "\x00")
		}
		out, err := w.git(t, filepath.Join(w.root, r), in.String(), "check-ignore", "-z", "--stdin")
		if err != nil && !strings.Contains(err.Error(), "exit status 1") {
			t.Fatal(err)
		}
		for _, q := range strings.Split(out, "\x00") {
			if q == "" {
				continue
			}
			if r != "" {
				q = r + "/" + q
			}
			ign[q] = true
		}
	}
	return ign
}

// diskEntries lists every path under root except .git directories, without
// following symlinks; dirs maps each directory to its entry names.
func (w *ignoreDiffWS) diskEntries(t *testing.T) (all []string, dirs map[string][]string) {
	t.Helper()
	dirs = map[string][]string{}
	var walk func(rel string)
	walk = func(rel string) {
		ents, err := os.ReadDir(filepath.Join(w.root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		names := []string{}
		for _, e := range ents {
			if e.Name() == ".git" {
				continue
			}
			names = append(names, e.Name())
			p := e.Name()
			if rel != "" {
				p = rel + "/" + e.Name()
			}
			all = append(all, p)
			if e.IsDir() {
				walk(p)
			}
		}
		dirs[rel] = names
	}
	walk("")
	return all, dirs
}

type ignoreDiffBackend struct {
	name string
	env  []string
}

// ignoreDiffBackends: ripgrep when installed, and the Go fallback forced through
// AGENTLS_GREP_BACKEND=go (docs/tools.md).
func ignoreDiffBackends(t *testing.T) []ignoreDiffBackend {
	t.Helper()
	bs := []ignoreDiffBackend{}
	if _, err := exec.LookPath("rg"); err == nil {
		bs = append(bs, ignoreDiffBackend{name: "rg"})
	} else {
		t.Log("rg not on PATH: only the Go fallback is tested")
	}
	return append(bs, ignoreDiffBackend{name: "go", env: []string{"AGENTLS_GREP_BACKEND=go"}})
}

func ignoreDiffStart(t *testing.T, w *ignoreDiffWS, extra ...string) *harness.Client {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: w.root, Env: append(w.env(), extra...)})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c.Initialize(ctx, nil)
	return c
}

func ignoreDiffCall(t *testing.T, c *harness.Client, tool string, args map[string]any) harness.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return c.CallTool(ctx, tool, args)
}

func ignoreDiffOK(t *testing.T, c *harness.Client, tool string, args map[string]any) string {
	t.Helper()
	r := ignoreDiffCall(t, c, tool, args)
	if r.IsError {
		t.Fatalf("%s %v: unexpected isError: %s", tool, args, r.Text())
	}
	return r.Text()
}

// ignoreDiffPathLines returns the lines of a find result that are paths (not
// notices or blank lines).
func ignoreDiffPathLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "[") {
			continue
		}
		out = append(out, l)
	}
	return out
}

func ignoreDiffFind(t *testing.T, c *harness.Client, args map[string]any) []string {
	t.Helper()
	text := ignoreDiffOK(t, c, "find", args)
	if strings.Contains(text, "[Showing") {
		t.Fatalf("find %v was cut: %s", args, text)
	}
	return ignoreDiffPathLines(text)
}

var ignoreDiffMatchLine = regexp.MustCompile(`^(.*):(\d+): `)

// ignoreDiffGrepFiles greps the planted word and returns the set of files with
// matches, and the raw text.
func ignoreDiffGrepFiles(t *testing.T, c *harness.Client, args map[string]any) (map[string]bool, string) {
	t.Helper()
	r := ignoreDiffCall(t, c, "grep", args)
	set := map[string]bool{}
	if r.IsError {
		return set, r.Text()
	}
	for _, l := range strings.Split(r.Text(), "\n") {
		if m := ignoreDiffMatchLine.FindStringSubmatch(l); m != nil {
			set[m[1]] = true
		}
	}
	return set, r.Text()
}

func ignoreDiffSetDiff(want, got map[string]bool) string {
	var missing, extra []string
	for p := range want {
		if !got[p] {
			missing = append(missing, strconv.Quote(p))
		}
	}
	for p := range got {
		if !want[p] {
			extra = append(extra, strconv.Quote(p))
		}
	}
	if len(missing)+len(extra) == 0 {
		return ""
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return fmt.Sprintf("missing (git keeps, agentls hid): %v\nextra (git ignores, agentls showed): %v", missing, extra)
}

// ruleDump dumps every rule file, so a failure message shows the
// patterns that produced it.
func (w *ignoreDiffWS) ruleDump(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(w.root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		n := d.Name()
		rel, _ := filepath.Rel(w.root, p)
		if n == ".gitignore" || n == ".ignore" || n == ".agentlsignore" || (n == "exclude" && strings.HasSuffix(filepath.Dir(p), filepath.Join(".git", "info"))) {
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "--- %s\n%s", rel, data)
		}
		return nil
	})
	return b.String()
}

var (
	ignoreDiffLsHeader  = regexp.MustCompile(`^.*: \d+ entr(y|ies)$`)
	ignoreDiffLsIgnored = regexp.MustCompile(`\[(\d+) ignored entr`)
)

// ignoreDiffLsNames parses an ls result: entry names (without "/" or "@ -> t") and
// the hidden-ignored count.
func ignoreDiffLsNames(text string) (names []string, ignored int) {
	for i, l := range strings.Split(text, "\n") {
		if m := ignoreDiffLsIgnored.FindStringSubmatch(l); m != nil {
			ignored, _ = strconv.Atoi(m[1])
			continue
		}
		if l == "" || l == "(empty)" || strings.HasPrefix(l, "[") || (i == 0 && ignoreDiffLsHeader.MatchString(l)) {
			continue
		}
		if k := strings.Index(l, "@ -> "); k >= 0 {
			l = l[:k]
		}
		names = append(names, strings.TrimSuffix(l, "/"))
	}
	return names, ignored
}

// ignoreDiffCheckAgainstGit is the differential check: find **/*, grep of the
// planted word on every backend, and ls of every visible directory.
func ignoreDiffCheckAgainstGit(t *testing.T, w *ignoreDiffWS, label string) {
	t.Helper()
	want := w.gitFiles(t)
	rules := w.ruleDump(t)

	// Regular files only for grep: a symlink is listed, not followed.
	wantGrep := map[string]bool{}
	for p := range want {
		if fi, err := os.Lstat(filepath.Join(w.root, p)); err == nil && fi.Mode().IsRegular() {
			wantGrep[p] = true
		}
	}

	var c *harness.Client
	for _, b := range ignoreDiffBackends(t) {
		cb := ignoreDiffStart(t, w, b.env...)
		if c == nil {
			c = cb
		}
		got, text := ignoreDiffGrepFiles(t, cb, map[string]any{"pattern": ignoreDiffWord, "limit": 1000})
		if strings.Contains(text, "matches shown (limit") {
			t.Fatalf("%s: grep was cut: %s", label, text)
		}
		if d := ignoreDiffSetDiff(wantGrep, got); d != "" {
			t.Errorf("%s: grep (%s backend) searched a different file set than git keeps:\n%s\nrules:\n%s", label, b.name, d, rules)
		}
	}

	got := map[string]bool{}
	for _, p := range ignoreDiffFind(t, c, map[string]any{"pattern": "**/*", "limit": 10000}) {
		got[p] = true
	}
	if d := ignoreDiffSetDiff(want, got); d != "" {
		t.Errorf("%s: find **/* differs from git ls-files:\n%s\nrules:\n%s", label, d, rules)
	}

	all, dirs := w.diskEntries(t)
	ign := w.gitIgnored(t, all)
	var visit func(rel string)
	visit = func(rel string) {
		args := map[string]any{"limit": 5000}
		if rel != "" {
			args["path"] = rel
		}
		names, hidden := ignoreDiffLsNames(ignoreDiffOK(t, c, "ls", args))
		gotNames := map[string]bool{}
		for _, n := range names {
			gotNames[n] = true
		}
		wantNames := map[string]bool{}
		wantHidden := 0
		for _, n := range dirs[rel] {
			p := n
			if rel != "" {
				p = rel + "/" + n
			}
			if ign[p] {
				wantHidden++
				continue
			}
			wantNames[n] = true
		}
		if d := ignoreDiffSetDiff(wantNames, gotNames); d != "" {
			t.Errorf("%s: ls %q differs from git check-ignore:\n%s\nrules:\n%s", label, rel, d, rules)
		}
		if hidden != wantHidden {
			t.Errorf("%s: ls %q says %d ignored entries hidden, git check-ignore ignores %d", label, rel, hidden, wantHidden)
		}
		for _, n := range dirs[rel] {
			p := n
			if rel != "" {
				p = rel + "/" + n
			}
			if _, isDir := dirs[p]; isDir && !ign[p] {
				visit(p)
			}
		}
	}
	visit("")
}

// --- seeded layouts -------------------------------------------------------

var (
	ignoreDiffSegs  = []string{"a", "b", "build", "src", "x", "deep", "sp ace", "ünï", "-d", "logs", ".hid", "z"}
	ignoreDiffNames = []string{"keep.log", "x.log", "root.txt", "a.txt", "b.md", "-dash.txt", "#hash", "!bang",
		"trail ", "f1.c", "f[1].c", ".hidden", "Ünicode.txt", "name with space.txt", "z", "y.tmp", "x", "b", "README"}
	ignoreDiffPatterns = []string{"*.log", "!keep.log", "build/", "/root.txt", "a/**/b", "**/x", "x/**", "[ab].txt",
		"[!a]*.md", `\#hash`, `\!bang`, `trail\ `, "trail  ", "?.txt", "deep/*/z", "src/", "*.c", "!f1.c",
		"**/deep/**", "/a", "sp ace/", "#comment", "", "ünï/", "*.tmp", "!*.tmp", "x", "z", "/build", "b/",
		"-dash.txt", "name with space.txt", "**/b/*.txt", ".hid/", `f\[1\].c`, "/*.md", "a/b/", "deep/**/z",
		"!deep/", "Ünicode.txt", "[^a]*.c", "logs", "!logs/keep.log", "**/logs", "*/README", "x/", "!x",
		".hidden", "[a-c]", "**"}
)

// ignoreDiffSeeds is how many random layouts the differential test builds.
const ignoreDiffSeeds = 30

// ignoreDiffLayout builds a deterministic random repository for seed.
func ignoreDiffLayout(t *testing.T, seed uint64) *ignoreDiffWS {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0xa81))
	w := ignoreDiffNewWS(t)
	w.initRepo(t, "")
	dirs := []string{""}
	for range 4 + rng.IntN(6) {
		parent := dirs[rng.IntN(len(dirs))]
		if strings.Count(parent, "/") >= 2 {
			continue
		}
		d := ignoreDiffSegs[rng.IntN(len(ignoreDiffSegs))]
		if parent != "" {
			d = parent + "/" + d
		}
		dirs = append(dirs, d)
	}
	used := map[string]bool{}
	for _, d := range dirs {
		used[d] = true
	}
	for _, d := range dirs {
		for range 2 + rng.IntN(6) {
			p := ignoreDiffNames[rng.IntN(len(ignoreDiffNames))]
			if d != "" {
				p = d + "/" + p
			}
			if used[p] {
				continue
			}
			// a file may not sit where a directory goes
			clash := false
			for u := range used {
				if strings.HasPrefix(u, p+"/") {
					clash = true
				}
			}
			if clash {
				continue
			}
			used[p] = true
			w.file(t, p)
		}
	}
	rules := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(5) {
			b.WriteString(ignoreDiffPatterns[rng.IntN(len(ignoreDiffPatterns))] + "\n")
		}
		return b.String()
	}
	for _, d := range dirs {
		if rng.IntN(3) > 0 {
			p := ".gitignore"
			if d != "" {
				p = d + "/.gitignore"
			}
			w.write(t, p, rules())
		}
	}
	if seed%2 == 1 {
		if err := os.WriteFile(filepath.Join(w.root, ".git", "info", "exclude"), []byte(rules()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if seed%3 == 0 {
		// a nested repository with its own rules, under a directory
		w.initRepo(t, "nest")
		w.file(t, "nest/keep.log")
		w.file(t, "nest/x.log")
		w.file(t, "nest/b.md")
		w.write(t, "nest/.gitignore", rules())
	}
	return w
}

// TestIgnoreDifferentialSeeded compares find, grep (both backends) and
// ls with git on random repositories built from fixed seeds.
func TestIgnoreDifferentialSeeded(t *testing.T) {
	slow(t)
	t.Parallel()
	for seed := uint64(1); seed <= ignoreDiffSeeds; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			t.Parallel()
			w := ignoreDiffLayout(t, seed)
			ignoreDiffCheckAgainstGit(t, w, fmt.Sprintf("seed %d", seed))
		})
	}
}

// TestIgnoreDifferentialCases: hand-written corner cases of gitignore,
// each compared with git.
func TestIgnoreDifferentialCases(t *testing.T) {
	slow(t)
	t.Parallel()
	cases := []struct {
		name  string
		build func(t *testing.T, w *ignoreDiffWS)
	}{
		{"negation re-includes", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "*.log\n!keep.log\n")
			w.file(t, "x.log")
			w.file(t, "keep.log")
			w.file(t, "d/keep.log")
			w.file(t, "d/y.log")
		}},
		{"negation inside ignored dir cannot re-include", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "logs/\n!logs/keep.txt\n")
			w.file(t, "logs/keep.txt")
			w.file(t, "logs/other.txt")
			w.file(t, "top.txt")
		}},
		{"ignored dir contents re-included via dir/* form", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "logs/*\n!logs/keep.txt\n")
			w.file(t, "logs/keep.txt")
			w.file(t, "logs/other.txt")
		}},
		{"dir-only pattern spares a file of the same name", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "build/\n")
			w.file(t, "build/out.o")
			w.file(t, "src/build")
			w.file(t, "src/build.txt")
			w.file(t, "lib/build/x.o")
		}},
		{"anchored and middle-slash patterns", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "/root.txt\na/b.txt\n")
			w.file(t, "root.txt")
			w.file(t, "sub/root.txt")
			w.file(t, "a/b.txt")
			w.file(t, "z/a/b.txt")
		}},
		{"anchored leading wildcard /*.md matches only at its directory", func(t *testing.T, w *ignoreDiffWS) {
			// minimised from seed 3: git keeps src/b.md and sub/d/b.md
			w.write(t, ".gitignore", "/*.md\n")
			w.write(t, "sub/.gitignore", "/*.txt\n")
			w.file(t, "a.md")
			w.file(t, "src/b.md")
			w.file(t, "sub/a.txt")
			w.file(t, "sub/d/b.txt")
		}},
		{"double star forms", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "a/**/b\n**/x\ny/**\n")
			w.file(t, "a/b")
			w.file(t, "a/q/b")
			w.file(t, "a/q/r/b")
			w.file(t, "c/a/q/b")
			w.file(t, "x")
			w.file(t, "deep/er/x")
			w.file(t, "x2")
			w.file(t, "y/one")
			w.file(t, "y/two/three")
			w.file(t, "yy/one")
		}},
		{"character classes and question mark", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "[ab].txt\n[!x]y.md\n?.c\n[0-9][0-9].log\n")
			for _, f := range []string{"a.txt", "b.txt", "c.txt", "ay.md", "xy.md", "a.c", "ab.c", "12.log", "1a.log"} {
				w.file(t, f)
			}
		}},
		{"escaped hash and bang", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "\\#hash\n\\!bang\n#comment\n")
			w.file(t, "#hash")
			w.file(t, "!bang")
			w.file(t, "#comment")
			w.file(t, "bang")
		}},
		{"trailing spaces escaped and not", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "one\\ \ntwo   \nthree\\  \n")
			for _, f := range []string{"one ", "one", "two", "two ", "three ", "three  ", "three"} {
				w.file(t, f)
			}
		}},
		{"nested gitignore overrides parent", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "*.txt\n")
			w.write(t, "sub/.gitignore", "!keep.txt\n*.md\n")
			w.file(t, "a.txt")
			w.file(t, "sub/keep.txt")
			w.file(t, "sub/other.txt")
			w.file(t, "sub/x.md")
			w.file(t, "y.md")
		}},
		{"nested gitignore is scoped to its directory", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, "a/.gitignore", "ignored.txt\n/anch.txt\n")
			w.file(t, "a/ignored.txt")
			w.file(t, "a/deep/ignored.txt")
			w.file(t, "a/anch.txt")
			w.file(t, "a/deep/anch.txt")
			w.file(t, "b/ignored.txt")
			w.file(t, "b/anch.txt")
		}},
		{"info exclude", func(t *testing.T, w *ignoreDiffWS) {
			if err := os.WriteFile(filepath.Join(w.root, ".git/info/exclude"), []byte("*.secret\n!ok.secret\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			w.file(t, "a.secret")
			w.file(t, "ok.secret")
			w.file(t, "d/b.secret")
		}},
		{"gitignore negation beats info exclude", func(t *testing.T, w *ignoreDiffWS) {
			if err := os.WriteFile(filepath.Join(w.root, ".git/info/exclude"), []byte("*.gen\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			w.write(t, ".gitignore", "!keep.gen\n")
			w.file(t, "a.gen")
			w.file(t, "keep.gen")
		}},
		{"ignore everything then re-include", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "*\n!*/\n!*.go\n!.gitignore\n")
			w.file(t, "main.go")
			w.file(t, "README")
			w.file(t, "pkg/a.go")
			w.file(t, "pkg/a.txt")
		}},
		{"odd names", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "-v\nünï*.txt\nsp ace/\n")
			for _, f := range []string{"-v", "-dash.txt", "ünïcode.txt", "Ünicode.txt", "sp ace/in.txt", "name with space.txt", "日本/語.txt", "--", "-"} {
				w.file(t, f)
			}
		}},
		{"hidden files and directories", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", ".cache/\n")
			w.file(t, ".env.example")
			w.file(t, ".config/settings.json")
			w.file(t, ".cache/blob")
		}},
		{"symlinks", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "linkdir/\n*.lnk\n")
			w.file(t, "real/f.txt")
			w.symlink(t, "real", "linkdir")
			w.symlink(t, "real/f.txt", "file.lnk")
			w.symlink(t, "real/f.txt", "file.link")
			w.symlink(t, "real", "dirlink")
			w.symlink(t, "/etc", "outside")
			w.symlink(t, "/etc/hostname", "outside.txt")
		}},
		{"nested repository has its own rules", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "*.log\nvendor/lib/*.md\n")
			w.initRepo(t, "vendor/lib")
			w.write(t, "vendor/lib/.gitignore", "*.tmp\n")
			w.file(t, "vendor/lib/a.log")
			w.file(t, "vendor/lib/a.md")
			w.file(t, "vendor/lib/a.tmp")
			w.file(t, "vendor/lib/b.txt")
			w.file(t, "a.tmp")
			w.file(t, "a.log")
		}},
		{"nested repository ignored by the parent", func(t *testing.T, w *ignoreDiffWS) {
			w.write(t, ".gitignore", "third_party/\n")
			w.initRepo(t, "third_party/x")
			w.file(t, "third_party/x/a.txt")
			w.file(t, "main.txt")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := ignoreDiffNewWS(t)
			w.initRepo(t, "")
			tc.build(t, w)
			ignoreDiffCheckAgainstGit(t, w, tc.name)
		})
	}
}

// TestIgnoreWorkspaceInsideRepository: a folder below a repository's top
// gets the top's .gitignore and info/exclude, as git applies them.
func TestIgnoreWorkspaceInsideRepository(t *testing.T) {
	t.Parallel()
	top := ignoreDiffNewWS(t)
	top.initRepo(t, "")
	top.write(t, ".gitignore", "*.log\npkg/gen/\n/pkg/anch.txt\n")
	if err := os.WriteFile(filepath.Join(top.root, ".git/info/exclude"), []byte("*.tmp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	top.write(t, "pkg/.gitignore", "!keep.log\n")
	for _, f := range []string{"pkg/a.log", "pkg/keep.log", "pkg/gen/x.go", "pkg/anch.txt", "pkg/sub/anch.txt", "pkg/b.tmp", "pkg/main.go"} {
		top.file(t, f)
	}
	w := &ignoreDiffWS{root: filepath.Join(top.root, "pkg"), home: top.home}
	ignoreDiffCheckAgainstGit(t, w, "workspace = repo/pkg")
}

// TestIgnoreOutsideGit: .gitignore is honoured outside any repository
// (docs/tools.md: "honoured inside and outside git repositories").
func TestIgnoreOutsideGit(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{2, 4, 8, 10} {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			t.Parallel()
			w := ignoreDiffLayout(t, seed) // even, not %3: no exclude, no nested repo
			want := w.gitFiles(t)
			if err := os.RemoveAll(filepath.Join(w.root, ".git")); err != nil {
				t.Fatal(err)
			}
			for _, b := range ignoreDiffBackends(t) {
				c := ignoreDiffStart(t, w, b.env...)
				got, _ := ignoreDiffGrepFiles(t, c, map[string]any{"pattern": ignoreDiffWord, "limit": 1000})
				if d := ignoreDiffSetDiff(want, got); d != "" {
					t.Errorf("seed %d outside git: grep (%s) differs from git's verdict:\n%s\nrules:\n%s", seed, b.name, d, w.ruleDump(t))
				}
				if b.name == "go" {
					found := map[string]bool{}
					for _, p := range ignoreDiffFind(t, c, map[string]any{"pattern": "**/*", "limit": 10000}) {
						found[p] = true
					}
					if d := ignoreDiffSetDiff(want, found); d != "" {
						t.Errorf("seed %d outside git: find differs from git's verdict:\n%s", seed, d)
					}
				}
			}
		})
	}
}

// TestIgnoreAgentFiles: .ignore and .agentlsignore (named by docs/tools.md)
// hide files, win over .gitignore in the same directory (docs/tools.md), and
// .git/ is never listed or searched.
func TestIgnoreAgentFiles(t *testing.T) {
	t.Parallel()
	w := ignoreDiffNewWS(t)
	w.initRepo(t, "")
	w.write(t, ".gitignore", "*.log\n")
	w.write(t, ".ignore", "*.tmp\n!keep.log\n")
	w.write(t, "sub/.agentlsignore", "secret/\n")
	for _, f := range []string{"a.log", "keep.log", "a.tmp", "a.txt", "sub/secret/k.txt", "sub/ok.txt", "other/secret/k.txt"} {
		w.file(t, f)
	}
	// a file inside .git holding the word: never searched or listed
	w.write(t, ".git/a8i.txt", ignoreDiffWord+"\n")
	want := map[string]bool{".gitignore": true, ".ignore": true, "sub/.agentlsignore": true, "keep.log": true,
		"a.txt": true, "sub/ok.txt": true, "other/secret/k.txt": true}
	for _, b := range ignoreDiffBackends(t) {
		c := ignoreDiffStart(t, w, b.env...)
		got, _ := ignoreDiffGrepFiles(t, c, map[string]any{"pattern": ignoreDiffWord})
		if d := ignoreDiffSetDiff(want, got); d != "" {
			t.Errorf("grep (%s): %s", b.name, d)
		}
		if b.name != "go" {
			continue
		}
		found := map[string]bool{}
		for _, p := range ignoreDiffFind(t, c, map[string]any{"pattern": "**/*"}) {
			found[p] = true
		}
		if d := ignoreDiffSetDiff(want, found); d != "" {
			t.Errorf("find: %s", d)
		}
		names, hidden := ignoreDiffLsNames(ignoreDiffOK(t, c, "ls", map[string]any{}))
		if strings.Join(names, ",") != ".gitignore,.ignore,a.txt,keep.log,other,sub" || hidden != 2 {
			t.Errorf("ls root: names %q, hidden %d; want .gitignore,.ignore,a.txt,keep.log,other,sub and 2 hidden (a.log, a.tmp; .git not counted)", names, hidden)
		}
	}
}

// TestIgnoreCoreExcludesFile: the user's global excludes (core.excludesFile
// set with git config, or git's XDG default $XDG_CONFIG_HOME/git/ignore) are
// part of what git ignores; docs/tools.md promises verdicts "as git
// check-ignore decides", and the Go fallback must keep the same ignore rules
// as ripgrep, so grep (both backends), find and ls must agree with git.
func TestIgnoreCoreExcludesFile(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"core.excludesFile", "XDG default"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			w := ignoreDiffNewWS(t)
			w.initRepo(t, "")
			excl := filepath.Join(w.home, "global-ignore")
			if how == "XDG default" {
				excl = filepath.Join(w.home, ".config", "git", "ignore")
			}
			if err := os.MkdirAll(filepath.Dir(excl), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(excl, []byte("*.glob\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if how == "core.excludesFile" {
				w.mustGit(t, w.root, "config", "core.excludesFile", excl)
			}
			w.file(t, "a.glob")
			w.file(t, "a.txt")
			if w.gitFiles(t)["a.glob"] {
				t.Fatalf("reference: git does not ignore a.glob through %s", how)
			}
			ignoreDiffCheckAgainstGit(t, w, how)
		})
	}
}

// --- grep, find, ls beyond the differential --------------------------------

// ignoreDiffGrepFixture is a small workspace for the option tests.
func ignoreDiffGrepFixture(t *testing.T) *ignoreDiffWS {
	t.Helper()
	w := ignoreDiffNewWS(t)
	w.initRepo(t, "")
	w.write(t, ".gitignore", "gen/\n*.log\n")
	w.write(t, "src/main.go", "package main\n// Hello World\nfunc hello() {}\n// a.b literal\n// axb regex\n")
	w.write(t, "src/util.ts", "export const HELLO = 1;\n")
	w.write(t, "b.txt", "one\ntwo\nthree hit\nfour\nfive hit\nsix\nseven\neight\nnine\nten hit\n")
	w.write(t, "a.txt", "hit first\n")
	w.write(t, "dash.txt", "foo\n-dash here\n")
	w.write(t, "long.txt", strings.Repeat("x", 600)+" tail\n")
	w.write(t, "bin.dat", "ab\x00cd hit\n")
	w.write(t, ".hidden/h.txt", "hit hidden\n")
	w.write(t, "gen/out.txt", "hit generated\n")
	w.write(t, "x.log", "hit log\n")
	w.write(t, ".git/hit.txt", "hit in git dir\n")
	var many strings.Builder
	for i := 1; i <= 150; i++ {
		fmt.Fprintf(&many, "many %d\n", i)
	}
	w.write(t, "many.txt", many.String())
	return w
}

// TestIgnoreGrepOptions runs the documented options on both backends,
// asserts exact output, and that the two backends answer byte-identically.
func TestIgnoreGrepOptions(t *testing.T) {
	t.Parallel()
	w := ignoreDiffGrepFixture(t)
	cases := []struct {
		name    string
		args    map[string]any
		want    string // exact text, when set
		has     []string
		hasNot  []string
		isError bool
	}{
		{name: "regex, sorted by path then line, hidden searched, ignored/binary/.git skipped",
			args: map[string]any{"pattern": "hit"},
			want: ".hidden/h.txt:1: hit hidden\na.txt:1: hit first\nb.txt:3: three hit\nb.txt:5: five hit\nb.txt:10: ten hit\n"},
		{name: "literal treats dot literally", args: map[string]any{"pattern": "a.b", "literal": true},
			want: "src/main.go:4: // a.b literal\n"},
		{name: "regex dot matches any", args: map[string]any{"pattern": "a.b l|a.b r"},
			want: "src/main.go:4: // a.b literal\nsrc/main.go:5: // axb regex\n"},
		{name: "ignoreCase", args: map[string]any{"pattern": "hello", "ignoreCase": true},
			want: "src/main.go:2: // Hello World\nsrc/main.go:3: func hello() {}\nsrc/util.ts:1: export const HELLO = 1;\n"},
		{name: "case-sensitive by default", args: map[string]any{"pattern": "hello"},
			want: "src/main.go:3: func hello() {}\n"},
		{name: "glob filter", args: map[string]any{"pattern": "hello", "ignoreCase": true, "glob": "*.ts"},
			want: "src/util.ts:1: export const HELLO = 1;\n"},
		{name: "path narrows", args: map[string]any{"pattern": "hit", "path": "b.txt"},
			want: "b.txt:3: three hit\nb.txt:5: five hit\nb.txt:10: ten hit\n"},
		{name: "context windows merge and groups are separated",
			args: map[string]any{"pattern": "hit", "path": "b.txt", "context": 1},
			want: "b.txt-2- two\nb.txt:3: three hit\nb.txt-4- four\nb.txt:5: five hit\nb.txt-6- six\n--\nb.txt-9- nine\nb.txt:10: ten hit\n"},
		{name: "pattern starting with a dash", args: map[string]any{"pattern": "-dash"},
			want: "dash.txt:2: -dash here\n"},
		{name: "hidden false skips dotfiles", args: map[string]any{"pattern": "hit", "hidden": false},
			has: []string{"a.txt:1: hit first"}, hasNot: []string{".hidden/"}},
		{name: "includeIgnored searches ignored files", args: map[string]any{"pattern": "hit", "includeIgnored": true},
			has: []string{"gen/out.txt:1: hit generated", "x.log:1: hit log"}, hasNot: []string{".git/", "bin.dat"}},
		{name: "an ignored path named explicitly says how to include it",
			args: map[string]any{"pattern": "hit", "path": "gen"}, has: []string{"includeIgnored: true"}, hasNot: []string{"gen/out.txt:1"}},
		{name: "default limit 100 with the call that gets more", args: map[string]any{"pattern": "many"},
			has: []string{"many.txt:100: many 100", "limit=200"}, hasNot: []string{"many.txt:101:"}},
		{name: "explicit limit", args: map[string]any{"pattern": "many", "limit": 10},
			has: []string{"many.txt:10: many 10", "limit=20"}, hasNot: []string{"many.txt:11:"}},
		{name: "under the limit no notice", args: map[string]any{"pattern": "many", "limit": 150},
			has: []string{"many.txt:150: many 150"}, hasNot: []string{"limit="}},
		{name: "limit above maximum is refused naming the field", args: map[string]any{"pattern": "x", "limit": 1001},
			isError: true, has: []string{"limit"}},
		{name: "invalid regex", args: map[string]any{"pattern": "(unclosed"}, isError: true},
	}
	outputs := map[string]map[string]string{}
	for _, b := range ignoreDiffBackends(t) {
		c := ignoreDiffStart(t, w, b.env...)
		outputs[b.name] = map[string]string{}
		for _, tc := range cases {
			r := ignoreDiffCall(t, c, "grep", tc.args)
			text := r.Text()
			outputs[b.name][tc.name] = text
			if r.IsError != tc.isError {
				t.Errorf("%s/%s: isError=%v, want %v: %s", b.name, tc.name, r.IsError, tc.isError, text)
				continue
			}
			if !tc.isError {
				if got, _ := r.Details["backend"].(string); got != b.name {
					t.Errorf("%s/%s: details.backend = %q", b.name, tc.name, got)
				}
			}
			if tc.want != "" && strings.TrimRight(text, "\n") != strings.TrimRight(tc.want, "\n") {
				t.Errorf("%s/%s: got\n%s\nwant\n%s", b.name, tc.name, text, tc.want)
			}
			for _, s := range tc.has {
				if !strings.Contains(text, s) {
					t.Errorf("%s/%s: output lacks %q:\n%s", b.name, tc.name, s, text)
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(text, s) {
					t.Errorf("%s/%s: output contains %q:\n%s", b.name, tc.name, s, text)
				}
			}
		}
		// lines cut at 500 characters, with a marker
		text := ignoreDiffOK(t, c, "grep", map[string]any{"pattern": "xxx", "path": "long.txt"})
		line := strings.SplitN(text, "\n", 2)[0]
		body := strings.TrimPrefix(line, "long.txt:1: ")
		if !strings.HasPrefix(body, strings.Repeat("x", 500)) || strings.HasPrefix(body, strings.Repeat("x", 501)) || strings.Contains(body, "tail") {
			t.Errorf("%s: a 605-character line is not cut at 500 characters: %q", b.name, line)
		}
	}
	if rg, ok := outputs["rg"]; ok {
		for name, out := range outputs["go"] {
			if rg[name] != out && !strings.Contains(name, "invalid regex") {
				t.Errorf("backends differ on %q:\nrg:\n%s\ngo:\n%s", name, rg[name], out)
			}
		}
	}
}

// TestIgnoreGrepByteCap: the whole output stays within 51,200 bytes and
// the notice gives the read call that continues.
func TestIgnoreGrepByteCap(t *testing.T) {
	t.Parallel()
	w := ignoreDiffNewWS(t)
	var b strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&b, "big %d %s\n", i, strings.Repeat("y", 400))
	}
	w.write(t, "big.txt", b.String())
	for _, be := range ignoreDiffBackends(t) {
		c := ignoreDiffStart(t, w, be.env...)
		text := ignoreDiffOK(t, c, "grep", map[string]any{"pattern": "big", "limit": 1000})
		if len(text) > 51200 {
			t.Errorf("%s: output is %d bytes, over 51,200", be.name, len(text))
		}
		m := regexp.MustCompile(`last shown big\.txt:(\d+)\).*read \{"path": "big\.txt", "offset": (\d+)\}`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("%s: no byte-cap notice with a read call:\n%s", be.name, text[max(0, len(text)-400):])
		}
		last, _ := strconv.Atoi(m[1])
		off, _ := strconv.Atoi(m[2])
		if off != last+1 || !strings.Contains(text, fmt.Sprintf("big.txt:%d: big %d ", last, last)) {
			t.Errorf("%s: notice says last shown %d, offset %d; output must end at that line", be.name, last, off)
		}
	}
}

// TestIgnoreFind: the pi regression cases, ignore scoping, hidden files,
// .git, symlinks, order, limits and errors.
func TestIgnoreFind(t *testing.T) {
	t.Parallel()
	w := ignoreDiffNewWS(t)
	w.initRepo(t, "")
	for _, f := range []string{"some/parent/child/file.ext", "some/parent/child/test.spec.ts", "src/foo/bar/example.spec.ts",
		"a/ignored.txt", "b/ignored.txt", ".env.example", ".config/x.ts", "B.ts", "a.ts", "_.ts", "real/in.ts"} {
		w.file(t, f)
	}
	w.write(t, "a/.gitignore", "ignored.txt\n")
	w.write(t, ".git/inside.ts", "x\n")
	w.symlink(t, "real", "linkdir")
	c := ignoreDiffStart(t, w)
	cases := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"name pattern at any depth", map[string]any{"pattern": "*.spec.ts"}, []string{"some/parent/child/test.spec.ts", "src/foo/bar/example.spec.ts"}},
		{"trailing double star", map[string]any{"pattern": "some/parent/child/**"}, []string{"some/parent/child/file.ext", "some/parent/child/test.spec.ts"}},
		{"leading double star", map[string]any{"pattern": "**/parent/child/*"}, []string{"some/parent/child/file.ext", "some/parent/child/test.spec.ts"}},
		{"middle double star", map[string]any{"pattern": "src/**/*.spec.ts"}, []string{"src/foo/bar/example.spec.ts"}},
		{"nested gitignore scoped", map[string]any{"pattern": "ignored.txt"}, []string{"b/ignored.txt"}},
		{"hidden found, .git never, symlinked dir not followed, byte order", map[string]any{"pattern": "*.ts"},
			[]string{".config/x.ts", "B.ts", "_.ts", "a.ts", "real/in.ts", "some/parent/child/test.spec.ts", "src/foo/bar/example.spec.ts"}},
		{"relative to path", map[string]any{"pattern": "*.ts", "path": "real"}, []string{"real/in.ts"}},
		{"symlink listed", map[string]any{"pattern": "linkdir*"}, []string{"linkdir"}},
		{"dotfile by name", map[string]any{"pattern": ".env*"}, []string{".env.example"}},
	}
	for _, tc := range cases {
		got := ignoreDiffFind(t, c, tc.args)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: find %v = %q, want %q", tc.name, tc.args, got, tc.want)
		}
	}
	r := ignoreDiffCall(t, c, "find", map[string]any{"pattern": "src/[a"})
	if !r.IsError || !strings.Contains(r.Text(), "[") {
		t.Errorf("invalid glob: isError=%v %q", r.IsError, r.Text())
	}
	r = ignoreDiffCall(t, c, "find", map[string]any{"pattern": "*.txt", "path": "a", "includeIgnored": true})
	if r.IsError || !strings.Contains(r.Text(), "a/ignored.txt") {
		t.Errorf("includeIgnored: %q", r.Text())
	}
}

// TestIgnoreFindLimit: default 1000, exceeding is announced with the call
// that gets more; the paths shown are the first in path order.
func TestIgnoreFindLimit(t *testing.T) {
	t.Parallel()
	w := ignoreDiffNewWS(t)
	for i := 1; i <= 1005; i++ {
		w.write(t, fmt.Sprintf("d%d/f%04d.txt", i%7, i), "x\n")
	}
	c := ignoreDiffStart(t, w)
	text := ignoreDiffOK(t, c, "find", map[string]any{"pattern": "*.txt"})
	paths := ignoreDiffPathLines(text)
	if len(paths) != 1000 {
		t.Fatalf("find shows %d paths, want 1000", len(paths))
	}
	if !sort.StringsAreSorted(paths) {
		t.Errorf("find output not sorted by path")
	}
	// the 1000 shown are the first 1000 of all 1005 in path order
	all := ignoreDiffFind(t, c, map[string]any{"pattern": "*.txt", "limit": 2000})
	if len(all) != 1005 || strings.Join(all[:1000], "\n") != strings.Join(paths, "\n") {
		t.Errorf("limited find is not the first 1000 of the full sorted list (full has %d)", len(all))
	}
	if !strings.Contains(text, "limit 1000") || !strings.Contains(text, "limit=2000") {
		t.Errorf("find limit notice lacks the limit or the call: %q", text[strings.LastIndex(text, "\n["):])
	}
}

// TestIgnoreLs: shape, order, ignored count, .git, limits and errors.
func TestIgnoreLs(t *testing.T) {
	t.Parallel()
	w := ignoreDiffNewWS(t)
	w.initRepo(t, "")
	w.write(t, ".gitignore", "*.log\nbuild/\n")
	for _, f := range []string{"b.txt", "B.txt", "_u.txt", "a.log", "c.log", "build/x", "dir/f", ".dot"} {
		w.file(t, f)
	}
	w.symlink(t, "b.txt", "ln")
	c := ignoreDiffStart(t, w)
	text := ignoreDiffOK(t, c, "ls", map[string]any{})
	wantLines := []string{".dot", ".gitignore", "B.txt", "_u.txt", "b.txt", "dir/", "ln@ -> b.txt"}
	body := []string{}
	for i, l := range strings.Split(text, "\n") {
		if i == 0 || l == "" || strings.HasPrefix(l, "[") {
			continue
		}
		body = append(body, l)
	}
	if strings.Join(body, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("ls root = %q, want %q", body, wantLines)
	}
	if !strings.Contains(text, "3 ignored entries hidden") {
		t.Errorf("ls root should say 3 ignored entries hidden (a.log, c.log, build; .git not counted): %q", text)
	}
	if r := ignoreDiffCall(t, c, "ls", map[string]any{"path": "b.txt"}); !r.IsError || !strings.Contains(r.Text(), "read") {
		t.Errorf("ls of a file: isError=%v %q, want an error suggesting read", r.IsError, r.Text())
	}
	if r := ignoreDiffCall(t, c, "ls", map[string]any{"path": "nope"}); !r.IsError || !strings.Contains(r.Text(), "find") {
		t.Errorf("ls of a missing path: isError=%v %q, want an error suggesting find", r.IsError, r.Text())
	}
	if text := ignoreDiffOK(t, c, "ls", map[string]any{"path": "build"}); !strings.Contains(text, "ignored") {
		t.Errorf("ls of an ignored directory does not say so: %q", text)
	}

	big := ignoreDiffNewWS(t)
	for i := 0; i < 600; i++ {
		big.write(t, fmt.Sprintf("f%04d", i), "")
	}
	cb := ignoreDiffStart(t, big)
	text = ignoreDiffOK(t, cb, "ls", map[string]any{})
	names, _ := ignoreDiffLsNames(text)
	if len(names) != 500 || names[0] != "f0000" || names[499] != "f0499" {
		t.Errorf("ls default limit: %d names (%q … %q), want f0000…f0499", len(names), names[0], names[len(names)-1])
	}
	// the suggested limit must get everything and be allowed (maximum 5000)
	m := regexp.MustCompile(`limit=(\d+)`).FindStringSubmatch(text)
	if !strings.Contains(text, "500 of 600") || m == nil {
		t.Fatalf("ls limit notice: %q", text[strings.LastIndex(text, "\n["):])
	}
	if n, _ := strconv.Atoi(m[1]); n < 600 || n > 5000 {
		t.Errorf("ls notice suggests limit=%d for 600 entries", n)
	}
	names, _ = ignoreDiffLsNames(ignoreDiffOK(t, cb, "ls", map[string]any{"limit": 600}))
	if len(names) != 600 {
		t.Errorf("ls limit=600 shows %d", len(names))
	}
}
