package jobs

import (
	"fmt"
	"os"
	"strings"

	"github.com/agentls/agentls/internal/spill"
)

// spillNoteRoom is kept free at the end of a full spill file for the note
// saying it was cut.
const spillNoteRoom = 256

// ring keeps the last lines of a job's cleaned output within maxLines and
// maxBytes (one newline per line counted), numbering lines from 1. When it
// first lets a line go it opens a spill file with every line so far, and
// from then on appends each line to it, so the file always holds the whole
// output (up to spill.MaxFileBytes).
type ring struct {
	maxLines, maxBytes int
	lines              []string // grows to maxLines, then wraps
	start, n, bytes    int
	total              int // lines seen; the ring holds total-n+1 … total

	dir      *spill.Dir
	name     string
	f        *os.File
	written  int64
	cutBytes int64 // bytes not saved past the cap
	spillErr error
}

// first is the number of the oldest line held (total+1 when empty).
func (r *ring) first() int { return r.total - r.n + 1 }

// line returns line number num, which must be held.
func (r *ring) line(num int) string {
	return r.lines[(r.start+num-r.first())%r.maxLines]
}

func (r *ring) add(text string) {
	text = strings.Clone(text)
	if r.n == r.maxLines {
		r.spillAll()
		r.pop()
	}
	if i := (r.start + r.n) % r.maxLines; i == len(r.lines) {
		r.lines = append(r.lines, text)
	} else {
		r.lines[i] = text
	}
	r.n++
	r.total++
	r.bytes += len(text) + 1
	if r.f != nil {
		r.save(text)
	}
	for r.n > 1 && r.bytes > r.maxBytes {
		r.spillAll()
		r.pop()
	}
}

func (r *ring) pop() {
	r.bytes -= len(r.lines[r.start]) + 1
	r.lines[r.start] = ""
	r.start = (r.start + 1) % r.maxLines
	r.n--
}

// spillAll opens the spill file the first time a line is about to be let
// go, writing every line held: until then the ring held them all.
func (r *ring) spillAll() {
	if r.f != nil || r.spillErr != nil {
		return
	}
	if r.dir == nil {
		r.spillErr = fmt.Errorf("no spill directory")
		return
	}
	f, err := r.dir.Create(r.name)
	if err != nil {
		r.spillErr = err
		return
	}
	r.f = f
	for num := r.first(); num <= r.total; num++ {
		r.save(r.line(num))
	}
}

func (r *ring) save(text string) {
	if r.spillErr != nil {
		return
	}
	need := int64(len(text) + 1)
	if r.cutBytes > 0 || r.written+need > spill.MaxFileBytes-spillNoteRoom {
		r.cutBytes += need
		return
	}
	n, err := r.f.WriteString(text + "\n")
	r.written += int64(n)
	if err != nil {
		r.spillErr = fmt.Errorf("write spill file %s: %w", r.f.Name(), err)
	}
}

// spillPath is the spill file's path, "" while there is none.
func (r *ring) spillPath() string {
	if r.f == nil {
		return ""
	}
	return r.f.Name()
}

// close ends the spill file, noting a cut; the file stays for reading.
func (r *ring) close() {
	if r.f == nil {
		return
	}
	if r.cutBytes > 0 && r.spillErr == nil {
		fmt.Fprintf(r.f, "[agentls: spill file cut at %d bytes; %d more bytes not saved]\n", r.written, r.cutBytes)
	}
	r.f.Close()
}
