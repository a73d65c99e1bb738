package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

// 50 edits to distinct regions of one file, in one batch and as 50 parallel
// calls: every one is applied, none lost.
func TestConcurrentEditsOfOneFileLoseNothing(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "slot %02d: old\n", i)
	}
	c, ws, ctx := start(t, map[string]string{"batch.txt": b.String(), "par.txt": b.String()})
	c.CallTool(ctx, "read", map[string]any{"path": "batch.txt"})
	c.CallTool(ctx, "read", map[string]any{"path": "par.txt"})
	var calls []any
	for i := range 50 {
		calls = append(calls, map[string]any{"name": "edit", "arguments": map[string]any{"path": "batch.txt", "edits": []any{map[string]any{"oldText": fmt.Sprintf("slot %02d: old", i), "newText": fmt.Sprintf("slot %02d: new", i)}}}})
	}
	var out struct {
		Results []harness.Result `json:"results"`
	}
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &out); err != nil {
		t.Fatal(err)
	}
	for i, r := range out.Results {
		if r.IsError {
			t.Errorf("batch edit %d: %s", i, r.Text())
		}
	}
	errs := make(chan string, 50)
	for i := range 50 {
		go func() {
			r, err := c.TryCallTool(ctx, "edit", map[string]any{"path": "par.txt", "edits": []any{map[string]any{"oldText": fmt.Sprintf("slot %02d: old", i), "newText": fmt.Sprintf("slot %02d: new", i)}}})
			if err != nil {
				errs <- err.Error()
			} else if r.IsError {
				errs <- r.Text()
			} else {
				errs <- ""
			}
		}()
	}
	for range 50 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	for _, f := range []string{"batch.txt", "par.txt"} {
		got := readFile(t, filepath.Join(ws, f))
		if strings.Contains(got, "old") || strings.Count(got, ": new\n") != 50 {
			t.Errorf("%s lost updates:\n%s", f, got)
		}
	}
}
