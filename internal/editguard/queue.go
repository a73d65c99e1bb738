package editguard

import (
	"context"

	"github.com/agentls/agentls/internal/ops"
)

// queue is a FIFO lock: waiters are served in arrival order (sync.Mutex
// makes no such promise, and edits of one file must apply in call order).
type queue struct {
	waiters []chan struct{}
	held    bool
	refs    int
	// deferred is a watcher event Observe put off while the file was held
	// (a write of ours may be what it reports); the last unlock hands it
	// to the guard's OnDeferred, so a change made while a refused edit
	// held the file is still told.
	deferred *deferredEvent
}

type deferredEvent struct {
	p    ops.Path
	kind string
}

// OnDeferred sets what receives the watcher events Observe put off while
// a file's write lock was held: f gets them when the lock is let go (on
// the unlocking goroutine) and should judge them with Observe again. Set
// once, before use.
func (g *Guard) OnDeferred(f func(p ops.Path, kind string)) { g.onDeferred = f }

// Lock waits for p's turn in its write queue and returns the unlock
// function. Different files never wait for each other.
func (g *Guard) Lock(ctx context.Context, p ops.Path) (func(), error) {
	k := key(p)
	g.mu.Lock()
	q := g.queues[k]
	if q == nil {
		q = &queue{}
		g.queues[k] = q
	}
	q.refs++
	if !q.held {
		q.held = true
		g.mu.Unlock()
		return func() { g.unlock(k, q) }, nil
	}
	ch := make(chan struct{})
	q.waiters = append(q.waiters, ch)
	g.mu.Unlock()
	select {
	case <-ch:
		return func() { g.unlock(k, q) }, nil
	case <-ctx.Done():
		g.mu.Lock()
		for i, w := range q.waiters {
			if w == ch {
				q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
				q.refs--
				g.mu.Unlock()
				return nil, ctx.Err()
			}
		}
		g.mu.Unlock()
		// The turn was handed over as ctx ended: pass it on.
		g.unlock(k, q)
		return nil, ctx.Err()
	}
}

func (g *Guard) unlock(k string, q *queue) {
	g.mu.Lock()
	q.refs--
	if len(q.waiters) > 0 {
		next := q.waiters[0]
		q.waiters = q.waiters[1:]
		close(next)
		g.mu.Unlock()
		return
	}
	q.held = false
	if q.refs == 0 {
		delete(g.queues, k)
	}
	ev := q.deferred
	q.deferred = nil
	g.mu.Unlock()
	if ev != nil && g.onDeferred != nil {
		g.onDeferred(ev.p, ev.kind)
	}
}
