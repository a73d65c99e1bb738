//go:build unix

package tools

import (
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/ops"
)

// infoRec records which stamp method the read tool used.
type infoRec struct {
	recorder
	sizes []int64
}

func (r *infoRec) RecordReadInfo(p ops.Path, fi fs.FileInfo, content []byte, from, to int) {
	r.sizes = append(r.sizes, fi.Size())
	r.RecordRead(p, content, from, to)
}

// TestReadOpensOnce: the read stamp gets the FileInfo of the descriptor
// read (no second stat), and a FIFO is refused at once instead of hanging
// the call in open.
func TestReadOpensOnce(t *testing.T) {
	x, _, dir := newTestExecutor(t, map[string][]byte{"a.txt": []byte("alpha\nbeta\n")})
	rec := &infoRec{}
	x.Env.Stamps = rec
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	tests := []struct {
		name, args string
		wantErr    string // "" = success
		wantSizes  []int64
	}{
		{"file", `{"path":"a.txt"}`, "", []int64{11}},
		{"fifo", `{"path":"pipe"}`, "not a regular file", nil},
		{"directory", `{"path":"."}`, "is a directory", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.sizes = nil
			done := make(chan Result, 1) // buffered: the goroutine never blocks on send
			go func() { done <- call(t, x, "read", tc.args) }()
			var r Result
			select {
			case r = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("read blocked") // the goroutine stays; the test binary fails anyway
			}
			if got := r.TextOf(); r.IsError != (tc.wantErr != "") || !strings.Contains(got, tc.wantErr) {
				t.Fatalf("read = %q (isError %v), want %q", got, r.IsError, tc.wantErr)
			}
			if len(rec.sizes) != len(tc.wantSizes) || len(tc.wantSizes) > 0 && rec.sizes[0] != tc.wantSizes[0] {
				t.Errorf("RecordReadInfo sizes = %v, want %v", rec.sizes, tc.wantSizes)
			}
		})
	}
}
