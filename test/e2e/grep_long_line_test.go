package e2e

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rg's JSON printer ignores --max-columns: a match on one 64 MiB line was
// one 64 MiB event, which agentls held and decoded whole (several times its
// size). Only the head of such an event is kept now, so agentls's peak
// memory stays within the bound for huge inputs with either backend, and
// the match is still reported with its line number and the line's start.
func TestGrepOfAHugeLineKeepsMemoryBounded(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("huge input")
	}
	hugeDisk(t)
	dir := t.TempDir()
	big := filepath.Join(dir, "long.txt")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, hugeMiB)
	w.WriteString("needle start ")
	chunk := strings.Repeat("abcdefgh", hugeMiB/8)
	for range 64 {
		w.WriteString(chunk)
	}
	w.WriteString(" needle end\nneedle second line\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, b := range []struct {
		name string
		env  []string
	}{{"rg", nil}, {"go", []string{"PATH=" + t.TempDir()}}} {
		t.Run(b.name, func(t *testing.T) {
			ws := t.TempDir()
			if err := os.Link(big, filepath.Join(ws, "long.txt")); err != nil {
				t.Fatal(err)
			}
			s := hugeStart(t, ws, b.env...)
			for _, args := range []map[string]any{{"pattern": "needle"}, {"pattern": "needle", "path": "long.txt"}} {
				r := s.c.CallTool(s.ctx, "grep", args)
				if r.IsError {
					t.Fatalf("grep %v: %s", args, r.Text())
				}
				if got := r.Details["backend"]; got != b.name {
					t.Errorf("backend = %v, want %s", got, b.name)
				}
				text := r.Text()
				if !strings.Contains(text, "long.txt:1: needle start abcdefgh") || !strings.Contains(text, "long.txt:2: needle second line") {
					t.Errorf("grep %v = %q, want line 1's start and line 2", args, hugeShow(text))
				}
				if len(text) > hugeBudget {
					t.Errorf("result is %d bytes", len(text))
				}
			}
			s.checkMem(t, "grep "+b.name+" of a 64 MiB line", hugePeakGrowth)
		})
	}
}
