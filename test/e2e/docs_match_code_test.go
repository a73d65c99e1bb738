package e2e

// The documentation as a user reads it, checked black-box: README.md's
// commands, docs/protocol.md's codes and texts, docs/tools.md's quoted
// messages and ARCHITECTURE.md's observable invariants, each run against
// the real binary. Quoted texts are asserted verbatim; numbers are checked
// against `agentls tools --limits`.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// docsMatchRepo is the repository root (two levels above test/e2e).
func docsMatchRepo(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(filepath.Dir(wd))
}

// docsMatchDoc returns a documentation file of the repository.
func docsMatchDoc(t *testing.T, rel string) string {
	t.Helper()
	return readFile(t, filepath.Join(docsMatchRepo(t), rel))
}

// docsMatchLimits is `agentls tools --limits`.
func docsMatchLimits(t *testing.T) map[string]int {
	t.Helper()
	o := runAgentls(t, t.TempDir(), nil, "tools", "--limits")
	if o.code != 0 {
		t.Fatalf("tools --limits: exit %d: %s", o.code, o.stderr)
	}
	var m map[string]int
	if err := json.Unmarshal([]byte(o.stdout), &m); err != nil {
		t.Fatalf("tools --limits: %v\n%s", err, o.stdout)
	}
	return m
}

// docsMatchStart starts an editor-protocol session on ws with initializationOptions.
func docsMatchStart(t *testing.T, ws string, opts map[string]any) (*harness.Client, context.Context) {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	c := harness.Start(t, harness.Options{Root: ws})
	params := map[string]any{}
	if opts != nil {
		params["initializationOptions"] = opts
	}
	c.Initialize(ctx, params)
	return c, ctx
}

// docsMatchWant fails unless r's error flag is isErr and its text holds every want.
func docsMatchWant(t *testing.T, what string, r harness.Result, isErr bool, wants ...string) {
	t.Helper()
	if r.IsError != isErr {
		t.Errorf("%s: isError=%v, want %v; text:\n%s", what, r.IsError, isErr, r.Text())
	}
	for _, w := range wants {
		if !strings.Contains(r.Text(), w) {
			t.Errorf("%s: text lacks %q; got:\n%s", what, w, r.Text())
		}
	}
}

// docsMatchRaw is an LSP-framed connection to agentls that sees every byte.
type docsMatchRaw struct{ *rawClient[map[string]any] }

func docsMatchRawStart(t *testing.T, ws string) docsMatchRaw {
	t.Helper()
	return docsMatchRaw{startRaw(t, []string{"--root", ws}, nil, docsMatchReadFrames)}
}

// docsMatchReadFrames logs every frame's body; a body that is not JSON is noted
// as bad, and so is a broken frame, which ends the reading.
func docsMatchReadFrames(br *bufio.Reader, r *rawClient[map[string]any]) {
	for {
		body, err := readFrame(br)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.noteBad(err.Error())
			}
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			r.noteBad(string(body))
			continue
		}
		r.add(m)
	}
}

func (r docsMatchRaw) sendRaw(body string) { r.writeFrame([]byte(body)) }

// reply waits for the reply with the given id (compared as JSON), skipping
// notifications and requests.
func (r docsMatchRaw) reply(id any) map[string]any {
	r.t.Helper()
	f, ok := r.wait(15*time.Second, func(f map[string]any) bool {
		_, isReq := f["method"]
		return !isReq && sameJSON(f["id"], id)
	})
	if !ok && r.isExited() {
		r.t.Fatalf("connection closed before the reply to %s", compactJSON(id))
	}
	if !ok {
		r.t.Fatalf("no reply to %s in 15 s", compactJSON(id))
	}
	return f
}

func docsMatchInitMsg(id any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "initialize", "params": map[string]any{"capabilities": map[string]any{}}}
}

// TestDocsMatchCLIHelp: README and `agentls --help` name the commands
// tools, call, mcp, audit and --version; each subcommand's --help succeeds
// and names the flags the docs use.
func TestDocsMatchCLIHelp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		args  []string
		wants []string
	}{
		{"top", []string{"--help"}, []string{"agentls tools", "--format", "--all", "agentls call", "--mode", "agentls mcp", "agentls audit [--tail N]", "agentls --version", "-log-file", "-root"}},
		{"tools", []string{"tools", "--help"}, []string{"-format", "-all", "-root", "-limits", "mcp, openai, anthropic or vscode"}},
		{"call", []string{"call", "--help"}, []string{"-mode", "-json", "-root"}},
		{"mcp", []string{"mcp", "--help"}, []string{"-root"}},
		{"audit", []string{"audit", "--help"}, []string{"-tail"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := runAgentls(t, t.TempDir(), nil, tc.args...)
			if o.code != 0 {
				t.Errorf("agentls %q: exit %d, want 0; stderr:\n%s", tc.args, o.code, o.stderr)
			}
			all := o.stdout + o.stderr
			for _, w := range tc.wants {
				if !strings.Contains(all, w) {
					t.Errorf("agentls %q: output lacks %q:\n%s", tc.args, w, all)
				}
			}
		})
	}
	t.Run("version", func(t *testing.T) {
		t.Parallel()
		o := runAgentls(t, t.TempDir(), nil, "--version")
		ws := t.TempDir()
		c := harness.Start(t, harness.Options{Root: ws, Process: true})
		res := c.Initialize(testCtx(t, 20*time.Second), nil)
		v, _ := res["serverInfo"].(map[string]any)["version"].(string)
		if o.code != 0 || v == "" || !strings.Contains(o.stdout+o.stderr, v) {
			t.Errorf("--version: exit %d, output %q; serverInfo.version %q", o.code, o.stdout+o.stderr, v)
		}
	})
}

// docsMatchLimitRow is one row of docs/protocol.md's Limits table.
type docsMatchLimitRow struct {
	name          string
	def, min, max int
}

func docsMatchLimitTable(t *testing.T) []docsMatchLimitRow {
	t.Helper()
	re := regexp.MustCompile("(?m)^\\| `(\\w+)` \\| (\\d+) \\| (\\d+)–(\\d+) \\|")
	var rows []docsMatchLimitRow
	for _, m := range re.FindAllStringSubmatch(docsMatchDoc(t, "docs/protocol.md"), -1) {
		d, _ := strconv.Atoi(m[2])
		lo, _ := strconv.Atoi(m[3])
		hi, _ := strconv.Atoi(m[4])
		rows = append(rows, docsMatchLimitRow{m[1], d, lo, hi})
	}
	if len(rows) < 10 {
		t.Fatalf("docs/protocol.md Limits table: parsed %d rows", len(rows))
	}
	return rows
}

// TestDocsMatchLimitsTable: the Limits table of docs/protocol.md states
// exactly the defaults `agentls tools --limits` prints, and its ranges are
// the ones initialize enforces (a value out of range fails with -32602
// naming the field; the bounds themselves are accepted).
func TestDocsMatchLimitsTable(t *testing.T) {
	slow(t)
	t.Parallel()
	rows := docsMatchLimitTable(t)
	lim := docsMatchLimits(t)
	if len(lim) != len(rows) {
		t.Errorf("tools --limits has %d names, the docs table %d: %v", len(lim), len(rows), lim)
	}
	for _, r := range rows {
		if got, ok := lim[r.name]; !ok || got != r.def {
			t.Errorf("limit %s: docs default %d, tools --limits %d (present %v)", r.name, r.def, got, ok)
		}
	}
	for _, r := range rows {
		for _, v := range []struct {
			val int
			ok  bool
		}{{r.min - 1, false}, {r.max + 1, false}, {r.min, true}, {r.max, true}} {
			t.Run(fmt.Sprintf("%s=%d", r.name, v.val), func(t *testing.T) {
				t.Parallel()
				c := harness.Start(t, harness.Options{Root: t.TempDir()})
				ctx := testCtx(t, 20*time.Second)
				var res map[string]any
				err := c.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"limits": map[string]any{r.name: v.val}}}, &res)
				if v.ok && err != nil {
					t.Errorf("limits.%s=%d (in the documented range): %v", r.name, v.val, err)
				}
				if !v.ok {
					if rpcCode(err) != -32602 || !strings.Contains(fmt.Sprint(err), r.name) {
						t.Errorf("limits.%s=%d (out of range): want -32602 naming the field, got %v", r.name, v.val, err)
					}
				}
			})
		}
	}
}

// TestDocsMatchREADMEToolTable: the numbers README's tool table states
// are the enforced defaults and schema maxima.
func TestDocsMatchREADMEToolTable(t *testing.T) {
	t.Parallel()
	readme := docsMatchDoc(t, "README.md")
	lim := docsMatchLimits(t)
	for _, tc := range []struct {
		row   string
		pairs map[string]int
	}{
		{"| `read` | numbered lines of a file; images as image parts; binary refused with its type | 2000 lines and 51,200 bytes per result, header and notices included, lines cut at 2000 characters, images up to 5 MiB |", map[string]int{"readLines": 2000, "readBytes": 51200, "readLineChars": 2000}},
		{"| 500 entries (max 5000), 65,536 bytes per result |", map[string]int{"lsEntries": 500}},
		{"| 100 matches (max 1000), context ≤ 20, lines cut at 500 characters, 51,200 bytes |", map[string]int{"grepMatches": 100, "grepLineChars": 500, "grepBytes": 51200}},
		{"| 1000 paths (max 10000), 65,536 bytes per result |", map[string]int{"findPaths": 1000}},
		{"| timeout 120 s (max 600; a job has none unless given), 2000 lines / 51,200 bytes per result (the output's tail and the notices), 2 s kill grace; jobs: 1 s wait for an early failure, 8 running, finished kept 30 min (32 jobs) |", map[string]int{"bashTimeout": 120, "bashMaxTimeout": 600, "bashLines": 2000, "bashBytes": 51200}},
	} {
		if !strings.Contains(readme, tc.row) {
			t.Errorf("README tool table lacks %q", tc.row)
		}
		for k, v := range tc.pairs {
			if lim[k] != v {
				t.Errorf("README states %s=%d; tools --limits says %d", k, v, lim[k])
			}
		}
	}
	o := runAgentls(t, t.TempDir(), nil, "tools")
	var tools []map[string]any
	if err := json.Unmarshal([]byte(o.stdout), &tools); err != nil {
		t.Fatalf("agentls tools: %v\n%s", err, o.stdout)
	}
	// The size cap of edit and write (builtin.MaxChangeBytes) as README states it.
	for _, row := range []string{"files up to 64 MiB |", "content and replaced file up to 64 MiB |"} {
		if !strings.Contains(readme, row) {
			t.Errorf("README tool table lacks %q", row)
		}
	}
	for _, tool := range tools {
		if n := tool["name"]; (n == "edit" || n == "write") && !strings.Contains(fmt.Sprint(tool["description"]), "64 MiB") {
			t.Errorf("%s's description does not state the 64 MiB README gives", n)
		}
	}
	maxOf := map[string]string{"ls.limit": "5000", "grep.limit": "1000", "grep.context": "20", "find.limit": "10000", "bash.timeout": "600", "tool_search.limit": "20"}
	for _, tool := range tools {
		props, _ := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)
		for key, want := range maxOf {
			name, prop, _ := strings.Cut(key, ".")
			if tool["name"] != name {
				continue
			}
			p, _ := props[prop].(map[string]any)
			if fmt.Sprint(p["maximum"]) != want {
				t.Errorf("%s schema maximum = %v, README says %s", key, p["maximum"], want)
			}
		}
	}
}

// TestDocsMatchREADMECall: README's example `agentls call read
// '{"path": "README.md", "limit": 5}' --root .` works; several TOOL 'JSON'
// pairs share one session (read then edit); the first failing call ends
// the run with exit 1; `agentls tools --all` lists the deferred extension
// tools of --root.
func TestDocsMatchREADMECall(t *testing.T) {
	t.Parallel()
	t.Run("readme example", func(t *testing.T) {
		t.Parallel()
		lines := strings.Count(docsMatchDoc(t, "README.md"), "\n")
		o := runAgentls(t, docsMatchRepo(t), nil, "call", "read", `{"path": "README.md", "limit": 5}`, "--root", ".")
		want := fmt.Sprintf("README.md, lines 1-5 of %d", lines)
		if o.code != 0 || !strings.Contains(o.stdout, want) || !strings.Contains(o.stdout, "offset=6") {
			t.Errorf("exit %d, want 0 and %q and offset=6; stdout:\n%s\nstderr:\n%s", o.code, want, o.stdout, o.stderr)
		}
	})
	t.Run("shared session", func(t *testing.T) {
		t.Parallel()
		ws := newWorkspace(t, map[string]string{"a.go": "package a\n\nvar x = 1\n"})
		o := runAgentls(t, ws, nil, "call", "read", `{"path":"a.go"}`, "edit", `{"path":"a.go","edits":[{"oldText":"x = 1","newText":"x = 2"}]}`, "--root", ws)
		if o.code != 0 || readFile(t, filepath.Join(ws, "a.go")) != "package a\n\nvar x = 2\n" {
			t.Errorf("read then edit in one run: exit %d; file %q; stdout:\n%s", o.code, readFile(t, filepath.Join(ws, "a.go")), o.stdout)
		}
	})
	t.Run("first failure ends the run", func(t *testing.T) {
		t.Parallel()
		ws := newWorkspace(t, map[string]string{"a.txt": "a\n"})
		o := runAgentls(t, ws, nil, "call", "read", `{"path":"missing.txt"}`, "write", `{"path":"new.txt","content":"x"}`, "--root", ws)
		if o.code != 1 {
			t.Errorf("exit %d, want 1", o.code)
		}
		if _, err := os.Stat(filepath.Join(ws, "new.txt")); err == nil {
			t.Errorf("the call after the failing one ran (new.txt exists)")
		}
	})
	t.Run("readOnly mode denies", func(t *testing.T) {
		t.Parallel()
		ws := newWorkspace(t, nil)
		o := runAgentls(t, ws, nil, "call", "write", `{"path":"new.txt","content":"x"}`, "--root", ws, "--mode", "readOnly")
		if o.code != 1 {
			t.Errorf("--mode readOnly write: exit %d, want 1; stdout:\n%s", o.code, o.stdout)
		}
		if _, err := os.Stat(filepath.Join(ws, "new.txt")); err == nil {
			t.Errorf("--mode readOnly: write created the file")
		}
	})
	t.Run("tools --all", func(t *testing.T) {
		t.Parallel()
		ws := newWorkspace(t, map[string]string{".agentls/tools/run_tests.json": `{"name":"run_tests","description":"Run the unit tests","inputSchema":{"type":"object","properties":{}},"command":"true","readOnly":true}`})
		names := func(args ...string) string {
			o := runAgentls(t, ws, nil, args...)
			var tools []map[string]any
			if err := json.Unmarshal([]byte(o.stdout), &tools); err != nil {
				t.Fatalf("agentls %q: %v\n%s", args, err, o.stdout)
			}
			var s []string
			for _, tl := range tools {
				s = append(s, fmt.Sprint(tl["name"]))
			}
			return strings.Join(s, ",")
		}
		if got := names("tools", "--all", "--root", ws); !strings.Contains(got, "run_tests") {
			t.Errorf("tools --all --root: %s lacks run_tests", got)
		}
		if got := names("tools", "--all"); !strings.Contains(got, "run_tests") {
			t.Errorf("tools --all in the working directory: %s lacks run_tests", got)
		}
		if got := names("tools", "--root", ws); strings.Contains(got, "run_tests") {
			t.Errorf("tools without --all lists the deferred run_tests: %s", got)
		}
	})
	t.Run("formats", func(t *testing.T) {
		t.Parallel()
		for format, key := range map[string]string{"openai": "function", "anthropic": "input_schema", "mcp": "inputSchema"} {
			o := runAgentls(t, t.TempDir(), nil, "tools", "--format", format)
			if o.code != 0 || !strings.Contains(o.stdout, `"`+key+`"`) {
				t.Errorf("tools --format %s: exit %d, no %q in output", format, o.code, key)
			}
		}
		o := runAgentls(t, t.TempDir(), nil, "tools", "--format", "vscode")
		if o.code != 0 || !strings.Contains(o.stdout, `"agentls_read"`) {
			t.Errorf("tools --format vscode: exit %d, no agentls_read", o.code)
		}
	})
	t.Run("audit --tail", func(t *testing.T) {
		t.Parallel()
		ws := newWorkspace(t, map[string]string{"a.txt": "a\n"})
		env := []string{"AGENTLS_AUDIT_DIR=" + t.TempDir()}
		if o := runAgentls(t, ws, env, "call", "read", `{"path":"a.txt"}`, "--root", ws); o.code != 0 {
			t.Fatalf("call: exit %d", o.code)
		}
		o := runAgentls(t, ws, env, "audit", "--tail", "20")
		if o.code != 0 || !strings.Contains(o.stdout, "read") {
			t.Errorf("audit --tail 20: exit %d; stdout:\n%s", o.code, o.stdout)
		}
		o = runAgentls(t, ws, env, "audit", "--tail", "1", "--json")
		var e map[string]any
		if err := json.Unmarshal([]byte(strings.TrimSpace(o.stdout)), &e); err != nil {
			t.Fatalf("audit --json: %v\n%s", err, o.stdout)
		}
		for _, k := range []string{"time", "callId", "tool", "arguments", "decision", "rule", "durationMs", "resultBytes", "isError"} {
			if _, ok := e[k]; !ok {
				t.Errorf("audit entry lacks documented field %q: %v", k, e)
			}
		}
	})
}

// TestDocsMatchErrorCodes: docs/protocol.md's error table, sent raw.
func TestDocsMatchErrorCodes(t *testing.T) {
	t.Parallel()
	r := docsMatchRawStart(t, t.TempDir())
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": map[string]any{}})
	if c := replyCode(r.reply(1)); c != -32002 {
		t.Errorf("request before initialize: code %d, want -32002", c)
	}
	r.sendJSON(docsMatchInitMsg(2))
	if f := r.reply(2); f["result"] == nil {
		t.Fatalf("initialize: %v", f)
	}
	r.sendJSON(docsMatchInitMsg(3))
	if c := replyCode(r.reply(3)); c != -32600 {
		t.Errorf("second initialize: code %d, want -32600", c)
	}
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 4, "method": "no/such"})
	if c := replyCode(r.reply(4)); c != -32601 {
		t.Errorf("unknown method: code %d, want -32601", c)
	}
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": map[string]any{"format": "gemini"}})
	if c := replyCode(r.reply(5)); c != -32602 {
		t.Errorf("unknown tools/list format: code %d, want -32602", c)
	}
	r.sendRaw(`{not json`)
	if f := r.reply(nil); replyCode(f) != -32700 {
		t.Errorf("body that is not JSON: %v, want -32700 with id null", f)
	}
	r.sendRaw(`{"id": 6, "method": "tools/list"}`)
	if c := replyCode(r.reply(6)); c != -32600 {
		t.Errorf("not JSON-RPC 2.0 (no jsonrpc field): code %d, want -32600 with the id echoed", c)
	}
	// Arguments and params may be [] (Lua's {}).
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": []any{}})
	if f := r.reply(7); f["result"] == nil {
		t.Errorf("tools/list with params []: %v", f)
	}
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 8, "method": "shutdown"})
	if f := r.reply(8); f["error"] != nil {
		t.Errorf("shutdown: %v", f)
	}
	for i, m := range []string{"tools/list", "shutdown"} {
		r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 9 + i, "method": m})
		if c := replyCode(r.reply(9 + i)); c != -32600 {
			t.Errorf("%s after shutdown: code %d, want -32600", m, c)
		}
	}
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	if c := r.exitCode(5 * time.Second); c != 0 {
		t.Errorf("exit after shutdown: code %d, want 0", c)
	}
	if bad := r.badFrames(); len(bad) > 0 {
		t.Errorf("stdout carried something that is not a protocol frame: %q", bad[0])
	}
}

// TestDocsMatchExitWithoutShutdown: "exit … code 1 without [shutdown]".
func TestDocsMatchExitWithoutShutdown(t *testing.T) {
	t.Parallel()
	r := docsMatchRawStart(t, t.TempDir())
	r.sendJSON(docsMatchInitMsg(1))
	r.reply(1)
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	if c := r.exitCode(5 * time.Second); c != 1 {
		t.Errorf("exit without shutdown: code %d, want 1", c)
	}
}

// TestDocsMatchEOFCancels: "Closing stdin (EOF) cancels every running
// call and the process exits (within 1 s)"; ARCHITECTURE: no process
// outlives the server.
func TestDocsMatchEOFCancels(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	ws := t.TempDir()
	marker := fmt.Sprintf("docs-eof-%d", time.Now().UnixNano())
	c, ctx := docsMatchStart(t, ws, bypassOptions())
	done := make(chan error, 1)
	go func() {
		_, err := c.TryCallTool(ctx, "bash", map[string]any{"command": "sh -c 'sleep 60; true' " + marker})
		done <- err
	}()
	if !waitUntil(10*time.Second, func() bool { return len(processesWithArg(marker)) > 0 }) {
		t.Fatal("the bash command never started")
	}
	start := time.Now()
	c.CloseStdin()
	if code := c.Wait(5 * time.Second); code == -1 {
		t.Fatal("agentls did not exit after EOF")
	}
	if d := time.Since(start); d > time.Second+500*time.Millisecond {
		t.Errorf("exit took %v after EOF, docs say within 1 s", d)
	}
	if !waitUntil(3*time.Second, func() bool { return len(processesWithArg(marker)) == 0 }) {
		t.Errorf("the bash command survived EOF: pids %v", processesWithArg(marker))
		reapProcessesWithArg(t, marker)
	}
}

// TestDocsMatchCallIDAndCancel: callId is echoed or generated as call-N
// and stamped on tools/details; $/cancelRequest makes the request reply
// -32800.
func TestDocsMatchCallIDAndCancel(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{"a.txt": "one\n"})
	c, ctx := docsMatchStart(t, ws, bypassOptions())
	r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	if !regexp.MustCompile(`^call-\d+$`).MatchString(r.CallID) {
		t.Errorf("generated callId %q, docs: call-N", r.CallID)
	}
	var w harness.Result
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "write", "arguments": map[string]any{"path": "b.txt", "content": "x\n"}}, &w); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^call-\d+$`).MatchString(w.CallID) || w.CallID == r.CallID {
		t.Errorf("second generated callId %q (first %q)", w.CallID, r.CallID)
	}
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
		return n.Method == "tools/details" && strings.Contains(string(n.Params), `"callId":"`+w.CallID+`"`)
	}); !ok {
		t.Errorf("no tools/details stamped with the generated callId %q", w.CallID)
	}
	var e harness.Result
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": "mine-1"}, &e); err != nil || e.CallID != "mine-1" {
		t.Errorf("callId not echoed: %q, %v", e.CallID, err)
	}
	if d, ok := e.Details["durationMs"]; !ok {
		t.Errorf("details lacks durationMs (docs: always has it): %v", e.Details)
	} else if _, num := d.(float64); !num {
		t.Errorf("durationMs is %T", d)
	}
}

// TestDocsMatchCancelReplyCode: the -32800 reply, read on the wire.
func TestDocsMatchCancelReplyCode(t *testing.T) {
	t.Parallel()
	for _, id := range []any{7, "s-7"} {
		r := docsMatchRawStart(t, t.TempDir())
		r.sendJSON(docsMatchInitMsg(1))
		r.reply(1)
		r.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
		r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": "test_block", "arguments": map[string]any{}}})
		// A cancel that overtakes the call is lost: repeat it until the reply.
		stop := make(chan struct{})
		go func() {
			for {
				r.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": map[string]any{"id": id}})
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
		f := r.reply(id)
		close(stop)
		if c := replyCode(f); c != -32800 {
			t.Errorf("cancel of id %v: code %d, want -32800", id, c)
		}
	}
}

// TestDocsMatchLs: docs/tools.md's ls section.
func TestDocsMatchLs(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{
		".gitignore":   "build/\n*.log\n",
		".hid":         "x\n",
		"a.txt":        "a\n",
		"a.log":        "log\n",
		"build/o.txt":  "o\n",
		"sub/s.txt":    "s\n",
		".git/HEAD":    "ref: refs/heads/main\n",
		"one/.ignore":  "skip.me\n",
		"one/skip.me":  "x\n",
		"one/keep.txt": "x\n",
	})
	symlink(t, "a.txt", filepath.Join(ws, "link.txt"))
	c, ctx := docsMatchStart(t, ws, bypassOptions())
	r := c.CallTool(ctx, "ls", map[string]any{})
	body := []string{".gitignore", ".hid", "a.txt", "link.txt@ -> a.txt", "one/", "sub/"}
	docsMatchWant(t, "ls root", r, false, strings.Join(body, "\n"), "[2 ignored entries hidden", "includeIgnored: true")
	if strings.Contains(r.Text(), ".git/") || strings.Contains(r.Text(), "a.log") || strings.Contains(r.Text(), "build/") {
		t.Errorf("ls root shows .git or an ignored entry:\n%s", r.Text())
	}
	r = c.CallTool(ctx, "ls", map[string]any{"path": "one"})
	docsMatchWant(t, "ls one", r, false, "keep.txt", "[1 ignored entry hidden", "includeIgnored: true")
	r = c.CallTool(ctx, "ls", map[string]any{"includeIgnored": true})
	docsMatchWant(t, "ls includeIgnored", r, false, "a.log\na.txt", "build/")
	if strings.Contains(r.Text(), ".git/") || strings.Contains(r.Text(), "ignored entr") {
		t.Errorf("ls includeIgnored: .git listed or a hidden count:\n%s", r.Text())
	}
	r = c.CallTool(ctx, "ls", map[string]any{"path": "build"})
	docsMatchWant(t, "ls of an ignored directory", r, false, "ignored", "includeIgnored: true")
	if strings.Contains(r.Text(), "(empty)") {
		t.Errorf("an ignored directory whose entries were hidden is called (empty):\n%s", r.Text())
	}
	r = c.CallTool(ctx, "ls", map[string]any{"path": "a.txt"})
	docsMatchWant(t, "ls of a file", r, true, "read")
	r = c.CallTool(ctx, "ls", map[string]any{"path": "nope"})
	docsMatchWant(t, "ls of a missing path", r, true, "find")
}

// TestDocsMatchLsLimit: "Default limit 500 entries, maximum 5000; the
// notice gives how many of how many entries are shown and the limit to ask for".
func TestDocsMatchLsLimit(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for i := 0; i < 501; i++ {
		writeFile(t, filepath.Join(ws, fmt.Sprintf("f%03d", i)), "")
	}
	c, ctx := docsMatchStart(t, ws, bypassOptions())
	r := c.CallTool(ctx, "ls", map[string]any{})
	docsMatchWant(t, "ls 501 entries", r, false, "500", "501", "limit")
	if n := strings.Count(r.Text(), "\nf"); n != 500 {
		t.Errorf("ls showed %d entries, want 500", n)
	}
	r = c.CallTool(ctx, "ls", map[string]any{"limit": 5001})
	docsMatchWant(t, "ls limit above 5000", r, true, "5000")
}

// docsMatchPEM is a private key whose body lines are random base64.
func docsMatchPEM(lines int) (string, []string) {
	var body []string
	for i := 0; i < lines; i++ {
		body = append(body, channelsRand(fmt.Sprintf("docs-pem-%d", i), 64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"))
	}
	return "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Join(body, "\n") + "\n-----END RSA PRIVATE KEY-----\n", body
}

// TestDocsMatchGrep: docs/tools.md's grep section, both backends.
func TestDocsMatchGrep(t *testing.T) {
	t.Parallel()
	var big strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&big, "match %s %d\n", strings.Repeat("x", 400), i)
	}
	pem, body := docsMatchPEM(12)
	ws := newWorkspace(t, map[string]string{
		"big.txt":    big.String(),
		"bin.dat":    "bin\x00ary hello\n",
		".hid/h.txt": "hello hidden\n",
		".git/x":     "hello git\n",
		"key.pem":    pem,
		"small.txt":  "one hello\n",
	})
	if err := syscall.Mkfifo(filepath.Join(ws, "ff"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"rg", "go"} {
		t.Run(backend, func(t *testing.T) {
			if backend == "rg" {
				if _, err := exec.LookPath("rg"); err != nil {
					t.Skip("rg not on PATH")
				}
			}
			c := harness.Start(t, harness.Options{Root: ws, Env: []string{"AGENTLS_GREP_BACKEND=" + backend}})
			ctx := testCtx(t, 30*time.Second)
			c.Initialize(ctx, bypass())
			r := c.CallTool(ctx, "grep", map[string]any{"pattern": "match"})
			docsMatchWant(t, "over 100 matches", r, false, "limit=200")
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": "match", "limit": 1000})
			last := regexp.MustCompile(`(?m)^big\.txt:(\d+): `).FindAllStringSubmatch(r.Text(), -1)
			if len(last) == 0 {
				t.Fatalf("no matches:\n%s", limitsHead(r.Text()))
			}
			n, _ := strconv.Atoi(last[len(last)-1][1])
			docsMatchWant(t, "over 51,200 bytes", r, false, "51200", fmt.Sprintf(`read {"path": "big.txt", "offset": %d}`, n+1))
			if len(r.Text()) > 51200+1024 {
				t.Errorf("grep text is %d bytes, limit 51,200", len(r.Text()))
			}
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": "hello", "path": "bin.dat"})
			docsMatchWant(t, "binary path", r, false, "binary")
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": "a\x00b"})
			docsMatchWant(t, "NUL pattern", r, true, "NUL")
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": "a\nb"})
			docsMatchWant(t, "newline pattern", r, true, "newline")
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": "x", "path": "ff"})
			docsMatchWant(t, "FIFO path", r, true, "not a regular file")
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": "hello"})
			docsMatchWant(t, "hidden searched, .git never", r, false, ".hid/h.txt:1: hello hidden", "small.txt:1: one hello")
			if strings.Contains(r.Text(), "hello git") || strings.Contains(r.Text(), "bin.dat:") {
				t.Errorf(".git or a binary file searched:\n%s", r.Text())
			}
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": body[5][:20], "literal": true, "context": 2})
			for _, b := range body {
				if strings.Contains(r.Text(), b[:20]) {
					t.Errorf("grep shows a PEM body line unmasked:\n%s", r.Text())
					break
				}
			}
			docsMatchWant(t, "PEM body masked", r, false, "[REDACTED:private-key]")
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": "("})
			docsMatchWant(t, "invalid regex", r, true)
		})
	}
}

// TestDocsMatchBash: docs/tools.md's bash section.
func TestDocsMatchBash(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	c, ctx := docsMatchStart(t, ws, bypassOptions())
	r := c.CallTool(ctx, "bash", map[string]any{"command": "touch ran1; echo a\x00b"})
	docsMatchWant(t, "NUL command", r, true, "NUL")
	r = c.CallTool(ctx, "bash", map[string]any{"command": "touch ran2; : " + strings.Repeat("a", 131072-len("touch ran2; : "))})
	docsMatchWant(t, "command of 131,072 bytes", r, true, "131071")
	r = c.CallTool(ctx, "bash", map[string]any{"command": "touch ran3; : " + strings.Repeat("a", 131071-len("touch ran3; : "))})
	docsMatchWant(t, "command of 131,071 bytes", r, false)
	for i, want := range []bool{false, false, true} {
		if _, err := os.Stat(filepath.Join(ws, fmt.Sprintf("ran%d", i+1))); (err == nil) != want {
			t.Errorf("ran%d exists=%v, want %v (refused commands must not run)", i+1, err == nil, want)
		}
	}
	r = c.CallTool(ctx, "bash", map[string]any{"command": "exit 3"})
	docsMatchWant(t, "exit 3", r, true, "[Exit code 3]")
	r = c.CallTool(ctx, "bash", map[string]any{"command": "echo $PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT $GIT_EDITOR $EDITOR $VISUAL $AGENTLS $TERM $NO_COLOR; pwd; cat"})
	docsMatchWant(t, "environment", r, false, "cat cat 0 true true true 1 dumb 1\n"+ws)
	r = c.CallTool(ctx, "bash", map[string]any{"command": "echo ms", "timeout": 120000})
	docsMatchWant(t, "timeout in ms", r, false, "ms")
	if !strings.Contains(fmt.Sprint(r.Details["normalized"]), "timeout") {
		t.Errorf("timeout 120000 not reported in details.normalized: %v", r.Details)
	}
	r = c.CallTool(ctx, "bash", map[string]any{"command": "echo x", "timeout": 700})
	docsMatchWant(t, "timeout 700", r, true, "600")
	r = c.CallTool(ctx, "bash", map[string]any{"command": "echo 'FAIL: TestBuried'; seq 1 2500"})
	docsMatchWant(t, "long output", r, false, "FAIL: TestBuried", "2500")
	m := regexp.MustCompile(`read \{"path": "([^"]+)"`).FindStringSubmatch(r.Text())
	if m == nil {
		t.Fatalf("no read call for the spill file in:\n%s", limitsHead(r.Text()))
	}
	if !strings.HasPrefix(r.Text(), "") || strings.Index(r.Text(), "FAIL: TestBuried") > strings.Index(r.Text(), "\n2500") {
		t.Errorf("the failure line is not listed before the tail")
	}
	s := c.CallTool(ctx, "read", map[string]any{"path": m[1], "limit": 2})
	docsMatchWant(t, "read the spill file", s, false, "FAIL: TestBuried")
}

// TestDocsMatchToolSearch: docs/tools.md's tool_search section.
func TestDocsMatchToolSearch(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{
		".agentls/tools/run_tests.json":  `{"name":"run_tests","description":"Run the unit tests matching a pattern","inputSchema":{"type":"object","properties":{"pattern":{"type":"string"}}},"command":"echo {{pattern}}","readOnly":true}`,
		".agentls/tools/db_migrate.json": `{"name":"db_migrate","description":"Apply database migrations","inputSchema":{"type":"object","properties":{}},"command":"true"}`,
	})
	c, ctx := docsMatchStart(t, ws, bypassOptions())
	waitTool(t, c, ctx, "run_tests")
	for _, q := range []string{"", "   "} {
		r := c.CallTool(ctx, "tool_search", map[string]any{"query": q})
		docsMatchWant(t, fmt.Sprintf("query %q", q), r, true, "query")
	}
	before := len(c.Notes("tools/listChanged"))
	r := c.CallTool(ctx, "tool_search", map[string]any{"query": "unit tests"})
	docsMatchWant(t, "first search", r, false, "## run_tests", "Input schema:")
	if !waitUntil(5*time.Second, func() bool { return len(c.Notes("tools/listChanged")) > before }) {
		t.Errorf("no tools/listChanged after tool_search activated run_tests")
	}
	r = c.CallTool(ctx, "tool_search", map[string]any{"query": "unit tests"})
	docsMatchWant(t, "repeated search", r, false, "Already in your tool list", "run_tests")
	q := strings.Repeat("zq", 150)
	r = c.CallTool(ctx, "tool_search", map[string]any{"query": q})
	if strings.Contains(r.Text(), q[:101]) {
		t.Errorf("the answer repeats more than 100 characters of the query:\n%s", r.Text())
	}
	r = c.CallTool(ctx, "db_migrate", map[string]any{})
	docsMatchWant(t, "a deferred tool called by name", r, false)
}

// TestDocsMatchSecretsInDiffsAndLogs: PEM body lines are masked in the
// unified diff and TextEdits of write and edit (also in tools/details);
// window/logMessage texts are masked.
func TestDocsMatchSecretsInDiffsAndLogs(t *testing.T) {
	t.Parallel()
	pem, body := docsMatchPEM(20)
	tok := "ghp_" + channelsRand("docs-gh", 36, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
	ws := newWorkspace(t, map[string]string{
		"k.pem":                  pem,
		".agentls/settings.json": `{"permissions":{"allow":["Read(` + tok + `"]}}`,
	})
	c, ctx := docsMatchStart(t, ws, map[string]any{"mode": "bypass", tok: 1})
	leak := func(where, s string) {
		t.Helper()
		if strings.Contains(s, tok) {
			t.Errorf("%s carries the GitHub token unmasked", where)
		}
		for i, b := range body {
			if strings.Contains(s, b) {
				t.Errorf("%s carries PEM body line %d unmasked", where, i+1)
				return
			}
		}
	}
	w := c.CallTool(ctx, "write", map[string]any{"path": "new.pem", "content": pem})
	docsMatchWant(t, "write a key", w, false)
	dj, _ := json.Marshal(w.Details)
	leak("write details", string(dj))
	c.CallTool(ctx, "read", map[string]any{"path": "k.pem"})
	e := c.CallTool(ctx, "edit", map[string]any{"path": "k.pem", "edits": []any{map[string]any{"oldText": body[10], "newText": "CHANGED"}}})
	docsMatchWant(t, "edit inside a key", e, false)
	dj, _ = json.Marshal(e.Details)
	if !strings.Contains(string(dj), "unifiedDiff") {
		t.Errorf("edit details lack unifiedDiff: %s", dj)
	}
	leak("edit details", string(dj))
	var notes strings.Builder
	for _, n := range c.Notes("") {
		notes.Write(n.Params)
	}
	leak("notifications", notes.String())
	if logs := strings.Join(logMessages(c, 0), "\n"); !strings.Contains(logs, "[REDACTED") {
		t.Errorf("logMessages (settings rule and option name quoting a token) show no masking:\n%s", logs)
	}
}

// docsMatchMCPWait bounds every wait for an MCP reply.
const docsMatchMCPWait = 15 * time.Second

// docsMatchMCP is `agentls mcp` spoken to in newline-delimited JSON.
type docsMatchMCP struct{ *mcpRawClient }

func docsMatchMCPStart(t *testing.T, ws string) docsMatchMCP {
	t.Helper()
	return docsMatchMCP{startMCPRaw(t, []string{"mcp", "--root", ws}, nil)}
}

func (m docsMatchMCP) initialize() {
	m.t.Helper()
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "a14d", "version": "1"}}})
	if r := m.mustReply(0, docsMatchMCPWait); r.Obj["result"] == nil {
		m.t.Fatalf("MCP initialize: %v", r.Obj)
	}
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
}

func docsMatchMCPCall(id any, name string, args any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}}
}

// docsMatchMCPText joins a tools/call reply's text parts.
func docsMatchMCPText(r map[string]any) (string, bool) {
	res, _ := r["result"].(map[string]any)
	var s []string
	parts, _ := res["content"].([]any)
	for _, p := range parts {
		if pm, _ := p.(map[string]any); pm["type"] == "text" {
			s = append(s, fmt.Sprint(pm["text"]))
		}
	}
	isErr, _ := res["isError"].(bool)
	return strings.Join(s, "\n"), isErr
}

// TestDocsMatchMCP: docs/protocol.md's `agentls mcp` section: a tool
// call with _meta.callId and _meta.details, an unknown tool as an isError
// result with the closest name, bad lines answered with the session going
// on, and the "Ending" on EOF.
func TestDocsMatchMCP(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{"a.txt": "hello\nworld\n"})
	m := docsMatchMCPStart(t, ws)
	m.initialize()
	m.sendJSON(docsMatchMCPCall(1, "read", map[string]any{"path": "a.txt"}))
	r := m.mustReply(1, docsMatchMCPWait).Obj
	if text, isErr := docsMatchMCPText(r); isErr || !strings.Contains(text, "a.txt, lines 1-2 of 2\n     1→hello") {
		t.Errorf("MCP read: isError %v, text %q", isErr, text)
	}
	meta, _ := r["result"].(map[string]any)["_meta"].(map[string]any)
	if _, ok := meta["callId"]; !ok {
		t.Errorf("MCP result lacks _meta.callId: %v", r)
	}
	if _, ok := meta["details"]; !ok {
		t.Errorf("MCP result lacks _meta.details: %v", r)
	}
	m.sendJSON(docsMatchMCPCall(2, "reed", map[string]any{"path": "a.txt"}))
	if text, isErr := docsMatchMCPText(m.mustReply(2, docsMatchMCPWait).Obj); !isErr || !strings.Contains(text, `"read"`) || !strings.Contains(text, "write") {
		t.Errorf("MCP unknown tool: isError %v, text %q (want the closest name and the tools there are)", isErr, text)
	}
	m.writeRaw([]byte("{not json\n"))
	if c := replyCode(m.mustReply(nil, docsMatchMCPWait).Obj); c != -32700 {
		t.Errorf("MCP line that is not JSON: code %d, want -32700", c)
	}
	m.writeRaw([]byte(`{"id": 3, "method": "ping"}` + "\n"))
	if c := replyCode(m.mustReply(3, docsMatchMCPWait).Obj); c != -32600 {
		t.Errorf("MCP message that is not JSON-RPC 2.0: code %d, want -32600", c)
	}
	m.writeRaw([]byte("[]\n"))
	if c := replyCode(m.mustReply(nil, docsMatchMCPWait).Obj); c != -32600 {
		t.Errorf("MCP empty batch: code %d, want -32600", c)
	}
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 4, "method": "ping"})
	if r := m.mustReply(4, docsMatchMCPWait).Obj; r["error"] != nil {
		t.Errorf("the session did not go on after bad lines: %v", r)
	}
	if bad := m.badFrames(); len(bad) > 0 {
		t.Errorf("MCP stdout carried lines that are not JSON: %q", bad)
	}
}

// TestDocsMatchMCPEnding: "At the end of input, the requests read before
// it are still answered …: tool calls get 250 ms to finish, then are
// cancelled (commands are killed) …; after at most 500 ms more the session
// ends and the process exits."
func TestDocsMatchMCPEnding(t *testing.T) {
	t.Parallel()
	// MCP has no bypass option and this client no elicitation: a workspace
	// allow rule lets the command run.
	ws := newWorkspace(t, map[string]string{"a.txt": "hello\n", ".agentls/settings.json": `{"permissions":{"allow":["Bash(sleep:*)"]}}`})
	// The shell's command line is the marker: bash -c stays the parent of sleep.
	marker := fmt.Sprintf("sleep 60 && echo docs-mcp-%d", time.Now().UnixNano())
	m := docsMatchMCPStart(t, ws)
	m.initialize()
	m.sendJSON(docsMatchMCPCall(1, "bash", map[string]any{"command": marker}))
	if !waitUntil(10*time.Second, func() bool { return len(processesWithArg(marker)) > 0 }) {
		t.Fatal("the MCP bash command never started")
	}
	m.sendJSON(docsMatchMCPCall(2, "read", map[string]any{"path": "a.txt"}))
	start := time.Now()
	m.stdin.Close()
	if text, isErr := docsMatchMCPText(m.mustReply(2, docsMatchMCPWait).Obj); isErr || !strings.Contains(text, "hello") {
		t.Errorf("read piped before EOF: isError %v, %q", isErr, text)
	}
	r := m.mustReply(1, docsMatchMCPWait).Obj
	if r["error"] == nil && r["result"] == nil {
		t.Errorf("bash running at EOF got no answer: %v", r)
	}
	select {
	case <-m.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("agentls mcp did not exit after EOF")
	}
	if d := time.Since(start); d > 750*time.Millisecond+750*time.Millisecond {
		t.Errorf("exit %v after EOF; docs: 250 ms + at most 500 ms", d)
	}
	if !waitUntil(3*time.Second, func() bool { return len(processesWithArg(marker)) == 0 }) {
		t.Errorf("the command outlived agentls mcp: %v", processesWithArg(marker))
		reapProcessesWithArg(t, marker)
	}
}

// TestDocsMatchInvariants: ARCHITECTURE.md's invariants that show from
// outside: paths are resolved once and refused when they leave the
// workspace; a crash's temp files are removed at the next start; a write
// is atomic and never replaces what it did not read.
func TestDocsMatchInvariants(t *testing.T) {
	t.Parallel()
	outside := newWorkspace(t, map[string]string{"secret.txt": "outside\n"})
	ws := newWorkspace(t, map[string]string{"a.txt": "a\n", "sub/.agentls-tmp-123": "half"})
	writeFile(t, filepath.Join(ws, ".agentls-tmp-abc"), "half-written")
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(ws, "out.txt"))
	symlink(t, outside, filepath.Join(ws, "outdir"))
	symlink(t, filepath.Join(outside, "nope"), filepath.Join(ws, "dangling"))
	c, ctx := docsMatchStart(t, ws, bypassOptions())
	if !waitUntil(5*time.Second, func() bool {
		_, e1 := os.Stat(filepath.Join(ws, ".agentls-tmp-abc"))
		_, e2 := os.Stat(filepath.Join(ws, "sub/.agentls-tmp-123"))
		return e1 != nil && e2 != nil
	}) {
		t.Errorf("leftover .agentls-tmp-* files were not removed at start")
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read", map[string]any{"path": "out.txt"}, "outside the workspace"},
		{"read", map[string]any{"path": "outdir/secret.txt"}, "outside"},
		{"read", map[string]any{"path": "../x"}, ".."},
		{"read", map[string]any{"path": filepath.Join(outside, "secret.txt")}, "outside"},
		{"read", map[string]any{"path": "~/x"}, "~"},
		{"read", map[string]any{"path": "/dev/null"}, "refused"},
		{"read", map[string]any{"path": "a\x00.txt"}, "NUL"},
		{"write", map[string]any{"path": "out.txt", "content": "x"}, "outside"},
		{"write", map[string]any{"path": "outdir/new.txt", "content": "x"}, "outside"},
		{"write", map[string]any{"path": "dangling", "content": "x"}, "outside"},
		{"ls", map[string]any{"path": "outdir"}, "outside"},
	} {
		r := c.CallTool(ctx, tc.tool, tc.args)
		docsMatchWant(t, fmt.Sprintf("%s %v", tc.tool, tc.args), r, true, tc.want)
		if strings.Contains(r.Text(), "outside\n") && !strings.Contains(r.Text(), "refused") {
			t.Errorf("%s %v leaked the outside file", tc.tool, tc.args)
		}
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "outside\n" {
		t.Errorf("a write through a symlink changed the outside file: %q", got)
	}
	if _, err := os.Stat(filepath.Join(outside, "nope")); err == nil {
		t.Errorf("a write through a dangling symlink created a file outside")
	}
	for _, tc := range []struct{ tool, pattern string }{{"grep", "outside"}, {"find", "secret*"}} {
		r := c.CallTool(ctx, tc.tool, map[string]any{"pattern": tc.pattern})
		if strings.Contains(r.Text(), "secret.txt") && tc.tool == "find" || strings.Contains(r.Text(), ":1: outside") {
			t.Errorf("%s followed a symlink out of the workspace:\n%s", tc.tool, r.Text())
		}
	}
	// "A write never replaces what it did not read."
	r := c.CallTool(ctx, "write", map[string]any{"path": "a.txt", "content": "b\n"})
	docsMatchWant(t, "write without a read", r, true)
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "a\n" {
		t.Errorf("write without a read replaced the file: %q", got)
	}
}

// TestDocsMatchRead: docs/tools.md's read section, its quoted texts.
func TestDocsMatchRead(t *testing.T) {
	t.Parallel()
	var lines strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	ws := newWorkspace(t, map[string]string{
		"long.txt":   strings.Repeat("y", 2500) + "\nshort\n",
		"wide.txt":   strings.Repeat("z", 60000) + "\n",
		"many.txt":   lines.String(),
		"a.txt":      "hello\nworld\n",
		"crlf.txt":   "a\r\nb\r\n",
		"bom.txt":    "\ufeffbom\n",
		"sub/s.txt":  "s\n",
		"elf.bin":    "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00",
		"image.txt":  "\x89PNG\r\n\x1a\n" + string(make([]byte, 32)),
		"config.txt": "x\n",
	})
	if err := syscall.Mkfifo(filepath.Join(ws, "ff"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, ctx := docsMatchStart(t, ws, bypassOptions())
	for _, tc := range []struct {
		name  string
		args  map[string]any
		isErr bool
		wants []string
	}{
		{"header and numbered lines", map[string]any{"path": "a.txt"}, false, []string{"a.txt, lines 1-2 of 2\n     1→hello\n     2→world"}},
		{"2000 lines in all, then offset", map[string]any{"path": "many.txt"}, false, []string{"many.txt, lines 1-1998 of 2500", "offset=1999"}},
		{"line cut marker", map[string]any{"path": "long.txt"}, false, []string{"… [line cut: 2000 of 2500 characters shown]"}},
		{"first line over the byte limit", map[string]any{"path": "wide.txt"}, false, []string{"60000", "sed -n '1p' wide.txt | cut -b"}},
		{"offset past the end", map[string]any{"path": "a.txt", "offset": 9}, true, []string{"2 lines"}},
		{"offset 0 means 1", map[string]any{"path": "a.txt", "offset": 0}, false, []string{"lines 1-2 of 2"}},
		{"CRLF noted", map[string]any{"path": "crlf.txt"}, false, []string{"CRLF", "     1→a\n"}},
		{"BOM stripped", map[string]any{"path": "bom.txt"}, false, []string{"     1→bom"}},
		{"directory suggests ls", map[string]any{"path": "sub"}, true, []string{"ls"}},
		{"FIFO refused", map[string]any{"path": "ff"}, true, []string{"not a regular file"}},
		{"binary with its type", map[string]any{"path": "elf.bin"}, true, []string{"ELF executable"}},
		{"missing file suggests", map[string]any{"path": "confg.txt"}, true, []string{"config.txt"}},
		{"negative offset", map[string]any{"path": "a.txt", "offset": -3}, true, []string{"offset", "-3"}},
		{"usage line", map[string]any{}, true, []string{"Usage: read {path: string, offset?: integer, limit?: integer}"}},
	} {
		r := c.CallTool(ctx, "read", tc.args)
		docsMatchWant(t, tc.name, r, tc.isErr, tc.wants...)
	}
	r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt", "limit": 5000})
	if !strings.Contains(fmt.Sprint(r.Details["normalized"]), "2000") {
		t.Errorf("limit 5000 not lowered to 2000 in details.normalized: %v", r.Details)
	}
	r = c.CallTool(ctx, "read", map[string]any{"path": "image.txt"})
	var img bool
	for _, p := range r.Content {
		img = img || (p["type"] == "image" && p["mimeType"] == "image/png")
	}
	if !img && !r.IsError {
		t.Errorf("a PNG named .txt is not an image part (docs: detected by content): %s", r.Text())
	}
}

// TestDocsMatchLenientInput: docs/tools.md's "Shared behaviour".
func TestDocsMatchLenientInput(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{"a.txt": "hello\n"})
	c, ctx := docsMatchStart(t, ws, bypassOptions())
	for _, tc := range []struct {
		name, tool string
		args       any
		isErr      bool
		norm       string
		wants      []string
	}{
		{"file_path alias", "read", map[string]any{"file_path": "a.txt"}, false, "file_path", []string{"1→hello"}},
		{"numeric string", "read", map[string]any{"path": "a.txt", "offset": "1"}, false, "offset", []string{"1→hello"}},
		{"unknown field dropped", "read", map[string]any{"path": "a.txt", "colour": "red"}, false, "colour", []string{"1→hello"}},
		{"nested under input", "read", map[string]any{"input": map[string]any{"path": "a.txt"}}, false, "input", []string{"1→hello"}},
		{"@ prefix", "read", map[string]any{"path": "@a.txt"}, false, "", []string{"1→hello"}},
		{"ignore_case style", "grep", map[string]any{"pattern": "HELLO", "ignore_case": true}, false, "ignore_case", []string{"a.txt:1: hello"}},
		{"grep -F", "grep", map[string]any{"pattern": "h.llo", "-F": true}, false, "-F", []string{"No matches"}},
		{"run_in_background starts a job", "bash", map[string]any{"command": "echo x", "run_in_background": true}, false, "", []string{"job-1", "x\n", "exited 0"}},
		{"multiline refused", "grep", map[string]any{"pattern": "a", "multiline": true}, true, "", []string{"context"}},
		{"find case_sensitive refused", "find", map[string]any{"pattern": "*.txt", "case_sensitive": false}, true, "", []string{"pattern"}},
		{"unknown tool view", "view", map[string]any{"path": "a.txt"}, true, "", []string{"Did you mean \"read\""}},
		{"unknown tool glob", "glob", map[string]any{"pattern": "*"}, true, "", []string{"Did you mean \"find\""}},
		{"mcp__agentls__grep", "mcp__agentls__grep", map[string]any{"pattern": "x"}, true, "", []string{"Did you mean \"grep\""}},
		{"arguments []", "ls", []any{}, false, "", []string{"a.txt"}},
	} {
		r := c.CallTool(ctx, tc.tool, tc.args)
		docsMatchWant(t, tc.name, r, tc.isErr, tc.wants...)
		if tc.norm != "" && !strings.Contains(fmt.Sprint(r.Details["normalized"]), tc.norm) {
			t.Errorf("%s: details.normalized %v does not mention %q", tc.name, r.Details["normalized"], tc.norm)
		}
	}
}

// TestDocsMatchEdit: docs/tools.md's edit and write texts.
func TestDocsMatchEdit(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{"a.go": "package a\n\nvar x = 1\nvar y = 1\n", "c.txt": "a\r\nb\r\n"})
	c, ctx := docsMatchStart(t, ws, bypassOptions())
	r := c.CallTool(ctx, "edit", editCall("a.go", "x = 1", "x = 2"))
	docsMatchWant(t, "edit before read", r, true, "read")
	c.CallTool(ctx, "read", map[string]any{"path": "a.go", "limit": 1})
	r = c.CallTool(ctx, "edit", editCall("a.go", "= 1", "= 2"))
	docsMatchWant(t, "two matches", r, true, "add context or set replaceAll", "3", "4")
	r = c.CallTool(ctx, "edit", editCall("a.go", "var x = 1", "var x = 1"))
	docsMatchWant(t, "identical result", r, true, "no change")
	r = c.CallTool(ctx, "edit", editCall("a.go", "var z = 1", "q"))
	docsMatchWant(t, "not found", r, true, "var")
	r = c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "edits": []any{map[string]any{"oldText": "= 1", "newText": "= 2", "replaceAll": true}}, "dryRun": true})
	docsMatchWant(t, "dry run", r, false)
	if got := readFile(t, filepath.Join(ws, "a.go")); got != "package a\n\nvar x = 1\nvar y = 1\n" {
		t.Errorf("dryRun wrote the file: %q", got)
	}
	r = c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "edits": []any{map[string]any{"oldText": "= 1", "newText": "= 2", "replaceAll": true}}})
	docsMatchWant(t, "replaceAll", r, false, "Edited a.go: 2 replacements, lines 3 and 4.")
	for _, k := range []string{"kind", "uri", "path", "unifiedDiff", "edits", "firstChangedLine", "matchLevel", "oldHash", "newHash"} {
		if _, ok := r.Details[k]; !ok {
			t.Errorf("edit details lack %q: %v", k, r.Details)
		}
	}
	if h, _ := r.Details["newHash"].(string); !strings.HasPrefix(h, "sha256:") {
		t.Errorf("newHash %q, docs: sha256:…", h)
	}
	// Legacy single edit; CRLF kept.
	c.CallTool(ctx, "read", map[string]any{"path": "c.txt"})
	r = c.CallTool(ctx, "edit", map[string]any{"path": "c.txt", "old_string": "a\nb", "new_string": "a\nz"})
	docsMatchWant(t, "legacy single edit", r, false, "Edited c.txt")
	if got := readFile(t, filepath.Join(ws, "c.txt")); got != "a\r\nz\r\n" {
		t.Errorf("CRLF not kept: %q", got)
	}
	w := c.CallTool(ctx, "write", map[string]any{"path": "d/new.txt", "content": "n\n"})
	docsMatchWant(t, "write a new file", w, false)
	if w.Details["kind"] != "create" || w.Details["matchLevel"] != "none" {
		t.Errorf("write of a new file: kind %v, matchLevel %v; docs: create, none", w.Details["kind"], w.Details["matchLevel"])
	}
	c.CallTool(ctx, "read", map[string]any{"path": "d/new.txt"})
	w = c.CallTool(ctx, "write", map[string]any{"path": "d/new.txt", "content": "n\n"})
	docsMatchWant(t, "write identical content", w, true, "no change")
}

// TestDocsMatchConfirmReject: "rejectOnce/rejectAlways make the call an
// isError result "denied by the user: <message>" and nothing is changed";
// without the capability an "ask" is an isError result.
func TestDocsMatchConfirmReject(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, nil)
	c := harness.Start(t, harness.Options{Root: ws})
	var asked []map[string]any
	var mu sync.Mutex
	c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		var p map[string]any
		json.Unmarshal(params, &p)
		mu.Lock()
		asked = append(asked, p)
		mu.Unlock()
		return map[string]any{"decision": "rejectOnce", "message": "not now"}, nil
	}
	ctx := testCtx(t, 20*time.Second)
	c.Initialize(ctx, map[string]any{"capabilities": map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}}})
	r := c.CallTool(ctx, "write", map[string]any{"path": "n.txt", "content": "x\n"})
	docsMatchWant(t, "rejected write", r, true, "denied by the user: not now")
	if _, err := os.Stat(filepath.Join(ws, "n.txt")); err == nil {
		t.Errorf("rejected write created the file")
	}
	mu.Lock()
	if len(asked) != 1 {
		t.Fatalf("tools/confirm asked %d times, want 1", len(asked))
	}
	for _, k := range []string{"callId", "tool", "arguments", "reason"} {
		if _, ok := asked[0][k]; !ok {
			t.Errorf("tools/confirm params lack %q: %v", k, asked[0])
		}
	}
	mu.Unlock()
	c2, ctx2 := docsMatchStart(t, ws, nil)
	r = c2.CallTool(ctx2, "write", map[string]any{"path": "n.txt", "content": "x\n"})
	docsMatchWant(t, "ask without the capability", r, true, "approval")
}

// TestDocsMatchInitializeOptions: "A value that changes the meaning … fails
// initialize with -32602 and a message naming the field"; "[] is accepted
// for {}"; the result's documented fields.
func TestDocsMatchInitializeOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		opts  any
		field string
	}{
		{"bad mode", map[string]any{"mode": "yolo"}, "mode"},
		{"rules not strings", map[string]any{"permissions": map[string]any{"allow": []any{1}}}, "allow"},
		{"rules not an array", map[string]any{"permissions": map[string]any{"deny": "Bash"}}, "deny"},
		{"grouped limit out of range", map[string]any{"limits": map[string]any{"read": map[string]any{"lines": 0}}}, "read"},
		{"empty array for object", []any{}, ""},
		{"limits as []", map[string]any{"limits": []any{}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := harness.Start(t, harness.Options{Root: t.TempDir()})
			var res map[string]any
			err := c.Call(testCtx(t, 20*time.Second), "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": tc.opts}, &res)
			if tc.field == "" {
				if err != nil {
					t.Errorf("%v: %v", tc.opts, err)
				}
				return
			}
			if rpcCode(err) != -32602 || !strings.Contains(fmt.Sprint(err), tc.field) {
				t.Errorf("%v: want -32602 naming %q, got %v", tc.opts, tc.field, err)
			}
		})
	}
	t.Run("result", func(t *testing.T) {
		t.Parallel()
		c := harness.Start(t, harness.Options{Root: t.TempDir()})
		res := c.Initialize(testCtx(t, 20*time.Second), nil)
		si, _ := res["serverInfo"].(map[string]any)
		exp, _ := res["capabilities"].(map[string]any)["experimental"].(map[string]any)["agentls"].(map[string]any)
		if si["name"] != "agentls" || exp["protocolVersion"] == nil || exp["tools"] == nil {
			t.Errorf("initialize result: %v", res)
		}
		checkWatcherStart(t, exp, c.WatcherMode)
		ins, _ := res["instructions"].(string)
		for _, w := range []string{"Read a file before editing", "cat", "oldText"} {
			if !strings.Contains(ins, w) {
				t.Errorf("instructions lack %q: %q", w, ins)
			}
		}
	})
}

// TestDocsMatchCancelBash: "A cancelled bash command … is stopped, not
// undone: its process group is killed and the reply is -32800, but what it
// did before that (a file it wrote) stays done."
func TestDocsMatchCancelBash(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	r := docsMatchRawStart(t, ws)
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"capabilities": map[string]any{}, "initializationOptions": bypassOptions()}})
	r.reply(1)
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	cmd := fmt.Sprintf("touch done.txt && sleep 60 && echo docs-cancel-%d", time.Now().UnixNano())
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "bash", "arguments": map[string]any{"command": cmd}}})
	waitFile(t, filepath.Join(ws, "done.txt"), 10*time.Second)
	if !waitUntil(5*time.Second, func() bool { return len(processesWithArg(cmd)) > 0 }) {
		t.Fatal("the command's shell is not running")
	}
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": map[string]any{"id": 2}})
	if c := replyCode(r.reply(2)); c != -32800 {
		t.Errorf("cancelled bash: code %d, want -32800", c)
	}
	if !waitUntil(5*time.Second, func() bool { return len(processesWithArg(cmd)) == 0 }) {
		t.Errorf("the cancelled command still runs")
		reapProcessesWithArg(t, cmd)
	}
	if _, err := os.Stat(filepath.Join(ws, "done.txt")); err != nil {
		t.Errorf("what the command did was undone: %v", err)
	}
}

// TestDocsMatchCallEchoMasked: "the arguments agentls call echoes above
// each result" are masked.
func TestDocsMatchCallEchoMasked(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{"a.txt": "a\n"})
	tok := "ghp_" + channelsRand("docs-echo", 36, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
	o := runAgentls(t, ws, nil, "call", "grep", `{"pattern":"`+tok+`"}`, "read", `{"path":"a.txt"}`, "--root", ws)
	if strings.Contains(o.stdout+o.stderr, tok) || !strings.Contains(o.stdout, "== grep") {
		t.Errorf("call echo: exit %d, output:\n%s%s", o.code, o.stdout, o.stderr)
	}
}
