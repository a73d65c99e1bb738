package tools

import (
	"testing"
)

func TestGeneratedCallIDsNeverRepeatARunningOne(t *testing.T) {
	var x Executor
	// A call the client named "call-2" is running; a batch names "call-1"
	// and leaves two ids to generate.
	releaseRunning := x.claimIDs([]Request{{CallID: "call-2"}})
	batch := []Request{{CallID: "call-1"}, {}, {CallID: "call-4"}, {}}
	releaseBatch := x.claimIDs(batch)
	seen := map[string]bool{"call-2": true}
	for i, r := range batch {
		if r.CallID == "" || seen[r.CallID] {
			t.Fatalf("call %d got callId %q; ids so far %v", i, r.CallID, seen)
		}
		seen[r.CallID] = true
	}
	releaseBatch()
	releaseRunning()
	if len(x.running) != 0 {
		t.Errorf("ids still counted as running after release: %v", x.running)
	}
}
