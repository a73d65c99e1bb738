package proc

import "time"

// victim is a process group (group) or a single process to stop.
type victim struct {
	id    int
	group bool
}

// killPhase stops everything collect lists, in one phase: SIGTERM and
// SIGCONT (a stopped process acts on SIGTERM only once continued) to each
// as it first appears, one KillGrace for all of them together, then
// SIGKILL to what is left until collect lists nothing or killWait has
// passed. collect is asked again on every poll, so processes that appear
// meanwhile (children orphaned by the kill) join the same phase, and only
// what is still alive is ever signalled.
func killPhase(collect func() []victim) {
	signalled := map[victim]bool{}
	deadline := time.Now().Add(KillGrace)
	for {
		live := collect()
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		for _, v := range live {
			if !signalled[v] {
				signalled[v] = true
				termVictim(v)
			}
		}
		time.Sleep(pollInterval)
	}
	deadline = time.Now().Add(killWait)
	for {
		live := collect()
		if len(live) == 0 || time.Now().After(deadline) {
			return
		}
		for _, v := range live {
			killVictim(v)
		}
		time.Sleep(pollInterval)
	}
}
