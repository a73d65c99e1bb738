package builtin

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/secrets"
	"github.com/agentls/agentls/internal/tools"
)

// ReadStreamBytes is the file size above which read goes through a file in
// one pass without holding it (readLarge): only the lines shown are kept,
// so a read of a log of gigabytes costs what a read of a small file does
// in memory. It is above ReadMaxImage, so every image read is whole.
const ReadStreamBytes = 16 << 20

// readLarge is read for a file over ReadStreamBytes. The pass that counts
// the lines also hashes the content for the edit guard's stamp and follows
// private key blocks, so what it shows is what a whole read would show. An
// image that size is over the image limit; UTF-16 text that size is
// refused (decoding needs the whole file).
func readLarge(ctx context.Context, c *tools.Call, p ops.Path, file io.Reader, fi fs.FileInfo, in readInput, l tools.Limits) (tools.Result, error) {
	res, hash, err := streamLines(ctx, p.Display(), file, fi.Size(), in, l, c.Masker())
	if err == nil && !res.IsError && c.Env.Guard != nil {
		c.Env.Guard.RecordReadDigest(p, fi, hash)
	}
	return res, err
}

// streamLines is readLarge's pass over file (fileSize bytes, named display):
// the result, and the xxhash64 of every byte read.
func streamLines(ctx context.Context, display string, file io.Reader, fileSize int64, in readInput, l tools.Limits, m tools.Masker) (tools.Result, uint64, error) {
	names := mention.FromContext(ctx)
	digest := xxhash.New()
	br := bufio.NewReaderSize(io.TeeReader(file, digest), 64<<10)
	head, _ := br.Peek(binarySniffBytes)
	if img := sniffImage(head); img != "" {
		return imageTooLarge(display, img, fileSize), 0, nil
	}
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return tools.ErrorIn(names, "%s is UTF-16 text of %s, too large to decode in one read (over %d bytes); read a part of it with {{bash}}, e.g. iconv -f UTF-16 -t UTF-8 %s | sed -n '1,%dp'.", display, humanBytes(fileSize), ReadStreamBytes, shellQuote(display), l.ReadLines), 0, nil
	}
	if bytes.IndexByte(head, 0) >= 0 || binarySniff(head) {
		return binaryRefusal(binaryKind(head), fileSize, names), 0, nil
	}
	var notes []string
	if bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}) {
		br.Discard(3)
		notes = append(notes, "UTF-8 BOM stripped")
	}
	w := newReadWindow(display, in.Offset, in.Limit, l)
	w.names = names
	w.mask = m
	// Enough of a line to show what read shows of it: ReadLineChars
	// characters of up to 4 bytes.
	keep := 4*l.ReadLineChars + utf8.UTFMax
	var (
		line          []byte // the current line's start, up to keep bytes
		size, chars   int    // the current line's length in bytes and characters so far
		last          byte   // the byte before the current chunk
		total, masked int
		crlf, invalid bool
		open          = true // the window takes more lines
		keys          secrets.KeyBlockTracker
	)
	for reads := 1; ; reads++ {
		chunk, err := br.ReadSlice('\n')
		if len(line) < keep {
			line = append(line, chunk[:min(len(chunk), keep-len(line))]...)
		}
		size += len(chunk)
		if open && total+1 >= w.offset {
			chars += runeStarts(chunk)
		}
		if reads%256 == 0 && ctx.Err() != nil {
			return tools.Result{}, 0, ctx.Err()
		}
		if err == bufio.ErrBufferFull {
			last = chunk[len(chunk)-1]
			continue
		}
		if size > 0 {
			total++
			ending := lineEnding(chunk, last)
			crlf = crlf || ending == 2
			text, whole := line, len(line) == size
			if whole {
				text = line[:size-ending]
			} else {
				text = completeRunes(text)
			}
			body := keys.Next(text)
			if body {
				masked++
			}
			if open && total >= w.offset {
				shown, n, c := string(text), size-ending, chars-ending
				switch {
				case body:
					shown, n, c = keyLineMask, len(keyLineMask), 0
				case !utf8.ValidString(shown):
					invalid = true
					shown = strings.ToValidUTF8(shown, "\uFFFD")
				}
				if whole {
					c = 0 // shown is all of it: add counts it
				}
				open = w.add(total, shown, n, c)
			}
			line, size, chars = line[:0], 0, 0
		}
		last = 0
		if err == io.EOF {
			break
		}
		if err != nil {
			return tools.Errorf("cannot read %s: %v", display, err), 0, nil
		}
	}
	if invalid {
		notes = append(notes, "not valid UTF-8: invalid bytes are shown as U+FFFD")
	}
	res := w.result(total, crlf, notes)
	addKeyRedactions(&res, masked)
	return res, digest.Sum64(), nil
}

// lineEnding is the length of the line ending that closes chunk, the
// line's last piece: 1 for "\n", 2 for "\r\n" (its "\r" may have ended
// the piece before, last), 0 for none (the file's last line).
func lineEnding(chunk []byte, last byte) int {
	switch n := len(chunk); {
	case n == 0 || chunk[n-1] != '\n':
		return 0
	case n >= 2 && chunk[n-2] == '\r', n == 1 && last == '\r':
		return 2
	}
	return 1
}

// completeRunes drops a character cut off at the end of b.
func completeRunes(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// runeStarts counts the bytes of b that start a character (in valid
// UTF-8, its characters).
func runeStarts(b []byte) int {
	n := 0
	for _, c := range b {
		if c&0xC0 != 0x80 {
			n++
		}
	}
	return n
}

// imageTooLarge refuses an image over ReadMaxImage. Exact bytes: rounded,
// a file just over the limit reads as the limit itself.
func imageTooLarge(display, img string, size int64) tools.Result {
	return tools.Errorf("%s is an image (%s) of %d bytes (%s), over the image limit of %d bytes; not read.", display, img, size, humanBytes(size), ReadMaxImage)
}

// binaryRefusal is read's answer for a binary file.
func binaryRefusal(kind string, size int64, names mention.Prefix) tools.Result {
	return tools.ErrorIn(names, "binary file (%s, %s); not read. Use {{bash}} with a suitable tool (e.g. xxd, file, strings) if you must inspect it.", kind, humanBytes(size))
}
