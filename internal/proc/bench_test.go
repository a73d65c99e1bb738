package proc

import (
	"bytes"
	"io"
	"testing"
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
