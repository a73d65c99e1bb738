package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Exactly one of commit and cancel wins, and a batch that committed once
// still lets no call commit after the cancel.
func TestCommitGate(t *testing.T) {
	t.Run("no gate: the context decides", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		if err := MayCommit(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := MayCommit(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("after cancel: %v", err)
		}
	})
	t.Run("cancel first: no commit", func(t *testing.T) {
		g := &CommitGate{}
		ctx := WithCommitGate(context.Background(), g)
		if !g.Cancel() {
			t.Fatal("Cancel of an open gate reported a commit")
		}
		if err := MayCommit(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("commit after cancel: %v", err)
		}
		if !g.Cancel() {
			t.Fatal("a second Cancel changed its answer")
		}
	})
	t.Run("commit first: cancel must wait for the result", func(t *testing.T) {
		g := &CommitGate{}
		ctx, cancel := context.WithCancel(WithCommitGate(context.Background(), g))
		if err := MayCommit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := MayCommit(ctx); err != nil {
			t.Fatalf("a second call of the batch: %v", err)
		}
		if g.Cancel() {
			t.Fatal("Cancel after a commit claimed nothing was committed")
		}
		cancel()
		if err := MayCommit(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("a batch call committing after the cancel: %v", err)
		}
	})
	t.Run("context cancelled before the gate: no commit", func(t *testing.T) {
		g := &CommitGate{}
		ctx, cancel := context.WithCancel(WithCommitGate(context.Background(), g))
		cancel()
		if err := MayCommit(ctx); err == nil {
			t.Fatal("committed on a cancelled context")
		}
		if !g.Cancel() {
			t.Fatal("the gate recorded a commit")
		}
	})
}

// A write to a new nested path cancelled at its commit leaves nothing: not
// the file, and not the directories it made for it; a directory that
// existed, or that got other content meanwhile, stays.
func TestCancelledCreateRemovesTheDirectoriesItMade(t *testing.T) {
	x, dir := newLocalExecutor(t, map[string]string{"keep.txt": "k\n"}, nil)
	if err := os.MkdirAll(filepath.Join(dir, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	g := &CommitGate{}
	g.Cancel() // the client cancelled before the rename
	ctx := WithCommitGate(context.Background(), g)
	r := x.Call(ctx, Request{Name: "write", Arguments: json.RawMessage(`{"path":"old/new/deeper/f.txt","content":"x\n"}`)}, nil)
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
