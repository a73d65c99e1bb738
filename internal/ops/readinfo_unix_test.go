//go:build unix

package ops_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/ops/opstest"
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
		data, fi, err := opstest.ReadFileInfo(l, p)
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

// A replace waits ReplaceLockWait at most for another process holding the
// file (a wedged agentls), then refuses as changed and writes nothing.
func TestLocalReplaceFileLockHeldElsewhere(t *testing.T) {
	w := newWorkspace(t)
	osPath := filepath.Join(w.root, "f.txt")
	if err := os.WriteFile(osPath, []byte("as read\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other, err := os.Open(osPath)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	l := newLocal(t, ops.FolderSpec{Path: w.root})
	start := time.Now()
	err = l.ReplaceFile(resolve(t, l, "f.txt"), []byte("new\n"), 0o644, []byte("as read\n"), nil)
	if waited := time.Since(start); !errors.Is(err, ops.ErrChanged) || !strings.Contains(err.Error(), "another process holds a lock on it") || waited < ops.ReplaceLockWait {
		t.Fatalf("ReplaceFile with the lock held elsewhere = %v after %v; want ErrChanged naming the other process after %v", err, waited, ops.ReplaceLockWait)
	}
	if got := readOS(t, osPath); got != "as read\n" {
		t.Errorf("the file holds %q, want it untouched", got)
	}
	if left := tempLeftovers(t, w.root); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// MayWrite follows the mode bits the kernel would check for this process;
// for root, the owner's bit (chmod a-w means "leave it").
func TestMayWrite(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		mode fs.FileMode
		want bool
	}{{0o644, true}, {0o444, false}, {0o200, true}, {0o066, false}} {
		p := filepath.Join(dir, fmt.Sprintf("f%o", c.mode))
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, c.mode)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		// Owned by this process's user: the owner's bit decides, root or not.
		if got := ops.MayWrite(fi); got != c.want {
			t.Errorf("mode %04o: MayWrite = %v, want %v", c.mode, got, c.want)
		}
	}
}
