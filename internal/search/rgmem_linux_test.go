package search

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentls/agentls/internal/ignore"
)

// A binary file rg is given by name (the batched search, as under a Read
// deny rule) is searched to its end: memory-mapped, a 1 GiB sparse file
// made rg 1 GiB resident. rg reads it instead; its peak stays small.
func TestRgNamedHugeBinaryFileKeepsRgMemorySmall(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and searches a huge binary file")
	}
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg not on PATH")
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(big, []byte("hello needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<30); err != nil { // sparse: no disk
		t.Fatal(err)
	}
	fsys := os.DirFS(dir)
	var traced []string
	e := &Engine{Root: dir, FS: fsys, Matcher: ignore.NewMatcher(fsys, ignore.Outer{}), RgPath: rg,
		// A filter that cannot name what it refuses: rg gets the files by name.
		Visible: func(rel string) bool { return rel != "private.txt" },
		trace:   func(s string) { traced = append(traced, s) }}
	if _, err := e.Search(context.Background(), Query{Pattern: "needle"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range traced {
		if s == "walk" {
			t.Fatalf("rg walked the tree itself (%q): the case proves nothing", traced)
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		t.Fatal(err)
	}
	if peak := ru.Maxrss << 10; peak > 256<<20 { // Maxrss is in KiB
		t.Errorf("the largest child (rg) peaked at %d MiB searching a 1 GiB file", peak>>20)
	}
}
