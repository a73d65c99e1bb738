package search

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file whose reported lines are not what agentls reads through the
// folder is dropped from the result and named as changed; a line rg
// reported only the start of (a huge line) still verifies.
func TestRgLinesNotInTheFileAreNotShown(t *testing.T) {
	dir := t.TempDir()
	long := "needle " + strings.Repeat("x", 100000)
	for name, body := range map[string]string{"same.txt": "a\nneedle one\nb\n" + long, "other.txt": "needle inside\n", "short.txt": "needle\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := &Engine{FS: os.DirFS(dir), Root: dir}
	c := newCollector(100)
	c.add(fileHits{path: "same.txt", matches: 2, lines: []line{{n: 2, text: "needle one", match: true}, {n: 3, text: "b"}, {n: 4, text: long[:5000], match: true}}})
	c.add(fileHits{path: "other.txt", matches: 1, lines: []line{{n: 1, text: "needle OUTSIDE", match: true}}})
	c.add(fileHits{path: "short.txt", matches: 1, lines: []line{{n: 3, text: "needle", match: true}}})
	if err := e.verifyRg(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if len(c.files) != 1 || c.files[0].path != "same.txt" || c.kept != 2 {
		t.Fatalf("kept %+v (%d matches), want same.txt alone", c.files, c.kept)
	}
	if got := strings.Join(c.unreadable.Paths, " "); !strings.Contains(got, "other.txt") || !strings.Contains(got, "short.txt") {
		t.Errorf("changed files named: %q", got)
	}
}
