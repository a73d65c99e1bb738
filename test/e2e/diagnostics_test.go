package e2e

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// languageServer is the test editor's side of tools/diagnostics: one error
// per line of the file on disk that contains "BROKEN", and a warning that is
// always there.
type languageServer struct {
	mu        sync.Mutex
	asked     []map[string]any // params of each request
	block     bool             // never answer the request made after a change
	cancelled chan struct{}    // closed when a blocked request is cancelled
}

func (l *languageServer) answer(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != "tools/diagnostics" {
		return nil, nil
	}
	var p map[string]any
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.asked = append(l.asked, p)
	l.mu.Unlock()
	if l.block && p["waitMs"].(float64) > 0 {
		<-ctx.Done()
		close(l.cancelled)
		return nil, ctx.Err()
	}
	var items []any
	for _, u := range p["uris"].([]any) {
		parsed, err := url.Parse(u.(string))
		if err != nil {
			return nil, err
		}
		ds := []any{map[string]any{"range": lspRange(0, 0), "severity": 2, "source": "vet", "message": "package comment missing"}}
		text, _ := os.ReadFile(parsed.Path)
		for i, line := range strings.Split(string(text), "\n") {
			if c := strings.Index(line, "BROKEN"); c >= 0 {
				ds = append(ds, map[string]any{"range": lspRange(i, c), "severity": 1, "source": "compiler", "code": "UndeclaredName", "message": "undefined: BROKEN"})
			}
		}
		items = append(items, map[string]any{"uri": u, "diagnostics": ds})
	}
	return map[string]any{"items": items}, nil
}

func lspRange(line, char int) map[string]any {
	pos := map[string]any{"line": line, "character": char}
	return map[string]any{"start": pos, "end": pos}
}

func (l *languageServer) requests() []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]map[string]any(nil), l.asked...)
}

func startWithDiagnostics(t *testing.T, declare bool, ls *languageServer) (*harness.Client, context.Context) {
	t.Helper()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
	c := harness.Start(t, harness.Options{Root: ws})
	c.OnRequest = ls.answer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	params := bypass()
	params["capabilities"] = map[string]any{"experimental": map[string]any{"agentls": map[string]any{"diagnostics": declare}}}
	c.Initialize(ctx, params)
	return c, ctx
}

func TestEditTellsTheModelWhatTheEditorNowReports(t *testing.T) {
	t.Parallel()
	ls := &languageServer{}
	c, ctx := startWithDiagnostics(t, true, ls)
	c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	r := c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "edits": []any{map[string]any{"oldText": "func A() {}", "newText": "func A() { BROKEN() }"}}})
	checkText(t, r, []string{"Edited a.go: 1 replacement, line 3.\nThe editor reports new problems in a.go:\n  L3:12 error: undefined: BROKEN (compiler)"},
		[]string{"package comment missing"}, nil) // there before the edit: not news

	asked := ls.requests()
	if len(asked) != 2 {
		t.Fatalf("%d tools/diagnostics requests, want a baseline and one after the change: %v", len(asked), asked)
	}
	for i, wantWait := range []float64{0, 1500} {
		p := asked[i]
		uris, _ := p["uris"].([]any)
		if p["callId"] != r.CallID || p["tool"] != "edit" || p["waitMs"] != wantWait || len(uris) != 1 || !strings.HasSuffix(uris[0].(string), "/a.go") {
			t.Fatalf("request %d = %v, want callId %s, tool edit, waitMs %v, the file's URI", i, p, r.CallID, wantWait)
		}
	}
	d, _ := r.Details["diagnostics"].(map[string]any)
	if d == nil || d["total"] != float64(2) || len(d["new"].([]any)) != 1 {
		t.Fatalf("details.diagnostics = %v, want 1 new of 2", r.Details["diagnostics"])
	}
}

func TestClientsWithoutTheCapabilityAreNotAsked(t *testing.T) {
	t.Parallel()
	ls := &languageServer{}
	c, ctx := startWithDiagnostics(t, false, ls)
	c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	r := c.CallTool(ctx, "write", map[string]any{"path": "a.go", "content": "BROKEN\n"})
	checkText(t, r, []string{"Replaced a.go: 1 line, 7 bytes (was 3 lines)."}, []string{"problems"}, nil)
	if n := len(ls.requests()); n != 0 {
		t.Fatalf("a client without the diagnostics capability got %d tools/diagnostics requests", n)
	}
}

func TestCancellingTheCallCancelsTheDiagnosticsRequest(t *testing.T) {
	t.Parallel()
	ls := &languageServer{block: true, cancelled: make(chan struct{})}
	c, ctx := startWithDiagnostics(t, true, ls)
	c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	callCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.TryCallTool(callCtx, "edit", map[string]any{"path": "a.go", "edits": []any{map[string]any{"oldText": "package a", "newText": "package b"}}})
		done <- err
	}()
	deadline := time.After(10 * time.Second)
	for len(ls.requests()) < 2 {
		select {
		case <-deadline:
			t.Fatal("no tools/diagnostics request after the change")
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	select {
	case <-ls.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the client's tools/diagnostics request was not cancelled with the call")
	}
	if err := <-done; err == nil {
		t.Fatal("the cancelled call did not fail")
	}
	// The edit itself stands: the file was written before the question.
	r := c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	if !strings.Contains(r.Text(), "package b") {
		t.Fatalf("read after the cancelled call = %q, want the edit written", r.Text())
	}
}
