package textedit

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/cespare/xxhash/v2"
)

// bigFile returns about size bytes of Go-like source with a unique marker
// line near the end.
func bigFile(size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "func f%d(x int) int {\n\tif x > %d {\n\t\treturn x * 2 // “double”\n\t}\n\treturn x\n}\n\n", i, i)
	}
	tail := []byte("func marker() string {\n\treturn \"old\"  \n}\n")
	out := b.Bytes()
	cut := len(out) - 4096
	cut = bytes.LastIndex(out[:cut], []byte("\n\n")) + 2
	return slices.Concat(out[:cut], tail, out[cut:])
}

// fullEdit is what the edit tool does with a file: match and splice, then
// describe the change.
func fullEdit(b *testing.B, old []byte, edits []Edit) {
	res, err := Apply(old, edits)
	if err != nil {
		b.Fatal(err)
	}
	d := Compare(old, res.New)
	_ = d.TextEdits()
	_ = d.Unified("big.go")
	_ = d.FirstChangedLine()
	_, _ = d.Hashes()
}

// reportP50 runs f b.N times and reports the median as p50-ms.
func reportP50(b *testing.B, f func()) {
	times := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t := time.Now()
		f()
		times = append(times, time.Since(t))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
}

func BenchmarkEdit5MB(b *testing.B) {
	old := bigFile(5 << 20)
	exact := []Edit{{OldText: "\treturn \"old\"  \n", NewText: "\treturn \"new\"\n"}}
	fuzzy := []Edit{{OldText: "func marker() string {\n\treturn \"old\"\n}", NewText: "func marker() string {\n\treturn \"new\"\n}"}}
	b.Run("exact/full", func(b *testing.B) { reportP50(b, func() { fullEdit(b, old, exact) }) })
	b.Run("trailingWhitespace/full", func(b *testing.B) { reportP50(b, func() { fullEdit(b, old, fuzzy) }) })
	b.Run("exact/Apply", func(b *testing.B) {
		reportP50(b, func() {
			if _, err := Apply(old, exact); err != nil {
				b.Fatal(err)
			}
		})
	})
	res, _ := Apply(old, exact)
	b.Run("TextEdits", func(b *testing.B) { reportP50(b, func() { TextEdits(old, res.New) }) })
	b.Run("UnifiedDiff", func(b *testing.B) { reportP50(b, func() { UnifiedDiff("big.go", old, res.New) }) })
	// Reference: diffing the whole file with go-udiff, as a naive caller
	// would.
	b.Run("reference/udiff.Unified", func(b *testing.B) {
		reportP50(b, func() { udiff.Unified("a/big.go", "b/big.go", string(old), string(res.New)) })
	})
}

// BenchmarkHash measures Hash (SHA-256, which VS Code computes with
// node:crypto) on a 5 MiB file, the size of the large-edit benchmarks,
// against xxhash64, the hash it replaced (reference).
func BenchmarkHash(b *testing.B) {
	data := bigFile(5 << 20)
	b.Run("sha256", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			_ = Hash(data)
		}
	})
	b.Run("xxhash64-reference", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			_ = xxhash.Sum64(data)
		}
	})
	// An edit's pair, changed in the middle: Hashes hashes the common
	// prefix once, against hashing each text whole (reference).
	edited := bytes.Clone(data)
	edited[len(edited)/2] ^= 0x20
	d := Compare(data, edited)
	b.Run("edit-pair", func(b *testing.B) {
		b.SetBytes(int64(2 * len(data)))
		for b.Loop() {
			_, _ = d.Hashes()
		}
	})
	b.Run("edit-pair-reference", func(b *testing.B) {
		b.SetBytes(int64(2 * len(data)))
		for b.Loop() {
			_, _ = Hash(data), Hash(edited)
		}
	})
}
