package ignore

import (
	"context"
	"io/fs"
	"os"
	"slices"
	"testing"

	"github.com/agentls/agentls/internal/ignore/ignoretest"
)

// TestIgnoreCorpusAgreesWithGit walks every case of the conformance corpus
// (testdata/conformance) and checks each path against real git: the files
// the walk yields are those git ls-files --others --exclude-standard
// lists, and every path, file or directory, is reached exactly when git
// check-ignore --no-index does not call it ignored.
func TestIgnoreCorpusAgreesWithGit(t *testing.T) {
	if _, err := ignoretest.Git(t.TempDir(), nil, "--version"); err != nil {
		t.Skip("git is not installed")
	}
	cases, err := ignoretest.Load("testdata/conformance")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			dir := t.TempDir()
			if err := c.Write(dir); err != nil {
				t.Fatal(err)
			}
			want, err := ignoretest.Ask(dir)
			if err != nil {
				t.Fatal(err)
			}
			total += len(want.Paths)
			fsys := os.DirFS(dir)
			m := NewMatcher(fsys, Outer{})
			reached := map[string]bool{}
			var files []string
			err = m.Walk(context.Background(), ".", WalkOptions{}, func(rel string, d fs.DirEntry) error {
				reached[rel] = true
				if !d.IsDir() {
					files = append(files, rel)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(files)
			if !slices.Equal(files, want.Visible) {
				t.Errorf("walk lists\n  %q\ngit ls-files lists\n  %q", files, want.Visible)
			}
			for _, p := range want.Paths {
				if reached[p] == want.Ignored[p] {
					t.Errorf("%s: agentls ignored=%v, git check-ignore ignored=%v", p, !reached[p], want.Ignored[p])
				}
			}
		})
	}
	if total < 100 {
		t.Errorf("the corpus checks %d paths; it must check at least 100", total)
	}
}
