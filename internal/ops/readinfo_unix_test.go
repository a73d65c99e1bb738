//go:build unix

package ops_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/ops"
)

// TestLocalReadFileInfoFIFO: a FIFO is reported without blocking (an open
// without O_NONBLOCK would wait for a writer forever) and nothing is read.
func TestLocalReadFileInfoFIFO(t *testing.T) {
	w := newWorkspace(t)
	l := newLocal(t, ops.FolderSpec{Path: w.root})
	if err := syscall.Mkfifo(filepath.Join(w.root, "pipe"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	p := resolve(t, l, "pipe")
	type res struct {
		data []byte
		fi   fs.FileInfo
		err  error
	}
	done := make(chan res, 1) // buffered: the goroutine never blocks on send
	go func() {
		data, fi, err := l.ReadFileInfo(p)
		done <- res{data, fi, err}
	}()
	select {
	case r := <-done:
		if r.err != nil || r.fi.Mode().Type() != fs.ModeNamedPipe || r.data != nil {
			t.Fatalf("ReadFileInfo(fifo) = %q, %v, %v; want nil data and a named-pipe FileInfo", r.data, r.fi, r.err)
		}
	case <-time.After(5 * time.Second):
		// Unblock the open so the goroutine ends.
		if f, err := os.OpenFile(filepath.Join(w.root, "pipe"), os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		<-done
		t.Fatal("ReadFileInfo blocked on a FIFO")
	}
}
