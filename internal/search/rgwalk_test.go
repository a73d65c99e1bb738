package search

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/ignore"
)

// walkTree writes files below a new temp dir.
func walkTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// searchBoth runs q with rg and with the Go searcher under the same
// permission filter and returns rg's result and what rg traced.
func searchBoth(t *testing.T, dir string, q Query, visible func(string) bool, refused []string) (Result, []string) {
	t.Helper()
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg not on PATH")
	}
	fsys := os.DirFS(dir)
	var traced []string
	e := &Engine{Root: dir, FS: fsys, Matcher: ignore.NewMatcher(fsys, ignore.Outer{}), RgPath: rg, Visible: visible,
		trace: func(s string) { traced = append(traced, s) }}
	if refused != nil {
		e.RefusedNames = func() ([]string, bool) { return refused, true }
	}
	g := &Engine{Root: dir, FS: fsys, Matcher: ignore.NewMatcher(fsys, ignore.Outer{}), Visible: visible}
	ctx := context.Background()
	got, err := e.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	want, err := g.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != want.Text || got.Denied != want.Denied || got.Unreadable.Count != want.Unreadable.Count {
		t.Errorf("rg:\n%s(denied %d)\ngo:\n%s(denied %d)", got.Text, got.Denied, want.Text, want.Denied)
	}
	return got, traced
}

func TestRgWalkSearchesFilesRgSkippedAndNeverOpensRefusedNames(t *testing.T) {
	dir := walkTree(t, map[string]string{
		".gitignore":      "*.log\n",
		".rgignore":       "rgonly.txt\n", // rg reads it, agentls does not
		"rgonly.txt":      "needle only rg skips\n",
		"a.log":           "needle ignored\n",
		".env":            "needle=token\n",
		".env.example":    "needle=example\n",
		"certs/a.pem":     "needle pem\n",
		"src/main.go":     "needle main\n",
		"src/.hid/h.txt":  "needle hidden\n",
		"vendor/v/v.txt":  "needle vendored\n",
		"vendor/v/w.text": "needle vendored text\n",
	})
	refuses := func(rel string) bool {
		b := path.Base(rel)
		return b == ".env" || strings.HasSuffix(b, ".pem")
	}
	visible := func(rel string) bool { return !refuses(rel) }
	res, traced := searchBoth(t, dir, Query{Pattern: "needle", Hidden: true}, visible, []string{".env*", "*.pem"})
	if !slices.Contains(traced, "walk") {
		t.Fatalf("rg did not walk the folder itself: %q", traced)
	}
	for _, p := range []string{".env", "certs/a.pem"} {
		if !slices.Contains(traced, "denied unopened: "+p) {
			t.Errorf("%s was not skipped by rg itself: %q", p, traced)
		}
	}
	for _, want := range []string{"rgonly.txt:1:", ".env.example:1:", "src/.hid/h.txt:1:"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("missing %s in\n%s", want, res.Text)
		}
	}
	if res.Denied != 2 || strings.Contains(res.Text, "token") || strings.Contains(res.Text, "a.log") {
		t.Errorf("denied %d, text:\n%s", res.Denied, res.Text)
	}

	// The same with a glob rg applies itself: what it excluded and
	// agentls's glob allows is searched after.
	if _, traced := searchBoth(t, dir, Query{Pattern: "needle", Glob: "!*.text", Hidden: true}, visible, []string{".env*", "*.pem"}); !slices.Contains(traced, "walk") {
		t.Errorf("glob: rg did not walk: %q", traced)
	}
	if _, traced := searchBoth(t, dir, Query{Pattern: "needle", Glob: "*.txt"}, visible, []string{".env*", "*.pem"}); !slices.Contains(traced, "walk") {
		t.Errorf("positive glob: rg did not walk: %q", traced)
	}
}

func TestRgWalkFallsBackWhenItCannotBeTheSameSearch(t *testing.T) {
	dense := map[string]string{}
	for i := range 30 {
		dense[fmt.Sprintf("d/f%02d.txt", i)] = repeatLines("dense", 10)
	}
	cases := []struct {
		name    string
		files   map[string]string
		q       Query
		visible func(string) bool
		refused []string
	}{
		{"rg skips a directory agentls enters", map[string]string{
			".rgignore": "rgdir/\n", "rgdir/x.txt": "needle in rgdir\n", "y.txt": "needle y\n",
		}, Query{Pattern: "needle"}, nil, nil},
		{"the permission filter cannot name what it refuses", map[string]string{
			"x.txt": "needle\n", "private/p.txt": "needle private\n",
		}, Query{Pattern: "needle"}, func(rel string) bool { return !strings.HasPrefix(rel, "private/") }, nil},
		{"dense matches", dense, Query{Pattern: "dense", Limit: 5}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := walkTree(t, tc.files)
			res, traced := searchBoth(t, dir, tc.q, tc.visible, tc.refused)
			if slices.Contains(traced, "walk") {
				t.Errorf("rg's own walk was kept: %q", traced)
			}
			if res.Matches == 0 {
				t.Errorf("no matches: the case proves nothing\n%s", res.Text)
			}
		})
	}
}

func TestRgLogReadsSkippedPathsOnlyWhenUnambiguous(t *testing.T) {
	const pre = "DEBUG|ignore::walk|/x/walk.rs:1741: ignoring "
	const why = ": Ignore(IgnoreMatch(Hidden))\n"
	cases := []struct {
		name    string
		stderr  string
		skipped []string
		unsure  bool
		errs    string
	}{
		{"plain", pre + "./a/b.txt" + why + "DEBUG|globset|x: built glob set\n", []string{"./a/b.txt"}, false, ""},
		{"name with a colon", pre + "./we ird: x.log" + why, []string{"./we ird: x.log"}, false, ""},
		{"name holding the marker", pre + "./n: Ignore(IgnoreMatch(x)" + why, nil, true, ""},
		{"name with a line break", pre + "./evil\nname" + why, nil, true, "name" + why},
		{"errors kept apart", "rg: ./locked: Permission denied (os error 13)\n" + pre + "./x" + why, []string{"./x"}, false, "rg: ./locked: Permission denied (os error 13)\n"},
		{"last line unterminated", pre + "./x" + strings.TrimSuffix(why, "\n"), []string{"./x"}, false, ""},
		{"a skip logged by a module not known", "DEBUG|ignore::walker2|x: ignoring ./y: Skip(Hidden)\n", nil, true, ""},
		{"a non-regular file", "DEBUG|rg::subject|x: ignoring ./lnk: failed to pass subject filter\n", nil, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &rgWalk{}
			errs := &capWriter{max: rgStderrMax}
			l := &rgLog{w: w, errs: errs}
			for i := 0; i < len(tc.stderr); i += 7 { // in pieces, as a pipe delivers it
				l.Write([]byte(tc.stderr[i:min(i+7, len(tc.stderr))]))
			}
			l.flush()
			if !w.logged {
				t.Error("the debug log was not noticed")
			}
			if !slices.Equal(w.skipped, tc.skipped) || w.unsure != tc.unsure || errs.String() != tc.errs {
				t.Errorf("skipped %q unsure %v errs %q, want %q %v %q", w.skipped, w.unsure, errs.String(), tc.skipped, tc.unsure, tc.errs)
			}
		})
	}
}

func TestRgWalkSwitchesToTheOrderedSearchAtFiveTimesTheLimit(t *testing.T) {
	const limit = 1
	for _, n := range []int{switchFactor*(limit+1) - 1, switchFactor * (limit + 1)} {
		files := map[string]string{}
		for i := range n {
			files[fmt.Sprintf("f%02d.txt", i)] = "hit\n"
		}
		_, traced := searchBoth(t, walkTree(t, files), Query{Pattern: "hit", Limit: limit}, nil, nil)
		if walked := slices.Contains(traced, "walk"); walked != (n < switchFactor*(limit+1)) {
			t.Errorf("%d matches, limit %d: rg's own walk kept = %v", n, limit, walked)
		}
	}
	if switchFactor != 5 {
		t.Errorf("switchFactor = %d; docs/tools.md says 5", switchFactor)
	}
}

func TestRgWalkWithoutADebugLogIsNotTrusted(t *testing.T) {
	w := &rgWalk{}
	l := &rgLog{w: w, errs: &capWriter{max: rgStderrMax}}
	l.Write([]byte("rg: ./locked: Permission denied (os error 13)\n"))
	l.flush()
	if w.logged {
		t.Error("an error line counted as rg's debug log")
	}
}

func TestRgWalkReachesNoDeeperThanAgentlsWalk(t *testing.T) {
	deep := strings.Repeat("d/", ignore.MaxWalkDepth)
	dir := walkTree(t, map[string]string{
		deep + "x.txt":   "deepneedle searched\n", // MaxWalkDepth+1 components: searched
		deep + "d/y.txt": "deepneedle too deep\n", // in a directory the walk does not enter
		"top.txt":        "deepneedle top\n",
	})
	res, traced := searchBoth(t, dir, Query{Pattern: "deepneedle"}, nil, nil)
	if slices.Contains(traced, "walk") {
		t.Errorf("rg's own walk was kept past the depth agentls walks: %q", traced)
	}
	if strings.Contains(res.Text, "too deep") || !strings.Contains(res.Text, "searched") || res.Unreadable.Count != 1 {
		t.Errorf("unreadable %d, text:\n%.400s", res.Unreadable.Count, res.Text)
	}
}
