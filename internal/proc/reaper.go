package proc

import (
	"sync"
	"time"
)

// Reaper remembers the process groups of commands whose background children outlived
// the shell (and of commands still running), so the server can kill them all at
// shutdown. The zero value is ready to use; it is safe for concurrent use.
type Reaper struct {
	// Watchdog, when set, is armed before a command starts (Run).
	Watchdog *Watchdog

	mu     sync.Mutex
	groups map[int]struct{}
}

// arm arms the Watchdog, if any, before a command starts.
func (r *Reaper) arm() {
	if r != nil {
		r.Watchdog.Arm()
	}
}

func (r *Reaper) add(pgid int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.groups == nil {
		r.groups = make(map[int]struct{})
	}
	r.groups[pgid] = struct{}{}
}

func (r *Reaper) remove(pgid int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.groups, pgid)
}

// Tracked returns how many process groups still have live members.
func (r *Reaper) Tracked() int {
	return len(r.live())
}

// live drops groups that have no live member (so a recycled id is never signalled) and
// returns the rest.
func (r *Reaper) live() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for g := range r.groups {
		if groupAlive(g) {
			out = append(out, g)
		} else {
			delete(r.groups, g)
		}
	}
	return out
}

// KillAll stops every tracked group and, when this process is the
// subreaper (AdoptOrphans), every adopted process still running, in one
// phase: SIGTERM and SIGCONT to all, one KillGrace for all of them, then
// SIGKILL to what is left. It returns when all are gone or a short while
// after SIGKILL.
func (r *Reaper) KillAll() {
	killPhase(func() []victim {
		var out []victim
		for _, g := range r.live() {
			out = append(out, victim{id: g, group: true})
		}
		return append(out, adoptedVictims()...)
	})
	r.live()
}

// waitGone polls until no group in groups has a live member or d has passed.
func waitGone(groups []int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		alive := false
		for _, g := range groups {
			if groupAlive(g) {
				alive = true
				break
			}
		}
		if !alive {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollInterval)
	}
}
