//go:build unix

package proc

import (
	"context"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/spill"
)

// maxHeapGrowth bounds how much the live heap may grow while a command prints
// hundreds of MiB: the tail, the read buffers, the spill hold and one arena
// block are a few MiB; retaining the output would be hundreds.
const maxHeapGrowth = 24 << 20

// heapPeak samples the heap's object bytes every millisecond until stop is
// called, which returns the peak growth over the level when it started.
func heapPeak(t *testing.T) (stop func() uint64) {
	t.Helper()
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	peak := base
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() { // owned by stop, which waits for it
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		return peak - base
	}
}

// TestRunMemoryBounded runs commands printing far more than is kept through Run
// with a spill directory and a progress callback, as the bash tool does, and
// checks that the heap stays bounded while the results (tail, counts, spill
// file and its cap, progress) are what the whole output implies. It is not
// parallel: another test's allocations would count as this one's.
func TestRunMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("streams hundreds of megabytes through the cleaner")
	}
	const width = 100 // fold -w: characters per line
	scale := int64(1)
	if raceEnabled {
		scale = 8 // the race detector slows the per-byte cleaner ~10×; sizes in names are without it
	}
	cases := []struct {
		name    string
		bytes   int64 // bytes of 'a' printed
		fold    bool  // in lines of width characters, else one line
		failure bool  // lines look like failures
	}{
		{"short lines (200 MiB)", 200 << 20 / scale, true, false},
		{"one line (64 MiB)", 64 << 20 / scale, false, false},
		{"failure lines (40 MB)", 40_000_000 / scale, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, err := spill.OpenIn(t.TempDir(), "/ws")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { dir.Close() })
			char := "a"
			if c.failure {
				char = "E" // sed turns each line's start into "ERROR"
			}
			cmd := "head -c " + strconv.FormatInt(c.bytes, 10) + " /dev/zero | tr '\\0' " + char
			if c.fold {
				cmd += " | fold -w " + strconv.Itoa(width)
			}
			if c.failure {
				cmd += " | sed 's/^EEEEE/ERROR/'"
			}
			var mu sync.Mutex
			var notes int
			var maxNote int
			stop := heapPeak(t)
			start := time.Now()
			res := run(t, context.Background(), Spec{
				Command: cmd,
				Spill:   dir,
				Reaper:  &Reaper{},
				OnProgress: func(tail string) {
					mu.Lock()
					defer mu.Unlock()
					notes++
					maxNote = max(maxNote, len(tail))
				},
			})
			took := time.Since(start)
			grew := stop()
			t.Logf("%d bytes, %d lines in %v: heap peak +%d KiB, %d progress calls",
				res.TotalBytes, res.TotalLines, took.Round(time.Millisecond), grew>>10, notes)
			if grew >= maxHeapGrowth {
				t.Errorf("heap grew by %d MiB while the command ran, want < %d MiB", grew>>20, maxHeapGrowth>>20)
			}

			lines, total := int64(1), c.bytes
			if c.fold {
				lines = (c.bytes + width - 1) / width
				total = c.bytes + lines - 1 // fold puts a newline between lines, none after the last
			}
			if res.ExitCode != 0 || res.TotalBytes != total || int64(res.TotalLines) != lines || !res.Truncated {
				t.Fatalf("exit %d, %d bytes, %d lines, truncated %v; want 0, %d, %d, true",
					res.ExitCode, res.TotalBytes, res.TotalLines, res.Truncated, total, lines)
			}

			// The tail: whole lines within TailBytes, the last without its newline.
			line := strings.Repeat(char, width)
			if c.failure {
				line = "ERROR" + line[5:]
			}
			if c.fold {
				shown := TailBytes / (width + 1)
				want := strings.Repeat(line+"\n", shown-1) + line
				if res.Output != want || int64(res.ShownFrom) != lines-int64(shown)+1 || int64(res.ShownTo) != lines {
					t.Errorf("tail: %d bytes, lines %d-%d; want %d bytes, lines %d-%d",
						len(res.Output), res.ShownFrom, res.ShownTo, len(want), lines-int64(shown)+1, lines)
				}
			} else {
				cut := int(c.bytes) - MaxLineChars
				want := strings.Repeat(char, MaxLineChars-TailChars) + lineCut(cut) + strings.Repeat(char, TailChars)
				if res.Output != want || res.LinesCut != 1 {
					t.Errorf("one cut line: %d bytes, %d lines cut; want %d bytes, 1", len(res.Output), res.LinesCut, len(want))
				}
			}
			wantFail := 0
			if c.failure {
				wantFail = int(lines) - (res.ShownTo - res.ShownFrom + 1)
			}
			if res.FailureMatches != wantFail || len(res.FailureLines) != min(wantFail, MaxFailureLines) {
				t.Errorf("failure lines: %d kept of %d, want %d of %d",
					len(res.FailureLines), res.FailureMatches, min(wantFail, MaxFailureLines), wantFail)
			}
			for i, l := range res.FailureLines {
				if l.N != i+1 || l.Text != cutBytes(line, MaxFailureLineBytes) {
					t.Errorf("failure line %d: %d %q, want %d %q", i, l.N, l.Text, i+1, line)
					break
				}
			}

			// The spill file: the raw output up to its cap, then the note.
			if res.SpillPath == "" {
				t.Fatalf("no spill file: %s", res.SpillError)
			}
			fi, err := os.Stat(res.SpillPath)
			if err != nil {
				t.Fatal(err)
			}
			saved := min(total, spill.MaxFileBytes-spillNoteRoom)
			if res.SpillCutBytes != total-saved {
				t.Errorf("spill cut %d bytes, want %d", res.SpillCutBytes, total-saved)
			}
			if fi.Size() < saved || fi.Size() > spill.MaxFileBytes {
				t.Errorf("spill file has %d bytes, want %d of output plus the note, at most %d", fi.Size(), saved, spill.MaxFileBytes)
			}

			// Progress: throttled, and each a small snapshot.
			mu.Lock()
			defer mu.Unlock()
			if bound := int(took/ProgressInterval) + 2; notes == 0 || notes > bound {
				t.Errorf("%d progress calls in %v, want 1 to %d", notes, took, bound)
			}
			if maxNote > ProgressLines*(MaxLineChars+1)*4 {
				t.Errorf("a progress snapshot has %d bytes", maxNote)
			}
		})
	}
}
