package tools

import (
	"context"
	"errors"
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
