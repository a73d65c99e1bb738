package e2e

// Black-box acceptance audit of `agentls mcp` driven by the official Go MCP
// SDK client (github.com/modelcontextprotocol/go-sdk/mcp), from issue 9,
// docs/protocol.md's MCP section, docs/tools.md and TOOLS.md.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// a15gVersions are the protocol versions the Go SDK client accepts.
var a15gVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// a15gLegacy is the newest version on which roots are not deprecated.
const a15gLegacy = "2025-11-25"

type a15gOpts struct {
	root     string         // --root
	settings map[string]any // the user's agentls/settings.json (nil: none)
	version  string         // ClientSessionOptions.ProtocolVersion ("" = SDK latest)
	roots    []string       // roots added before Connect
	copts    mcp.ClientOptions
}

type a15gConn struct {
	s      *mcp.ClientSession
	c      *mcp.Client
	cmd    *exec.Cmd
	stderr *a15gBuf
}

type a15gBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *a15gBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *a15gBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func a15gURI(p string) string { return "file://" + p }

// a15gConnect starts `agentls mcp --root o.root` and connects the Go SDK client.
func a15gConnect(t *testing.T, ctx context.Context, o a15gOpts) *a15gConn {
	t.Helper()
	var env []string
	if o.settings != nil {
		cfg := t.TempDir()
		a15gWrite(t, filepath.Join(cfg, "agentls", "settings.json"), a15gJSON(t, o.settings))
		env = append(env, "XDG_CONFIG_HOME="+cfg)
	}
	cmd := harness.Command(t, []string{"mcp", "--root", o.root}, env...)
	errb := &a15gBuf{}
	cmd.Stderr = errb
	client := mcp.NewClient(&mcp.Implementation{Name: "a15g-go-client", Version: "1.0"}, &o.copts)
	for _, r := range o.roots {
		client.AddRoots(&mcp.Root{URI: a15gURI(r), Name: filepath.Base(r)})
	}
	var sopts *mcp.ClientSessionOptions
	if o.version != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: o.version}
	}
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}, sopts)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, errb.String())
	}
	t.Cleanup(func() { s.Close() })
	return &a15gConn{s: s, c: client, cmd: cmd, stderr: errb}
}

func a15gJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func a15gWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// a15gWS is a fresh workspace directory (symlinks resolved, so absolute
// paths agentls prints compare equal).
func a15gWS(t *testing.T, files map[string]string) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		a15gWrite(t, filepath.Join(ws, name), content)
	}
	return ws
}

func a15gText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// a15gCall calls a tool and fails the test on a protocol error.
func a15gCall(t *testing.T, ctx context.Context, s *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v", name, args, err)
	}
	return res, a15gText(res)
}

func a15gCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

var a15gBypass = map[string]any{"mode": "bypass"}

func TestAudit15GoInitialize(t *testing.T) {
	for _, version := range []string{"", a15gLegacy} {
		t.Run("version="+version, func(t *testing.T) {
			ctx := a15gCtx(t, 10*time.Second)
			ws := a15gWS(t, nil)
			c := a15gConnect(t, ctx, a15gOpts{root: ws, version: version})
			ir := c.s.InitializeResult()
			if ir == nil {
				t.Fatal("no initialize result")
			}
			if !slices.Contains(a15gVersions, ir.ProtocolVersion) {
				t.Errorf("protocolVersion %q not one the client supports", ir.ProtocolVersion)
			}
			if version != "" && ir.ProtocolVersion != version {
				t.Errorf("client asked %q (supported by the SDK server), got %q", version, ir.ProtocolVersion)
			}
			if ir.ServerInfo == nil || ir.ServerInfo.Name != "agentls" || ir.ServerInfo.Version == "" {
				t.Errorf("serverInfo = %+v, want name agentls and a version", ir.ServerInfo)
			}
			if ir.Capabilities == nil || ir.Capabilities.Tools == nil || !ir.Capabilities.Tools.ListChanged {
				t.Errorf("capabilities.tools.listChanged not true: %+v", ir.Capabilities)
			}
			// TOOLS.md: read before editing; search when a path is unknown;
			// never guess contents; prefer tools over cat/grep/find; small unique oldText.
			low := strings.ToLower(ir.Instructions)
			for _, want := range []string{"read", "edit", "search", "guess", "cat", "grep", "find", "oldtext", "unique"} {
				if !strings.Contains(low, want) {
					t.Errorf("instructions lack %q:\n%s", want, ir.Instructions)
				}
			}
		})
	}
}

// a15gCoreTools are the always-active tools of TOOLS.md.
var a15gCoreTools = []string{"read", "ls", "grep", "find", "edit", "write", "bash", "tool_search"}

func TestAudit15GoToolsList(t *testing.T) {
	ctx := a15gCtx(t, 10*time.Second)
	ws := a15gWS(t, nil)
	c := a15gConnect(t, ctx, a15gOpts{root: ws})
	lr, err := c.s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range lr.Tools {
		byName[tool.Name] = tool
	}
	type hints struct{ readOnly, destructive bool }
	// What TOOLS.md makes unambiguous: the read/search tools change nothing;
	// edit, write and bash change the workspace; bash (rm, …) may destroy.
	want := map[string]*hints{
		"read": {readOnly: true}, "ls": {readOnly: true}, "grep": {readOnly: true},
		"find": {readOnly: true}, "tool_search": {readOnly: true},
		"edit": {readOnly: false}, "write": {readOnly: false}, "bash": {readOnly: false, destructive: true},
	}
	for _, name := range a15gCoreTools {
		t.Run(name, func(t *testing.T) {
			tool := byName[name]
			if tool == nil {
				t.Fatalf("tool %s missing from tools/list", name)
			}
			if tool.Description == "" {
				t.Error("empty description")
			}
			a := tool.Annotations
			if a == nil {
				t.Fatal("no annotations")
			}
			if a.DestructiveHint == nil || a.OpenWorldHint == nil {
				t.Errorf("destructiveHint/openWorldHint absent: %+v", a)
			}
			w := want[name]
			if a.ReadOnlyHint != w.readOnly {
				t.Errorf("readOnlyHint = %v, want %v", a.ReadOnlyHint, w.readOnly)
			}
			if w.readOnly && a.DestructiveHint != nil && *a.DestructiveHint {
				t.Errorf("read-only tool marked destructive")
			}
			if w.destructive && (a.DestructiveHint == nil || !*a.DestructiveHint) {
				t.Errorf("destructiveHint = %v, want true", a.DestructiveHint)
			}
			if tool.Meta["source"] == nil {
				t.Errorf("_meta.source absent (docs/protocol.md): %v", tool.Meta)
			}
			raw, err := json.Marshal(tool.InputSchema)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(raw), `"$ref"`) {
				t.Errorf("schema has $ref: %s", raw)
			}
			var sch jsonschema.Schema
			if err := json.Unmarshal(raw, &sch); err != nil {
				t.Fatalf("schema does not decode: %v\n%s", err, raw)
			}
			if sch.Type != "object" {
				t.Errorf("schema type %q, want object", sch.Type)
			}
			if _, err := sch.Resolve(nil); err != nil {
				t.Errorf("schema does not compile: %v\n%s", err, raw)
			}
		})
	}
}

func TestAudit15GoReadGrepEdit(t *testing.T) {
	ctx := a15gCtx(t, 10*time.Second)
	ws := a15gWS(t, map[string]string{"src/a.txt": "alpha\nbeta needle\ngamma\n"})
	c := a15gConnect(t, ctx, a15gOpts{root: ws, settings: a15gBypass})
	edit := map[string]any{"path": "src/a.txt", "edits": []any{map[string]any{"oldText": "gamma", "newText": "GAMMA"}}}

	res, text := a15gCall(t, ctx, c.s, "edit", edit)
	if !res.IsError || !strings.Contains(strings.ToLower(text), "read") {
		t.Errorf("edit before read: isError=%v, want an error asking for a read; got %q", res.IsError, text)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src/a.txt")); string(b) != "alpha\nbeta needle\ngamma\n" {
		t.Fatalf("edit before read changed the file: %q", b)
	}

	res, text = a15gCall(t, ctx, c.s, "read", map[string]any{"path": "src/a.txt"})
	if res.IsError || !strings.Contains(text, "src/a.txt, lines 1-3 of 3") || !strings.Contains(text, "2→beta needle") {
		t.Errorf("read: isError=%v text=%q", res.IsError, text)
	}
	a15gCheckMeta(t, "read", res)

	res, text = a15gCall(t, ctx, c.s, "grep", map[string]any{"pattern": "needle"})
	if res.IsError || !strings.Contains(text, "src/a.txt:2: beta needle") {
		t.Errorf("grep: isError=%v text=%q", res.IsError, text)
	}

	res, text = a15gCall(t, ctx, c.s, "edit", edit)
	if res.IsError || !strings.Contains(text, "Edited src/a.txt") {
		t.Errorf("edit after read: isError=%v text=%q", res.IsError, text)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src/a.txt")); string(b) != "alpha\nbeta needle\nGAMMA\n" {
		t.Errorf("file after edit = %q", b)
	}
	d := a15gCheckMeta(t, "edit", res)
	if diff, _ := d["unifiedDiff"].(string); !strings.Contains(diff, "-gamma") || !strings.Contains(diff, "+GAMMA") {
		t.Errorf("edit _meta.details.unifiedDiff = %q", diff)
	}
	if strings.Contains(text, "+GAMMA") {
		t.Errorf("the diff (details) leaked into content: %q", text)
	}
}

// a15gCheckMeta asserts _meta.callId and _meta.details (with durationMs).
func a15gCheckMeta(t *testing.T, tool string, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if id, _ := res.Meta["callId"].(string); id == "" {
		t.Errorf("%s: _meta.callId absent: %v", tool, res.Meta)
	}
	d, _ := res.Meta["details"].(map[string]any)
	if d == nil {
		t.Errorf("%s: _meta.details absent: %v", tool, res.Meta)
		return nil
	}
	if _, ok := d["durationMs"]; !ok {
		t.Errorf("%s: _meta.details.durationMs absent: %v", tool, d)
	}
	return d
}

func TestAudit15GoBashProgress(t *testing.T) {
	for _, version := range []string{"", a15gLegacy} {
		t.Run("version="+version, func(t *testing.T) {
			ctx := a15gCtx(t, 10*time.Second)
			ws := a15gWS(t, nil)
			var mu sync.Mutex
			var notes []*mcp.ProgressNotificationParams
			o := a15gOpts{root: ws, settings: a15gBypass, version: version}
			o.copts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				notes = append(notes, r.Params)
				mu.Unlock()
			}
			c := a15gConnect(t, ctx, o)
			p := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
				"command": "for i in 1 2 3 4 5 6; do echo a15g-line-$i; sleep 0.15; done"}}
			p.SetProgressToken("a15g-tok")
			res, err := c.s.CallTool(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			got := slices.Clone(notes)
			mu.Unlock()
			if res.IsError || !strings.Contains(a15gText(res), "a15g-line-6") {
				t.Fatalf("bash: isError=%v %q", res.IsError, a15gText(res))
			}
			if len(got) < 2 {
				t.Fatalf("%d progress notifications before the result, want >= 2 (command ran ~0.9 s)", len(got))
			}
			last, lastLine := -1.0, 0
			for i, n := range got {
				if n.ProgressToken != "a15g-tok" {
					t.Errorf("note %d token %v", i, n.ProgressToken)
				}
				if n.Progress <= last {
					t.Errorf("progress not increasing: %v after %v", n.Progress, last)
				}
				last = n.Progress
				// The tail grows: the highest line number seen never goes down.
				hi := 0
				for k := 1; k <= 6; k++ {
					if strings.Contains(n.Message, fmt.Sprintf("a15g-line-%d", k)) {
						hi = k
					}
				}
				if hi < lastLine {
					t.Errorf("note %d shows line %d after line %d: out of order", i, hi, lastLine)
				}
				lastLine = max(lastLine, hi)
			}
			if lastLine == 0 {
				t.Errorf("no progress message carried the output: %+v", got[0])
			}
		})
	}
}

// a15gProcs lists the pids whose command line contains marker, plus their children.
func a15gProcs(marker string) []int {
	ents, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	var hits []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		rest := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(rest) < 2 || rest[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(rest[1])
		parent[pid] = ppid
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(cmdline, []byte(marker)) {
			hits = append(hits, pid)
		}
	}
	out := slices.Clone(hits)
	for pid, pp := range parent {
		if slices.Contains(hits, pp) && !slices.Contains(out, pid) {
			out = append(out, pid)
		}
	}
	return out
}

func a15gWaitProcs(t *testing.T, marker string, present bool, d time.Duration) []int {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		p := a15gProcs(marker)
		if (len(p) > 0) == present || time.Now().After(deadline) {
			return p
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAudit15GoCancelKillsSleep(t *testing.T) {
	ctx := a15gCtx(t, 15*time.Second)
	ws := a15gWS(t, map[string]string{"a.txt": "x\n"})
	c := a15gConnect(t, ctx, a15gOpts{root: ws, settings: a15gBypass})
	marker := fmt.Sprintf("a15gcancel%d", time.Now().UnixNano())
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.s.CallTool(callCtx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
			"command": ": " + marker + "; sleep 100; echo after"}})
		done <- err
	}()
	procs := a15gWaitProcs(t, marker, true, 5*time.Second)
	if len(procs) < 2 {
		t.Fatalf("want the shell and its sleep running, found %v", procs)
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("cancelled call returned a result, want the context error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("CallTool did not return after cancel")
	}
	// SIGTERM, 2 s grace, SIGKILL.
	if left := a15gWaitProcs(t, marker, false, 4*time.Second); len(left) > 0 {
		t.Fatalf("processes left after cancel: %v", left)
	}
	if res, text := a15gCall(t, ctx, c.s, "read", map[string]any{"path": "a.txt"}); res.IsError {
		t.Errorf("session unusable after cancel: %q", text)
	}
}
