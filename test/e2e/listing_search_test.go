package e2e

// Contract tests of ls, find and grep against TOOLS.md ("ls",
// "grep", "find" and the shared rules on ignore files, paths and
// truncation) and docs/tools.md. grep runs on both backends (ripgrep and
// the Go fallback forced by AGENTLS_GREP_BACKEND=go), which must agree byte
// for byte.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// a11sStart starts agentls on ws (default permission mode: the search tools
// are read-only) with extra environment env.
func a11sStart(t *testing.T, ws string, env ...string) (*harness.Client, context.Context) {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	c := harness.Start(t, harness.Options{Root: ws, Env: env})
	c.Initialize(ctx, nil)
	return c, ctx
}

// a11sGit makes dir a git repository.
func a11sGit(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

// a11sLines splits a tool text into its body lines and its notice lines
// (those starting with "["), dropping the trailing empty line.
func a11sLines(text string) (body, notices []string) {
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if strings.HasPrefix(l, "[") {
			notices = append(notices, l)
			continue
		}
		body = append(body, l)
	}
	return body, notices
}

// a11sLimitRe finds the limit a notice tells the caller to ask for.
var a11sLimitRe = regexp.MustCompile(`limit=(\d+)`)

// a11sSuggestedLimit returns the N of "limit=N" in text, or 0.
func a11sSuggestedLimit(text string) int {
	m := a11sLimitRe.FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// a11sPair is one workspace served by both grep backends.
type a11sPair struct {
	rg, gofb *harness.Client
	ctx      context.Context
}

// a11sBackends starts one server with ripgrep and one forced onto the Go
// fallback, both on ws.
func a11sBackends(t *testing.T, ws string) a11sPair {
	t.Helper()
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("rg not on PATH: the ripgrep backend cannot be compared")
	}
	rg, ctx := a11sStart(t, ws)
	gofb, _ := a11sStart(t, ws, "AGENTLS_GREP_BACKEND=go")
	return a11sPair{rg: rg, gofb: gofb, ctx: ctx}
}

// grep runs args on both backends, fails when their results differ in
// text or isError, and returns the ripgrep result.
func (p a11sPair) grep(t *testing.T, args map[string]any) harness.Result {
	t.Helper()
	a := p.rg.CallTool(p.ctx, "grep", args)
	b := p.gofb.CallTool(p.ctx, "grep", args)
	if a.Text() != b.Text() || a.IsError != b.IsError {
		t.Errorf("grep %v: backends differ\n--- rg (isError %v):\n%q\n--- go (isError %v):\n%q", args, a.IsError, a.Text(), b.IsError, b.Text())
	}
	if !a.IsError {
		if a.Details["backend"] != "rg" || b.Details["backend"] != "go" {
			t.Errorf("grep %v: backends used %v and %v, want rg and go", args, a.Details["backend"], b.Details["backend"])
		}
	}
	return a
}

// a11sWant compares a result's body lines with want and that it has no
// notice and no error.
func a11sWant(t *testing.T, what string, r harness.Result, want ...string) {
	t.Helper()
	if r.IsError {
		t.Errorf("%s: isError: %s", what, r.Text())
		return
	}
	body, notices := a11sLines(r.Text())
	if strings.Join(body, "\n") != strings.Join(want, "\n") || len(notices) > 0 {
		t.Errorf("%s:\n got %q\nwant %q (no notice)", what, r.Text(), strings.Join(want, "\n"))
	}
}

// a11sManyFiles creates n empty files named prefix%05d.suffix in dir.
func a11sManyFiles(t *testing.T, dir, prefix, suffix string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s%05d%s", prefix, i, suffix)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// a11sLsFixture is a git workspace with dotfiles, symlinks of every kind
// and one entry ignored by each of .gitignore, .ignore and .agentlsignore.
func a11sLsFixture(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	a11sGit(t, ws)
	writeFiles(t, ws, map[string]string{
		"B.txt": "b\n", "a-b.txt": "ab\n", "a.txt": "a\n", "a/inner.txt": "i\n", "a/excl.txt": "e\n",
		".hidden": "h\n", ".gitignore": "x.log\nbuild/\n", ".ignore": "gen.out\n", ".agentlsignore": "secret.d/\n",
		"x.log": "l\n", "gen.out": "g\n", "secret.d/k": "k\n",
		".git/info/exclude": "/a/excl.txt\n",
	})
	symlink(t, "a.txt", filepath.Join(ws, "link"))
	symlink(t, "a", filepath.Join(ws, "dlink"))
	symlink(t, "nowhere", filepath.Join(ws, "dangling"))
	return ws
}

func TestListingLsListing(t *testing.T) {
	ws := a11sLsFixture(t)
	c, ctx := a11sStart(t, ws)

	r := c.CallTool(ctx, "ls", map[string]any{})
	if r.IsError {
		t.Fatalf("ls: %s", r.Text())
	}
	body, notices := a11sLines(r.Text())
	want := []string{
		".agentlsignore", ".gitignore", ".hidden", ".ignore", "B.txt", "a/", "a-b.txt", "a.txt",
		"dangling@ -> nowhere", "dlink@ -> a", "link@ -> a.txt",
	}
	if len(body) == 0 || strings.Join(body[1:], "\n") != strings.Join(want, "\n") {
		t.Errorf("ls entries (after the header line):\n got %q\nwant %q", body, want)
	}
	if len(body) > 0 && !strings.HasSuffix(body[0], "11 entries") {
		t.Errorf("ls header %q: want the count of shown entries, 11 (.git and ignored ones not counted)", body[0])
	}
	wantContains(t, "ls notice", strings.Join(notices, "\n"), "3 ignored entries hidden")
	wantLacks(t, "ls", r.Text(), ".git/", "\n.git\n", "x.log", "gen.out", "secret.d")

	// .git/info/exclude hides a/excl.txt in a subdirectory listing.
	r = c.CallTool(ctx, "ls", map[string]any{"path": "a"})
	body, notices = a11sLines(r.Text())
	if r.IsError || len(body) != 2 || body[1] != "inner.txt" {
		t.Errorf("ls a: want only inner.txt, got %q", r.Text())
	}
	wantContains(t, "ls a notice", strings.Join(notices, "\n"), "1 ignored entr")
}

func TestListingLsIgnoredCountGrammar(t *testing.T) {
	// The listing header says "1 entry" (singular); the hidden count in
	// the same output should read the same way.
	ws := a11sLsFixture(t)
	c, ctx := a11sStart(t, ws)
	r := c.CallTool(ctx, "ls", map[string]any{"path": "a"})
	wantContains(t, "ls a", r.Text(), "1 ignored entry hidden")
}

func TestListingLsIgnoredDirectoryNamed(t *testing.T) {
	// TOOLS.md: "When ignore rules hid something the caller named
	// explicitly, say so and say how to include it (includeIgnored: true)."
	ws := a11sLsFixture(t)
	writeFiles(t, ws, map[string]string{"build/b.o": "obj\n"})
	c, ctx := a11sStart(t, ws)
	r := c.CallTool(ctx, "ls", map[string]any{"path": "build"})
	if r.IsError {
		t.Fatalf("ls build: %s", r.Text())
	}
	wantContains(t, "ls of an ignored directory", r.Text(), "ignored", "includeIgnored")
	// The directory holds b.o: calling it empty misleads the model.
	wantLacks(t, "ls of a non-empty ignored directory", r.Text(), "(empty)")
	// The way out it names must work.
	f := c.CallTool(ctx, "find", map[string]any{"pattern": "*", "path": "build", "includeIgnored": true})
	a11sWant(t, "find build includeIgnored", f, "build/b.o")
	// ls takes includeIgnored too: the listing then shows what was hidden.
	all := c.CallTool(ctx, "ls", map[string]any{"path": "build", "includeIgnored": true})
	wantContains(t, "ls build includeIgnored", all.Text(), "build: 1 entry\nb.o\n", "grep and find skip it unless includeIgnored")
	wantLacks(t, "ls build includeIgnored", all.Text(), "hidden", "(empty)")
}

func TestListingLsLimit(t *testing.T) {
	ws := t.TempDir()
	a11sManyFiles(t, filepath.Join(ws, "many"), "f", "", 503)
	c, ctx := a11sStart(t, ws)

	r := c.CallTool(ctx, "ls", map[string]any{"path": "many"})
	body, notices := a11sLines(r.Text())
	if r.IsError || len(body) != 1+500 || body[500] != "f00500" {
		t.Fatalf("ls many: want the header and 500 entries, got %d lines:\n%s", len(body), r.Text())
	}
	note := strings.Join(notices, "\n")
	wantContains(t, "ls default-limit notice", note, "500", "503")
	n := a11sSuggestedLimit(note)
	if n < 503 {
		t.Fatalf("ls notice %q: want a limit=N that gets all 503 entries", note)
	}
	r = c.CallTool(ctx, "ls", map[string]any{"path": "many", "limit": n})
	body, notices = a11sLines(r.Text())
	if r.IsError || len(body) != 1+503 || body[503] != "f00503" || len(notices) != 0 {
		t.Errorf("ls many limit=%d: want all 503 entries and no notice, got %d lines, notices %q", n, len(body), notices)
	}

	// limit as a numeric string is normalized, not refused.
	r = c.CallTool(ctx, "ls", map[string]any{"path": "many", "limit": "5"})
	body, notices = a11sLines(r.Text())
	if r.IsError || len(body) != 1+5 || body[5] != "f00005" || len(notices) != 1 {
		t.Errorf("ls limit \"5\": want 5 entries and a notice, got %q", r.Text())
	}
	if fmt.Sprint(r.Details["normalized"]) == "<nil>" || !strings.Contains(fmt.Sprint(r.Details["normalized"]), "limit") {
		t.Errorf("ls limit \"5\": details.normalized = %v, want the limit conversion reported", r.Details["normalized"])
	}
}

func TestListingLsLimitAtMaximum(t *testing.T) {
	// "Truncation is always announced: ... and the exact call that gets
	// more." At the maximum limit the notice must not offer the call just
	// made.
	ws := t.TempDir()
	a11sManyFiles(t, filepath.Join(ws, "huge"), "f", "", 5003)
	c, ctx := a11sStart(t, ws)
	r := c.CallTool(ctx, "ls", map[string]any{"path": "huge", "limit": 5000})
	body, notices := a11sLines(r.Text())
	if r.IsError || len(body) != 1+5000 || len(notices) != 1 {
		t.Fatalf("ls huge limit=5000: want 5000 entries and a notice, got %d lines, notices %q", len(body), notices)
	}
	if n := a11sSuggestedLimit(notices[0]); n == 5000 {
		t.Errorf("ls at limit 5000 suggests limit=%d, the same call, which shows nothing more: %q", n, notices[0])
	}
}

func TestListingLsErrors(t *testing.T) {
	ws := a11sLsFixture(t)
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"o.txt": "o\n"})
	c, ctx := a11sStart(t, ws)
	for _, tc := range []struct {
		name, path string
		wants      []string
	}{
		{"file", "a.txt", []string{"a.txt", "read"}},
		{"missing", "nope", []string{"nope", "find"}},
		{"absolute outside", outside, []string{"outside"}},
		{"dotdot", "..", []string{"refused", ".."}},
		{"dotdot inside path", "a/../..", []string{"refused"}},
		{"symlink to outside", "out", []string{"refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "symlink to outside" {
				symlink(t, outside, filepath.Join(ws, "out"))
			}
			r := c.CallTool(ctx, "ls", map[string]any{"path": tc.path})
			if !r.IsError {
				t.Errorf("ls %q: want isError, got %q", tc.path, r.Text())
			}
			wantContains(t, "ls "+tc.path, r.Text(), tc.wants...)
			wantLacks(t, "ls "+tc.path, r.Text(), "o.txt")
		})
	}
}

// a11sFindFixture is pi's regression tree plus hidden files, a .git file,
// nested ignore scoping, order-sensitive names and symlinks (one a loop).
func a11sFindFixture(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	a11sGit(t, ws)
	writeFiles(t, ws, map[string]string{
		"some/parent/child/file.ext": "", "some/parent/child/test.spec.ts": "", "src/foo/bar/example.spec.ts": "",
		"src/x.ts": "", "top.ts": "", ".hid/h.ts": "", ".eslintrc": "",
		"a/.gitignore": "ignored.txt\n", "a/ignored.txt": "", "b/ignored.txt": "", "c/d/e.ts": "",
		".git/hooks/g.ts": "", "o/a-b.txt": "", "o/a.txt": "", "o/a/b.txt": "",
	})
	symlink(t, "..", filepath.Join(ws, "c", "loop"))
	symlink(t, "src", filepath.Join(ws, "srclink"))
	return ws
}

func TestListingFindGlobs(t *testing.T) {
	ws := a11sFindFixture(t)
	c, ctx := a11sStart(t, ws)
	for _, tc := range []struct {
		name, pattern string
		want          []string
	}{
		{"name at any depth, hidden included, .git and symlinks not entered", "*.ts",
			[]string{".hid/h.ts", "c/d/e.ts", "some/parent/child/test.spec.ts", "src/foo/bar/example.spec.ts", "src/x.ts", "top.ts"}},
		{"spec at any depth", "*.spec.ts", []string{"some/parent/child/test.spec.ts", "src/foo/bar/example.spec.ts"}},
		{"doublestar in the middle", "src/**/*.spec.ts", []string{"src/foo/bar/example.spec.ts"}},
		{"leading doublestar", "**/parent/child/*", []string{"some/parent/child/file.ext", "some/parent/child/test.spec.ts"}},
		{"trailing doublestar", "some/parent/child/**", []string{"some/parent/child/file.ext", "some/parent/child/test.spec.ts"}},
		{"nested gitignore scoped to its directory", "ignored.txt", []string{"b/ignored.txt"}},
		{"alternatives", "{a,b}/*", []string{"a/.gitignore", "b/ignored.txt"}},
		{"sorted by path", "o/**", []string{"o/a-b.txt", "o/a.txt", "o/a/b.txt"}},
		{"everything", "*", []string{
			".eslintrc", ".hid/h.ts", "a/.gitignore", "b/ignored.txt", "c/d/e.ts", "c/loop",
			"o/a-b.txt", "o/a.txt", "o/a/b.txt", "some/parent/child/file.ext", "some/parent/child/test.spec.ts",
			"src/foo/bar/example.spec.ts", "src/x.ts", "srclink", "top.ts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "find", map[string]any{"pattern": tc.pattern})
			a11sWant(t, "find "+tc.pattern, r, tc.want...)
			wantLacks(t, "find "+tc.pattern, r.Text(), ".git/", "srclink/", "c/loop/")
		})
	}
	// Same call twice: same bytes.
	a := c.CallTool(ctx, "find", map[string]any{"pattern": "**"})
	b := c.CallTool(ctx, "find", map[string]any{"pattern": "**"})
	if a.Text() != b.Text() {
		t.Errorf("find ** is not deterministic:\n%q\n%q", a.Text(), b.Text())
	}
}

func TestListingFindInvalidGlob(t *testing.T) {
	ws := newWorkspace(t, map[string]string{"a.txt": ""})
	c, ctx := a11sStart(t, ws)
	for _, tc := range []struct{ pattern, reason string }{
		{"[abc", `unclosed "["`},
		{"{a,b", `unclosed "{"`},
	} {
		r := c.CallTool(ctx, "find", map[string]any{"pattern": tc.pattern})
		if !r.IsError {
			t.Errorf("find %q: want isError, got %q", tc.pattern, r.Text())
		}
		wantContains(t, "find "+tc.pattern, r.Text(), tc.pattern, tc.reason)
	}
}

func TestListingFindLimit(t *testing.T) {
	ws := t.TempDir()
	a11sManyFiles(t, filepath.Join(ws, "d"), "f", ".txt", 1005)
	c, ctx := a11sStart(t, ws)

	r := c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt"})
	body, notices := a11sLines(r.Text())
	if r.IsError || len(body) != 1000 || body[999] != "d/f01000.txt" || len(notices) != 1 {
		t.Fatalf("find default limit: want 1000 paths and a notice, got %d lines, notices %q", len(body), notices)
	}
	wantContains(t, "find notice", notices[0], "1000")
	n := a11sSuggestedLimit(notices[0])
	if n < 1005 {
		t.Fatalf("find notice %q: want a limit=N that gets all 1005", notices[0])
	}
	r = c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt", "limit": n})
	body, notices = a11sLines(r.Text())
	if r.IsError || len(body) != 1005 || body[1004] != "d/f01005.txt" || len(notices) != 0 {
		t.Errorf("find limit=%d: want 1005 paths, no notice; got %d, %q", n, len(body), notices)
	}

	r = c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt", "limit": "3"})
	body, notices = a11sLines(r.Text())
	if r.IsError || strings.Join(body, ",") != "d/f00001.txt,d/f00002.txt,d/f00003.txt" || len(notices) != 1 {
		t.Errorf("find limit \"3\": got %q", r.Text())
	}
}

// a11sIgnoreFixture has one file hidden by each kind of rule file; with
// git it also has .git/info/exclude. Every data file holds "needle".
func a11sIgnoreFixture(t *testing.T, git bool) string {
	t.Helper()
	ws := t.TempDir()
	files := map[string]string{
		".gitignore": "ign/\n*.log\n", "sub/.gitignore": "*.tmp\n", ".ignore": "*.gen\n", ".agentlsignore": "sec/\n",
		"ign/i.txt": "needle\n", "x.log": "needle\n", "ok.txt": "needle\n", "sub/y.tmp": "needle\n",
		"sub/deep/z.tmp": "needle\n", "y.tmp": "needle\n", "a.gen": "needle\n", "sec/s.txt": "needle\n",
	}
	if git {
		a11sGit(t, ws)
		files[".git/info/exclude"] = "ex/\n"
		files["ex/e.txt"] = "needle\n"
	}
	writeFiles(t, ws, files)
	return ws
}

func TestListingFindIgnoreRules(t *testing.T) {
	for _, git := range []bool{true, false} {
		t.Run(fmt.Sprintf("git=%v", git), func(t *testing.T) {
			ws := a11sIgnoreFixture(t, git)
			c, ctx := a11sStart(t, ws)
			a11sWant(t, "find *", c.CallTool(ctx, "find", map[string]any{"pattern": "*"}),
				".agentlsignore", ".gitignore", ".ignore", "ok.txt", "sub/.gitignore", "y.tmp")

			all := []string{".agentlsignore", ".gitignore", ".ignore", "a.gen"}
			if git {
				all = append(all, "ex/e.txt")
			}
			all = append(all, "ign/i.txt", "ok.txt", "sec/s.txt", "sub/.gitignore", "sub/deep/z.tmp", "sub/y.tmp", "x.log", "y.tmp")
			a11sWant(t, "find * includeIgnored", c.CallTool(ctx, "find", map[string]any{"pattern": "*", "includeIgnored": true}), all...)

			// An ignored directory named explicitly: say so, and how.
			r := c.CallTool(ctx, "find", map[string]any{"pattern": "*", "path": "ign"})
			if r.IsError {
				t.Errorf("find in ignored dir: isError %q", r.Text())
			}
			wantContains(t, "find path=ign", r.Text(), "ign", "ignored", "includeIgnored: true")
			a11sWant(t, "find path=ign includeIgnored", c.CallTool(ctx, "find", map[string]any{"pattern": "*", "path": "ign", "includeIgnored": true}), "ign/i.txt")

			// Only ignored files match the name: they are named with the way in.
			r = c.CallTool(ctx, "find", map[string]any{"pattern": "*.gen"})
			wantContains(t, "find *.gen", r.Text(), "a.gen", "includeIgnored: true")
		})
	}
}

// a11sGrepFixture covers order, hidden files, CRLF, binary, Latin-1,
// ignored files and .git contents.
func a11sGrepFixture(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	a11sGit(t, ws)
	writeFiles(t, ws, map[string]string{
		".gitignore": "ign/\n", "B.txt": "foo B\n", "a-b.txt": "foo dash\n", "a.txt": "x\nfoo a\n",
		"a/b.txt": "foo slash\n", ".hid": "foo hidden\n", "crlf.txt": "foo crlf\r\nbar\r\nfoo again\r\n",
		"bin.dat": "foo\x00bin\n", "latin.txt": "caf\xe9 foo\n", "ign/i.txt": "foo ignored\n",
		".git/foo.txt": "foo in git\n",
	})
	return ws
}

func TestListingGrepFormatAndOrder(t *testing.T) {
	p := a11sBackends(t, a11sGrepFixture(t))
	r := p.grep(t, map[string]any{"pattern": "foo"})
	a11sWant(t, "grep foo", r,
		".hid:1: foo hidden",
		"B.txt:1: foo B",
		"a-b.txt:1: foo dash",
		"a.txt:2: foo a",
		"a/b.txt:1: foo slash",
		"crlf.txt:1: foo crlf",
		"crlf.txt:3: foo again",
		"latin.txt:1: caf\uFFFD foo",
	)
	wantLacks(t, "grep foo", r.Text(), "\r", "bin.dat", "ign/", ".git/")

	// A path naming one file searches only it; paths stay workspace-relative.
	a11sWant(t, "grep path=a/b.txt", p.grep(t, map[string]any{"pattern": "foo", "path": "a/b.txt"}), "a/b.txt:1: foo slash")
	a11sWant(t, "grep path=a", p.grep(t, map[string]any{"pattern": "foo", "path": "a"}), "a/b.txt:1: foo slash")
}

func TestListingGrepContext(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		"ctx.txt":  "l1\nfoo\nl3\nl4\nfoo\nl6\nl7\nl8\nl9\nl10\nfoo\nl12\nl13\n",
		"ctx2.txt": "foo\n",
	})
	p := a11sBackends(t, ws)
	a11sWant(t, "grep context 2", p.grep(t, map[string]any{"pattern": "foo", "context": 2}),
		"ctx.txt-1- l1",
		"ctx.txt:2: foo",
		"ctx.txt-3- l3",
		"ctx.txt-4- l4",
		"ctx.txt:5: foo",
		"ctx.txt-6- l6",
		"ctx.txt-7- l7",
		"--",
		"ctx.txt-9- l9",
		"ctx.txt-10- l10",
		"ctx.txt:11: foo",
		"ctx.txt-12- l12",
		"ctx.txt-13- l13",
		"--",
		"ctx2.txt:1: foo",
	)
	// context as a numeric string is normalized.
	a11sWant(t, "grep context \"1\"", p.grep(t, map[string]any{"pattern": "foo", "context": "1", "path": "ctx2.txt"}), "ctx2.txt:1: foo")
}

func TestListingGrepOptions(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		"meta.txt": "x a.b( y\nx aXb( y\n", "up.txt": "FOO upper\nfoo lower\n",
		"dash.txt": "-v flag\n--files flag\n", "src/s.go": "foo go\n", "src/s.ts": "foo ts\n", "src/deep/d.go": "foo deep\n",
	})
	p := a11sBackends(t, ws)
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"case-sensitive by default", map[string]any{"pattern": "FOO", "path": "up.txt"}, []string{"up.txt:1: FOO upper"}},
		{"ignoreCase", map[string]any{"pattern": "foo", "ignoreCase": true, "path": "up.txt"}, []string{"up.txt:1: FOO upper", "up.txt:2: foo lower"}},
		{"literal with metacharacters", map[string]any{"pattern": "a.b(", "literal": true}, []string{"meta.txt:1: x a.b( y"}},
		{"regex", map[string]any{"pattern": `a.b\(`}, []string{"meta.txt:1: x a.b( y", "meta.txt:2: x aXb( y"}},
		{"glob filter", map[string]any{"pattern": "foo", "glob": "*.go"}, []string{"src/deep/d.go:1: foo deep", "src/s.go:1: foo go"}},
		{"path to a single file", map[string]any{"pattern": "foo", "path": "src/s.ts"}, []string{"src/s.ts:1: foo ts"}},
		{"pattern starting with -", map[string]any{"pattern": "-v"}, []string{"dash.txt:1: -v flag"}},
		{"pattern looking like an rg flag", map[string]any{"pattern": "--files"}, []string{"dash.txt:2: --files flag"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a11sWant(t, tc.name, p.grep(t, tc.args), tc.want...)
		})
	}
}

func TestListingGrepMatchLimit(t *testing.T) {
	ws := t.TempDir()
	for i := 1; i <= 15; i++ {
		var b strings.Builder
		for j := 1; j <= 10; j++ {
			fmt.Fprintf(&b, "hit %d\n", j)
		}
		writeFile(t, filepath.Join(ws, fmt.Sprintf("f%02d.txt", i)), b.String())
	}
	p := a11sBackends(t, ws)

	r := p.grep(t, map[string]any{"pattern": "hit"})
	body, notices := a11sLines(r.Text())
	if r.IsError || len(body) != 100 || body[99] != "f10.txt:10: hit 10" || len(notices) != 1 {
		t.Fatalf("grep 150 matches: want the first 100 (through f10.txt:10) and a notice, got %d lines, notices %q", len(body), notices)
	}
	wantContains(t, "grep limit notice", notices[0], "limit 100")
	n := a11sSuggestedLimit(notices[0])
	if n < 150 {
		t.Fatalf("grep notice %q: want a limit=N that gets all 150", notices[0])
	}
	r = p.grep(t, map[string]any{"pattern": "hit", "limit": n})
	body, notices = a11sLines(r.Text())
	if r.IsError || len(body) != 150 || body[149] != "f15.txt:10: hit 10" || len(notices) != 0 {
		t.Errorf("grep limit=%d: want all 150 and no notice, got %d lines, notices %q", n, len(body), notices)
	}

	r = p.grep(t, map[string]any{"pattern": "hit", "limit": "5"})
	body, _ = a11sLines(r.Text())
	if r.IsError || len(body) != 5 || body[4] != "f01.txt:5: hit 5" {
		t.Errorf("grep limit \"5\": got %q", r.Text())
	}
}

func TestListingGrepLongLine(t *testing.T) {
	// "lines cut at 500 characters": characters, so 600 two-byte runes
	// keep 500 of them.
	long := strings.Repeat("é", 600) + " foo"
	ws := newWorkspace(t, map[string]string{"long.txt": long + "\n", "short.txt": strings.Repeat("s", 500) + "foo\n"})
	p := a11sBackends(t, ws)
	r := p.grep(t, map[string]any{"pattern": "foo"})
	body, _ := a11sLines(r.Text())
	if r.IsError || len(body) != 2 {
		t.Fatalf("grep long lines: got %q", r.Text())
	}
	prefix := "long.txt:1: " + strings.Repeat("é", 500)
	if !strings.HasPrefix(body[0], prefix) || strings.HasPrefix(body[0], prefix+"é") || strings.Contains(body[0], " foo") {
		t.Errorf("long line not cut at 500 characters: %q", body[0])
	}
	if rest := strings.TrimPrefix(body[0], prefix); !strings.Contains(rest, "500") {
		t.Errorf("cut line has no marker naming 500: %q", rest)
	}
	// 503 characters: cut too, the marker after exactly 500 of them.
	if !strings.HasPrefix(body[1], "short.txt:1: "+strings.Repeat("s", 500)) || strings.Contains(body[1], "sfoo") {
		t.Errorf("503-character line not cut at 500: %q", body[1])
	}
}

func TestListingGrepByteLimit(t *testing.T) {
	ws := t.TempDir()
	for f := 0; f < 3; f++ {
		var b strings.Builder
		for i := 1; i <= 60; i++ {
			fmt.Fprintf(&b, "match %05d %s\n", i, strings.Repeat("y", 480))
		}
		writeFile(t, filepath.Join(ws, fmt.Sprintf("big%d.txt", f)), b.String())
	}
	p := a11sBackends(t, ws)
	r := p.grep(t, map[string]any{"pattern": "match", "limit": 1000})
	text := r.Text()
	if r.IsError || len(text) > 51200 {
		t.Fatalf("grep output is %d bytes (isError %v), want at most 51200", len(text), r.IsError)
	}
	body, notices := a11sLines(text)
	if len(notices) != 1 {
		t.Fatalf("grep over 51200 bytes: want one notice, got %q", notices)
	}
	wantContains(t, "grep byte notice", notices[0], "51200 bytes")
	// Follow the notice's read call: it continues after the last line shown.
	m := regexp.MustCompile(`read \{"path": "([^"]+)", "offset": (\d+)\}`).FindStringSubmatch(notices[0])
	if m == nil {
		t.Fatalf("grep byte notice gives no read call: %q", notices[0])
	}
	last := body[len(body)-1]
	off, _ := strconv.Atoi(m[2])
	if !strings.HasPrefix(last, fmt.Sprintf("%s:%d: ", m[1], off-1)) {
		t.Errorf("last shown line %.40q is not %s:%d, the line before the suggested offset", last, m[1], off-1)
	}
	rr := p.rg.CallTool(p.ctx, "read", map[string]any{"path": m[1], "offset": off, "limit": 1})
	wantContains(t, "read from the grep notice", rr.Text(), fmt.Sprintf("match %05d", off))
}

func TestListingGrepInvalidRegex(t *testing.T) {
	ws := newWorkspace(t, map[string]string{"a.txt": "a.b(\n"})
	p := a11sBackends(t, ws)
	// The two parsers word it differently (docs/tools.md); each must give its own.
	for _, tc := range []struct {
		c    *harness.Client
		want string
	}{{p.rg, "unclosed group"}, {p.gofb, "missing closing )"}} {
		r := tc.c.CallTool(p.ctx, "grep", map[string]any{"pattern": "a.b("})
		if !r.IsError {
			t.Errorf("grep a.b(: want isError, got %q", r.Text())
		}
		wantContains(t, "grep a.b(", r.Text(), tc.want)
	}
}

func TestListingGrepOddPatterns(t *testing.T) {
	ws := newWorkspace(t, map[string]string{"a.txt": "a\nb\n"})
	p := a11sBackends(t, ws)
	// A newline cannot match line by line: refused, the same on both.
	r := p.grep(t, map[string]any{"pattern": "a\nb"})
	if !r.IsError {
		t.Errorf("grep a\\nb: want isError, got %q", r.Text())
	}
	wantContains(t, "grep a\\nb", r.Text(), "newline")
	// A NUL byte: both backends must answer the same, without leaking an
	// internal process error.
	r = p.grep(t, map[string]any{"pattern": "a\x00b"})
	wantLacks(t, "grep a\\x00b", r.Text(), "fork/exec", "start rg")
}

func TestListingGrepIgnored(t *testing.T) {
	for _, git := range []bool{true, false} {
		t.Run(fmt.Sprintf("git=%v", git), func(t *testing.T) {
			ws := a11sIgnoreFixture(t, git)
			p := a11sBackends(t, ws)
			a11sWant(t, "grep needle", p.grep(t, map[string]any{"pattern": "needle"}), "ok.txt:1: needle", "y.tmp:1: needle")
			for _, named := range []string{"ign", "x.log", "sub/y.tmp", "sec", "a.gen"} {
				r := p.grep(t, map[string]any{"pattern": "needle", "path": named})
				if r.IsError {
					t.Errorf("grep path=%s: isError %q", named, r.Text())
				}
				wantContains(t, "grep path="+named, r.Text(), named, "ignored", "includeIgnored: true")
				wantLacks(t, "grep path="+named, r.Text(), ":1: needle")
			}
			a11sWant(t, "grep path=x.log includeIgnored", p.grep(t, map[string]any{"pattern": "needle", "path": "x.log", "includeIgnored": true}), "x.log:1: needle")
			all := []string{"a.gen:1: needle"}
			if git {
				all = append(all, "ex/e.txt:1: needle")
			}
			all = append(all, "ign/i.txt:1: needle", "ok.txt:1: needle", "sec/s.txt:1: needle", "sub/deep/z.tmp:1: needle", "sub/y.tmp:1: needle", "x.log:1: needle", "y.tmp:1: needle")
			a11sWant(t, "grep includeIgnored", p.grep(t, map[string]any{"pattern": "needle", "includeIgnored": true}), all...)
		})
	}
}
