package e2e

import (
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/ignore/ignoretest"
)

// TestIgnoreCorpusAgreesWithGitForFindLsAndGrep puts every case of the
// ignore conformance corpus (internal/ignore/testdata/conformance, each
// its own repository) into one workspace and checks, through the real
// binary, that find lists, grep (each backend) searches and ls shows
// exactly what git ls-files --others --exclude-standard and git
// check-ignore --no-index leave visible.
func TestIgnoreCorpusAgreesWithGitForFindLsAndGrep(t *testing.T) {
	t.Parallel()
	if _, err := ignoretest.Git(t.TempDir(), nil, "--version"); err != nil {
		t.Skip("git is not installed")
	}
	cases, err := ignoretest.Load("../../internal/ignore/testdata/conformance")
	if err != nil {
		t.Fatal(err)
	}
	ws := resolvedWorkspace(t, nil)
	verdicts := map[string]ignoretest.Verdict{}
	var visible, searched []string
	for _, c := range cases {
		dir := ws + "/" + c.Name
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := c.Write(dir); err != nil {
			t.Fatal(err)
		}
		v, err := ignoretest.Ask(dir)
		if err != nil {
			t.Fatal(err)
		}
		verdicts[c.Name] = v
		for _, f := range v.Visible {
			visible = append(visible, c.Name+"/"+f)
		}
		for _, f := range v.VisibleFiles() {
			searched = append(searched, c.Name+"/"+f)
		}
	}
	slices.Sort(visible)
	slices.Sort(searched)

	c, ctx := startIn(t, ws, bypass())
	r := c.CallTool(ctx, "find", map[string]any{"pattern": "*", "limit": 10000})
	if got := outputLines(r.Text()); !slices.Equal(got, visible) {
		t.Errorf("find lists\n  %q\ngit ls-files lists\n  %q", got, visible)
	}

	for _, backend := range []string{"rg", "go"} {
		cl, cctx := c, ctx
		if backend == "go" {
			cl, cctx = startIn(t, ws, bypass(), "AGENTLS_GREP_BACKEND=go")
		}
		r := cl.CallTool(cctx, "grep", map[string]any{"pattern": "corpusmark", "literal": true, "limit": 1000})
		if backend == "rg" && r.Details["backend"] != "rg" {
			t.Logf("rg is not installed: the default backend is %v", r.Details["backend"])
		}
		var got []string
		for _, l := range outputLines(r.Text()) {
			if p, ok := strings.CutSuffix(l, ":1: corpusmark"); ok {
				got = append(got, p)
			} else {
				t.Errorf("grep (%s): unexpected line %q", backend, l)
			}
		}
		if !slices.Equal(got, searched) {
			t.Errorf("grep (%s) searches\n  %q\ngit leaves visible\n  %q", backend, got, searched)
		}
	}

	for _, cs := range cases {
		v := verdicts[cs.Name]
		dirs := []string{""}
		isDir := map[string]bool{}
		for name := range cs.Files {
			for d := path.Dir(strings.TrimSuffix(name, "/")); d != "." && !strings.HasPrefix(d, ".git"); d = path.Dir(d) {
				isDir[d] = true
			}
			if strings.HasSuffix(name, "/") {
				isDir[strings.TrimSuffix(name, "/")] = true
			}
		}
		for d := range isDir {
			if !v.Ignored[d] && !ignoredAbove(v, d) {
				dirs = append(dirs, d)
			}
		}
		slices.Sort(dirs)
		for _, d := range dirs {
			var want []string
			for _, p := range v.Paths {
				if path.Dir(p) == cmpDot(d) && !v.Ignored[p] {
					name := path.Base(p)
					if isDir[p] {
						name += "/"
					}
					want = append(want, name)
				}
			}
			where := path.Join(cs.Name, d)
			r := c.CallTool(ctx, "ls", map[string]any{"path": where, "limit": 5000})
			lines := outputLines(r.Text())
			var got []string
			for _, l := range lines[1:] {
				if l != "(empty)" {
					got = append(got, l)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("ls %s shows\n  %q\ngit leaves visible\n  %q", where, got, want)
			}
		}
	}
}

// outputLines is a tool's text without its notices ("[…]" lines).
func outputLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l != "" && !strings.HasPrefix(l, "[") {
			out = append(out, l)
		}
	}
	return out
}

func ignoredAbove(v ignoretest.Verdict, p string) bool {
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if v.Ignored[d] {
			return true
		}
	}
	return false
}

func cmpDot(d string) string {
	if d == "" {
		return "."
	}
	return d
}
