package proc

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/agentls/agentls/internal/spill"
)

// benchInput is 16 MiB of short lines with a colour code every few lines, like a build log.
func benchInput() []byte {
	var b bytes.Buffer
	for b.Len() < 16<<20 {
		b.WriteString("aaaaaaaaaa\nok  \tgithub.com/x/y\t0.012s\n\x1b[32mPASS\x1b[0m some text here\n")
	}
	return b.Bytes()
}

// BenchmarkClean measures cleaning plus the tail ring against a plain copy (the floor).
func BenchmarkClean(b *testing.B) {
	in := benchInput()
	b.Run("reference-copy", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			for i := 0; i < len(in); i += readBufBytes {
				_, _ = io.Discard.Write(in[i:min(i+readBufBytes, len(in))])
			}
			_ = bytes.Count(in, []byte{'\n'})
		}
	})
	b.Run("clean+tail", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			var t tail
			c := cleaner{onLine: t.add}
			for i := 0; i < len(in); i += readBufBytes {
				c.write(in[i:min(i+readBufBytes, len(in))])
			}
			last, cut, open := c.finish()
			t.finish(last, cut, open)
		}
	})
}

// BenchmarkPipeline measures what Run does with each chunk read from the pipe
// (spill file, cleaner, tail ring, then the result) on 16 MiB of 100-character
// lines, against the floor of writing the same chunks to a file and counting
// their lines.
func BenchmarkPipeline(b *testing.B) {
	line := append(bytes.Repeat([]byte{'a'}, 100), '\n')
	in := bytes.Repeat(line, 16<<20/len(line))
	lines := float64(bytes.Count(in, []byte{'\n'}))
	dir, err := spill.OpenIn(b.TempDir(), "/ws")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { dir.Close() })
	perSec := func(b *testing.B) {
		b.ReportMetric(lines*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
	}
	b.Run("reference-file+count", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			f, err := dir.Create("ref")
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for i := 0; i < len(in); i += readBufBytes {
				c := in[i:min(i+readBufBytes, len(in))]
				if _, err := f.Write(c); err != nil {
					b.Fatal(err)
				}
				n += bytes.Count(c, []byte{'\n'})
			}
			f.Close()
			os.Remove(f.Name())
		}
		perSec(b)
	})
	b.Run("spill+clean+tail", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			r := newRunner(Spec{Spill: dir})
			for i := 0; i < len(in); i += readBufBytes {
				r.consume(in[i:min(i+readBufBytes, len(in))])
			}
			res := r.finish()
			if res.TotalLines != int(lines) || res.SpillPath == "" {
				b.Fatalf("%d lines, spill %q %s", res.TotalLines, res.SpillPath, res.SpillError)
			}
			os.Remove(res.SpillPath)
		}
		perSec(b)
	})
}
