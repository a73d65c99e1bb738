package ignore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// A directory chain deeper than MaxWalkDepth is walked down to the limit,
// and the directory at the next level is visited but not entered, and
// reported unreadable with ErrTooDeep (a
// search then says it was not searched) instead of being read by ever
// longer paths: a 3,000-level chain took initialize 18 s and grep missed a
// match at the bottom without a word.
func TestWalkBelowMaxDepthIsReportedNotSilent(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(root+strings.Repeat("/d", MaxWalkDepth+40), 0o755); err != nil {
		t.Fatal(err)
	}
	var deepest int
	var skipped []string
	err := NewMatcher(os.DirFS(root), Outer{}).Walk(context.Background(), ".", WalkOptions{Unreadable: func(rel string, err error) {
		if errors.Is(err, ErrTooDeep) {
			skipped = append(skipped, rel)
		}
	}}, func(rel string, d fs.DirEntry) error {
		deepest = max(deepest, strings.Count(rel, "/")+1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if deepest != MaxWalkDepth+1 || len(skipped) != 1 || strings.Count(skipped[0], "/")+1 != MaxWalkDepth+1 {
		t.Fatalf("deepest visit %d levels, skipped %d dirs (at %d levels); want visits to %d (the last not entered) and that one reported", deepest, len(skipped), strings.Count(strings.Join(skipped, ""), "/")+1, MaxWalkDepth+1)
	}
	if r := ErrReason(ErrTooDeep); !strings.Contains(r, "512 directory levels") {
		t.Fatalf("reason %q", r)
	}
}
