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
}

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
	defer g.mu.Unlock()
	q.refs--
	if len(q.waiters) > 0 {
		next := q.waiters[0]
		q.waiters = q.waiters[1:]
		close(next)
		return
	}
	q.held = false
	if q.refs == 0 {
		delete(g.queues, k)
	}
}
