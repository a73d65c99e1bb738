package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.lsp.dev/jsonrpc2"
)

// Black-box checks of the recently documented features (docs/protocol.md,
// docs/tools.md, README), run against the real binary.

// ---- tools/diagnostics ----------------------------------------------------

type featuresDiagReq struct {
	CallID string   `json:"callId"`
	Tool   string   `json:"tool"`
	URIs   []string `json:"uris"`
	WaitMs *int     `json:"waitMs"`
	at     time.Time
}

type featuresDiagClient struct {
	*harness.Client
	mu   sync.Mutex
	reqs []featuresDiagReq
}

func (d *featuresDiagClient) requests() []featuresDiagReq {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]featuresDiagReq(nil), d.reqs...)
}

// featuresDiagStart starts a session whose client declares the diagnostics
// capability (when declare) and answers tools/diagnostics with answer.
func featuresDiagStart(t *testing.T, ctx context.Context, ws string, declare bool, answer func(ctx context.Context, r featuresDiagReq) (any, error)) *featuresDiagClient {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: ws})
	d := &featuresDiagClient{Client: c}
	c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != "tools/diagnostics" {
			return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "no %s", method)
		}
		var r featuresDiagReq
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

func featuresDiag(line, char, sev int, msg, source string, code any) map[string]any {
	d := map[string]any{
		"range": map[string]any{
			"start": map[string]any{"line": line, "character": char},
			"end":   map[string]any{"line": line, "character": char + 3},
		},
		"severity": sev,
		"message":  msg,
	}
	if source != "" {
		d["source"] = source
	}
	if code != nil {
		d["code"] = code
	}
	return d
}

func featuresItems(uris []string, diags []map[string]any) map[string]any {
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

func TestFeatureDiagnosticsNewProblems(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.go": "package a\n\nfunc f() {}\n"})
	baseline := []map[string]any{
		featuresDiag(0, 0, 1, "old problem", "compiler", nil),
		featuresDiag(1, 0, 2, "old warning", "vet", "W1"),
	}
	after := []map[string]any{
		featuresDiag(6, 0, 1, "old problem", "compiler", nil), // moved: not new
		featuresDiag(1, 0, 2, "old warning", "vet", "W2"),     // other code: new
		featuresDiag(2, 11, 1, "undefined: BROKEN", "compiler", nil),
		featuresDiag(3, 0, 3, "just information", "gopls", nil), // not an error or warning
		featuresDiag(4, 1, 4, "just a hint", "gopls", nil),
		featuresDiag(5, 2, 2, "no source here", "", nil),
	}
	d := featuresDiagStart(t, ctx, ws, true, func(ctx context.Context, r featuresDiagReq) (any, error) {
		if r.WaitMs != nil && *r.WaitMs == 0 {
			return featuresItems(r.URIs, baseline), nil
		}
		return featuresItems(r.URIs, after), nil
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
	body, _ := os.ReadFile(filepath.Join(ws, "a.go"))
	if !strings.Contains(string(body), "BROKEN") {
		t.Errorf("the edit did not stand: %q", body)
	}

	reqs := d.requests()
	uri := fileURI(filepath.Join(ws, "a.go"))
	if len(reqs) != 2 {
		t.Fatalf("tools/diagnostics requests = %d (%+v), want a baseline and one after the change", len(reqs), reqs)
	}
	for i, r := range reqs {
		if r.CallID != res.CallID || r.Tool != "edit" || len(r.URIs) != 1 || r.WaitMs == nil {
			t.Errorf("request %d = %+v, want callId %s, tool edit, one uri, waitMs", i, r, res.CallID)
		}
		if len(r.URIs) == 1 && r.URIs[0] != uri {
			t.Errorf("request %d uri = %s, want %s", i, r.URIs[0], uri)
		}
	}
	if reqs[0].WaitMs != nil && *reqs[0].WaitMs != 0 {
		t.Errorf("baseline waitMs = %d, want 0", *reqs[0].WaitMs)
	}
	// docs/tools.md: "the editor waits up to 1.5 s for them to catch up".
	if reqs[1].WaitMs != nil && *reqs[1].WaitMs != 1500 {
		t.Errorf("after-change waitMs = %d, want 1500 (docs/tools.md: up to 1.5 s)", *reqs[1].WaitMs)
	}

	dd, _ := res.Details["diagnostics"].(map[string]any)
	if dd == nil {
		t.Fatalf("details.diagnostics missing: %v", res.Details)
	}
	if dd["uri"] != uri {
		t.Errorf("details.diagnostics.uri = %v, want %s", dd["uri"], uri)
	}
	if n, _ := dd["new"].([]any); len(n) != 3 {
		t.Errorf("details.diagnostics.new has %d entries, want 3: %v", len(n), dd["new"])
	}
	if dd["total"] != float64(len(after)) {
		t.Errorf("details.diagnostics.total = %v, want %d (all reported after the change)", dd["total"], len(after))
	}
}

func TestFeatureDiagnosticsCutAtTen(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	ws := t.TempDir()
	var many []map[string]any
	for i := 0; i < 13; i++ {
		many = append(many, featuresDiag(i, 0, 1, fmt.Sprintf("problem %02d", i), "x", nil))
	}
	d := featuresDiagStart(t, ctx, ws, true, func(ctx context.Context, r featuresDiagReq) (any, error) {
		if *r.WaitMs == 0 {
			return featuresItems(r.URIs, nil), nil
		}
		return featuresItems(r.URIs, many), nil
	})
	res := d.CallTool(ctx, "write", map[string]any{"path": "n/new.go", "content": "package n\n"})
	if res.IsError {
		t.Fatalf("write: %s", res.Text())
	}
	text := res.Text()
	wantContains(t, "write text", text, "The editor reports new problems in n/new.go:", "  L10:1 error: problem 09 (x)", "… and 3 more")
	wantLacks(t, "write text", text, "problem 10", "problem 12")
	if got := strings.Count(text, " error: problem "); got != 10 {
		t.Errorf("%d problems listed, want 10", got)
	}
	for _, r := range d.requests() {
		if r.Tool != "write" {
			t.Errorf("request tool = %q, want write", r.Tool)
		}
	}
}

func TestFeatureDiagnosticsNotAsked(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	answer := func(ctx context.Context, r featuresDiagReq) (any, error) {
		return featuresItems(r.URIs, []map[string]any{featuresDiag(0, 0, 1, "boom", "x", nil)}), nil
	}
	t.Run("dry run and failed calls", func(t *testing.T) {
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{"a.txt": "one\ntwo\n"})
		d := featuresDiagStart(t, ctx, ws, true, answer)
		d.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
		for name, args := range map[string]map[string]any{
			"dry run":   {"path": "a.txt", "dryRun": true, "edits": []any{map[string]any{"oldText": "one", "newText": "uno"}}},
			"not found": {"path": "a.txt", "edits": []any{map[string]any{"oldText": "three", "newText": "tres"}}},
			"no change": {"path": "a.txt", "edits": []any{map[string]any{"oldText": "one", "newText": "one"}}},
		} {
			res := d.CallTool(ctx, "edit", args)
			wantLacks(t, name, res.Text(), "new problems")
		}
		res := d.CallTool(ctx, "write", map[string]any{"path": "a.txt", "content": "one\ntwo\n"})
		if !res.IsError {
			t.Errorf("identical write succeeded: %s", res.Text())
		}
		if n := len(d.requests()); n != 0 {
			t.Errorf("%d tools/diagnostics requests for dry runs and failed calls, want 0: %+v", n, d.requests())
		}
	})
	t.Run("client without the capability", func(t *testing.T) {
		ws := t.TempDir()
		d := featuresDiagStart(t, ctx, ws, false, answer)
		res := d.CallTool(ctx, "write", map[string]any{"path": "b.txt", "content": "x\n"})
		if res.IsError || strings.Contains(res.Text(), "new problems") {
			t.Errorf("write: %s", res.Text())
		}
		if n := len(d.requests()); n != 0 {
			t.Errorf("%d tools/diagnostics requests to a client without the capability", n)
		}
	})
}

func TestFeatureDiagnosticsUnansweredAndErrors(t *testing.T) {
	slow(t)
	t.Parallel()
	ctx := testCtx(t, 40*time.Second)
	t.Run("error answer", func(t *testing.T) {
		ws := t.TempDir()
		d := featuresDiagStart(t, ctx, ws, true, func(ctx context.Context, r featuresDiagReq) (any, error) {
			return nil, fmt.Errorf("language server crashed")
		})
		res := d.CallTool(ctx, "write", map[string]any{"path": "e.txt", "content": "x\n"})
		if res.IsError {
			t.Errorf("write failed because diagnostics failed: %s", res.Text())
		}
		wantLacks(t, "text", res.Text(), "new problems", "crashed")
		if _, err := os.Stat(filepath.Join(ws, "e.txt")); err != nil {
			t.Errorf("the write did not stand: %v", err)
		}
	})
	t.Run("no answer is bounded by waitMs plus 1 s", func(t *testing.T) {
		ws := t.TempDir()
		cancelled := make(chan struct{}, 4)
		d := featuresDiagStart(t, ctx, ws, true, func(ctx context.Context, r featuresDiagReq) (any, error) {
			if *r.WaitMs == 0 {
				return featuresItems(r.URIs, nil), nil
			}
			select {
			case <-ctx.Done():
				cancelled <- struct{}{}
			case <-time.After(15 * time.Second):
			}
			return featuresItems(r.URIs, []map[string]any{featuresDiag(0, 0, 1, "late", "x", nil)}), nil
		})
		start := time.Now()
		res := d.CallTool(ctx, "write", map[string]any{"path": "w.txt", "content": "x\n"})
		el := time.Since(start)
		if res.IsError {
			t.Errorf("write: %s", res.Text())
		}
		wantLacks(t, "text", res.Text(), "late", "new problems")
		reqs := d.requests()
		if len(reqs) == 0 || reqs[len(reqs)-1].WaitMs == nil {
			t.Fatalf("requests = %+v", reqs)
		}
		limit := time.Duration(*reqs[len(reqs)-1].WaitMs)*time.Millisecond + time.Second
		if el > limit+1500*time.Millisecond {
			t.Errorf("write took %v with an unanswered diagnostics request, want about waitMs+1s = %v", el, limit)
		}
		// The abandoned request is cancelled, not left open in the editor.
		select {
		case <-cancelled:
		case <-time.After(3 * time.Second):
			t.Errorf("the timed-out tools/diagnostics request was never cancelled ($/cancelRequest)")
		}
	})
	t.Run("cancelling the call cancels the request", func(t *testing.T) {
		ws := t.TempDir()
		got := make(chan struct{}, 1)
		cancelled := make(chan struct{}, 1)
		d := featuresDiagStart(t, ctx, ws, true, func(ctx context.Context, r featuresDiagReq) (any, error) {
			if *r.WaitMs == 0 {
				return featuresItems(r.URIs, nil), nil
			}
			got <- struct{}{}
			select {
			case <-ctx.Done():
				cancelled <- struct{}{}
			case <-time.After(10 * time.Second):
			}
			return nil, ctx.Err()
		})
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

// ---- Robustness (raw frames) ----------------------------------------------

type featuresRaw struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
	cmd *exec.Cmd
	// frames read while looking for something else
	got chan map[string]any
}

func featuresRawStart(t *testing.T, ws string) *featuresRaw {
	t.Helper()
	cmd := harness.Command(t, []string{"--root", ws})
	cmd.Stderr = io.Discard
	in, out := harness.StartPiped(t, cmd)
	r := &featuresRaw{t: t, in: in, out: bufio.NewReader(out), cmd: cmd, got: make(chan map[string]any, 1000)}
	go func() {
		defer close(r.got)
		for {
			m, err := r.readFrame()
			if err != nil {
				return
			}
			r.got <- m
		}
	}()
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return r
}

func (r *featuresRaw) readFrame() (map[string]any, error) {
	n := -1
	for {
		line, err := r.out.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r.out, buf); err != nil {
		return nil, err
	}
	var m any
	if err := json.Unmarshal(buf, &m); err != nil {
		return nil, err
	}
	if arr, ok := m.([]any); ok {
		return map[string]any{"batch": arr}, nil
	}
	return m.(map[string]any), nil
}

func (r *featuresRaw) send(body string) {
	r.t.Helper()
	if _, err := fmt.Fprintf(r.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		r.t.Fatal(err)
	}
}

// next returns the next frame satisfying pred, collecting the others.
func (r *featuresRaw) next(d time.Duration, pred func(map[string]any) bool, seen *[]map[string]any) map[string]any {
	r.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-r.got:
			if !ok {
				return nil
			}
			if seen != nil {
				*seen = append(*seen, m)
			}
			if pred(m) {
				return m
			}
		case <-deadline:
			return nil
		}
	}
}

func featuresIDIs(id float64) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["id"] == id }
}

func TestFeatureRobustness(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	r := featuresRawStart(t, ws)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)
	if m := r.next(10*time.Second, featuresIDIs(1), nil); m == nil || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)

	isWarning := func(m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		return m["method"] == "window/logMessage" && p["type"] == float64(2)
	}
	for name, note := range map[string]string{
		"cancel without id":   `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{}}`,
		"cancel with bad id":  `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":{"x":1}}}`,
		"didOpen bad params":  `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":5}}`,
		"didChange bad param": `{"jsonrpc":"2.0","method":"textDocument/didChange","params":"nonsense"}`,
		"folders bad params":  `{"jsonrpc":"2.0","method":"workspace/didChangeWorkspaceFolders","params":{"event":5}}`,
	} {
		r.send(note)
		var seen []map[string]any
		if m := r.next(2*time.Second, isWarning, &seen); m == nil {
			t.Errorf("%s: no window/logMessage warning; frames: %v", name, seen)
		}
		r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
		if m := r.next(5*time.Second, featuresIDIs(2), nil); m == nil || m["result"] == nil {
			t.Fatalf("%s: the connection did not go on: %v", name, m)
		}
	}

	// A batch none of whose members is a JSON-RPC message: one -32600 each.
	r.send(`[1, 2]`)
	var seen []map[string]any
	var errs []map[string]any
	r.next(3*time.Second, func(m map[string]any) bool {
		if b, ok := m["batch"].([]any); ok {
			for _, e := range b {
				if em, ok := e.(map[string]any); ok {
					errs = append(errs, em)
				}
			}
		} else if m["error"] != nil {
			errs = append(errs, m)
		}
		return len(errs) >= 2
	}, &seen)
	if len(errs) != 2 {
		t.Errorf("batch [1, 2]: %d error replies, want 2: %v", len(errs), seen)
	}
	for _, e := range errs {
		if replyCode(e) != -32600 {
			t.Errorf("batch member reply %v, want -32600", e)
		}
	}

	r.send(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`)
	if m := r.next(5*time.Second, featuresIDIs(3), nil); m == nil || m["error"] != nil {
		t.Fatalf("shutdown: %v", m)
	}
	for i, body := range []string{
		`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":5,"method":"shutdown"}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read","arguments":{"path":"x"}}}`,
	} {
		r.send(body)
		if m := r.next(5*time.Second, featuresIDIs(float64(4+i)), nil); replyCode(m) != -32600 {
			t.Errorf("after shutdown %s -> %v, want -32600", body, m)
		}
	}
	r.send(`{"jsonrpc":"2.0","method":"exit"}`)
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case <-done:
		if c := r.cmd.ProcessState.ExitCode(); c != 0 {
			t.Errorf("exit after shutdown: code %d, want 0", c)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("exit did not end the process")
	}
}

// ---- tools/callBatch -------------------------------------------------------

type featuresBatchResult struct {
	Results []harness.Result `json:"results"`
}

func featuresBatch(t *testing.T, ctx context.Context, c *harness.Client, calls ...map[string]any) []harness.Result {
	t.Helper()
	var out featuresBatchResult
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &out); err != nil {
		t.Fatalf("tools/callBatch: %v", err)
	}
	if len(out.Results) != len(calls) {
		t.Fatalf("%d results for %d calls", len(out.Results), len(calls))
	}
	return out.Results
}

func featuresCall(name string, args map[string]any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

func TestFeatureCallBatch(t *testing.T) {
	slow(t)
	// Not parallel: it times calls running side by side, which busy neighbours on 2 cores stretch.
	ctx := testCtx(t, 40*time.Second)
	t.Run("read, edit, read of one file", func(t *testing.T) {
		ws := t.TempDir()
		c := harness.Start(t, harness.Options{Root: ws})
		c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}})
		for i := 0; i < 8; i++ {
			name := fmt.Sprintf("f%d.txt", i)
			writeFiles(t, ws, map[string]string{name: "alpha\n"})
			rs := featuresBatch(t, ctx, c,
				featuresCall("read", map[string]any{"path": name}),
				featuresCall("edit", map[string]any{"path": name, "edits": []any{map[string]any{"oldText": "alpha", "newText": "beta"}}}),
				featuresCall("read", map[string]any{"path": name}))
			if rs[0].IsError || !strings.Contains(rs[0].Text(), "alpha") {
				t.Errorf("round %d first read: %s", i, rs[0].Text())
			}
			if rs[1].IsError {
				t.Errorf("round %d edit did not see the read: %s", i, rs[1].Text())
			}
			if !strings.Contains(rs[2].Text(), "beta") {
				t.Errorf("round %d second read did not see the edit: %s", i, rs[2].Text())
			}
		}
	})
	t.Run("a call that is not concurrency-safe waits for those before it", func(t *testing.T) {
		ws := t.TempDir()
		c := harness.Start(t, harness.Options{Root: ws})
		c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
		rs := featuresBatch(t, ctx, c,
			featuresCall("bash", map[string]any{"command": "sleep 0.7; cat flag"}),
			featuresCall("bash", map[string]any{"command": "echo written > flag"}))
		if !rs[0].IsError {
			t.Errorf("the first call saw the file the later non-safe call writes: %s", rs[0].Text())
		}
		if rs[1].IsError {
			t.Errorf("second call: %s", rs[1].Text())
		}
	})
	t.Run("at most GOMAXPROCS x 2 at once", func(t *testing.T) {
		ws := t.TempDir()
		c := harness.Start(t, harness.Options{Root: ws, Env: []string{"GOMAXPROCS=1"}})
		c.Initialize(ctx, nil)
		var calls []map[string]any
		for i := 0; i < 3; i++ {
			calls = append(calls, featuresCall("bash", map[string]any{"command": "sleep 1"}))
		}
		start := time.Now()
		rs := featuresBatch(t, ctx, c, calls...)
		el := time.Since(start)
		for i, r := range rs {
			if r.IsError {
				t.Fatalf("call %d: %s", i, r.Text())
			}
		}
		// Two at once: two rounds (~2 s); three at once would be ~1 s, serial ~3 s.
		if el < 1900*time.Millisecond || el > 2900*time.Millisecond {
			t.Errorf("3 x sleep 1 with GOMAXPROCS=1 took %v, want about 2 s (2 at once)", el)
		}
	})
}

// ---- Ignore rules of a workspace inside a repository -----------------------

func featuresGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(strings.Join(args, " "), "check-ignore") {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestFeatureWorkspaceInsideARepository(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := testCtx(t, 30*time.Second)
	repo := t.TempDir()
	featuresGit(t, repo, "init", "-q")
	writeFiles(t, repo, map[string]string{
		".gitignore":              "*.log\n/top-only.txt\n",
		"pkg/.gitignore":          "gen/\n!keep.log\n",
		"pkg/sub/app.go":          "needle\n",
		"pkg/sub/debug.log":       "needle\n",
		"pkg/sub/keep.log":        "needle\n",
		"pkg/sub/gen/x.go":        "needle\n",
		"pkg/sub/excluded.tmp":    "needle\n",
		"pkg/sub/top-only.txt":    "needle\n",
		"pkg/sub/deep/notes.txt":  "needle\n",
		"pkg/sub/deep/trace.log":  "needle\n",
		"pkg/sub/.agentlsignore":  "",
		"pkg/sub/deep/.gitignore": "notes.txt\n",
	})
	writeFiles(t, repo, map[string]string{".git/info/exclude": "*.tmp\n"})
	ws := filepath.Join(repo, "pkg", "sub")
	all := []string{"app.go", "debug.log", "keep.log", "gen/x.go", "excluded.tmp", "top-only.txt", "deep/notes.txt", "deep/trace.log"}
	var want []string
	for _, f := range all {
		cmd := exec.Command("git", "check-ignore", "-q", f)
		cmd.Dir = ws
		if cmd.Run() != nil { // exit 1: not ignored
			want = append(want, f)
		}
	}
	// "/top-only.txt" anchors at the repository root, so pkg/sub/top-only.txt stays.
	if strings.Join(want, ",") != "app.go,keep.log,top-only.txt" {
		t.Fatalf("fixture: git keeps %v", want)
	}

	c := harness.Start(t, harness.Options{Root: ws})
	c.Initialize(ctx, nil)
	res := c.CallTool(ctx, "find", map[string]any{"pattern": "*"})
	got := strings.Fields(res.Text())
	var files []string
	for _, g := range got {
		for _, f := range all {
			if g == f {
				files = append(files, g)
			}
		}
	}
	if strings.Join(files, ",") != strings.Join(want, ",") {
		t.Errorf("find * listed %v, want what git keeps: %v\n%s", files, want, res.Text())
	}
	res = c.CallTool(ctx, "grep", map[string]any{"pattern": "needle"})
	for _, f := range all {
		in := strings.Contains(res.Text(), f+":")
		if in != strings.Contains(","+strings.Join(want, ",")+",", ","+f+",") {
			t.Errorf("grep: %s present=%v\n%s", f, in, res.Text())
		}
	}
	res = c.CallTool(ctx, "ls", map[string]any{})
	wantLacks(t, "ls", res.Text(), "debug.log", "excluded.tmp", "gen/")

	// An edit of the repository root's rule file is seen by the next session.
	writeFiles(t, repo, map[string]string{".gitignore": "*.log\n/top-only.txt\napp.go\n"})
	c2 := harness.Start(t, harness.Options{Root: ws})
	c2.Initialize(ctx, nil)
	res = c2.CallTool(ctx, "find", map[string]any{"pattern": "*.go"})
	wantLacks(t, "find after the root .gitignore changed", res.Text(), "app.go\n")
	if strings.Contains(res.Text(), "app.go") && !strings.Contains(res.Text(), "ignore") {
		t.Errorf("find still lists app.go: %s", res.Text())
	}
}

// ---- find: nothing but ignored matches --------------------------------------

func TestFeatureFindNamesIgnoredMatches(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		".gitignore":       "build/\n",
		"src/main.go":      "x\n",
		"build/a.gen.go":   "x\n",
		"build/b.gen.go":   "x\n",
		"build/c.gen.go":   "x\n",
		"build/d.gen.go":   "x\n",
		"build/e/f.gen.go": "x\n",
	})
	c := harness.Start(t, harness.Options{Root: ws})
	c.Initialize(ctx, nil)

	res := c.CallTool(ctx, "find", map[string]any{"pattern": "*.gen.go"})
	text := res.Text()
	wantContains(t, "find *.gen.go", text, "includeIgnored")
	named := 0
	for _, f := range []string{"build/a.gen.go", "build/b.gen.go", "build/c.gen.go", "build/d.gen.go", "build/e/f.gen.go"} {
		if strings.Contains(text, f) {
			named++
		}
	}
	if named != 3 {
		t.Errorf("find named %d ignored matches, want up to 3 (5 exist):\n%s", named, text)
	}
	// The call it names works.
	res = c.CallTool(ctx, "find", map[string]any{"pattern": "*.gen.go", "includeIgnored": true})
	if strings.Count(res.Text(), ".gen.go") != 5 {
		t.Errorf("includeIgnored: true found:\n%s", res.Text())
	}

	res = c.CallTool(ctx, "find", map[string]any{"pattern": "*.go", "path": "build"})
	wantContains(t, "find in an ignored path", res.Text(), "ignored", "includeIgnored")

	// A match outside the ignored files is not accompanied by the notice.
	res = c.CallTool(ctx, "find", map[string]any{"pattern": "main.go"})
	wantContains(t, "find main.go", res.Text(), "src/main.go")
}

// ---- bash: a timeout in milliseconds ---------------------------------------

func TestFeatureBashMillisecondTimeout(t *testing.T) {
	slow(t)
	t.Parallel()
	ctx := testCtx(t, 40*time.Second)
	ws := t.TempDir()
	c := harness.Start(t, harness.Options{Root: ws})
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	norm := func(r harness.Result) string { b, _ := json.Marshal(r.Details["normalized"]); return string(b) }

	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"timeout 120000", map[string]any{"command": "echo ok", "timeout": 120000}},
		{"timeout 600000", map[string]any{"command": "echo ok", "timeout": 600000}},
		{"timeout_ms", map[string]any{"command": "echo ok", "timeout_ms": 30000}},
		{"string ms", map[string]any{"command": "echo ok", "timeout": "120000"}},
	} {
		r := c.CallTool(ctx, "bash", tc.args)
		if r.IsError || !strings.Contains(r.Text(), "ok") {
			t.Errorf("%s: %s", tc.name, r.Text())
		}
		if !strings.Contains(norm(r), "timeout") {
			t.Errorf("%s: details.normalized does not report the repair: %s", tc.name, norm(r))
		}
	}

	// 2000 is read as 2 s: a 10 s sleep is cut after about 2 s.
	start := time.Now()
	r := c.CallTool(ctx, "bash", map[string]any{"command": "sleep 10", "timeout": 2000})
	el := time.Since(start)
	if !r.IsError || el < 1800*time.Millisecond || el > 6*time.Second {
		t.Errorf("timeout 2000: %v, %s", el, r.Text())
	}
	wantContains(t, "timeout 2000", strings.ToLower(r.Text()), "timed out")

	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"601", map[string]any{"command": "echo ok", "timeout": 601}},
		{"1500 (not whole seconds)", map[string]any{"command": "echo ok", "timeout": 1500}},
		{"601000 ms", map[string]any{"command": "echo ok", "timeout": 601000}},
	} {
		r := c.CallTool(ctx, "bash", tc.args)
		if !r.IsError {
			t.Errorf("%s: accepted: %s", tc.name, r.Text())
			continue
		}
		wantContains(t, tc.name, r.Text(), "600")
		t.Logf("%s -> %s", tc.name, r.Text())
	}
}

// ---- bash: the spill file's size cap --------------------------------------

func TestFeatureSpillCapNotice(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	ws := t.TempDir()
	c := harness.Start(t, harness.Options{Root: ws})
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	const total = 70 << 20 // 70 MiB of 100-byte lines
	const capBytes = 64 << 20
	line := strings.Repeat("a", 99)
	r := c.CallTool(ctx, "bash", map[string]any{"command": fmt.Sprintf("yes %s | head -c %d", line, total)})
	text := r.Text()
	if r.IsError {
		t.Fatalf("bash: %s", text)
	}
	m := regexp.MustCompile(`(/\S+)`).FindAllString(text, -1)
	var spill string
	for _, p := range m {
		p = strings.Trim(p, "`\"',.:;()")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			spill = p
		}
	}
	if spill == "" {
		t.Fatalf("no spill path in the notice:\n%s", text[:min(len(text), 2000)])
	}
	st, _ := os.Stat(spill)
	if st.Size() > capBytes+200 {
		t.Errorf("spill file holds %d bytes, over the 64 MiB cap (%d)", st.Size(), capBytes)
	}
	notice := text[:min(len(text), 1500)]
	if i := strings.Index(text, "\n"); i >= 0 {
		notice = text[:i]
	}
	wantContains(t, "spill notice", notice, "Only the start of the output is saved", spill)
	// The bytes saved plus the bytes said to be lost make the whole output.
	mm := regexp.MustCompile(`(\d+) bytes more were not saved`).FindStringSubmatch(notice)
	if mm == nil {
		t.Fatalf("notice does not say how many bytes were lost:\n%s", notice)
	}
	lost, _ := strconv.Atoi(mm[1])
	body, err := os.ReadFile(spill)
	if err != nil {
		t.Fatal(err)
	}
	saved := len(body)
	if i := bytes.LastIndex(body, []byte("\n[agentls:")); i >= 0 {
		saved = i // the output was cut mid-line; the marker starts on a line of its own
	}
	if saved+lost != total {
		t.Errorf("saved %d + lost %d = %d, want the %d bytes printed", saved, lost, saved+lost, total)
	}
	if mc := regexp.MustCompile(`cap of (\d+) bytes`).FindStringSubmatch(notice); mc != nil && mc[1] != strconv.Itoa(saved) {
		t.Logf("note: the notice says it stopped at the cap of %s bytes; the file holds %d bytes of output", mc[1], saved)
	}
	t.Logf("notice:\n%s\nfile tail %q", notice, body[max(0, len(body)-120):])
}

// ---- agentls call with several TOOL 'JSON' pairs --------------------------

func featuresRun(t *testing.T, args []string, env ...string) (string, int) {
	t.Helper()
	cmd := harness.Command(t, args, env...)
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return out.String(), code
}

func TestFeatureCLISeveralCalls(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.go": "package a\n\nvar x = 1\n"})
	out, code := featuresRun(t, []string{"call",
		"read", `{"path":"a.go"}`,
		"edit", `{"path":"a.go","edits":[{"oldText":"x = 1","newText":"x = 2"}]}`,
		"read", `{"path":"a.go"}`,
		"--root", ws})
	if code != 0 {
		t.Errorf("exit %d:\n%s", code, out)
	}
	wantContains(t, "read, edit, read", out, "Edited a.go", "var x = 2")
	if b, _ := os.ReadFile(filepath.Join(ws, "a.go")); !strings.Contains(string(b), "x = 2") {
		t.Errorf("the edit did not land: %s", b)
	}

	// The first failing call ends the run.
	out, code = featuresRun(t, []string{"call",
		"read", `{"path":"missing.go"}`,
		"write", `{"path":"later.txt","content":"x"}`,
		"--root", ws})
	if code == 0 {
		t.Errorf("a failing call exited 0:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "later.txt")); err == nil {
		t.Errorf("the call after the failing one ran")
	}
	wantContains(t, "failing run", out, "missing.go")

	// Deny rules and --mode readOnly still apply.
	writeFiles(t, ws, map[string]string{".agentls/settings.json": `{"permissions": {"deny": ["Write(/denied.txt)", "Edit(/denied.txt)"]}}`})
	out, code = featuresRun(t, []string{"call", "write", `{"path":"ok.txt","content":"x"}`, "write", `{"path":"denied.txt","content":"x"}`, "--root", ws})
	if code == 0 {
		t.Errorf("deny rule: exit 0:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "denied.txt")); err == nil {
		t.Errorf("deny rule ignored by agentls call:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "ok.txt")); err != nil {
		t.Errorf("the allowed call before the denied one did not run:\n%s", out)
	}
	out, code = featuresRun(t, []string{"call", "read", `{"path":"a.go"}`, "write", `{"path":"ro.txt","content":"x"}`, "--root", ws, "--mode", "readOnly"})
	if code == 0 {
		t.Errorf("readOnly: exit 0:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "ro.txt")); err == nil {
		t.Errorf("--mode readOnly let a write through")
	}
	wantContains(t, "readOnly run", out, "var x = 2", "readOnly")
}

// ---- Upstream MCP servers over HTTP ----------------------------------------

// featuresUpstream is an in-process MCP server reachable over streamable HTTP
// (/mcp) and SSE (/sse); it records the headers of every request and can be
// switched off (every request gets 503) to break sessions.
type featuresUpstream struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hdrs []http.Header
	down int // 0 up, 1: every request 503, 2: every session request 404 (session gone)
}

const featuresBigLines = 1500

func featuresNewUpstream(t *testing.T) *featuresUpstream {
	t.Helper()
	u := &featuresUpstream{}
	server := mcp.NewServer(&mcp.Implementation{Name: "a3f-upstream", Version: "1.0.0"}, nil)
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	server.AddTool(&mcp.Tool{Name: "echo", Description: "echo the text back", Annotations: ro,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo:" + in.Text}}}, nil
		})
	server.AddTool(&mcp.Tool{Name: "big", Description: "a long text", Annotations: ro,
		InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var b strings.Builder
			for i := 1; i <= featuresBigLines; i++ {
				fmt.Fprintf(&b, "line %04d %s\n", i, strings.Repeat("x", 50))
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, nil
		})
	get := func(*http.Request) *mcp.Server { return server }
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(get, nil))
	mux.Handle("/sse", mcp.NewSSEHandler(get, nil))
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.hdrs = append(u.hdrs, r.Header.Clone())
		down := u.down
		u.mu.Unlock()
		switch {
		case down == 1:
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		case down == 2 && r.Header.Get("Mcp-Session-Id") != "":
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *featuresUpstream) setDown(v int) { u.mu.Lock(); u.down = v; u.mu.Unlock() }

func (u *featuresUpstream) headers(name string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, h := range u.hdrs {
		if vs, ok := h[http.CanonicalHeaderKey(name)]; ok {
			for _, v := range vs {
				if !seen[v] {
					seen[v] = true
					out = append(out, v)
				}
			}
		}
	}
	return out
}

func featuresMCPJSON(t *testing.T, ws string, cfg map[string]any) {
	t.Helper()
	b, _ := json.MarshalIndent(cfg, "", "  ")
	writeFiles(t, ws, map[string]string{".agentls/mcp.json": string(b)})
}

// featuresCallUntil calls tool until its result contains want (upstream servers
// start in the background), returning the last result.
func featuresCallUntil(t *testing.T, ctx context.Context, c *harness.Client, tool string, args map[string]any, want string, d time.Duration) harness.Result {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		r := c.CallTool(ctx, tool, args)
		if strings.Contains(r.Text(), want) || time.Now().After(deadline) {
			return r
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func featuresLogs(c *harness.Client) string {
	var b strings.Builder
	for _, n := range c.Notes("window/logMessage") {
		b.Write(n.Params)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestFeatureUpstreamHTTPTransports(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	ctx := testCtx(t, 40*time.Second)
	up := featuresNewUpstream(t)
	ws := t.TempDir()
	featuresMCPJSON(t, ws, map[string]any{"servers": map[string]any{
		"h1": map[string]any{"type": "http", "url": up.srv.URL + "/mcp", "headers": map[string]any{
			"X-A": "${env:A3F_TOKEN}", "X-B": "Bearer ${A3F_TOKEN}", "X-C": "${A3F_UNSET:-fallback}",
			"X-D": "[${A3F_UNSET_TOO}]", "X-W": "${workspaceFolder}",
		}},
		"h2": map[string]any{"type": "streamable-http", "url": up.srv.URL + "/mcp"},
		"h3": map[string]any{"url": up.srv.URL + "/mcp"},
		"s1": map[string]any{"type": "sse", "url": up.srv.URL + "/sse", "headers": map[string]any{"X-S": "${env:A3F_TOKEN}"}},
	}})
	logFile := filepath.Join(t.TempDir(), "agentls.log")
	c := harness.Start(t, harness.Options{Root: ws, Env: []string{"A3F_TOKEN=tok-s3cr3t-123"},
		Args: []string{"--log-file", logFile, "--log-level", "debug"}})
	c.Initialize(ctx, nil)
	for _, srv := range []string{"h1", "h2", "h3", "s1"} {
		t0 := time.Now()
		r := featuresCallUntil(t, ctx, c, srv+"__echo", map[string]any{"text": "hi-" + srv}, "echo:hi-"+srv, 10*time.Second)
		t.Logf("%s took %v: %s", srv, time.Since(t0), r.Text())
		if r.IsError || !strings.Contains(r.Text(), "echo:hi-"+srv) {
			t.Errorf("%s__echo: %s", srv, r.Text())
		}
	}
	for name, want := range map[string]string{
		"X-A": "tok-s3cr3t-123", "X-B": "Bearer tok-s3cr3t-123", "X-C": "fallback", "X-D": "[]", "X-W": ws, "X-S": "tok-s3cr3t-123",
	} {
		if got := up.headers(name); len(got) != 1 || got[0] != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	logs := featuresLogs(c)
	if !regexp.MustCompile(`h1[^\n]*A3F_UNSET_TOO|A3F_UNSET_TOO[^\n]*h1`).MatchString(logs) {
		t.Errorf("no window/logMessage naming server h1 and the unset variable A3F_UNSET_TOO:\n%s", logs)
	}
	lf, _ := os.ReadFile(logFile)
	if strings.Contains(logs+string(lf), "tok-s3cr3t-123") {
		t.Errorf("a header value reached the logs")
	}

	// Governance: over 65,536 bytes is cut at a line boundary with a read call that continues.
	r := c.CallTool(ctx, "h1__big", map[string]any{})
	text := r.Text()
	if len(text) > 65536+2048 {
		t.Errorf("upstream text of %d bytes not cut to the 65,536-byte budget", len(text))
	}
	m := regexp.MustCompile(`read (\{"path": ?"[^"]+", ?"offset": ?\d+\})`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no read {path, offset} call in the cut text's notice:\n%s", text[max(0, len(text)-1500):])
	}
	var args struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
	}
	json.Unmarshal([]byte(m[1]), &args)
	last := 0
	for _, l := range regexp.MustCompile(`(?m)^line (\d{4}) x+$`).FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(l[1])
		last = max(last, n)
	}
	if last == 0 || last >= featuresBigLines {
		t.Fatalf("cut text shows up to line %d of %d", last, featuresBigLines)
	}
	wantContains(t, "budget notice", text, fmt.Sprintf("1-%d", last))
	rr := c.CallTool(ctx, "read", map[string]any{"path": args.Path, "offset": args.Offset, "limit": 2})
	if rr.IsError {
		t.Fatalf("the notice's call %s: %s", m[1], rr.Text())
	}
	if want := fmt.Sprintf("line %04d ", last+1); !strings.Contains(rr.Text(), want) || strings.Contains(rr.Text(), fmt.Sprintf("line %04d ", last)) {
		t.Errorf("the notice's call %s does not continue after the cut (last shown line %d):\n%s", m[1], last, rr.Text())
	}

	// Closing stdin ends the process within 1 s (docs/protocol.md), upstream
	// HTTP and SSE sessions included.
	start := time.Now()
	c.CloseStdin()
	if code := c.Wait(5 * time.Second); code < 0 || time.Since(start) > 1500*time.Millisecond {
		t.Errorf("closing stdin with HTTP/SSE upstreams connected: exit after %v (code %d), want within 1 s", time.Since(start), code)
	}
	t.Logf("exited after %v", time.Since(start))
}

func TestFeatureUpstreamRestart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		mode int
	}{
		{"session gone (404)", 2},
		{"server error (503)", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 40*time.Second)
			up := featuresNewUpstream(t)
			ws := t.TempDir()
			featuresMCPJSON(t, ws, map[string]any{"servers": map[string]any{"up": map[string]any{"type": "http", "url": up.srv.URL + "/mcp"}}})
			c := harness.Start(t, harness.Options{Root: ws})
			c.Initialize(ctx, nil)
			if r := featuresCallUntil(t, ctx, c, "up__echo", map[string]any{"text": "1"}, "echo:1", 10*time.Second); r.IsError {
				t.Fatalf("up__echo: %s", r.Text())
			}
			up.setDown(tc.mode)
			r := c.CallTool(ctx, "up__echo", map[string]any{"text": "2"})
			if !r.IsError {
				t.Fatalf("a call to a broken HTTP session succeeded: %s", r.Text())
			}
			r2 := c.CallTool(ctx, "up__echo", map[string]any{"text": "3"})
			t.Logf("while broken:\n%s\n%s", r.Text(), r2.Text())
			if tc.mode == 2 {
				// The first call may carry the transport error itself; the next says unavailable.
				wantContains(t, "broken session", r.Text()+"\n"+r2.Text(), "unavailable", "restarting in")
			}
			up.setDown(0)
			r = featuresCallUntil(t, ctx, c, "up__echo", map[string]any{"text": "4"}, "echo:4", 8*time.Second)
			if !strings.Contains(r.Text(), "echo:4") {
				t.Errorf("not back within 8 s: %s", r.Text())
			}
		})
	}
	t.Run("server gone and back on the same port", func(t *testing.T) {
		ctx := testCtx(t, 40*time.Second)
		up := featuresNewUpstream(t)
		addr := up.srv.Listener.Addr().String()
		ws := t.TempDir()
		featuresMCPJSON(t, ws, map[string]any{"servers": map[string]any{"up": map[string]any{"type": "http", "url": up.srv.URL + "/mcp"}}})
		c := harness.Start(t, harness.Options{Root: ws})
		c.Initialize(ctx, nil)
		if r := featuresCallUntil(t, ctx, c, "up__echo", map[string]any{"text": "1"}, "echo:1", 10*time.Second); r.IsError {
			t.Fatalf("up__echo: %s", r.Text())
		}
		up.srv.CloseClientConnections()
		up.srv.Close()
		r := c.CallTool(ctx, "up__echo", map[string]any{"text": "2"})
		r2 := c.CallTool(ctx, "up__echo", map[string]any{"text": "3"})
		t.Logf("while gone:\n%s\n%s", r.Text(), r2.Text())
		wantContains(t, "server gone", r.Text()+"\n"+r2.Text(), "unavailable", "restarting in")
		// Same address again, a fresh server (sessions lost).
		up2 := featuresNewUpstream(t)
		up2.srv.Close()
		var l net.Listener
		var err error
		for i := 0; i < 50; i++ {
			if l, err = net.Listen("tcp", addr); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Skipf("cannot listen on %s again: %v", addr, err)
		}
		srv := &http.Server{Handler: up2.srv.Config.Handler}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
		start := time.Now()
		r = featuresCallUntil(t, ctx, c, "up__echo", map[string]any{"text": "4"}, "echo:4", 8*time.Second)
		if !strings.Contains(r.Text(), "echo:4") {
			t.Errorf("not restarted within 8 s: %s", r.Text())
		}
		t.Logf("back after %v", time.Since(start))
	})
}

func TestFeatureUpstreamSecretsInURLsAndRedirects(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 40*time.Second)
	// Another host: the target of a redirect.
	other := featuresNewUpstream(t)
	otherURL := strings.Replace(other.srv.URL, "127.0.0.1", "localhost", 1)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherURL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	// A port nothing listens on.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	du, _ := url.Parse(deadURL)
	du.User = url.UserPassword("alice", "pw-in-url-77")
	du.Path = "/mcp"
	du.RawQuery = "key=query-secret-88"

	ws := t.TempDir()
	featuresMCPJSON(t, ws, map[string]any{"mcpServers": map[string]any{
		"redir": map[string]any{"type": "http", "url": redirector.URL + "/mcp", "headers": map[string]any{"X-Secret": "hdr-secret-99", "Authorization": "Bearer hdr-secret-99"}},
		"dead":  map[string]any{"type": "http", "url": du.String()},
	}})
	logFile := filepath.Join(t.TempDir(), "agentls.log")
	c := harness.Start(t, harness.Options{Root: ws, Args: []string{"--log-file", logFile, "--log-level", "debug"}})
	c.Initialize(ctx, nil)
	r := featuresCallUntil(t, ctx, c, "dead__echo", map[string]any{"text": "x"}, "unavailable", 3*time.Second)
	t.Logf("dead__echo: %s", r.Text())
	if !r.IsError {
		t.Errorf("a server that cannot be reached answered: %s", r.Text())
	}
	wantContains(t, "unreachable server", r.Text(), "unavailable", "restarting in")
	c.CallTool(ctx, "redir__echo", map[string]any{"text": "x"})
	// The log has both servers' lines before it is checked for what they lack.
	var lf []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		lf, _ = os.ReadFile(logFile)
		if bytes.Contains(lf, []byte("mcpServer=redir")) && bytes.Contains(lf, []byte(`request failed" mcpServer=dead`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the debug log never recorded both servers:\n%s", lf)
		}
	}
	all := r.Text() + featuresLogs(c) + string(lf)
	wantLacks(t, "messages and logs", all, "pw-in-url-77", "query-secret-88", "hdr-secret-99")
	for _, h := range []string{"X-Secret", "Authorization"} {
		if v := other.headers(h); len(v) > 0 {
			t.Errorf("header %s went across a redirect to another host: %q", h, v)
		}
	}
}

// ---- agentls mcp: Workspace and Tools --------------------------------------

type featuresMCPRec struct {
	mu      sync.Mutex
	methods []string
	changed int
}

func (r *featuresMCPRec) count(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.methods {
		if m == method {
			n++
		}
	}
	return n
}

func featuresMCPConnect(t *testing.T, ctx context.Context, root string, roots []string, version string) (*mcp.ClientSession, *mcp.Client, *featuresMCPRec) {
	t.Helper()
	rec := &featuresMCPRec{}
	opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		rec.mu.Lock()
		rec.changed++
		rec.mu.Unlock()
	}}
	if roots == nil {
		opts.Capabilities = &mcp.ClientCapabilities{} // no roots capability
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "a3f", Version: "1.0.0"}, opts)
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			rec.mu.Lock()
			rec.methods = append(rec.methods, method)
			rec.mu.Unlock()
			return next(ctx, method, req)
		}
	})
	for _, r := range roots {
		client.AddRoots(&mcp.Root{URI: fileURI(r)})
	}
	cmd := harness.Command(t, []string{"mcp", "--root", root})
	cmd.Stderr = io.Discard
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: version}) // "" = the SDK's latest
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, client, rec
}

func featuresMCPText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func featuresMCPCall(t *testing.T, ctx context.Context, s *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: protocol error %v", name, err)
	}
	return r, featuresMCPText(r)
}

const featuresExtTool = `{"name": "b_hello", "description": "say hello from folder b", "inputSchema": {"type": "object", "properties": {}}, "command": "echo hello-from-b", "readOnly": true}`

func TestFeatureMCPWorkspace(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 40*time.Second)
	other, a, b := t.TempDir(), t.TempDir(), t.TempDir()
	writeFiles(t, other, map[string]string{"only-in-other.txt": "x"})
	writeFiles(t, a, map[string]string{"only-in-a.txt": "x"})
	writeFiles(t, b, map[string]string{"only-in-b.txt": "x", ".agentls/tools/b_hello.json": featuresExtTool})

	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run("roots win over --root and follow roots/list_changed, protocol "+version, func(t *testing.T) {
			if version == "2026-07-28" {
				// docs/protocol.md: 2026-07-28 deprecates roots (SEP-2577) and
				// allows server requests only as multi-round-trip requests
				// (SEP-2322), which agentls does not make; such a client
				// keeps --root or the cwd.
				t.Skip("MCP 2026-07-28 deprecates roots; agentls does not ask over multi-round-trip requests")
			}
			s, client, rec := featuresMCPConnect(t, ctx, other, []string{a}, version)
			_, text := featuresMCPCall(t, ctx, s, "ls", map[string]any{})
			wantContains(t, "ls with roots [a]", text, "only-in-a.txt")
			wantLacks(t, "ls with roots [a]", text, "only-in-other.txt")
			if rec.count("roots/list") == 0 {
				t.Errorf("roots/list was never asked")
			}
			client.RemoveRoots(fileURI(a))
			client.AddRoots(&mcp.Root{URI: fileURI(b)})
			deadline := time.Now().Add(5 * time.Second)
			var r *mcp.CallToolResult
			for {
				r, text = featuresMCPCall(t, ctx, s, "b_hello", map[string]any{})
				if strings.Contains(text, "hello-from-b") || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if r.IsError || !strings.Contains(text, "hello-from-b") {
				t.Errorf("after the roots changed to b, b's extension tool: %s", text)
			}
			_, text = featuresMCPCall(t, ctx, s, "ls", map[string]any{})
			wantContains(t, "ls with roots [b]", text, "only-in-b.txt")
		})
	}
	t.Run("without the roots capability", func(t *testing.T) {
		s, _, rec := featuresMCPConnect(t, ctx, other, nil, "")
		_, text := featuresMCPCall(t, ctx, s, "ls", map[string]any{})
		wantContains(t, "ls without roots", text, "only-in-other.txt")
		if n := rec.count("roots/list"); n != 0 {
			t.Errorf("roots/list sent %d times to a client without the capability", n)
		}
	})
}

func TestFeatureMCPTools(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 40*time.Second)
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		".agentls/tools/b_hello.json":   featuresExtTool,
		".agentls/tools/c_weather.json": `{"name": "c_weather", "description": "report the weather forecast", "inputSchema": {"type": "object", "properties": {}}, "command": "echo sunny", "readOnly": true}`,
	})
	s, _, rec := featuresMCPConnect(t, ctx, ws, nil, "")
	lt, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]*mcp.Tool{}
	for _, tl := range lt.Tools {
		names[tl.Name] = tl
	}
	if names["b_hello"] != nil || names["c_weather"] != nil {
		t.Errorf("deferred extension tools listed before activation")
	}
	rd := names["read"]
	if rd == nil || rd.Annotations == nil || !rd.Annotations.ReadOnlyHint {
		t.Fatalf("read: annotations %+v", rd)
	}
	raw, _ := json.Marshal(rd)
	for _, k := range []string{`"readOnlyHint":true`, `"idempotentHint"`, `"openWorldHint"`, `"source"`} {
		if !strings.Contains(string(raw), k) {
			t.Errorf("read tool lacks %s: %s", k, raw)
		}
	}
	if bt := names["bash"]; bt == nil || bt.Annotations == nil || bt.Annotations.DestructiveHint == nil {
		t.Errorf("bash lacks destructiveHint: %+v", bt)
	}

	// A name that is no tool: an isError result naming the tools and the closest one.
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "raed", Arguments: map[string]any{"path": "x"}})
	if err != nil {
		t.Errorf("unknown tool is a protocol error: %v", err)
	} else {
		text := featuresMCPText(r)
		if !r.IsError {
			t.Errorf("unknown tool not an error result: %s", text)
		}
		wantContains(t, "unknown tool", text, `"read"`, "grep", "write")
	}

	// tool_search activation announces list_changed (tools were listed before it).
	_, text := featuresMCPCall(t, ctx, s, "tool_search", map[string]any{"query": "weather forecast"})
	wantContains(t, "tool_search", text, "c_weather")
	deadline := time.Now().Add(3 * time.Second)
	for {
		rec.mu.Lock()
		n := rec.changed
		rec.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("no notifications/tools/list_changed after a tool_search activation")
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Calling a deferred tool by name activates it.
	r, text = featuresMCPCall(t, ctx, s, "b_hello", map[string]any{})
	if r.IsError || !strings.Contains(text, "hello-from-b") {
		t.Errorf("b_hello by name: %s", text)
	}
	lt, _ = s.ListTools(ctx, nil)
	got := map[string]bool{}
	for _, tl := range lt.Tools {
		got[tl.Name] = true
	}
	if !got["b_hello"] || !got["c_weather"] {
		t.Errorf("activated tools not listed: %v", got)
	}
}
