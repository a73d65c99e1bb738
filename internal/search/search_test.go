package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/ignore"
)

// fixture builds a workspace in a temp dir (a git repository) covering the
// cases both backends must agree on.
func fixture(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".gitignore":       "build/\n*.log\n",
		".ignore":          "secret.txt\n",
		".agentlsignore":   "gen/\n",
		"src/main.go":      "package main\n\nfunc main() {\n\tfoo(bar)\n\tFoo(baz)\n}\n",
		"src/util.go":      "package main\n\n// Hello world\nfunc foo(x int) int { return x }\n",
		"src/regex.txt":    "a.b*c literal\naxbbbc regex\n",
		"ctx.txt":          numbered(20, map[int]string{5: "mark five", 7: "mark seven", 15: "mark fifteen"}),
		"long.txt":         "short\n" + strings.Repeat("x", 300) + "LONGHIT" + strings.Repeat("é", 300) + "\nfin\n",
		"crlf.txt":         "alpha end\r\nbeta\r\ngamma end\r\n",
		"latin1.txt":       "caf\xe9 latin\nplain latin\n",
		"bin.dat":          "binneedle\n\x00\x01\x02binneedle\n",
		"dash.txt":         "-flag value\nother\n",
		"build/out.txt":    "needle in build\n",
		"app.log":          "needle in log\n",
		"secret.txt":       "needle secret\n",
		"gen/gen.txt":      "needle generated\n",
		"sub/.gitignore":   "local.txt\n",
		"sub/local.txt":    "localonly word\n",
		"sub/keep.txt":     "localonly kept\n",
		".hidden/h.txt":    "hiddenword in dir\n",
		".env":             "hiddenword=1\n",
		"bom.txt":          "\xef\xbb\xbfbomword first\n",
		"utf16.txt":        "\xff\xfe" + utf16le("wide utf16word\n"),
		"noeol.txt":        "first\nlast tailword",
		"a.txt":            "orderword a.txt\n",
		"a/b.txt":          "orderword a/b\n",
		"cap/one.txt":      repeatLines("needle", 60),
		"cap/two.txt":      repeatLines("needle", 60),
		"cap/three.txt":    repeatLines("needle", 30),
		"wide/w.txt":       repeatLines("wideword "+strings.Repeat("w", 490), 120),
		"edge/empty.txt":   "",
		"edge/lines.txt":   "one\n\nthree\n",
		"src/.hid/deep.go": "package hid // hiddenword\n",
	}
	for i := range 40 {
		files[fmt.Sprintf("many/m%02d.txt", i)] = repeatLines(fmt.Sprintf("dense m%02d", i), 20)
	}
	files["many/.hid.txt"] = "dense hidden\n"
	files["many/skip.log"] = "dense ignored\n"
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if git, err := exec.LookPath("git"); err == nil {
		cmd := exec.Command(git, "init", "-q", dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	}
	return dir
}

func numbered(n int, special map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := special[i]; ok {
			fmt.Fprintf(&b, "%s\n", s)
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	return b.String()
}

func repeatLines(s string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", s, i)
	}
	return b.String()
}

func utf16le(s string) string {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r), byte(r>>8))
	}
	return string(b)
}

func engines(t testing.TB, dir string) map[string]*Engine {
	t.Helper()
	fsys := os.DirFS(dir)
	m := map[string]*Engine{
		BackendGo: {Root: dir, FS: fsys, Matcher: ignore.NewMatcher(fsys, ignore.Outer{})},
	}
	if rg, err := exec.LookPath("rg"); err == nil {
		m[BackendRg] = &Engine{Root: dir, FS: fsys, Matcher: ignore.NewMatcher(fsys, ignore.Outer{}), RgPath: rg}
		// A Visible that cannot say what it refuses: agentls walks, rg
		// is handed the files (searchRgOrdered).
		m[BackendRg+"/ordered"] = &Engine{Root: dir, FS: fsys, Matcher: ignore.NewMatcher(fsys, ignore.Outer{}), RgPath: rg,
			Visible: func(string) bool { return true }}
	}
	// The Go backend on an os.Root that is a RootOpener, as ops can pass it.
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	rfs := rootOpenerFS{root.FS().(osRootFS), root}
	m[BackendGo+"/os.Root"] = &Engine{Root: dir, FS: rfs, Matcher: ignore.NewMatcher(rfs, ignore.Outer{})}
	return m
}

func TestSearchBackendsAgree(t *testing.T) {
	dir := fixture(t)
	engs := engines(t, dir)
	if engs[BackendRg] == nil {
		t.Log("rg not on PATH: checking the Go backend against expected texts only")
	}
	capText := func() string {
		var b strings.Builder
		for i := 1; i <= 60; i++ {
			fmt.Fprintf(&b, "cap/one.txt:%d: needle %d\n", i, i)
		}
		for i := 1; i <= 30; i++ {
			fmt.Fprintf(&b, "cap/three.txt:%d: needle %d\n", i, i)
		}
		for i := 1; i <= 10; i++ {
			fmt.Fprintf(&b, "cap/two.txt:%d: needle %d\n", i, i)
		}
		return b.String() + "[100 matches shown (limit 100). Narrow the pattern, add path/glob, or call again with limit=200.]\n"
	}()
	tests := []struct {
		name string
		q    Query
		want string // "" = only compare the backends
		// checks on the Result beyond the text
		matches  int
		limitHit bool
		bytesCut bool
		ignored  bool
	}{
		{name: "regex", q: Query{Pattern: `fo+\(`, Hidden: true}, matches: 2,
			want: "src/main.go:4: \tfoo(bar)\nsrc/util.go:4: func foo(x int) int { return x }\n"},
		{name: "literal with metachars", q: Query{Pattern: "a.b*c", Literal: true}, matches: 1,
			want: "src/regex.txt:1: a.b*c literal\n"},
		{name: "same text as regex", q: Query{Pattern: "a.b*c"}, matches: 1,
			want: "src/regex.txt:2: axbbbc regex\n"},
		{name: "ignore case", q: Query{Pattern: "foo(", Literal: true, IgnoreCase: true}, matches: 3,
			want: "src/main.go:4: \tfoo(bar)\nsrc/main.go:5: \tFoo(baz)\nsrc/util.go:4: func foo(x int) int { return x }\n"},
		{name: "glob by name", q: Query{Pattern: "foo", Glob: "*.go"}, matches: 2},
		{name: "glob anchored", q: Query{Pattern: "needle", Glob: "cap/t*.txt", Limit: 5}, matches: 5, limitHit: true},
		{name: "glob negated dir", q: Query{Pattern: "orderword|foo", Glob: "!src"}, matches: 2,
			want: "a.txt:1: orderword a.txt\na/b.txt:1: orderword a/b\n"},
		{name: "context merges overlapping windows", q: Query{Pattern: "mark", Context: 2, Path: "ctx.txt"}, matches: 3,
			want: "ctx.txt-3- line 3\nctx.txt-4- line 4\nctx.txt:5: mark five\nctx.txt-6- line 6\nctx.txt:7: mark seven\nctx.txt-8- line 8\nctx.txt-9- line 9\n--\nctx.txt-13- line 13\nctx.txt-14- line 14\nctx.txt:15: mark fifteen\nctx.txt-16- line 16\nctx.txt-17- line 17\n"},
		{name: "context across files", q: Query{Pattern: "alpha|mark five", Context: 1}, matches: 2},
		{name: "context at the limit keeps trailing context only", q: Query{Pattern: "mark", Context: 1, Limit: 2}, matches: 2, limitHit: true,
			want: "ctx.txt-4- line 4\nctx.txt:5: mark five\nctx.txt-6- line 6\nctx.txt:7: mark seven\nctx.txt-8- line 8\n[2 matches shown (limit 2). Narrow the pattern, add path/glob, or call again with limit=4.]\n"},
		{name: "cap hit", q: Query{Pattern: "needle", Path: "cap"}, matches: 100, limitHit: true, want: capText},
		{name: "exactly at the limit", q: Query{Pattern: "needle", Path: "cap/three.txt", Limit: 30}, matches: 30},
		{name: "long line cut", q: Query{Pattern: "LONGHIT"}, matches: 1,
			want: "long.txt:2: " + strings.Repeat("x", 300) + "LONGHIT" + strings.Repeat("é", 193) + "… [line cut at 500 chars]\n"},
		{name: "crlf dollar", q: Query{Pattern: "end$"}, matches: 2,
			want: "crlf.txt:1: alpha end\ncrlf.txt:3: gamma end\n"},
		{name: "latin1", q: Query{Pattern: "latin"}, matches: 2,
			want: "latin1.txt:1: caf\uFFFD latin\nlatin1.txt:2: plain latin\n"},
		{name: "binary skipped", q: Query{Pattern: "binneedle"}, want: "No matches for \"binneedle\" in the workspace.\n"},
		{name: "binary named explicitly", q: Query{Pattern: "binneedle", Path: "bin.dat"}, want: "No matches for \"binneedle\" in bin.dat.\n"},
		{name: "pattern starting with dash", q: Query{Pattern: "-flag"}, matches: 1, want: "dash.txt:1: -flag value\n"},
		{name: "ignored path named", q: Query{Pattern: "needle", Path: "build"}, ignored: true,
			want: "build is ignored by .gitignore/.ignore/.agentlsignore rules, so nothing was searched. Call again with includeIgnored: true to search it."},
		{name: "ignored rules everywhere", q: Query{Pattern: "needle", Glob: "!cap"}, want: "No matches for \"needle\" in the workspace (glob !cap).\n"},
		{name: "nested gitignore", q: Query{Pattern: "localonly"}, matches: 1, want: "sub/keep.txt:1: localonly kept\n"},
		{name: "hidden included", q: Query{Pattern: "hiddenword", Hidden: true}, matches: 3,
			want: ".env:1: hiddenword=1\n.hidden/h.txt:1: hiddenword in dir\nsrc/.hid/deep.go:1: package hid // hiddenword\n"},
		{name: "hidden skipped", q: Query{Pattern: "hiddenword"}, want: "No matches for \"hiddenword\" in the workspace.\n"},
		{name: "hidden skipped even when glob selects", q: Query{Pattern: "hiddenword", Glob: "*.go"}, want: "No matches for \"hiddenword\" in the workspace (glob *.go).\n"},
		{name: "hidden dir named explicitly", q: Query{Pattern: "hiddenword", Path: ".hidden"}, matches: 1},
		{name: "include ignored", q: Query{Pattern: "needle", Glob: "!cap", IncludeIgnored: true}, matches: 4,
			want: "app.log:1: needle in log\nbuild/out.txt:1: needle in build\ngen/gen.txt:1: needle generated\nsecret.txt:1: needle secret\n"},
		{name: "include ignored path", q: Query{Pattern: "needle", Path: "build", IncludeIgnored: true}, matches: 1},
		{name: "bom and utf16", q: Query{Pattern: "bomword|utf16word"}, matches: 2,
			want: "bom.txt:1: bomword first\nutf16.txt:1: wide utf16word\n"},
		{name: "no final newline", q: Query{Pattern: "tailword$"}, matches: 1, want: "noeol.txt:2: last tailword\n"},
		{name: "path order", q: Query{Pattern: "orderword"}, matches: 2, want: "a.txt:1: orderword a.txt\na/b.txt:1: orderword a/b\n"},
		{name: "empty match on every line", q: Query{Pattern: "^", Path: "edge"}, matches: 3,
			want: "edge/lines.txt:1: one\nedge/lines.txt:2: \nedge/lines.txt:3: three\n"},
		{name: "line anchors", q: Query{Pattern: "^t.*e$", Path: "edge"}, matches: 1, want: "edge/lines.txt:3: three\n"},
		{name: "empty line matches no line after the last", q: Query{Pattern: "^$", Path: "edge"}, matches: 1, want: "edge/lines.txt:2: \n"},
		{name: "bytes cut", q: Query{Pattern: "wideword", Limit: 1000}, matches: 93, bytesCut: true},
		{name: "limit far below the matches", q: Query{Pattern: "needle", Path: "cap", Limit: 3}, matches: 3, limitHit: true,
			want: "cap/one.txt:1: needle 1\ncap/one.txt:2: needle 2\ncap/one.txt:3: needle 3\n[3 matches shown (limit 3). Narrow the pattern, add path/glob, or call again with limit=6.]\n"},
		{name: "dense across many files", q: Query{Pattern: "dense", Context: 1}, matches: 100, limitHit: true},
		{name: "dense with glob", q: Query{Pattern: "dense", Glob: "m1*.txt", Limit: 30}, matches: 30, limitHit: true},
		{name: "no match", q: Query{Pattern: "zzz-none", Path: "src"}, want: "No matches for \"zzz-none\" in src.\n"},
		{name: "required literal selects lines", q: Query{Pattern: `mark (five|seven)\b`}, matches: 2,
			want: "ctx.txt:5: mark five\nctx.txt:7: mark seven\n"},
		{name: "required literal with context", q: Query{Pattern: `mark f\w+`, Context: 1}, matches: 2,
			want: "ctx.txt-4- line 4\nctx.txt:5: mark five\nctx.txt-6- line 6\n--\nctx.txt-14- line 14\nctx.txt:15: mark fifteen\nctx.txt-16- line 16\n"},
		{name: "required literal in crlf file", q: Query{Pattern: `gam+a end$`}, matches: 1, want: "crlf.txt:3: gamma end\n"},
		{name: "required literal at the limit", q: Query{Pattern: `dense m[0-3]\d`, Limit: 25}, matches: 25, limitHit: true},
		{name: "required literal line anchors", q: Query{Pattern: `^\tfoo\(bar\)$`}, matches: 1, want: "src/main.go:4: \tfoo(bar)\n"},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			texts := map[string]string{}
			for name, e := range engs {
				res, err := e.Search(ctx, tc.q)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if backend, _, _ := strings.Cut(name, "/"); res.Backend != backend {
					t.Errorf("%s: backend %q", name, res.Backend)
				}
				if tc.want != "" && res.Text != tc.want {
					t.Errorf("%s text:\n%s\nwant:\n%s", name, res.Text, tc.want)
				}
				if res.Matches != tc.matches || res.LimitHit != tc.limitHit || res.BytesCut != tc.bytesCut || res.PathIgnored != tc.ignored {
					t.Errorf("%s: matches=%d limitHit=%v bytesCut=%v ignored=%v, want %d %v %v %v",
						name, res.Matches, res.LimitHit, res.BytesCut, res.PathIgnored, tc.matches, tc.limitHit, tc.bytesCut, tc.ignored)
				}
				if len(res.Text) > MaxOutputBytes {
					t.Errorf("%s: %d bytes > MaxOutputBytes", name, len(res.Text))
				}
				texts[name] = res.Text
				if tc.bytesCut {
					tail := res.Text[strings.LastIndex(res.Text[:len(res.Text)-1], "\n")+1:]
					if want := "[Output cut to fit the limit of 51200 bytes after 93 matches (last shown wide/w.txt:93). Narrow the pattern, add path/glob to see the rest; to read on in wide/w.txt from there: read {\"path\": \"wide/w.txt\", \"offset\": 94}.]\n"; tail != want {
						t.Errorf("%s: notice %q, want %q", name, tail, want)
					}
				}
			}
			for name, text := range texts {
				if text != texts[BackendGo] {
					t.Errorf("backends differ:\n%s:\n%s\ngo:\n%s", name, text, texts[BackendGo])
				}
			}
		})
	}
}

// TestRgOrderedMatchesParallel checks rg's two phases against each other:
// the ordered phase (explicit files in walk order, stops at the limit) must
// render exactly what a complete parallel run renders.
func TestRgOrderedMatchesParallel(t *testing.T) {
	dir := fixture(t)
	e := engines(t, dir)[BackendRg]
	if e == nil {
		t.Skip("rg not on PATH")
	}
	tests := []struct {
		name string
		q    Query
	}{
		{"dense", Query{Pattern: "dense", Limit: 50}},
		{"dense hidden", Query{Pattern: "dense", Limit: 1000, Hidden: true}},
		{"dense ignored too", Query{Pattern: "dense", Limit: 1000, IncludeIgnored: true}},
		{"negated glob", Query{Pattern: "needle|dense", Glob: "!m0*", Limit: 500}},
		{"context", Query{Pattern: "needle", Context: 2, Limit: 70}},
		{"everything", Query{Pattern: "e", Limit: 5000, Hidden: true}},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := e.resolve("", tc.q.Path)
			if err != nil {
				t.Fatal(err)
			}
			var g *globMatcher
			if tc.q.Glob != "" {
				if g, err = compileGlob(tc.q.Glob); err != nil {
					t.Fatal(err)
				}
			}
			par := newCollector(tc.q.Limit)
			if err := e.runRg(ctx, tc.q, tg, par, tg.fsPath); err != nil {
				t.Fatal(err)
			}
			ord, err := e.searchRgOrdered(ctx, tc.q, tg, g)
			if err != nil {
				t.Fatal(err)
			}
			a, b := render(par.files, tc.q, tg.shown, par.limitHit), render(ord.files, tc.q, tg.shown, ord.limitHit)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("parallel:\n%s\nordered:\n%s", a.Text, b.Text)
			}
			if a.Matches == 0 {
				t.Error("no matches: the case proves nothing")
			}
		})
	}
}

func TestSearchErrors(t *testing.T) {
	dir := fixture(t)
	tests := []struct {
		name    string
		q       Query
		pathErr bool
		substr  string
		absent  string // the error must not show it
	}{
		{name: "bad regex", q: Query{Pattern: "foo("}, substr: "invalid pattern", absent: "(?m)"},
		{name: "missing path", q: Query{Pattern: "x", Path: "nope/dir"}, pathErr: true, substr: "does not exist"},
		{name: "escaping path", q: Query{Pattern: "x", Path: "../etc"}, pathErr: true, substr: "stay inside"},
		{name: "line break in pattern", q: Query{Pattern: "a\nb", Literal: true}, substr: "line break"},
		{name: "bad glob", q: Query{Pattern: "x", Glob: "a[b"}, substr: "invalid glob"},
	}
	for name, e := range engines(t, dir) {
		for _, tc := range tests {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				_, err := e.Search(context.Background(), tc.q)
				if err == nil {
					t.Fatal("no error")
				}
				var pe *PathError
				if errors.As(err, &pe) != tc.pathErr {
					t.Errorf("PathError = %v, want %v (%v)", !tc.pathErr, tc.pathErr, err)
				}
				if !strings.Contains(err.Error(), tc.substr) {
					t.Errorf("error %q lacks %q", err, tc.substr)
				}
				if tc.absent != "" && strings.Contains(err.Error(), tc.absent) {
					t.Errorf("error %q shows %q, which the caller did not write", err, tc.absent)
				}
			})
		}
	}
}

func TestSearchCancelled(t *testing.T) {
	dir := fixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, e := range engines(t, dir) {
		if _, err := e.Search(ctx, Query{Pattern: "needle"}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", name, err)
		}
	}
}

func TestFindRgHonoursEnv(t *testing.T) {
	t.Setenv(BackendEnv, BackendGo)
	if p := FindRg(); p != "" {
		t.Errorf("FindRg() = %q with %s=go", p, BackendEnv)
	}
}

var _ fs.FS = os.DirFS(".")

func TestRequiredLiteral(t *testing.T) {
	tests := []struct {
		name, pattern, want string // want "" = no prefilter
	}{
		{"plain literal", "(?m)needle", "needle"},
		{"longest of a concat", `(?m)func \w+Error\(`, "Error("},
		{"inside a capture and plus", `(?m)(abc\d)+x`, "abc"},
		{"repeat at least once", `(?m)(?:wxyz){2,}`, "wxyz"},
		{"optional part does not count", `(?m)(?:longliteral)?ab`, ""},
		{"alternation has none", `(?m)alpha|beta`, ""},
		{"too short", `(?m)fo+\(`, ""},
		{"case folded", `(?mi)needle`, ""},
		{"text anchor", `(?m)\Aneedle`, ""},
		{"end of text anchor", `(?m)needle\z`, ""},
		{"line anchors are fine", `(?m)^needle$`, "needle"},
		{"invalid", `(?m)needle(`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(requiredLiteral(tc.pattern)); got != tc.want {
				t.Errorf("requiredLiteral(%q) = %q, want %q", tc.pattern, got, tc.want)
			}
		})
	}
}

// A search of several folders lists the first folder's files first, with
// the paths tools resolve ("" prefix for the first folder, the root for
// others), and holds one limit for the whole result on both backends.
func TestSearchFoldersOrdersPrefixesAndLimits(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for dir, files := range map[string]map[string]string{
		a: {"z.txt": "hit a-z\n", "m/n.txt": "hit a-m\n"},
		b: {"a.txt": "hit b-a\nhit b-a2\n", ".gitignore": "skip.txt\n", "skip.txt": "hit skipped\n"},
	} {
		for name, content := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	ea, eb := engines(t, a), engines(t, b)
	for name := range ea {
		t.Run(name, func(t *testing.T) {
			first, second := *ea[name], *eb[name]
			second.Prefix = filepath.ToSlash(b) + "/"
			all := []*Engine{&first, &second}
			res, err := SearchFolders(context.Background(), all, Query{Pattern: "hit", Hidden: true, Path: "ignored"})
			if err != nil {
				t.Fatal(err)
			}
			want := "m/n.txt:1: hit a-m\nz.txt:1: hit a-z\n" + second.Prefix + "a.txt:1: hit b-a\n" + second.Prefix + "a.txt:2: hit b-a2\n"
			if res.Text != want || res.Matches != 4 || res.Files != 3 || res.LimitHit {
				t.Errorf("got %q (matches %d, files %d, limit hit %v), want %q", res.Text, res.Matches, res.Files, res.LimitHit, want)
			}
			res, err = SearchFolders(context.Background(), all, Query{Pattern: "hit", Hidden: true, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.Text, "m/n.txt:1: hit a-m\nz.txt:1: hit a-z\n"+second.Prefix+"a.txt:1: hit b-a\n[3 matches shown (limit 3).") || !res.LimitHit {
				t.Errorf("limit 3 across folders: %q", res.Text)
			}
			res, err = SearchFolders(context.Background(), all, Query{Pattern: "nowhere"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "No matches for \"nowhere\" in the workspace.\n" {
				t.Errorf("no match: %q", res.Text)
			}
			// One folder searched by path names its files the same way.
			res, err = second.Search(context.Background(), Query{Pattern: "b-a2"})
			if err != nil || res.Text != second.Prefix+"a.txt:2: hit b-a2\n" {
				t.Errorf("second folder alone: %q, %v", res.Text, err)
			}
		})
	}
}

func TestRgUnreadablesReadsRgsReports(t *testing.T) {
	stderr := "./locked: Permission denied (os error 13)\nrg: sub/secret.txt: Permission denied (os error 13)\nsome other line\nrg: ./x: No such file or directory (os error 2)\n"
	got := rgUnreadables(stderr)
	want := []struct{ path, reason string }{
		{"locked", "permission denied"}, {"sub/secret.txt", "permission denied"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
