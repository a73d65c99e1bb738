package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
	"go.lsp.dev/jsonrpc2"
)

// The editor's side of tools/diagnostics (docs/protocol.md): what an edit
// or write tells the model the editor now reports, and when it asks.

type diagReq struct {
	CallID string   `json:"callId"`
	Tool   string   `json:"tool"`
	URIs   []string `json:"uris"`
	WaitMs *int     `json:"waitMs"`
	at     time.Time
}

type diagClient struct {
	*harness.Client
	mu   sync.Mutex
	reqs []diagReq
}

func (d *diagClient) requests() []diagReq {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]diagReq(nil), d.reqs...)
}

// diagStart starts a session whose client declares the diagnostics
// capability (when declare) and answers tools/diagnostics with answer.
func diagStart(t *testing.T, ctx context.Context, ws string, declare bool, answer func(ctx context.Context, r diagReq) (any, error)) *diagClient {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: ws})
	d := &diagClient{Client: c}
	c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != "tools/diagnostics" {
			return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "no %s", method)
		}
		var r diagReq
		if err := json.Unmarshal(params, &r); err != nil {
			t.Errorf("tools/diagnostics params %s: %v", params, err)
		}
		r.at = time.Now()
		d.mu.Lock()
		d.reqs = append(d.reqs, r)
		d.mu.Unlock()
		return answer(ctx, r)
	}
	caps := map[string]any{}
	if declare {
		caps = map[string]any{"experimental": map[string]any{"agentls": map[string]any{"diagnostics": true}}}
	}
	c.Initialize(ctx, map[string]any{"capabilities": caps, "initializationOptions": map[string]any{"mode": "acceptEdits"}})
	return d
}

func diagItem(line, char, sev int, msg, source string, code any) map[string]any {
	d := map[string]any{"severity": sev, "message": msg, "range": map[string]any{
		"start": map[string]any{"line": line, "character": char}, "end": map[string]any{"line": line, "character": char + 3}}}
	if source != "" {
		d["source"] = source
	}
	if code != nil {
		d["code"] = code
	}
	return d
}

func diagItems(uris []string, diags []map[string]any) map[string]any {
	var items []map[string]any
	for i, u := range uris {
		ds := []map[string]any{}
		if i == 0 {
			ds = diags
		}
		items = append(items, map[string]any{"uri": u, "diagnostics": ds})
	}
	return map[string]any{"items": items}
}

func TestDiagnosticsNewProblems(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.go": "package a\n\nfunc f() {}\n"})
	baseline := []map[string]any{
		diagItem(0, 0, 1, "old problem", "compiler", nil),
		diagItem(1, 0, 2, "old warning", "vet", "W1"),
	}
	after := []map[string]any{
		diagItem(6, 0, 1, "old problem", "compiler", nil), // moved: not new
		diagItem(1, 0, 2, "old warning", "vet", "W2"),     // other code: new
		diagItem(2, 11, 1, "undefined: BROKEN", "compiler", nil),
		diagItem(3, 0, 3, "just information", "gopls", nil), // not an error or warning
		diagItem(4, 1, 4, "just a hint", "gopls", nil),
		diagItem(5, 2, 2, "no source here", "", nil),
	}
	d := diagStart(t, ctx, ws, true, func(ctx context.Context, r diagReq) (any, error) {
		if r.WaitMs != nil && *r.WaitMs == 0 {
			return diagItems(r.URIs, baseline), nil
		}
		return diagItems(r.URIs, after), nil
	})
	d.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	res := d.CallTool(ctx, "edit", map[string]any{"path": "a.go", "edits": []any{map[string]any{"oldText": "func f() {}", "newText": "func f() { BROKEN }"}}})
	if res.IsError {
		t.Fatalf("edit: %s", res.Text())
	}
	text := res.Text()
	wantContains(t, "edit text", text,
		"The editor reports new problems in a.go:",
		"  L3:12 error: undefined: BROKEN (compiler)",
		"  L2:1 warning: old warning (vet)",
		"  L6:3 warning: no source here")
	wantLacks(t, "edit text", text, "old problem", "just information", "just a hint", "no source here (")
	if body := readFile(t, filepath.Join(ws, "a.go")); !strings.Contains(body, "BROKEN") {
		t.Errorf("the edit did not stand: %q", body)
	}

	// A baseline (waitMs 0) and one after the change; docs/tools.md: "the
	// editor waits up to 1.5 s for them to catch up".
	reqs := d.requests()
	uri := fileURI(filepath.Join(ws, "a.go"))
	if len(reqs) != 2 {
		t.Fatalf("tools/diagnostics requests = %+v, want a baseline and one after the change", reqs)
	}
	for i, wait := range []int{0, 1500} {
		if r := reqs[i]; r.CallID != res.CallID || r.Tool != "edit" || len(r.URIs) != 1 || r.URIs[0] != uri || r.WaitMs == nil || *r.WaitMs != wait {
			t.Errorf("request %d = %+v, want callId %s, tool edit, uri %s, waitMs %d", i, r, res.CallID, uri, wait)
		}
	}
	dd, _ := res.Details["diagnostics"].(map[string]any)
	if n, _ := dd["new"].([]any); dd["uri"] != uri || len(n) != 3 || dd["total"] != float64(len(after)) {
		t.Errorf("details.diagnostics = %v, want uri %s and 3 new of the %d reported after the change", dd, uri, len(after))
	}
}

// A client that does not declare the capability is never asked. (Which
// calls ask, and the cut at ten problems: internal/tools/builtin
// diagnostics_test.go.)
func TestDiagnosticsNotAsked(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	d := diagStart(t, ctx, t.TempDir(), false, func(ctx context.Context, r diagReq) (any, error) {
		return diagItems(r.URIs, []map[string]any{diagItem(0, 0, 1, "boom", "x", nil)}), nil
	})
	res := d.CallTool(ctx, "write", map[string]any{"path": "b.txt", "content": "x\n"})
	if res.IsError || strings.Contains(res.Text(), "new problems") {
		t.Errorf("write: %s", res.Text())
	}
	if n := len(d.requests()); n != 0 {
		t.Errorf("%d tools/diagnostics requests to a client without the capability", n)
	}
}

func TestDiagnosticsUnansweredAndErrors(t *testing.T) {
	slow(t)
	t.Parallel()
	ctx := testCtx(t, 40*time.Second)
	// The editor holds the after-change request until it is cancelled
	// (or 15 s); cancelled is told when it was.
	hold := func(got, cancelled chan struct{}) func(ctx context.Context, r diagReq) (any, error) {
		return func(ctx context.Context, r diagReq) (any, error) {
			if *r.WaitMs == 0 {
				return diagItems(r.URIs, nil), nil
			}
			got <- struct{}{}
			select {
			case <-ctx.Done():
				cancelled <- struct{}{}
			case <-time.After(15 * time.Second):
			}
			return diagItems(r.URIs, []map[string]any{diagItem(0, 0, 1, "late", "x", nil)}), nil
		}
	}
	t.Run("no answer is bounded by waitMs plus 1 s", func(t *testing.T) {
		got, cancelled := make(chan struct{}, 4), make(chan struct{}, 4)
		d := diagStart(t, ctx, t.TempDir(), true, hold(got, cancelled))
		start := time.Now()
		res := d.CallTool(ctx, "write", map[string]any{"path": "w.txt", "content": "x\n"})
		el := time.Since(start)
		wantResult(t, "write with an unanswered diagnostics request", res, false)
		wantLacks(t, "text", res.Text(), "late", "new problems")
		reqs := d.requests()
		if len(reqs) == 0 || reqs[len(reqs)-1].WaitMs == nil {
			t.Fatalf("requests = %+v", reqs)
		}
		if limit := time.Duration(*reqs[len(reqs)-1].WaitMs)*time.Millisecond + time.Second; el > limit+1500*time.Millisecond {
			t.Errorf("write took %v with an unanswered diagnostics request, want about waitMs+1s = %v", el, limit)
		}
		select { // the abandoned request is cancelled, not left open in the editor
		case <-cancelled:
		case <-time.After(3 * time.Second):
			t.Errorf("the timed-out tools/diagnostics request was never cancelled ($/cancelRequest)")
		}
	})
	t.Run("cancelling the call cancels the request", func(t *testing.T) {
		got, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
		d := diagStart(t, ctx, t.TempDir(), true, hold(got, cancelled))
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := d.TryCallTool(cctx, "write", map[string]any{"path": "c.txt", "content": "x\n"})
			done <- err
		}()
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("no after-change request")
		}
		cancel()
		select {
		case <-cancelled:
		case <-time.After(2 * time.Second):
			t.Errorf("cancelling the call did not cancel tools/diagnostics")
		}
		<-done
	})
}
