package search

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// verifyRg checks every line rg reported against the file as agentls reads
// it through the folder's os.Root (Engine.FS), which follows no symlink out
// of the folder. rg opens the paths it is handed by name, through any
// symlink: a directory below the one it runs in, or a file, swapped for a
// symlink to outside between the walk and rg's open would be read there.
// A file whose lines are not what agentls reads is not shown (rg's text
// is kept only where it is a prefix of agentls's own read of that line);
// it is named as changed while searched. Only the files that can be shown
// are read again.
func (e *Engine) verifyRg(ctx context.Context, c *collector) error {
	if len(c.files) == 0 {
		return nil
	}
	c.prune()
	d := &dirOpener{fsys: e.FS}
	defer d.close()
	r := bufio.NewReaderSize(nil, 64<<10) // one read buffer for every file
	kept := c.files[:0]
	for _, f := range c.files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(f.lines) == 0 || e.sameLines(d, r, f) {
			kept = append(kept, f)
			continue
		}
		c.kept -= f.matches
		c.unreadable.AddReason(f.path, "it changed while it was being searched (search again)")
	}
	c.files = kept
	return nil
}

// sameLines reports whether each line of f starts with its text as read
// through Engine.FS now (d opens it as the Go searcher does, names that
// are not UTF-8 included; r is reset to read it). A line is held only up
// to its text's length.
func (e *Engine) sameLines(d *dirOpener, r *bufio.Reader, f fileHits) bool {
	file, err := d.open(f.path)
	if err != nil {
		return false
	}
	defer file.Close()
	if fi, err := file.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	// rg decodes a file by its BOM (UTF-16 to UTF-8, a UTF-8 BOM
	// dropped); read it the same way, and a file without one as it is.
	plain := false
	if ra, ok := file.(io.ReaderAt); ok {
		var head [3]byte
		hn, _ := ra.ReadAt(head[:], 0)
		plain = !hasBOM(head[:hn])
	}
	if plain {
		r.Reset(file)
	} else {
		r.Reset(transform.NewReader(file, unicode.BOMOverride(transform.Nop)))
	}
	var raw []byte
	n, i := 1, 0
	for i < len(f.lines) {
		want := f.lines[i]
		// Read line n, keeping at most what the comparison needs (the
		// text's bytes, more for bytes decodeLine shows longer).
		limit := len(want.text) + 16
		keep := n == want.n
		raw = raw[:0]
		for {
			chunk, err := r.ReadSlice('\n')
			if keep && len(raw) < limit {
				raw = append(raw, chunk[:min(len(chunk), limit-len(raw))]...)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && (len(chunk) == 0 || !keep) {
				return false // the file ended before the line
			}
			break
		}
		if keep {
			if !strings.HasPrefix(decodeLine(raw), want.text) {
				return false
			}
			i++
		}
		n++
	}
	return true
}

// hasBOM reports whether a file starting with b has a byte-order mark
// (UTF-8, UTF-16 LE or BE).
func hasBOM(b []byte) bool {
	return bytes.HasPrefix(b, []byte{0xef, 0xbb, 0xbf}) || bytes.HasPrefix(b, []byte{0xff, 0xfe}) || bytes.HasPrefix(b, []byte{0xfe, 0xff})
}
