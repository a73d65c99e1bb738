package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// In a batch, a call that changes a file waits for the concurrency-safe
// calls before it: [read a, edit a] must find the read's stamp, every
// time, and [edit a, read a] must read the edited text.
func TestBatchKeepsReadsAndEditsInOrder(t *testing.T) {
	for i := range 30 {
		name := fmt.Sprintf("f%d.txt", i)
		x, _ := newLocalExecutor(t, map[string]string{name: "old\n"}, nil)
		req := func(tool, args string) Request { return Request{Name: tool, Arguments: json.RawMessage(args)} }
		res := x.Batch(context.Background(), []Request{
			req("read", fmt.Sprintf(`{"path":%q}`, name)),
			req("edit", fmt.Sprintf(`{"path":%q,"edits":[{"oldText":"old","newText":"new"}]}`, name)),
			req("read", fmt.Sprintf(`{"path":%q}`, name)),
		}, nil)
		if res[1].IsError {
			t.Fatalf("run %d: the edit after a read in the same batch failed: %s", i, res[1].TextOf())
		}
		if !strings.Contains(res[2].TextOf(), "new") {
			t.Fatalf("run %d: the read after the edit saw %q", i, res[2].TextOf())
		}
	}
}

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
