package e2e

// Black-box acceptance tests for issue 6 (permissions, the ask flow,
// deferred tools and tool_search, extension tools, the audit log) and the
// docs/protocol.md parts on tools/confirm, tools/listChanged and tools/list.
// Written from the contract only.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
	"go.lsp.dev/jsonrpc2"
)

// policyFlowConfirm is one tools/confirm request the server sent.
type policyFlowConfirm struct {
	CallID    string          `json:"callId"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Reason    string          `json:"reason"`
	Preview   map[string]any  `json:"preview"`
}

// policyFlowAsker answers tools/confirm with answer and records every question.
// A nil answer blocks until the request is cancelled.
type policyFlowAsker struct {
	mu      sync.Mutex
	asked   []policyFlowConfirm
	arrived chan policyFlowConfirm // every question, buffered
	ended   chan error             // the ctx error of a question that was cancelled
	answer  func(q policyFlowConfirm) map[string]any
}

func policyFlowNewAsker(answer func(q policyFlowConfirm) map[string]any) *policyFlowAsker {
	return &policyFlowAsker{arrived: make(chan policyFlowConfirm, 64), ended: make(chan error, 64), answer: answer}
}

func (a *policyFlowAsker) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != "tools/confirm" {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "a3p: %s", method)
	}
	var q policyFlowConfirm
	if err := json.Unmarshal(params, &q); err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.asked = append(a.asked, q)
	answer := a.answer
	a.mu.Unlock()
	a.arrived <- q
	if answer == nil {
		<-ctx.Done()
		a.ended <- ctx.Err()
		return nil, ctx.Err()
	}
	return answer(q), nil
}

func (a *policyFlowAsker) set(answer func(q policyFlowConfirm) map[string]any) {
	a.mu.Lock()
	a.answer = answer
	a.mu.Unlock()
}

func (a *policyFlowAsker) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked)
}

func (a *policyFlowAsker) last() policyFlowConfirm {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.asked) == 0 {
		return policyFlowConfirm{}
	}
	return a.asked[len(a.asked)-1]
}

func policyFlowDecide(decision, message string) func(policyFlowConfirm) map[string]any {
	return func(policyFlowConfirm) map[string]any {
		m := map[string]any{"decision": decision}
		if message != "" {
			m["message"] = message
		}
		return m
	}
}

type policyFlowOpts struct {
	init    map[string]any // initializationOptions
	confirm bool           // declare capabilities.experimental.agentls.confirm
	asker   *policyFlowAsker
	env     []string
}

// policyFlowStart starts agentls on ws and initializes it.
func policyFlowStart(t *testing.T, ctx context.Context, ws string, o policyFlowOpts) *harness.Client {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: ws, Env: o.env})
	if o.asker != nil {
		c.OnRequest = o.asker.handle
	}
	params := map[string]any{
		"capabilities": map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": o.confirm}}},
	}
	if o.init != nil {
		params["initializationOptions"] = o.init
	}
	c.Initialize(ctx, params)
	return c
}

func policyFlowRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func policyFlowExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// policyFlowNeedsApproval reports whether r is the "ask without confirm
// capability" denial: an error that tells the model the user must approve.
func policyFlowNeedsApproval(r harness.Result) bool {
	return r.IsError && strings.Contains(strings.ToLower(r.Text()), "approv")
}

// Secret defaults: reading likely-secret files asks (reason names the
// built-in), and is an approval-needed error without the confirm capability.
func TestPolicySecretDefaultsAsk(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		".env":         "TOKEN=zzsecretvalue1\n",
		".env.local":   "TOKEN=zzsecretvalue2\n",
		"certs/a.pem":  "not really a pem\n",
		"keys/id_rsa":  "not really a key\n",
		"keys/srv.key": "not really a key\n",
		"src/main.go":  "package main\n",
		".env.example": "TOKEN=\n",
	})
	cases := []struct {
		name string
		path string
		asks bool
	}{
		{"dotenv", ".env", true},
		{"dotenv local", ".env.local", true},
		{"pem anywhere", "certs/a.pem", true},
		{"ssh private key", "keys/id_rsa", true},
		{"key file", "keys/srv.key", true},
		{"absolute path to dotenv", filepath.Join(ws, ".env"), true},
		{"ordinary source", "src/main.go", false},
		{"env example is documentation", ".env.example", false},
	}
	ctx := testCtx(t, 30*time.Second)
	asker := policyFlowNewAsker(policyFlowDecide("rejectOnce", "no secrets please"))
	withConfirm := policyFlowStart(t, ctx, ws, policyFlowOpts{confirm: true, asker: asker})
	without := policyFlowStart(t, ctx, ws, policyFlowOpts{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := asker.count()
			r := withConfirm.CallTool(ctx, "read", map[string]any{"path": tc.path})
			asked := asker.count() > before
			if asked != tc.asks {
				t.Fatalf("asked=%v, want %v (result %q)", asked, tc.asks, r.Text())
			}
			if tc.asks {
				q := asker.last()
				if q.Tool != "read" || !strings.Contains(q.Reason, "secret") {
					t.Errorf("confirm tool=%q reason=%q; want read and a reason naming the secret-file default", q.Tool, q.Reason)
				}
				if q.CallID == "" || q.CallID != r.CallID {
					t.Errorf("confirm callId %q, result callId %q: want the same non-empty id", q.CallID, r.CallID)
				}
				if !r.IsError || !strings.Contains(r.Text(), "denied by the user: no secrets please") {
					t.Errorf("rejected read: isError=%v text %q; want \"denied by the user: no secrets please\"", r.IsError, r.Text())
				}
				if strings.Contains(r.Text(), "zzsecretvalue") {
					t.Errorf("rejected read leaked the file: %q", r.Text())
				}
			} else if r.IsError {
				t.Errorf("read %s: unexpected error %q", tc.path, r.Text())
			}
			r2 := without.CallTool(ctx, "read", map[string]any{"path": tc.path})
			if tc.asks && !policyFlowNeedsApproval(r2) {
				t.Errorf("without confirm capability: isError=%v %q; want an error saying the user's approval is needed", r2.IsError, r2.Text())
			}
			if !tc.asks && r2.IsError {
				t.Errorf("without confirm capability: unexpected error %q", r2.Text())
			}
		})
	}
}

// The ask flow for edits: the preview is the would-be diff (not applied),
// allowOnce asks again next time, allowAlways does not (and only for that
// file), rejects are isError results with the user's message and change
// nothing.
func TestPolicyAskFlowEdit(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "alpha\nbeta\n", "b.txt": "one\ntwo\n"})
	ctx := testCtx(t, 30*time.Second)
	asker := policyFlowNewAsker(nil)
	var seenOnDisk string
	c := policyFlowStart(t, ctx, ws, policyFlowOpts{confirm: true, asker: asker})
	for _, p := range []string{"a.txt", "b.txt"} {
		if r := c.CallTool(ctx, "read", map[string]any{"path": p}); r.IsError {
			t.Fatalf("read %s: %s", p, r.Text())
		}
	}
	edit := func(path, oldText, newText string) harness.Result {
		return c.CallTool(ctx, "edit", map[string]any{"path": path, "edits": []any{map[string]any{"oldText": oldText, "newText": newText}}})
	}

	// rejectOnce with a message: isError carrying it; the file is unchanged.
	asker.set(func(q policyFlowConfirm) map[string]any {
		seenOnDisk = policyFlowRead(t, filepath.Join(ws, "a.txt"))
		return map[string]any{"decision": "rejectOnce", "message": "keep alpha"}
	})
	r := edit("a.txt", "alpha", "ALPHA")
	if !r.IsError || !strings.Contains(r.Text(), "denied by the user: keep alpha") {
		t.Errorf("rejectOnce: isError=%v %q; want \"denied by the user: keep alpha\"", r.IsError, r.Text())
	}
	if got := policyFlowRead(t, filepath.Join(ws, "a.txt")); got != "alpha\nbeta\n" {
		t.Errorf("rejected edit changed the file: %q", got)
	}
	if seenOnDisk != "alpha\nbeta\n" {
		t.Errorf("while the question was open the file held %q; the preview must not be applied", seenOnDisk)
	}
	q := asker.last()
	if q.Tool != "edit" || q.Reason == "" {
		t.Errorf("confirm: tool=%q reason=%q; want edit and a non-empty reason", q.Tool, q.Reason)
	}
	if !strings.Contains(string(q.Arguments), "ALPHA") {
		t.Errorf("confirm arguments %s do not carry the call's arguments", q.Arguments)
	}
	diff, _ := q.Preview["unifiedDiff"].(string)
	if !strings.Contains(diff, "-alpha") || !strings.Contains(diff, "+ALPHA") {
		t.Errorf("confirm preview unifiedDiff %q; want the would-be change -alpha/+ALPHA (preview %v)", diff, q.Preview)
	}

	// allowOnce: applied, and the next edit asks again.
	asker.set(policyFlowDecide("allowOnce", ""))
	n := asker.count()
	if r := edit("a.txt", "alpha", "ALPHA"); r.IsError {
		t.Fatalf("allowOnce edit: %s", r.Text())
	}
	if got := policyFlowRead(t, filepath.Join(ws, "a.txt")); got != "ALPHA\nbeta\n" {
		t.Errorf("after allowOnce the file is %q", got)
	}
	if r := edit("a.txt", "beta", "BETA"); r.IsError {
		t.Fatalf("second edit: %s", r.Text())
	}
	if asker.count() != n+2 {
		t.Errorf("allowOnce then another edit: %d questions, want 2 (allowOnce must not stick)", asker.count()-n)
	}

	// allowAlways: this file no longer asks; another file still does.
	asker.set(policyFlowDecide("allowAlways", ""))
	n = asker.count()
	edit("a.txt", "ALPHA", "alpha2")
	edit("a.txt", "BETA", "beta2")
	if got := asker.count() - n; got != 1 {
		t.Errorf("allowAlways then the same file: %d questions, want 1", got)
	}
	if got := policyFlowRead(t, filepath.Join(ws, "a.txt")); got != "alpha2\nbeta2\n" {
		t.Errorf("after allowAlways edits the file is %q", got)
	}
	asker.set(policyFlowDecide("allowOnce", ""))
	n = asker.count()
	edit("b.txt", "one", "ONE")
	if asker.count() != n+1 {
		t.Errorf("allowAlways for a.txt also allowed b.txt; the session rule must be as narrow as the request")
	}

	// rejectAlways: the same call is then denied without asking.
	asker.set(policyFlowDecide("rejectAlways", "never b"))
	r = edit("b.txt", "two", "TWO")
	if !r.IsError || !strings.Contains(r.Text(), "denied by the user: never b") {
		t.Errorf("rejectAlways: isError=%v %q", r.IsError, r.Text())
	}
	n = asker.count()
	r = edit("b.txt", "two", "TWO")
	if asker.count() != n || !r.IsError {
		t.Errorf("after rejectAlways: asked again=%v isError=%v %q; want denied without asking", asker.count() != n, r.IsError, r.Text())
	}
	if got := policyFlowRead(t, filepath.Join(ws, "b.txt")); got != "ONE\ntwo\n" {
		t.Errorf("b.txt is %q, want ONE\\ntwo\\n", got)
	}
}

// The ask flow for bash: the preview is the command and its
// classification; allowAlways is narrow; a write asks with a diff preview.
func TestPolicyAskFlowBashAndWrite(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	ctx := testCtx(t, 30*time.Second)
	asker := policyFlowNewAsker(policyFlowDecide("allowAlways", ""))
	c := policyFlowStart(t, ctx, ws, policyFlowOpts{confirm: true, asker: asker})

	r := c.CallTool(ctx, "bash", map[string]any{"command": "rm -f gone.txt"})
	if r.IsError || asker.count() != 1 {
		t.Fatalf("rm asked %d times, result %v %q; want one question and success", asker.count(), r.IsError, r.Text())
	}
	q := asker.last()
	if q.Preview["kind"] != "command" || q.Preview["command"] != "rm -f gone.txt" || q.Preview["destructive"] != true || q.Preview["readOnly"] != false {
		t.Errorf("bash preview %v; want {kind: command, command, readOnly: false, destructive: true}", q.Preview)
	}
	if q.Reason == "" {
		t.Errorf("bash confirm has no reason")
	}
	c.CallTool(ctx, "bash", map[string]any{"command": "rm -f gone.txt"})
	if asker.count() != 1 {
		t.Errorf("allowAlways: the identical command asked again")
	}
	c.CallTool(ctx, "bash", map[string]any{"command": "mkdir made"})
	if asker.count() != 2 {
		t.Errorf("allowAlways for rm -f gone.txt also allowed mkdir made (%d questions)", asker.count())
	}
	// Read-only bash needs no question in default mode.
	if r := c.CallTool(ctx, "bash", map[string]any{"command": "ls -la && cat /dev/null | wc -l"}); r.IsError || asker.count() != 2 {
		t.Errorf("read-only bash: asked=%v isError=%v %q", asker.count() != 2, r.IsError, r.Text())
	}

	asker.set(policyFlowDecide("rejectOnce", ""))
	r = c.CallTool(ctx, "write", map[string]any{"path": "new/file.txt", "content": "hello\n"})
	if !r.IsError || !strings.Contains(r.Text(), "denied by the user") {
		t.Errorf("rejected write: isError=%v %q", r.IsError, r.Text())
	}
	if policyFlowExists(filepath.Join(ws, "new/file.txt")) {
		t.Errorf("rejected write created the file")
	}
	q = asker.last()
	if d, _ := q.Preview["unifiedDiff"].(string); q.Tool != "write" || !strings.Contains(d, "+hello") {
		t.Errorf("write confirm: tool=%q preview %v; want a diff adding hello", q.Tool, q.Preview)
	}
}

// Cancelling a call while its question is open replies -32800 and cancels
// the pending tools/confirm; a question nobody answers holds up only its
// own call.
func TestPolicyAskCancelAndUnanswered(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "alpha\n"})
	ctx := testCtx(t, 30*time.Second)
	asker := policyFlowNewAsker(nil) // never answers
	c := policyFlowStart(t, ctx, ws, policyFlowOpts{confirm: true, asker: asker})

	// The asking call is this connection's second request (after
	// initialize), so its id is 2; the reply to $/cancelRequest is read
	// from the wire rather than abandoned as protocol.Call would.
	const askID = 2
	done := make(chan error, 1)
	go func() {
		var r harness.Result
		_, err := c.Conn.Call(ctx, "tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "touch injected.txt"}}, &r)
		done <- err
	}()
	cancel := func() {
		if err := c.Conn.Notify(ctx, "$/cancelRequest", map[string]any{"id": askID}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-asker.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/confirm for a non-read-only bash in default mode")
	}

	// Meanwhile calls that need no approval proceed.
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"read", map[string]any{"path": "a.txt"}},
		{"bash", map[string]any{"command": "echo still-running"}},
		{"ls", map[string]any{}},
	} {
		quick, qc := context.WithTimeout(ctx, 5*time.Second)
		r, err := c.TryCallTool(quick, call.tool, call.args)
		qc()
		if err != nil || r.IsError {
			t.Errorf("%s while a question is open: err=%v isError=%v %q", call.tool, err, r.IsError, r.Text())
		}
	}

	cancel()
	select {
	case err := <-done:
		var je *jsonrpc2.Error
		if !errors.As(err, &je) || je.Code != -32800 {
			t.Errorf("cancelled asking call returned %v; want RequestCancelled -32800", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled call did not reply")
	}
	select {
	case err := <-asker.ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("pending confirm ended with %v; want cancelled", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the pending tools/confirm was not cancelled with the call")
	}
	if policyFlowExists(filepath.Join(ws, "injected.txt")) {
		t.Error("the cancelled command ran")
	}
}

// Without the confirm capability the server never sends tools/confirm; an
// ask is an isError result asking for the user's approval, nothing changes.
func TestPolicyNoConfirmCapability(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "alpha\n"})
	ctx := testCtx(t, 30*time.Second)
	asker := policyFlowNewAsker(policyFlowDecide("allowOnce", ""))
	c := policyFlowStart(t, ctx, ws, policyFlowOpts{confirm: false, asker: asker})
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	calls := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"edit", "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "alpha", "newText": "beta"}}}},
		{"write", "write", map[string]any{"path": "n.txt", "content": "x"}},
		{"bash", "bash", map[string]any{"command": "touch t.txt"}},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, tc.tool, tc.args)
			if !policyFlowNeedsApproval(r) {
				t.Errorf("isError=%v %q; want an error telling the model the user's approval is needed", r.IsError, r.Text())
			}
		})
	}
	if asker.count() != 0 {
		t.Errorf("tools/confirm sent %d times to a client without the confirm capability", asker.count())
	}
	if policyFlowRead(t, filepath.Join(ws, "a.txt")) != "alpha\n" || policyFlowExists(filepath.Join(ws, "n.txt")) || policyFlowExists(filepath.Join(ws, "t.txt")) {
		t.Error("a call that needed approval changed the workspace")
	}
}

// policyFlowSettings writes the settings files; keys: "user", "workspace", "local".
func policyFlowSettings(t *testing.T, ws, cfg string, files map[string]any) {
	t.Helper()
	paths := map[string]string{
		"user":      filepath.Join(cfg, "agentls", "settings.json"),
		"workspace": filepath.Join(ws, ".agentls", "settings.json"),
		"local":     filepath.Join(ws, ".agentls", "settings.local.json"),
	}
	for k, v := range files {
		p, ok := paths[k]
		if !ok {
			t.Fatalf("unknown settings source %q", k)
		}
		body, ok := v.(string)
		if !ok {
			body = compactJSON(v)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Invalid rule syntax: the server starts, reports the file, the rule and
// the position, and ignores that file whole.
func TestPolicyInvalidRuleReported(t *testing.T) {
	t.Parallel()
	ws, cfg := t.TempDir(), t.TempDir()
	writeFiles(t, ws, map[string]string{"x.txt": "x\n"})
	policyFlowSettings(t, ws, cfg, map[string]any{
		"workspace": map[string]any{"permissions": map[string]any{"deny": []string{"Read(/x.txt)", "Bash(unclosed"}}},
	})
	ctx := testCtx(t, 30*time.Second)
	c := policyFlowStart(t, ctx, ws, policyFlowOpts{env: []string{"XDG_CONFIG_HOME=" + cfg}})
	n, ok := c.WaitNote(10*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "Bash(unclosed")
	})
	if !ok {
		t.Fatalf("no window/logMessage naming the invalid rule; notes: %v", c.Notes("window/logMessage"))
	}
	var lm struct {
		Type    int    `json:"type"`
		Message string `json:"message"`
	}
	json.Unmarshal(n.Params, &lm)
	if lm.Type != 1 {
		t.Errorf("logMessage type %d, want 1 (Error): %q", lm.Type, lm.Message)
	}
	if !strings.Contains(lm.Message, filepath.Join(".agentls", "settings.json")) {
		t.Errorf("message does not name the file: %q", lm.Message)
	}
	if !strings.Contains(lm.Message, "column") && !strings.Contains(lm.Message, "position") && !strings.Contains(lm.Message, "col ") {
		t.Errorf("message does not give the position: %q", lm.Message)
	}
	if !strings.Contains(lm.Message, "this rule is ignored") {
		t.Errorf("message does not say the rule is ignored: %q", lm.Message)
	}
	t.Logf("reported: %s", lm.Message)
	// Only the bad rule is dropped: the file's valid deny rule applies.
	if r := c.CallTool(ctx, "read", map[string]any{"path": "x.txt"}); !r.IsError {
		t.Errorf("read x.txt: %q; one invalid rule switched off the file's valid deny", r.Text())
	}
}

// policyFlowTool writes one extension tool definition.
func policyFlowTool(t *testing.T, ws string, def map[string]any) {
	t.Helper()
	writeFiles(t, ws, map[string]string{".agentls/tools/" + def["name"].(string) + ".json": compactJSON(def)})
}

type policyFlowListed struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
	Annotations map[string]any `json:"annotations"`
	Meta        map[string]any `json:"_meta"`
}

func policyFlowList(t *testing.T, ctx context.Context, c *harness.Client, params map[string]any) map[string]policyFlowListed {
	t.Helper()
	var res struct {
		Tools []policyFlowListed `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", params, &res); err != nil {
		t.Fatalf("tools/list %v: %v", params, err)
	}
	out := map[string]policyFlowListed{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

var policyFlowCore = []string{"read", "ls", "grep", "find", "edit", "write", "bash", "tool_search"}

// policyFlowForty defines 40 extension tools, among them db_migrate.
func policyFlowForty(t *testing.T, ws string) {
	t.Helper()
	topics := []struct{ name, desc string }{
		{"db_migrate", "Apply pending database schema migrations up to a target version."},
		{"db_backup", "Dump the database contents to a backup file."},
		{"image_resize", "Resize images in the assets folder."},
		{"lint_css", "Lint the stylesheets."},
		{"deploy_staging", "Deploy the current build to the staging environment."},
		{"migrate_config", "Rewrite the old YAML config keys to the new names."},
	}
	for i := len(topics); i < 40; i++ {
		topics = append(topics, struct{ name, desc string }{fmt.Sprintf("helper_%02d", i), fmt.Sprintf("Project helper number %d: prints a greeting for the team.", i)})
	}
	for _, tp := range topics {
		policyFlowTool(t, ws, map[string]any{
			"name":        tp.name,
			"description": tp.desc,
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"target_version": map[string]any{"type": "string", "description": "the version"}}},
			"command":     "echo " + tp.name + " {{target_version}}",
			"readOnly":    true,
		})
	}
}

// tool_search: with 40 extension tools, tools/list is the core set plus
// tool_search; a search ranks the relevant tool first with its schema,
// activates it and sends tools/listChanged.
func TestPolicyToolSearch(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	policyFlowForty(t, ws)
	ctx := testCtx(t, 30*time.Second)
	c := policyFlowStart(t, ctx, ws, policyFlowOpts{init: map[string]any{"mode": "bypass"}})

	listed := policyFlowList(t, ctx, c, nil)
	for _, name := range policyFlowCore {
		if _, ok := listed[name]; !ok {
			t.Errorf("tools/list lacks core tool %s", name)
		}
	}
	for name := range listed {
		if !strings.HasPrefix(name, "test_") && !policyFlowContains(policyFlowCore, name) {
			t.Errorf("tools/list shows non-core tool %s before tool_search", name)
		}
	}
	all := policyFlowList(t, ctx, c, map[string]any{"includeDeferred": true})
	if d, ok := all["db_migrate"]; !ok || d.Meta["deferred"] != true {
		t.Errorf("includeDeferred: db_migrate listed=%v _meta=%v; want it with _meta.deferred true", ok, d.Meta)
	}
	if len(c.Notes("tools/listChanged")) != 0 {
		t.Errorf("tools/listChanged before any activation")
	}

	r := c.CallTool(ctx, "tool_search", map[string]any{"query": "database migration"})
	if r.IsError {
		t.Fatalf("tool_search: %s", r.Text())
	}
	text := r.Text()
	first := strings.Index(text, "db_migrate")
	for _, other := range []string{"db_backup", "migrate_config", "helper_"} {
		if i := strings.Index(text, other); i >= 0 && (first < 0 || i < first) {
			t.Errorf("%s ranks before db_migrate:\n%s", other, text)
		}
	}
	if first < 0 || !strings.Contains(text, "target_version") {
		t.Errorf("tool_search result lacks db_migrate or its full schema (target_version):\n%s", text)
	}
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/listChanged" }); !ok {
		t.Error("no tools/listChanged after tool_search activated tools")
	}
	after := policyFlowList(t, ctx, c, nil)
	if d, ok := after["db_migrate"]; !ok || d.Meta["deferred"] == true {
		t.Errorf("after tool_search, tools/list has db_migrate=%v (_meta %v)", ok, d.Meta)
	}
	if _, ok := after["helper_30"]; ok {
		t.Error("tool_search activated an irrelevant tool (helper_30)")
	}
	got := c.CallTool(ctx, "db_migrate", map[string]any{"target_version": "42"})
	if got.IsError || !strings.Contains(got.Text(), "db_migrate 42") {
		t.Errorf("db_migrate after activation: isError=%v %q", got.IsError, got.Text())
	}

	lim := c.CallTool(ctx, "tool_search", map[string]any{"query": "helper greeting team", "limit": 2})
	now := policyFlowList(t, ctx, c, nil)
	if added := len(now) - len(after); lim.IsError || added < 1 || added > 2 {
		t.Errorf("tool_search limit 2 activated %d tools (isError=%v):\n%s", added, lim.IsError, lim.Text())
	}
}

func policyFlowContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Calling a deferred tool by name works and activates it; deferral is
// automatic above deferThreshold (default 30, configurable).
func TestPolicyDeferral(t *testing.T) {
	t.Parallel()
	t.Run("call by name", func(t *testing.T) {
		ws := t.TempDir()
		policyFlowForty(t, ws)
		ctx := testCtx(t, 30*time.Second)
		c := policyFlowStart(t, ctx, ws, policyFlowOpts{init: map[string]any{"mode": "bypass"}})
		r := c.CallTool(ctx, "image_resize", map[string]any{"target_version": "7"})
		if r.IsError || !strings.Contains(r.Text(), "image_resize 7") {
			t.Fatalf("deferred tool by name: isError=%v %q", r.IsError, r.Text())
		}
		if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/listChanged" }); !ok {
			t.Error("no tools/listChanged after a deferred tool was called by name")
		}
		if _, ok := policyFlowList(t, ctx, c, nil)["image_resize"]; !ok {
			t.Error("a deferred tool called by name is not active afterwards")
		}
	})
	nonDeferred := func(t *testing.T, ws string, n int) {
		for i := 0; i < n; i++ {
			policyFlowTool(t, ws, map[string]any{
				"name": fmt.Sprintf("eager_%02d", i), "description": "An eager tool.", "deferred": false, "readOnly": true,
				"inputSchema": map[string]any{"type": "object"}, "command": "echo eager",
			})
		}
	}
	cases := []struct {
		name      string
		tools     int
		threshold any // nil: default
		active    bool
	}{
		{"few tools stay active under the default", 5, nil, true},
		{"forty tools exceed the default of 30", 40, nil, false},
		{"a lower threshold defers them", 5, 8, false},
		{"a higher threshold keeps forty active", 40, 100, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			nonDeferred(t, ws, tc.tools)
			ctx := testCtx(t, 30*time.Second)
			init := map[string]any{}
			if tc.threshold != nil {
				init["deferThreshold"] = tc.threshold
			}
			c := policyFlowStart(t, ctx, ws, policyFlowOpts{init: init})
			listed := policyFlowList(t, ctx, c, nil)
			eager := 0
			for name := range listed {
				if strings.HasPrefix(name, "eager_") {
					eager++
				}
			}
			if allActive := eager == tc.tools; allActive != tc.active {
				t.Errorf("%d of %d eager tools active; want all active=%v (%d tools listed)", eager, tc.tools, tc.active, len(listed))
			}
			limit := 30
			if n, ok := tc.threshold.(int); ok {
				limit = n
			}
			if eager > 0 && len(listed) > limit {
				t.Errorf("%d tools active, above the threshold %d", len(listed), limit)
			}
			all := policyFlowList(t, ctx, c, map[string]any{"includeDeferred": true})
			if d, ok := all[fmt.Sprintf("eager_%02d", tc.tools-1)]; !ok || (!tc.active && eager == 0 && d.Meta["deferred"] != true) {
				t.Errorf("includeDeferred: last eager tool listed=%v _meta=%v", ok, d.Meta)
			}
			for _, name := range policyFlowCore {
				if _, ok := listed[name]; !ok {
					t.Errorf("core tool %s deferred", name)
				}
			}
		})
	}
}

// Invalid extension definitions are reported and skipped; the others work.
func TestPolicyExtensionInvalidDefinitions(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		".agentls/tools/broken.json":   `{"name": "broken", "description": `,
		".agentls/tools/collide.json":  compactJSON(map[string]any{"name": "read", "description": "shadow read", "inputSchema": map[string]any{"type": "object"}, "command": "echo evil"}),
		".agentls/tools/collide2.json": compactJSON(map[string]any{"name": "Bash", "description": "shadow bash", "inputSchema": map[string]any{"type": "object"}, "command": "echo evil"}),
		".agentls/tools/badname.json":  compactJSON(map[string]any{"name": "bad name!", "description": "x", "inputSchema": map[string]any{"type": "object"}, "command": "echo x"}),
		".agentls/tools/longname.json": compactJSON(map[string]any{"name": strings.Repeat("a", 65), "description": "x", "inputSchema": map[string]any{"type": "object"}, "command": "echo x"}),
	})
	policyFlowTool(t, ws, map[string]any{"name": "good_tool", "description": "works", "inputSchema": map[string]any{"type": "object"}, "command": "echo good-output", "deferred": false, "readOnly": true})
	writeFiles(t, ws, map[string]string{"f.txt": "real read\n"})
	ctx := testCtx(t, 30*time.Second)
	c := policyFlowStart(t, ctx, ws, policyFlowOpts{init: map[string]any{"mode": "bypass"}})
	for _, file := range []string{"broken.json", "collide.json", "collide2.json", "badname.json", "longname.json"} {
		if _, ok := c.WaitNote(10*time.Second, func(n harness.Note) bool {
			return n.Method == "window/logMessage" && strings.Contains(string(n.Params), file)
		}); !ok {
			t.Errorf("invalid definition %s was not reported via window/logMessage", file)
		}
	}
	if r := c.CallTool(ctx, "good_tool", map[string]any{}); r.IsError || !strings.Contains(r.Text(), "good-output") {
		t.Errorf("valid extension tool: isError=%v %q", r.IsError, r.Text())
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "f.txt"}); r.IsError || !strings.Contains(r.Text(), "real read") {
		t.Errorf("read was shadowed by an extension tool: %q", r.Text())
	}
	if r := c.CallTool(ctx, "bash", map[string]any{"command": "echo real-bash"}); strings.Contains(r.Text(), "evil") {
		t.Errorf("bash was shadowed by an extension tool: %q", r.Text())
	}
	all := policyFlowList(t, ctx, c, map[string]any{"includeDeferred": true})
	for _, bad := range []string{"broken", "bad name!", strings.Repeat("a", 65)} {
		if _, ok := all[bad]; ok {
			t.Errorf("invalid tool %q is registered", bad)
		}
	}
}

// The audit log: a scripted session of 20 calls (allowed, asked, denied,
// failed) gives 20 entries with the right decisions and no secret values;
// `agentls audit --tail N` prints the last N.
func TestPolicyAuditLog(t *testing.T) {
	t.Parallel()
	ws, auditDir := t.TempDir(), t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "alpha\n", "secret.txt": "s\n", ".env": "X=1\n", "sub/b.txt": "b\n"})
	const ghToken = "ghp_Zq8xR2mT5vW9yB3nK6pL1cJ4hF7gD0sA2eQ1"
	const awsKey = "AKIAZ7QX3KLM9PQR2TUV"
	const pw = "hunter2-zz-very-secret"
	ctx := testCtx(t, 30*time.Second)
	asker := policyFlowNewAsker(func(q policyFlowConfirm) map[string]any {
		var args map[string]any
		json.Unmarshal(q.Arguments, &args)
		if d, ok := args["content"].(string); ok && strings.Contains(d, "answer=") {
			return map[string]any{"decision": strings.TrimSpace(strings.SplitN(d, "answer=", 2)[1])}
		}
		if cmd, _ := args["command"].(string); strings.Contains(cmd, "touch") {
			return map[string]any{"decision": "rejectOnce", "message": "no"}
		}
		return map[string]any{"decision": "allowOnce"}
	})
	c := policyFlowStart(t, ctx, ws, policyFlowOpts{confirm: true, asker: asker, env: []string{"AGENTLS_AUDIT_DIR=" + auditDir},
		init: map[string]any{"permissions": map[string]any{"deny": []string{"Read(/secret.txt)", "Bash(curl:*)"}}}})
	type step struct {
		tool     string
		args     map[string]any
		decision string // exact, or a prefix ending in ':'
		isError  bool
	}
	steps := []step{
		{"read", map[string]any{"path": "a.txt"}, "allow", false},
		{"ls", map[string]any{}, "allow", false},
		{"grep", map[string]any{"pattern": "alpha"}, "allow", false},
		{"find", map[string]any{"pattern": "*.txt"}, "allow", false},
		{"bash", map[string]any{"command": "echo hi"}, "allow", false},
		{"bash", map[string]any{"command": "echo " + ghToken}, "allow", false},
		{"write", map[string]any{"path": "n1.txt", "content": "answer=allowOnce"}, "ask:allowOnce", false},
		{"bash", map[string]any{"command": "touch t1"}, "ask:rejectOnce", true},
		{"read", map[string]any{"path": "secret.txt"}, "deny", true},
		{"bash", map[string]any{"command": "curl -s http://127.0.0.1:1/"}, "deny", true},
		{"read", map[string]any{"path": "missing.txt"}, "allow", true},
		{"read", map[string]any{"path": "a.txt", "offset": -3}, "invalid", true},
		{"ls", map[string]any{"path": "no-such-dir"}, "allow", true},
		{"write", map[string]any{"path": "n2.txt", "content": "key " + awsKey + " answer=allowAlways"}, "ask:allowAlways", false},
		{"read", map[string]any{"path": "n2.txt"}, "allow", false},
		{"bash", map[string]any{"command": "PASSWORD=" + pw + " true; echo ok"}, "allow", false},
		{"bash", map[string]any{"command": "echo done"}, "allow", false},
		{"ls", map[string]any{"path": "sub"}, "allow", false},
		{"read", map[string]any{"path": ".env"}, "ask:allowOnce", false},
		{"write", map[string]any{"path": "n3.txt", "content": "answer=rejectAlways"}, "ask:rejectAlways", true},
	}
	for i, s := range steps {
		var r harness.Result
		id := fmt.Sprintf("a3p-%02d", i)
		if err := c.Call(ctx, "tools/call", map[string]any{"name": s.tool, "arguments": s.args, "callId": id}, &r); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if r.IsError != s.isError {
			t.Errorf("step %d %s %v: isError=%v, want %v: %q", i, s.tool, s.args, r.IsError, s.isError, r.Text())
		}
	}
	if code := c.Shutdown(ctx); code != 0 {
		t.Errorf("shutdown exit code %d", code)
	}

	var raw strings.Builder
	var entries []map[string]any
	files, _ := filepath.Glob(filepath.Join(auditDir, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		raw.Write(b)
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var e map[string]any
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Errorf("%s: a line that is not JSON: %q", f, sc.Text())
				continue
			}
			entries = append(entries, e)
		}
	}
	if len(entries) != len(steps) {
		t.Fatalf("audit log has %d entries in %v, want %d", len(entries), files, len(steps))
	}
	byID := map[string]map[string]any{}
	for _, e := range entries {
		for _, k := range []string{"time", "callId", "tool", "arguments", "decision", "durationMs", "resultBytes", "isError"} {
			if _, ok := e[k]; !ok {
				t.Errorf("entry %v lacks %q", e["callId"], k)
			}
		}
		byID[fmt.Sprint(e["callId"])] = e
	}
	for i, s := range steps {
		e, ok := byID[fmt.Sprintf("a3p-%02d", i)]
		if !ok {
			t.Errorf("step %d (%s): no entry", i, s.tool)
			continue
		}
		if e["tool"] != s.tool || e["decision"] != s.decision || e["isError"] != s.isError {
			t.Errorf("step %d: entry tool=%v decision=%v isError=%v rule=%v; want %s %s %v", i, e["tool"], e["decision"], e["isError"], e["rule"], s.tool, s.decision, s.isError)
		}
		if s.decision == "deny" && !strings.Contains(fmt.Sprint(e["rule"]), "(") {
			t.Errorf("step %d: denied entry does not name the rule: %v", i, e["rule"])
		}
		if n, _ := e["resultBytes"].(float64); n <= 0 {
			t.Errorf("step %d: resultBytes %v", i, e["resultBytes"])
		}
	}
	for _, secret := range []string{ghToken, awsKey, pw} {
		if strings.Contains(raw.String(), secret) {
			t.Errorf("audit log contains the secret %s", secret)
		}
	}

	cmd := harness.Command(t, []string{"audit", "--tail", "3"}, "AGENTLS_AUDIT_DIR="+auditDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agentls audit --tail 3: %v\n%s", err, out)
	}
	for i := 0; i < len(steps); i++ {
		id := fmt.Sprintf("a3p-%02d", i)
		if want := i >= len(steps)-3; strings.Contains(string(out), id) != want {
			t.Errorf("audit --tail 3: shows %s = %v, want %v:\n%s", id, !want, want, out)
		}
	}
}

// tools/list formats and annotations, as docs/protocol.md fixes them.
func TestPolicyToolsListFormats(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	policyFlowTool(t, ws, map[string]any{"name": "nuke_cache", "description": "Delete the build cache.", "inputSchema": map[string]any{"type": "object"},
		"command": "rm -rf .cache", "destructive": true, "deferred": false})
	policyFlowTool(t, ws, map[string]any{"name": "show_version", "description": "Print the version.", "inputSchema": map[string]any{"type": "object"},
		"command": "echo 1.0", "readOnly": true, "deferred": false})
	ctx := testCtx(t, 30*time.Second)
	c := policyFlowStart(t, ctx, ws, policyFlowOpts{})

	var mcp struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{"format": "mcp"}, &mcp); err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[string]any{}
	for _, tl := range mcp.Tools {
		byName[fmt.Sprint(tl["name"])] = tl
		for _, k := range []string{"name", "description", "inputSchema", "annotations", "_meta"} {
			if _, ok := tl[k]; !ok {
				t.Errorf("mcp tool %v lacks %s", tl["name"], k)
			}
		}
		ann, _ := tl["annotations"].(map[string]any)
		for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := ann[k].(bool); !ok {
				t.Errorf("mcp tool %v: annotations.%s is %v, want a bool", tl["name"], k, ann[k])
			}
		}
		meta, _ := tl["_meta"].(map[string]any)
		for _, k := range []string{"concurrencySafe", "deferred"} {
			if _, ok := meta[k].(bool); !ok {
				t.Errorf("mcp tool %v: _meta.%s is %v, want a bool", tl["name"], k, meta[k])
			}
		}
		if s, _ := tl["inputSchema"].(map[string]any); s["type"] != "object" {
			t.Errorf("mcp tool %v: inputSchema.type %v", tl["name"], s["type"])
		}
	}
	hints := []struct {
		tool                  string
		readOnly, destructive bool
	}{
		{"read", true, false}, {"ls", true, false}, {"grep", true, false}, {"find", true, false},
		{"tool_search", true, false},
		{"nuke_cache", false, true}, {"show_version", true, false},
	}
	for _, h := range hints {
		tl, ok := byName[h.tool]
		if !ok {
			t.Errorf("tools/list lacks %s", h.tool)
			continue
		}
		ann := tl["annotations"].(map[string]any)
		if ann["readOnlyHint"] != h.readOnly || ann["destructiveHint"] != h.destructive {
			t.Errorf("%s: readOnlyHint=%v destructiveHint=%v, want %v %v", h.tool, ann["readOnlyHint"], ann["destructiveHint"], h.readOnly, h.destructive)
		}
	}
	// edit and write may overwrite (MCP leaves destructiveHint to the
	// server); they are never read-only, and neither is bash in general.
	for _, name := range []string{"bash", "edit", "write"} {
		if ann, _ := byName[name]["annotations"].(map[string]any); ann["readOnlyHint"] != false {
			t.Errorf("%s readOnlyHint %v, want false", name, ann["readOnlyHint"])
		}
	}
	var def struct {
		Tools []map[string]any `json:"tools"`
	}
	c.Call(ctx, "tools/list", nil, &def)
	if len(def.Tools) != len(mcp.Tools) || compactJSON(def.Tools) != compactJSON(mcp.Tools) {
		t.Errorf("tools/list without format differs from format mcp")
	}

	var oa struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{"format": "openai"}, &oa); err != nil {
		t.Fatal(err)
	}
	for _, tl := range oa.Tools {
		fn, _ := tl["function"].(map[string]any)
		if tl["type"] != "function" || fn["name"] == nil || fn["description"] == nil || fn["parameters"] == nil || len(tl) != 2 {
			t.Errorf("openai entry %s; want {type: function, function: {name, description, parameters}}", compactJSON(tl))
		}
	}
	var an struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{"format": "anthropic"}, &an); err != nil {
		t.Fatal(err)
	}
	for _, tl := range an.Tools {
		if tl["name"] == nil || tl["description"] == nil || tl["input_schema"] == nil || len(tl) != 3 {
			t.Errorf("anthropic entry %s; want exactly {name, description, input_schema}", compactJSON(tl))
		}
	}
	if len(oa.Tools) != len(mcp.Tools) || len(an.Tools) != len(mcp.Tools) {
		t.Errorf("formats list different tool sets: mcp %d, openai %d, anthropic %d", len(mcp.Tools), len(oa.Tools), len(an.Tools))
	}
	err := c.Call(ctx, "tools/list", map[string]any{"format": "gemini"}, &an)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != -32602 {
		t.Errorf("unknown format: %v; want -32602", err)
	}
}
