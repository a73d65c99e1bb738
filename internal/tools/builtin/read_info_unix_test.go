//go:build unix

package builtin

import (
	"io/fs"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/tools"
)

// statCounter is an FS that counts its Stat calls.
type statCounter struct {
	ops.FS
	stats atomic.Int32
}

func (s *statCounter) Stat(p ops.Path) (fs.FileInfo, error) {
	s.stats.Add(1)
	return s.FS.Stat(p)
}

// TestReadOpensOnce: a read is stamped from the FileInfo of the descriptor
// it read (no stat beside the open, which could fingerprint a newer
// version than the one shown), and a FIFO is refused at once instead of
// hanging the call in open.
func TestReadOpensOnce(t *testing.T) {
	x, dir := newTestExecutor(t, map[string][]byte{"a.txt": []byte("alpha\nbeta\n")})
	fsys := &statCounter{FS: x.Env.FS}
	x.Env.FS = fsys
	guard := editguard.New(fsys)
	x.Env.Guard = guard
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	tests := []struct {
		name, args, path string
		wantErr          string // "" = success, and a stamp
	}{
		{"file", `{"path":"a.txt"}`, "a.txt", ""},
		{"fifo", `{"path":"pipe"}`, "pipe", "not a regular file"},
		{"directory", `{"path":"."}`, ".", "is a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys.stats.Store(0)
			done := make(chan tools.Result, 1) // buffered: the goroutine never blocks on send
			go func() { done <- call(t, x, "read", tc.args) }()
			var r tools.Result
			select {
			case r = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("read blocked") // the goroutine stays; the test binary fails anyway
			}
			if got := r.TextOf(); r.IsError != (tc.wantErr != "") || !strings.Contains(got, tc.wantErr) {
				t.Fatalf("read = %q (isError %v), want %q", got, r.IsError, tc.wantErr)
			}
			if n := fsys.stats.Load(); tc.wantErr == "" && n != 0 {
				t.Errorf("read made %d stats beside its open", n)
			}
			p, err := fsys.Resolve(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if got := guard.Has(p); got != (tc.wantErr == "") {
				t.Errorf("stamped = %v, want %v", got, tc.wantErr == "")
			}
		})
	}
}
