package editguard

import (
	"crypto/sha256"
	"os"
	"strings"

	"github.com/agentls/agentls/internal/ops"
)

// The event kinds Observe understands (internal/watch's Kind values).
const (
	KindCreated = "created"
	KindChanged = "changed"
	KindDeleted = "deleted"
)

// Observe takes a watcher event for p. It returns readStale=true when p has
// a stamp and the event means the content the model read is no longer on
// disk; ignore=true when there is nothing to tell anyone: p has no stamp,
// the event is our own write (its stat fingerprint equals the stamp), or
// the content is unchanged (a touch).
//
// A "deleted" p may be a directory: stamps below it lose the fast path.
// Observe stats p and, when the fingerprint moved, reads it; it is meant
// for the watcher goroutine, not for hot paths.
func (g *Guard) Observe(p ops.Path, kind string) (readStale bool, ignore bool) {
	k := key(p)
	g.mu.Lock()
	if kind == KindDeleted {
		prefix := k + string(os.PathSeparator)
		for sk, st := range g.stamps {
			if strings.HasPrefix(sk, prefix) {
				st.dirty = true
			}
		}
	}
	st := g.stamps[k]
	if st == nil {
		g.mu.Unlock()
		return false, true
	}
	if q := g.queues[k]; q != nil && q.held {
		// A write of ours is in flight and will replace the stamp; judging
		// now would call our own write external. unlock marks the stamp
		// dirty, so the next Check stats once.
		q.sawEvent = true
		g.mu.Unlock()
		return false, true
	}
	snap := *st
	g.mu.Unlock()

	fi, err := g.fsys.Stat(p)
	if err != nil {
		g.setDirty(k, st)
		return true, false // gone: what the model read is not on disk
	}
	fp := FingerprintOf(fi)
	if fp == snap.FP {
		if snap.Stale {
			return true, false
		}
		return false, true // ours, or nothing that matters happened
	}
	data, err := g.fsys.ReadFile(p)
	if err != nil {
		g.setDirty(k, st)
		return true, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stamps[k] != st {
		return false, true // re-read or rewritten meanwhile: the new stamp is current
	}
	if sha256.Sum256(data) == snap.Hash {
		st.FP, st.Stale, st.StaleReason, st.dirty = fp, false, "", false
		return false, true
	}
	// The reason is left alone: a bash command may have named itself.
	st.Stale = true
	return true, false
}

func (g *Guard) setDirty(k string, st *Stamp) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stamps[k] == st {
		st.dirty = true
	}
}

// SetWatched(true) enables the fast path: while the watcher is healthy,
// covers p (see SetCoverage) and no unexplained event arrived for p since
// its stamp, Check costs no syscall. SetWatched(false) (degraded watcher)
// makes every Check stat. Turning it on again re-verifies every stamp by
// stat once, since events may have been missed meanwhile.
func (g *Guard) SetWatched(healthy bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if healthy && !g.watched {
		for _, st := range g.stamps {
			st.dirty = true
		}
	}
	g.watched = healthy
}

// SetCoverage sets the function that says whether a watcher would report a
// change to p (its directory is watched, the watcher is not degraded or
// rescanning). Without one the fast path never applies: a file in an
// unwatched directory (node_modules) changes silently.
func (g *Guard) SetCoverage(covers func(p ops.Path) bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.covers = covers
}

// RecheckAll stats every stamp after an overflow rescan (events were lost):
// a changed fingerprint marks the stamp stale (Check still lets a touch
// through by hash), an unchanged one is trusted again.
func (g *Guard) RecheckAll() {
	g.mu.Lock()
	type entry struct {
		k  string
		st *Stamp
		fp Fingerprint
	}
	entries := make([]entry, 0, len(g.stamps))
	for k, st := range g.stamps {
		entries = append(entries, entry{k, st, st.FP})
	}
	g.mu.Unlock()
	for _, e := range entries {
		p, err := g.fsys.Resolve(e.k)
		changed := err != nil
		if err == nil {
			fi, err := g.fsys.Stat(p)
			changed = err != nil || FingerprintOf(fi) != e.fp
		}
		g.mu.Lock()
		if g.stamps[e.k] == e.st && e.st.FP == e.fp {
			if changed {
				e.st.Stale = true
			} else {
				e.st.dirty = false
			}
		}
		g.mu.Unlock()
	}
}
