package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/internal/tools"
)

// A write to a new nested path cancelled at its commit leaves nothing: not
// the file, and not the directories it made for it; a directory that
// existed, or that got other content meanwhile, stays.
func TestCancelledCreateRemovesTheDirectoriesItMade(t *testing.T) {
	x, dir := newLocalExecutor(t, map[string]string{"keep.txt": "k\n"}, nil)
	if err := os.MkdirAll(filepath.Join(dir, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	g := &tools.CommitGate{}
	g.Cancel() // the client cancelled before the rename
	ctx := tools.WithCommitGate(context.Background(), g)
	r := x.Call(ctx, tools.Request{Name: "write", Arguments: json.RawMessage(`{"path":"old/new/deeper/f.txt","content":"x\n"}`)}, nil)
	if !r.IsError {
		t.Fatalf("a write cancelled at its commit succeeded: %s", r.TextOf())
	}
	if _, err := os.Stat(filepath.Join(dir, "old", "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("old/new is left behind (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "old")); err != nil {
		t.Errorf("old, which existed before, is gone: %v", err)
	}
	// Without a cancel the same write creates them all.
	r = call(t, x, "write", `{"path":"old/new/deeper/f.txt","content":"x\n"}`)
	if r.IsError {
		t.Fatalf("write: %s", r.TextOf())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "old", "new", "deeper", "f.txt")); err != nil || string(b) != "x\n" {
		t.Fatalf("f.txt = %q, %v", b, err)
	}
}
