package tools

import (
	"context"
	"sync/atomic"
)

// CommitGate settles the race between a call making its change visible
// (renaming the new file into place, sending an edit to the editor) and
// the client cancelling it. docs/protocol.md promises that a cancelled call
// (-32800) leaves its work undone or stopped, so exactly one side wins:
// either the cancel comes first and the call changes nothing, or the
// commit does and the caller reports the call's real result instead of
// -32800. One gate serves one request (a batch shares it).
type CommitGate struct {
	state atomic.Int32
}

const (
	gateOpen int32 = iota
	gateCommitted
	gateCancelled
)

// Cancel closes the gate to commits. It reports false when a commit came
// first: the change is made, and the caller must wait for the result.
func (g *CommitGate) Cancel() bool {
	return g.state.CompareAndSwap(gateOpen, gateCancelled) || g.state.Load() == gateCancelled
}

type gateKey struct{}

// WithCommitGate returns ctx carrying g for the calls run under it.
func WithCommitGate(ctx context.Context, g *CommitGate) context.Context {
	return context.WithValue(ctx, gateKey{}, g)
}

type noticeKey struct{}

// WithNotice has the result of the call made with ctx carry note after
// what the tool wrote, inside the result's budget (a host's cap included),
// as the executor's own notes are: the server's news for the model (roots
// it skipped) never makes a result overrun the cap the host cuts at.
func WithNotice(ctx context.Context, note string) context.Context {
	return context.WithValue(ctx, noticeKey{}, note)
}

// MayCommit is asked by a tool at the moment its change would become
// visible; an error (the context's) means it must change nothing.
func MayCommit(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g, _ := ctx.Value(gateKey{}).(*CommitGate)
	if g == nil {
		return nil
	}
	if g.state.CompareAndSwap(gateOpen, gateCommitted) || g.state.Load() == gateCommitted {
		return nil
	}
	return context.Canceled
}
