package session

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/agentls/agentls/internal/ops"
)

// Temp files of crashed writes are removed at start, in the background,
// and a temp file of this process (a write in progress) never is.
func TestStartRemovesCrashLeftovers(t *testing.T) {
	dir := t.TempDir()
	// A crashed write: its process has exited.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "sub", ops.TempPrefix+"a.go-"+strconv.Itoa(dead.ProcessState.Pid())+"-00aa")
	ours := filepath.Join(dir, ops.TempPrefix+"b.go-"+strconv.Itoa(os.Getpid())+"-00bb")
	os.MkdirAll(filepath.Dir(stale), 0o755)
	for _, p := range []string{stale, ours} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(Options{Folders: []ops.FolderSpec{{Path: dir}}, Log: slog.New(slog.DiscardHandler), NoUpstream: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close() // waits for a background clean-up
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("leftover still there after Close: %v", err)
	}
	if _, err := os.Stat(ours); err != nil {
		t.Errorf("this process's temp file was removed: %v", err)
	}
}
