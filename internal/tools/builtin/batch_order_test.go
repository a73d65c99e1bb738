package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/tools"
)

// In a batch, a call that changes a file waits for the concurrency-safe
// calls before it: [read a, edit a] must find the read's stamp, every
// time, and [edit a, read a] must read the edited text.
func TestBatchKeepsReadsAndEditsInOrder(t *testing.T) {
	for i := range 30 {
		name := fmt.Sprintf("f%d.txt", i)
		x, _ := newLocalExecutor(t, map[string]string{name: "old\n"}, nil)
		req := func(tool, args string) tools.Request {
			return tools.Request{Name: tool, Arguments: json.RawMessage(args)}
		}
		res := x.Batch(context.Background(), []tools.Request{
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
