package e2e

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A 64 MiB line: rg's JSON printer ignores --max-columns, so a match on it
// was one 64 MiB event, which agentls held and decoded whole; the Go
// backend held the whole line (1.5 GiB for 500 MB). Now agentls's peak
// memory stays within the bound with either backend, the match is reported
// with its line number and the line's start, and a match past the 8 MiB cut
// is said to be searched in part only.
func TestGrepOfAHugeLineKeepsMemoryBounded(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("huge input")
	}
	if runtime.GOOS != "linux" {
		t.Skip("peak memory is read from /proc (Linux only)")
	}
	big := filepath.Join(t.TempDir(), "long.txt")
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
	w.WriteString(" tail-needle end\nneedle second line\n")
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
			if b.name == "go" {
				r := s.c.CallTool(s.ctx, "grep", map[string]any{"pattern": "tail-needle"})
				wantContains(t, "grep past the 8 MiB cut", hugeShow(r.Text()), "line 1 is longer than 8 MiB")
			}
			s.checkMem(t, "grep "+b.name+" of a 64 MiB line", hugePeakGrowth)
		})
	}
}
