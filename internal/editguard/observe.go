package editguard

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/agentls/agentls/internal/ops"
)

// The event kinds Observe understands (internal/watch's Kind values).
const (
	KindCreated = "created"
	KindChanged = "changed"
	KindDeleted = "deleted"
)

// Observe takes a watcher event for p. It returns the kind to report,
// readStale=true when p has a stamp and the event means the content the
// model read is no longer on disk, and ignore=true when there is nothing to
// tell anyone: p has no stamp, the event is our own write (its stat
// fingerprint equals the stamp), or the content is unchanged (a touch).
//
// The kind is the file's story, not the kernel's: a file the model read is
// "changed" when something replaced it (an editor's atomic save renames a
// new file over it: a create event), and "created" when it is there again
// after it was seen gone, whatever event shows it first.
//
// Observe stats p and, when the fingerprint moved, reads it; it is meant
// for the watcher goroutine, not for hot paths.
func (g *Guard) Observe(p ops.Path, kind string) (report string, readStale bool, ignore bool) {
	k := key(p)
	g.mu.Lock()
	st := g.stamps[k]
	if st == nil {
		g.mu.Unlock()
		return kind, false, true
	}
	if q := g.queues[k]; q != nil && q.held {
		// A write of ours may be in flight and will replace the stamp;
		// judging now would call our own write external. The event is
		// judged when the file is let go (OnDeferred): the call holding it
		// may as well be an edit refused for this very change.
		q.deferred = &deferredEvent{p, kind}
		g.mu.Unlock()
		return kind, false, true
	}
	snap := *st
	g.mu.Unlock()

	fi, err := g.fsys.Stat(p)
	if err != nil {
		g.mu.Lock()
		if g.stamps[k] == st {
			st.gone = true
		}
		g.mu.Unlock()
		return KindDeleted, true, false // what the model read is not on disk
	}
	// Back after it was seen gone: created, whichever event noticed it
	// first (the delete's own event may arrive after the new file).
	report = KindChanged
	if snap.gone {
		report = KindCreated
		g.mu.Lock()
		if g.stamps[k] == st {
			st.gone = false
		}
		g.mu.Unlock()
	}
	fp := FingerprintOf(fi)
	if fp == snap.FP {
		if snap.Stale {
			return report, true, false
		}
		return report, false, true // ours, or nothing that matters happened
	}
	data, err := g.fsys.ReadFile(p)
	if err != nil {
		return report, true, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stamps[k] != st {
		return report, false, true // re-read or rewritten meanwhile: the new stamp is current
	}
	if xxhash.Sum64(data) == snap.Hash {
		st.FP, st.Stale, st.StaleReason = fp, false, ""
		// Back with the content the model read: nothing to tell, unless
		// it was announced deleted; then its return must be too.
		return report, false, !snap.gone
	}
	// The reason is left alone: a bash command may have named itself.
	st.Stale = true
	return report, true, false
}

// StampedBelow returns the paths, relative to dir and slash-separated, of
// the files below dir that have stamps: a directory renamed or removed in
// one event (mv src lib) takes them with it.
func (g *Guard) StampedBelow(dir ops.Path) []string {
	prefix := key(dir) + string(filepath.Separator)
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for k := range g.stamps {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out = append(out, filepath.ToSlash(rest))
		}
	}
	slices.Sort(out)
	return out
}

// RecheckAll stats every stamp after an overflow rescan (events were lost):
// a changed fingerprint marks the stamp stale (Check still lets a touch
// through by hash), so the next edit names the change.
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
			}
		}
		g.mu.Unlock()
	}
}
