package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

func TestEditGuardThroughTheProtocol(t *testing.T) {
	c, ws, ctx := start(t, map[string]string{"a.txt": "Hello, world!\n", "b.txt": "one\ntwo\n"})
	a := filepath.Join(ws, "a.txt")
	edit := map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "world", "newText": "testing"}}}

	r := c.CallTool(ctx, "edit", edit)
	if !r.IsError || !strings.Contains(r.Text(), "read a.txt first") {
		t.Fatalf("edit without read: %+v", r)
	}
	if got := readFile(t, a); got != "Hello, world!\n" {
		t.Fatalf("file changed: %q", got)
	}

	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	r = c.CallTool(ctx, "edit", edit)
	if r.IsError || !strings.Contains(r.Text(), "Edited a.txt: 1 replacement, line 1.") {
		t.Fatalf("edit after read: %s", r.Text())
	}
	if got := readFile(t, a); got != "Hello, testing!\n" {
		t.Fatalf("content = %q", got)
	}
	// The details notification arrived before the reply, with TextEdits and a diff.
	n, ok := c.WaitNote(time.Second, func(n harness.Note) bool { return n.Method == "tools/details" })
	if !ok || !strings.Contains(string(n.Params), `"kind":"edit"`) || !strings.Contains(string(n.Params), `"newText":"testing"`) || !strings.Contains(string(n.Params), "@@ -1 +1 @@") {
		t.Fatalf("tools/details = %s", n.Params)
	}

	// A chain of edits needs no re-read.
	for i, w := range []string{"again", "more", "last"} {
		prev := []string{"testing", "again", "more"}[i]
		r = c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": prev, "newText": w}}})
		if r.IsError {
			t.Fatalf("chained edit %d: %s", i, r.Text())
		}
	}

	// touch only: the content is the same, so the edit goes through.
	future := time.Now().Add(2 * time.Second)
	os.Chtimes(a, future, future)
	r = c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "last", "newText": "touched"}}})
	if r.IsError {
		t.Fatalf("edit after touch: %s", r.Text())
	}

	// Another process rewrites the file: the edit is refused and the
	// external content is intact.
	os.WriteFile(a, []byte("Hello, touched!\nexternal line\n"), 0o644)
	r = c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "touched", "newText": "mine"}}})
	if !r.IsError || !strings.Contains(r.Text(), "a.txt changed since you read it") || !strings.Contains(r.Text(), "Read it again") {
		t.Fatalf("stale edit: %s", r.Text())
	}
	if got := readFile(t, a); got != "Hello, touched!\nexternal line\n" {
		t.Fatalf("external content lost: %q", got)
	}
}

func TestPartialReadAllowsEditingElsewhere(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 600; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	c, ws, ctx := start(t, map[string]string{"long.txt": b.String()})
	c.CallTool(ctx, "read", map[string]any{"path": "long.txt", "limit": 10})
	r := c.CallTool(ctx, "edit", map[string]any{"path": "long.txt", "edits": []any{map[string]any{"oldText": "line 500\n", "newText": "line five hundred\n"}}})
	if r.IsError {
		t.Fatalf("edit at line 500 after reading 1-10: %s", r.Text())
	}
	if !strings.Contains(readFile(t, filepath.Join(ws, "long.txt")), "line five hundred\nline 501\n") {
		t.Fatal("edit not applied")
	}
}

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

func TestWriteCreatesAndGuardsReplacement(t *testing.T) {
	c, ws, ctx := start(t, map[string]string{"exists.txt": "old\n"})
	r := c.CallTool(ctx, "write", map[string]any{"path": "new/dir/f.txt", "content": "a\nb\n"})
	if r.IsError || !strings.Contains(r.Text(), "Created new/dir/f.txt: 2 lines, 4 bytes.") {
		t.Fatalf("create: %s", r.Text())
	}
	if readFile(t, filepath.Join(ws, "new/dir/f.txt")) != "a\nb\n" {
		t.Fatal("content")
	}
	r = c.CallTool(ctx, "write", map[string]any{"path": "exists.txt", "content": "new\n"})
	if !r.IsError || !strings.Contains(r.Text(), "read exists.txt first") {
		t.Fatalf("replace without read: %s", r.Text())
	}
	c.CallTool(ctx, "read", map[string]any{"path": "exists.txt"})
	r = c.CallTool(ctx, "write", map[string]any{"path": "exists.txt", "content": "new\n"})
	if r.IsError || readFile(t, filepath.Join(ws, "exists.txt")) != "new\n" {
		t.Fatalf("replace after read: %s", r.Text())
	}
}
