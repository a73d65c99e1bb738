package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// toggle returns the word an edit benchmark has in place after flip edits:
// it swaps two words back and forth, so every iteration is a real change.
func toggle(flip int) string {
	if flip%2 == 0 {
		return "ALPHA_MARKER"
	}
	return "BRAVO_MARKER"
}

// sourceLike is about size bytes of 60-byte code-like lines with the
// first toggle word once in the middle.
func sourceLike(size int) string {
	var b strings.Builder
	n := size / 60
	for i := range n {
		if i == n/2 {
			fmt.Fprintf(&b, "\tx := %q // %-38s\n", toggle(0), "the line the benchmark edits")
			continue
		}
		fmt.Fprintf(&b, "\tvalue%06d := compute(%06d) // %-26s\n", i, i, "filler")
	}
	return b.String()
}

func editArgs(path string, flip int) map[string]any {
	return map[string]any{"path": path, "edits": []any{map[string]any{
		"oldText": toggle(flip), "newText": toggle(flip + 1),
	}}}
}

func p50ms(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2].Microseconds()) / 1000
}

// BenchmarkEditLargeFile edits one line of a 5 MB file through tools/call
// (target ≤ 30 ms p50), against the same edit of a 4 KB file. Each
// iteration also reads the whole file through tools/call, the reference
// in the same run (read-p50-ms): the load of a shared machine moves both.
func BenchmarkEditLargeFile(b *testing.B) {
	for _, tc := range []struct {
		name string
		size int
	}{{"4KB", 4 << 10}, {"5MB", 5 << 20}} {
		b.Run(tc.name, func(b *testing.B) {
			ws := b.TempDir()
			if err := os.WriteFile(filepath.Join(ws, "f.go"), []byte(sourceLike(tc.size)), 0o644); err != nil {
				b.Fatal(err)
			}
			c := harness.Start(b, harness.Options{Root: ws})
			ctx := context.Background()
			c.Initialize(ctx, bypass())
			if r := c.CallTool(ctx, "read", map[string]any{"path": "f.go", "limit": 10}); r.IsError {
				b.Fatal(r.Text())
			}
			var lat, read []time.Duration
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				r := c.CallTool(ctx, "edit", editArgs("f.go", i))
				lat = append(lat, time.Since(t0))
				if r.IsError {
					b.Fatal(r.Text())
				}
				t0 = time.Now()
				if r := c.CallTool(ctx, "read", map[string]any{"path": "f.go"}); r.IsError {
					b.Fatal(r.Text())
				}
				read = append(read, time.Since(t0))
			}
			b.ReportMetric(p50ms(lat), "p50-ms")
			b.ReportMetric(p50ms(read), "read-p50-ms")
		})
	}
}

// BenchmarkEditFiftyFiles edits 50 different files, once as 50 sequential
// tools/call requests and once as one tools/callBatch, in the same
// iteration, and reports both and the speedup of the batch.
func BenchmarkEditFiftyFiles(b *testing.B) {
	const files = 50
	ws := b.TempDir()
	for i := range files {
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%02d.go", i)), []byte(sourceLike(32<<10)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	c := harness.Start(b, harness.Options{Root: ws})
	ctx := context.Background()
	c.Initialize(ctx, bypass())
	for i := range files {
		if r := c.CallTool(ctx, "read", map[string]any{"path": fmt.Sprintf("f%02d.go", i), "limit": 10}); r.IsError {
			b.Fatal(r.Text())
		}
	}
	flip := 0
	var seq, batch time.Duration
	for b.Loop() {
		t0 := time.Now()
		for i := range files {
			if r := c.CallTool(ctx, "edit", editArgs(fmt.Sprintf("f%02d.go", i), flip)); r.IsError {
				b.Fatal(r.Text())
			}
		}
		seq += time.Since(t0)
		flip++

		calls := make([]map[string]any, files)
		for i := range calls {
			calls[i] = map[string]any{"name": "edit", "arguments": editArgs(fmt.Sprintf("f%02d.go", i), flip)}
		}
		t0 = time.Now()
		var res struct {
			Results []harness.Result `json:"results"`
		}
		if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &res); err != nil {
			b.Fatal(err)
		}
		batch += time.Since(t0)
		flip++
		if len(res.Results) != files {
			b.Fatalf("%d results", len(res.Results))
		}
		for _, r := range res.Results {
			if r.IsError {
				b.Fatal(r.Text())
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(seq.Microseconds())/1000/n, "seq-ms")
	b.ReportMetric(float64(batch.Microseconds())/1000/n, "batch-ms")
	b.ReportMetric(float64(seq)/float64(batch), "speedup-x")
}

// BenchmarkPrepareLargeEdit answers tools/prepare for an edit of one line
// of a 5 MB file in default mode (the checks, the diff and the question,
// nothing written) through the real binary, against a tools/call read of
// the same file in the same run; both report p50.
func BenchmarkPrepareLargeEdit(b *testing.B) {
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "f.go"), []byte(sourceLike(5<<20)), 0o644); err != nil {
		b.Fatal(err)
	}
	c := harness.Start(b, harness.Options{Root: ws})
	ctx := context.Background()
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "default"}})
	if r := c.CallTool(ctx, "read", map[string]any{"path": "f.go", "limit": 10}); r.IsError {
		b.Fatal(r.Text())
	}
	var prep, read []time.Duration
	for b.Loop() {
		t0 := time.Now()
		var p preparation
		if err := c.Call(ctx, "tools/prepare", map[string]any{"name": "edit", "arguments": editArgs("f.go", 0)}, &p); err != nil {
			b.Fatal(err)
		}
		prep = append(prep, time.Since(t0))
		if p.Decision != "ask" || !strings.Contains(p.Message, "+\tx := \"BRAVO_MARKER\"") {
			b.Fatalf("prepare: %+v", p.Decision+" "+p.Reason+p.Error)
		}
		t0 = time.Now()
		if r := c.CallTool(ctx, "read", map[string]any{"path": "f.go"}); r.IsError {
			b.Fatal(r.Text())
		}
		read = append(read, time.Since(t0))
	}
	b.ReportMetric(p50ms(prep), "prepare-p50-ms")
	b.ReportMetric(p50ms(read), "read-p50-ms")
}
