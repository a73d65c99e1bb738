package e2e

// Two agentls processes on one workspace at once — the
// editor protocol (VS Code's agentls), `agentls mcp` (Claude Code) and
// `agentls call` from a terminal. Sources: docs/tools.md, docs/protocol.md,
// docs/tools.md, docs/protocol.md, ARCHITECTURE.md.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// twoProcMCP is a minimal newline-JSON MCP client for `agentls mcp`.
type twoProcMCP struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	wmu    sync.Mutex
	mu     sync.Mutex
	nextID int
	wait   map[int]chan twoProcMsg
	notes  []string // methods of the notifications received
	exited chan struct{}
}

type twoProcMsg struct {
	ID     *int            `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// twoProcRes is a tool result from either protocol.
type twoProcRes struct {
	Text    string
	IsError bool
}

// twoProcStartMCP starts `agentls mcp --root ws` with env and completes the
// MCP handshake.
func twoProcStartMCP(t *testing.T, ws string, env ...string) *twoProcMCP {
	t.Helper()
	cmd := harness.Command(t, []string{"mcp", "--root", ws}, env...)
	cmd.Stderr = io.Discard
	stdin, stdout := harness.StartPiped(t, cmd)
	m := &twoProcMCP{t: t, cmd: cmd, stdin: stdin, wait: map[int]chan twoProcMsg{}, exited: make(chan struct{})}
	go func() { // owner: the process; ends at its stdout EOF
		br := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				var msg twoProcMsg
				if json.Unmarshal(line, &msg) == nil && msg.ID == nil && msg.Method != "" {
					m.mu.Lock()
					m.notes = append(m.notes, msg.Method)
					m.mu.Unlock()
				}
				if json.Unmarshal(line, &msg) == nil && msg.ID != nil {
					if msg.Method != "" { // a server request: we offer nothing
						m.send(map[string]any{"jsonrpc": "2.0", "id": *msg.ID, "error": map[string]any{"code": -32601, "message": "no"}})
					} else {
						m.mu.Lock()
						ch := m.wait[*msg.ID]
						delete(m.wait, *msg.ID)
						m.mu.Unlock()
						if ch != nil {
							ch <- msg
						}
					}
				}
			}
			if err != nil {
				break
			}
		}
		cmd.Wait()
		close(m.exited)
	}()
	t.Cleanup(func() {
		m.stdin.Close()
		select {
		case <-m.exited:
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-m.exited
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := m.call(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "a21p", "version": "1"},
	}); err != nil {
		t.Fatalf("mcp initialize: %v", err)
	}
	m.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return m
}

func (m *twoProcMCP) send(v any) {
	b, _ := json.Marshal(v)
	m.wmu.Lock()
	defer m.wmu.Unlock()
	m.stdin.Write(append(b, '\n'))
}

func (m *twoProcMCP) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	m.mu.Lock()
	m.nextID++
	id := m.nextID
	ch := make(chan twoProcMsg, 1)
	m.wait[id] = ch
	m.mu.Unlock()
	m.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case msg := <-ch:
		if len(msg.Error) > 0 {
			return nil, fmt.Errorf("%s: error %s", method, msg.Error)
		}
		return msg.Result, nil
	case <-m.exited:
		return nil, fmt.Errorf("%s: agentls mcp exited", method)
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// tool runs tools/call; protocol errors fail the test.
func (m *twoProcMCP) tool(ctx context.Context, name string, args any) twoProcRes {
	m.t.Helper()
	raw, err := m.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		m.t.Errorf("mcp tools/call %s: %v", name, err)
		return twoProcRes{IsError: true, Text: err.Error()}
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		m.t.Errorf("mcp result %s: %v", raw, err)
	}
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return twoProcRes{Text: strings.Join(parts, "\n"), IsError: r.IsError}
}

// twoProcEditor starts the editor-protocol agentls on ws and initializes it.
func twoProcEditor(t *testing.T, ws string, env ...string) *harness.Client {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: ws, Env: env, Process: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.Initialize(ctx, nil)
	return c
}

func twoProcTool(t *testing.T, c *harness.Client, ctx context.Context, name string, args any) twoProcRes {
	t.Helper()
	r, err := c.TryCallTool(ctx, name, args)
	if err != nil {
		t.Errorf("tools/call %s: %v", name, err)
		return twoProcRes{IsError: true, Text: err.Error()}
	}
	return twoProcRes{Text: r.Text(), IsError: r.IsError}
}

func twoProcCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// twoProcEnv is what two agentls processes of one user share: the cache dir
// (spill files) and the user settings, which select bypass mode so calls
// run without approval (deny rules still apply in bypass).
func twoProcEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	cfg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "agentls"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "agentls", "settings.json"), []byte(`{"mode":"bypass"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return append([]string{"XDG_CONFIG_HOME=" + cfg, "XDG_CACHE_HOME=" + t.TempDir()}, extra...)
}

func twoProcWS(t *testing.T, files map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	for name, body := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func twoProcRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// twoProcTemps lists leftover atomic-write temp files in dir.
func twoProcTemps(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".agentls-tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// twoProcStale checks a refused edit: isError, names the file, says to read
// it again, and the file is untouched.
func twoProcStale(t *testing.T, who string, r twoProcRes, path, want string) {
	t.Helper()
	if !r.IsError {
		t.Errorf("%s: edit of a file changed by another process after the read applied: %q", who, r.Text)
	}
	low := strings.ToLower(r.Text)
	if !strings.Contains(r.Text, "f.txt") || !strings.Contains(low, "read") || !(strings.Contains(low, "changed") || strings.Contains(low, "stale") || strings.Contains(low, "modified")) {
		t.Errorf("%s: stale refusal should name the file, say it changed and to read it again; got %q", who, r.Text)
	}
	if got := twoProcRead(t, path); got != want {
		t.Errorf("%s: refused edit changed the file: %q, want %q", who, got, want)
	}
}

func twoProcEditArgs(old, new string) map[string]any {
	return map[string]any{"path": "f.txt", "edits": []any{map[string]any{"oldText": old, "newText": new}}}
}

// TestTwoProcessesStaleAcrossProcesses: a read stamp goes stale when another
// process (editor agentls, agentls mcp, agentls call) changes the file.
func TestTwoProcessesStaleAcrossProcesses(t *testing.T) {
	t.Parallel()
	type actor func(ctx context.Context, name string, args any) twoProcRes
	cases := []struct {
		name string
		// staleIsEditor: the editor process goes stale (and gets the
		// externalChange notification); otherwise the MCP process does.
		staleIsEditor bool
		// third: the change comes from `agentls call` instead of the peer.
		third bool
	}{
		{name: "editor goes stale after mcp edit", staleIsEditor: true},
		{name: "mcp goes stale after editor edit", staleIsEditor: false},
		{name: "editor goes stale after agentls call write", staleIsEditor: true, third: true},
		{name: "mcp goes stale after agentls call write", staleIsEditor: false, third: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := twoProcCtx(t, 15*time.Second)
			ws := twoProcWS(t, map[string]string{"f.txt": "one\ntwo\nthree\n"})
			fp := filepath.Join(ws, "f.txt")
			env := twoProcEnv(t)
			ed := twoProcEditor(t, ws, env...)
			mc := twoProcStartMCP(t, ws, env...)
			edT := func(ctx context.Context, n string, a any) twoProcRes { return twoProcTool(t, ed, ctx, n, a) }
			var stale, peer actor = mc.tool, edT
			if tc.staleIsEditor {
				stale, peer = edT, mc.tool
			}
			if r := stale(ctx, "read", map[string]any{"path": "f.txt"}); r.IsError || !strings.Contains(r.Text, "two") {
				t.Fatalf("read: %+v", r)
			}
			if tc.third {
				cmd := harness.Command(t, []string{"call", "read", `{"path":"f.txt"}`, "write", `{"path":"f.txt","content":"one\nTWO\nthree\n"}`, "--root", ws}, env...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("agentls call write: %v\n%s", err, out)
				}
			} else {
				if r := peer(ctx, "read", map[string]any{"path": "f.txt"}); r.IsError {
					t.Fatalf("peer read: %+v", r)
				}
				if r := peer(ctx, "edit", twoProcEditArgs("two", "TWO")); r.IsError || r.Text != "Edited f.txt: 1 replacement, line 2." {
					t.Fatalf("peer edit: %+v", r)
				}
			}
			want := "one\nTWO\nthree\n"
			if got := twoProcRead(t, fp); got != want {
				t.Fatalf("after the other process's change: %q", got)
			}
			if tc.staleIsEditor {
				n, ok := ed.WaitNote(5*time.Second, func(n harness.Note) bool {
					return n.Method == "workspace/externalChange" && strings.Contains(string(n.Params), "/f.txt")
				})
				if !ok {
					t.Errorf("no workspace/externalChange for f.txt after another process changed it; notes: %v", ed.Notes(""))
				} else {
					var p struct {
						URI       string `json:"uri"`
						Kind      string `json:"kind"`
						ReadStale bool   `json:"readStale"`
					}
					json.Unmarshal(n.Params, &p)
					if p.URI != "file://"+fp || p.Kind != "changed" || !p.ReadStale {
						t.Errorf("externalChange = %s, want uri file://%s kind changed readStale true", n.Params, fp)
					}
				}
			}
			r := stale(ctx, "edit", twoProcEditArgs("three", "3"))
			t.Logf("stale refusal: %q", r.Text)
			twoProcStale(t, "stale edit", r, fp, want)
			if r := stale(ctx, "read", map[string]any{"path": "f.txt"}); r.IsError || !strings.Contains(r.Text, "TWO") {
				t.Fatalf("re-read: %+v", r)
			}
			if r := stale(ctx, "edit", twoProcEditArgs("three", "3")); r.IsError || r.Text != "Edited f.txt: 1 replacement, line 3." {
				t.Errorf("edit after re-read: %+v", r)
			}
			if got := twoProcRead(t, fp); got != "one\nTWO\n3\n" {
				t.Errorf("final content %q", got)
			}
			if tmp := twoProcTemps(t, ws); len(tmp) > 0 {
				t.Errorf("leftover temp files: %v", tmp)
			}
			// MCP has no externalChange: nothing but MCP methods on its stdout.
			mc.mu.Lock()
			for _, n := range mc.notes {
				if !strings.HasPrefix(n, "notifications/") {
					t.Errorf("agentls mcp sent a non-MCP notification %q", n)
				}
			}
			mc.mu.Unlock()
		})
	}
}

// TestTwoProcessesRacingEdits: the editor agentls and agentls mcp read the
// same file, then edit different lines of it at the same moment, 50
// rounds. A write never replaces what it did not read: at most one of
// the two edits made against one read applies, the other is refused as
// stale and applies after a re-read; no update is lost, the file is never
// torn and no temp file is left.
func TestTwoProcessesRacingEdits(t *testing.T) {
	t.Parallel()
	const rounds = 50
	ctx := twoProcCtx(t, 40*time.Second)
	pad := strings.Repeat("filler line to make the write take a moment\n", 200)
	body := func(a, b int) string { return fmt.Sprintf("A=%03d\n%sB=%03d\n", a, pad, b) }
	ws := twoProcWS(t, map[string]string{"f.txt": body(0, 0)})
	fp := filepath.Join(ws, "f.txt")
	env := twoProcEnv(t)
	ed := twoProcEditor(t, ws, env...)
	mc := twoProcStartMCP(t, ws, env...)
	type side struct {
		name string
		key  string
		call func(ctx context.Context, name string, args any) twoProcRes
		val  int // last value of its line that a successful edit reported
	}
	sides := []*side{
		{name: "editor", key: "A", call: func(ctx context.Context, n string, a any) twoProcRes { return twoProcTool(t, ed, ctx, n, a) }},
		{name: "mcp", key: "B", call: mc.tool},
	}
	editOf := func(s *side, to int) map[string]any {
		return twoProcEditArgs(fmt.Sprintf("%s=%03d\n", s.key, s.val), fmt.Sprintf("%s=%03d\n", s.key, to))
	}
	bothApplied, refused := 0, 0
	lost := 0
	for round := 1; round <= rounds; round++ {
		for _, s := range sides {
			if r := s.call(ctx, "read", map[string]any{"path": "f.txt", "limit": 1}); r.IsError {
				t.Fatalf("round %d: %s read: %+v", round, s.name, r)
			}
		}
		res := make([]twoProcRes, len(sides))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, s := range sides {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res[i] = s.call(ctx, "edit", editOf(s, round))
			}()
		}
		close(start)
		wg.Wait()
		applied := 0
		for i, s := range sides {
			if !res[i].IsError {
				applied++
				s.val = round
			}
		}
		if applied == 2 {
			bothApplied++
			t.Errorf("round %d: both edits made against the same read applied (editor %q, mcp %q): the second replaced a file it had not read", round, res[0].Text, res[1].Text)
		}
		// The refused side reads again and edits on top.
		for i, s := range sides {
			if !res[i].IsError {
				continue
			}
			refused++
			if !strings.Contains(res[i].Text, "changed since you read it") && applied == 1 {
				t.Errorf("round %d: %s refusal is not a staleness refusal: %q", round, s.name, res[i].Text)
			}
			if r := s.call(ctx, "read", map[string]any{"path": "f.txt", "limit": 1}); r.IsError {
				t.Fatalf("round %d: %s re-read: %+v", round, s.name, r)
			}
			if r := s.call(ctx, "edit", editOf(s, round)); r.IsError {
				t.Errorf("round %d: %s edit after a re-read, with nobody else writing: %q", round, s.name, r.Text)
			} else {
				s.val = round
			}
		}
		if got, want := twoProcRead(t, fp), body(sides[0].val, sides[1].val); got != want {
			lost++
			t.Errorf("round %d: lost update: file is %d bytes, want %d (every reported edit kept, nothing torn); head %q tail %q", round, len(got), len(want), got[:min(len(got), 8)], got[max(0, len(got)-8):])
			// Go on from what the file holds.
			for _, s := range sides {
				m := regexp.MustCompile(s.key + `=(\d{3})\n`).FindStringSubmatch(got)
				if m == nil {
					t.Fatalf("round %d: torn file, no %s line", round, s.key)
				}
				s.val, _ = strconv.Atoi(m[1])
			}
		}
		if tmp := twoProcTemps(t, ws); len(tmp) > 0 {
			t.Errorf("round %d: leftover temp files %v", round, tmp)
		}
	}
	t.Logf("%d rounds: %d edits refused as stale, %d rounds where both applied, %d lost updates", rounds, refused, bothApplied, lost)
}

// twoProcAuditLine is one audit log entry (docs/tools.md "Audit log").
type twoProcAuditLine struct {
	Time        *string         `json:"time"`
	CallID      *string         `json:"callId"`
	Tool        *string         `json:"tool"`
	Arguments   json.RawMessage `json:"arguments"`
	Decision    *string         `json:"decision"`
	DurationMs  *float64        `json:"durationMs"`
	ResultBytes *float64        `json:"resultBytes"`
	IsError     *bool           `json:"isError"`
}

// twoProcAudit parses every line of every file in dir; it fails the test on a
// line that is not a complete entry, and returns the entries per file.
func twoProcAudit(t *testing.T, dir string) map[string][]twoProcAuditLine {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]twoProcAuditLine{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			t.Errorf("%s: last line not terminated: %q", filepath.Base(f), b[max(0, len(b)-80):])
		}
		for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if line == "" && len(b) == 0 {
				continue
			}
			var e twoProcAuditLine
			if err := json.Unmarshal([]byte(line), &e); err != nil || e.Time == nil || e.CallID == nil || e.Tool == nil || e.Decision == nil || e.DurationMs == nil || e.ResultBytes == nil || e.IsError == nil || len(e.Arguments) == 0 {
				t.Errorf("%s line %d is not a whole audit entry (%v): %.200q", filepath.Base(f), i+1, err, line)
				continue
			}
			out[f] = append(out[f], e)
		}
	}
	return out
}

// twoProcMarkers counts, per file, the entries whose arguments contain marker.
func twoProcMarkers(entries map[string][]twoProcAuditLine, marker string) (total int, files []string) {
	for f, es := range entries {
		n := 0
		for _, e := range es {
			if strings.Contains(string(e.Arguments), marker) {
				n++
			}
		}
		if n > 0 {
			files = append(files, filepath.Base(f))
		}
		total += n
	}
	sort.Strings(files)
	return total, files
}

// twoProcPlantAudit writes n old, valid audit files of made-up sessions.
func twoProcPlantAudit(t *testing.T, dir, stamp string, pid0 int, mtime time.Time, n int) {
	t.Helper()
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl", stamp, pid0+i))
		line := fmt.Sprintf(`{"time":"2020-01-01T00:00:00Z","callId":"call-1","tool":"read","arguments":{"path":"planted-%d"},"decision":"allow","rule":"mode:default","durationMs":1,"resultBytes":1,"isError":false}`+"\n", i)
		if err := os.WriteFile(p, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTwoProcessesAuditLogParallel: the editor agentls and agentls mcp share
// one audit directory and make 200 calls each at once (8 in flight per
// process, some with long arguments). Every line is one whole JSON entry,
// both sessions' 200 calls are there, each session in its own file, and
// pruning old files at start (newest 20 kept) removes old files only.
func TestTwoProcessesAuditLogParallel(t *testing.T) {
	t.Parallel()
	const calls, inFlight, keep = 200, 8, 20
	ctx := twoProcCtx(t, 60*time.Second)
	ws := twoProcWS(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	dir := t.TempDir()
	twoProcPlantAudit(t, dir, "20200101-000000", 900000, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), 25)
	env := twoProcEnv(t, "AGENTLS_AUDIT_DIR="+dir)
	ed := twoProcEditor(t, ws, env...)
	mc := twoProcStartMCP(t, ws, env...)
	long := strings.Repeat("x", 6000)
	args := func(who string, i int) (string, map[string]any) {
		if i%10 == 0 { // longer than PIPE_BUF: a torn append would show
			return "bash", map[string]any{"command": fmt.Sprintf(": a21p-%s-%d %s", who, i, long)}
		}
		return "read", map[string]any{"path": strings.ToLower(who) + ".txt", "limit": i%5 + 1}
	}
	var wg sync.WaitGroup
	run := func(who string, call func(i int)) {
		jobs := make(chan int)
		for range inFlight {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range jobs {
					call(i)
				}
			}()
		}
		go func() { // owner: this test; ends when all jobs are handed out
			for i := range calls {
				jobs <- i
			}
			close(jobs)
		}()
	}
	run("A", func(i int) {
		name, a := args("A", i)
		r, err := ed.TryCallTool(ctx, name, a)
		if err != nil || r.IsError {
			t.Errorf("editor call %d: %v %q", i, err, r.Text())
		}
	})
	run("B", func(i int) {
		name, a := args("B", i)
		if r := mc.tool(ctx, name, a); r.IsError {
			t.Errorf("mcp call %d: %q", i, r.Text)
		}
	})
	wg.Wait()
	if code := ed.Shutdown(ctx); code != 0 {
		t.Errorf("editor exit code %d", code)
	}
	mc.stdin.Close()
	select {
	case <-mc.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("agentls mcp did not exit at stdin EOF")
	}
	entries := twoProcAudit(t, dir)
	for _, who := range []string{"a", "b"} {
		reads, rf := twoProcMarkers(entries, `"`+who+`.txt"`)
		bashes, bf := twoProcMarkers(entries, "a21p-"+strings.ToUpper(who)+"-")
		if reads+bashes != calls {
			t.Errorf("session %s: %d reads + %d bash calls in the audit log, want %d", who, reads, bashes, calls)
		}
		if files := append(rf, bf...); len(files) == 0 || len(rf) > 1 || len(bf) > 1 || (len(rf) == 1 && len(bf) == 1 && rf[0] != bf[0]) {
			t.Errorf("session %s's calls are spread over files %v, want one file per session", who, files)
		}
	}
	if len(entries) > keep {
		t.Errorf("%d audit files after two sessions started over 25 old ones, want at most %d (newest kept)", len(entries), keep)
	}
}

// TestTwoProcessesAuditRotationKeepsLiveFile: pruning to the newest 20 files
// at a session start must not delete the audit file of a session that is
// still running (its later calls would go to a deleted file and be lost).
func TestTwoProcessesAuditRotationKeepsLiveFile(t *testing.T) {
	slow(t)
	t.Parallel()
	ctx := twoProcCtx(t, 15*time.Second)
	ws := twoProcWS(t, map[string]string{"a.txt": "a\n"})
	dir := t.TempDir()
	env := twoProcEnv(t, "AGENTLS_AUDIT_DIR="+dir)
	ed := twoProcEditor(t, ws, env...)
	for i := range 3 {
		if r := twoProcTool(t, ed, ctx, "read", map[string]any{"path": "a.txt", "limit": i + 1}); r.IsError {
			t.Fatal(r.Text)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 1 {
		t.Fatalf("audit files after the editor's calls: %v", files)
	}
	edFile := files[0]
	// 22 sessions that started after the editor's (names and mtimes newer),
	// then another session starts: 24 files, 20 are kept.
	stamp := strings.SplitN(filepath.Base(edFile), "-", 3)
	if len(stamp) != 3 {
		t.Fatalf("audit file name %q is not STAMP-PID.jsonl", filepath.Base(edFile))
	}
	tE, err := time.ParseInLocation("20060102-150405", stamp[0]+"-"+stamp[1], time.Local)
	if err != nil {
		t.Fatalf("audit file name %q: %v", filepath.Base(edFile), err)
	}
	twoProcPlantAudit(t, dir, tE.Add(time.Second).Format("20060102-150405"), 900000, time.Now().Add(time.Second), 22)
	// The next session's name stamp must be a later second than the planted ones.
	time.Sleep(time.Until(tE.Add(2100 * time.Millisecond)))
	mc := twoProcStartMCP(t, ws, env...)
	if r := mc.tool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
		t.Fatal(r.Text)
	}
	// The start's pruning runs in the background: wait for it (24 files,
	// 20 kept) before the editor, idle until now, makes its next calls.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) <= 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no pruning to the newest 20 files after a session start over 24")
		}
	}
	for i := range 3 {
		if r := twoProcTool(t, ed, ctx, "read", map[string]any{"path": "a.txt", "offset": 1, "limit": i + 1}); r.IsError {
			t.Fatal(r.Text)
		}
	}
	ed.Shutdown(ctx)
	mc.stdin.Close()
	<-mc.exited
	if _, err := os.Stat(edFile); err != nil {
		t.Errorf("the running editor session's audit file was deleted by another session's start: %v", err)
	}
	entries := twoProcAudit(t, dir)
	if n, _ := twoProcMarkers(entries, `"a.txt"`); n != 7 {
		t.Errorf("%d calls of the two live sessions in the audit log, want 7 (6 editor, 1 mcp)", n)
	}
	if n := len(entries[edFile]); n != 6 {
		t.Errorf("editor session's audit file has %d entries, want its 6 calls", n)
	}
	if len(entries) > 20 {
		t.Errorf("%d audit files kept, want at most 20", len(entries))
	}
	if t.Failed() {
		var names []string
		for f, es := range entries {
			names = append(names, fmt.Sprintf("%s:%d", filepath.Base(f), len(es)))
		}
		sort.Strings(names)
		t.Logf("editor file %s; files left: %v", filepath.Base(edFile), names)
	}
}

// twoProcSpillNotice is the cut notice of a 3000-line bash output (docs/tools.md:
// "the notice gives its path and the line range shown").
var twoProcSpillNotice = regexp.MustCompile(`^\[Output cut: showing lines 1002-3000 of 3000 \(a result is at most 2000 lines / (?:51200|39000) bytes, notices included\)\. Full output: (/\S+) — read it with read \{"path": "(/\S+)", "offset": 1\}\.\]\n`)

func twoProcSpillCmd(tag string) string {
	return fmt.Sprintf("for i in $(seq 1 3000); do echo %s-$i; done", tag)
}

func twoProcSpillWant(tag string) string {
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, "%s-%d\n", tag, i)
	}
	return b.String()
}

// twoProcSpillPath checks a cut bash result and returns its spill file path.
func twoProcSpillPath(t *testing.T, tag string, r twoProcRes) string {
	t.Helper()
	m := twoProcSpillNotice.FindStringSubmatch(r.Text)
	if r.IsError || m == nil || m[1] != m[2] {
		t.Errorf("%s: want the cut notice with the spill path first, got isError=%v %.300q", tag, r.IsError, r.Text)
		return ""
	}
	if !strings.HasSuffix(r.Text, tag+"-3000") || !strings.Contains(r.Text, "\n"+tag+"-1002\n") {
		t.Errorf("%s: tail lines 1002-3000 not shown: %.100q…", tag, r.Text[len(r.Text)-100:])
	}
	return m[1]
}

// TestTwoProcessesSpillFiles: both processes cut big bash outputs at the same
// time (3 calls each); every notice names a file holding exactly its own
// call's output, a third session's start deletes none of them, and one
// process's shutdown deletes its own spill files but not the other's.
func TestTwoProcessesSpillFiles(t *testing.T) {
	t.Parallel()
	ctx := twoProcCtx(t, 30*time.Second)
	ws := twoProcWS(t, map[string]string{"a.txt": "a\n"})
	env := twoProcEnv(t)
	ed := twoProcEditor(t, ws, env...)
	mc := twoProcStartMCP(t, ws, env...)
	tags := []string{"ed0", "ed1", "ed2", "mc0", "mc1", "mc2"}
	res := make([]twoProcRes, len(tags))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, tag := range tags {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			args := map[string]any{"command": twoProcSpillCmd(tag)}
			if strings.HasPrefix(tag, "ed") {
				res[i] = twoProcTool(t, ed, ctx, "bash", args)
			} else {
				res[i] = mc.tool(ctx, "bash", args)
			}
		}()
	}
	close(start)
	wg.Wait()
	paths := map[string]string{}
	seen := map[string]string{}
	for i, tag := range tags {
		p := twoProcSpillPath(t, tag, res[i])
		if p == "" {
			continue
		}
		if other, dup := seen[p]; dup {
			t.Errorf("%s and %s were spilled to the same file %s", other, tag, p)
		}
		seen[p], paths[tag] = tag, p
	}
	check := func(when string, tagPrefix string, wantExist bool) {
		t.Helper()
		for tag, p := range paths {
			if !strings.HasPrefix(tag, tagPrefix) {
				continue
			}
			b, err := os.ReadFile(p)
			switch {
			case wantExist && err != nil:
				t.Errorf("%s: %s's spill file is gone: %v", when, tag, err)
			case wantExist && string(b) != twoProcSpillWant(tag):
				t.Errorf("%s: %s's spill file %s does not hold its own output (%d bytes, starts %.40q)", when, tag, p, len(b), b)
			case !wantExist && err == nil:
				t.Errorf("%s: %s's spill file %s is still there", when, tag, p)
			}
		}
	}
	check("after the parallel calls", "", true)
	// A third session (a terminal's agentls call) starts and spills too.
	cmd := harness.Command(t, []string{"call", "bash", `{"command":"` + twoProcSpillCmd("cli") + `"}`, "--root", ws}, env...)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Full output: ") {
		t.Errorf("agentls call bash: %v %.200q", err, out)
	}
	check("after another session started and ended", "", true)
	// The model reads its spill file through its own process.
	if p := paths["mc1"]; p != "" {
		if r := mc.tool(ctx, "read", map[string]any{"path": p, "offset": 2999}); r.IsError || !strings.Contains(r.Text, "mc1-2999\n") || !strings.Contains(r.Text, "mc1-3000") {
			t.Errorf("mcp read of its spill file: %.300q", r.Text)
		}
	}
	if code := ed.Shutdown(ctx); code != 0 {
		t.Errorf("editor exit code %d", code)
	}
	check("after the editor process shut down", "mc", true)
	check("after the editor process shut down (docs: deleted at shutdown)", "ed", false)
	if p := paths["mc2"]; p != "" {
		if r := mc.tool(ctx, "read", map[string]any{"path": p, "offset": 1, "limit": 1}); r.IsError || !strings.Contains(r.Text, "mc2-1") {
			t.Errorf("mcp read of its spill file after the editor exited: %.300q", r.Text)
		}
	}
}

// TestTwoProcessesTempFiles: a session start removes crashed writes' temp
// files but keeps those of another agentls that is still running
// (ARCHITECTURE.md "Writes are atomic": the temp name carries the writer's
// pid and the clean-up keeps the temp files of processes still running).
func TestTwoProcessesTempFiles(t *testing.T) {
	t.Parallel()
	ctx := twoProcCtx(t, 15*time.Second)
	ws := twoProcWS(t, map[string]string{"f.txt": "f\n", "sub/g.txt": "g\n"})
	env := twoProcEnv(t)
	ed := twoProcEditor(t, ws, env...)
	// The editor's own temp name, as it writes them (observed through a
	// write's result is not possible, so build it from the documented
	// parts: .agentls-tmp-<name>-<pid>-<random>).
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(ws, "sub", fmt.Sprintf(".agentls-tmp-g.txt-%d-0123456789ab", ed.Process().Pid))
	crashed := filepath.Join(ws, "sub", fmt.Sprintf(".agentls-tmp-g.txt-%d-0123456789ab", dead.Process.Pid))
	for _, p := range []string{live, crashed} {
		if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mc := twoProcStartMCP(t, ws, env...)
	if r := mc.tool(ctx, "read", map[string]any{"path": "f.txt"}); r.IsError {
		t.Fatal(r.Text)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(crashed); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a dead process's temp file %s was not removed at the next session start", filepath.Base(crashed))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the running editor agentls's temp file was removed by the mcp session's start: %v", err)
	}
	_ = ctx
}

// TestTwoProcessesSettingsDeny: a deny rule saved into .agentls/settings.json
// while both processes run applies to the next call of each.
func TestTwoProcessesSettingsDeny(t *testing.T) {
	t.Parallel()
	ctx := twoProcCtx(t, 15*time.Second)
	ws := twoProcWS(t, map[string]string{"a.txt": "a\n", ".agentls/settings.json": `{"permissions":{"deny":[]}}`})
	env := twoProcEnv(t)
	ed := twoProcEditor(t, ws, env...)
	mc := twoProcStartMCP(t, ws, env...)
	callers := []struct {
		name string
		call func(ctx context.Context, name string, args any) twoProcRes
	}{
		{"editor", func(ctx context.Context, n string, a any) twoProcRes { return twoProcTool(t, ed, ctx, n, a) }},
		{"mcp", mc.tool},
	}
	for _, c := range callers {
		if r := c.call(ctx, "bash", map[string]any{"command": "touch before-" + c.name}); r.IsError {
			t.Fatalf("%s: touch before the rule: %q", c.name, r.Text)
		}
	}
	// Saved the way editors save: a new file renamed over the old one.
	tmp := filepath.Join(ws, ".agentls", "settings.json.tmp")
	if err := os.WriteFile(tmp, []byte(`{"permissions":{"deny":["Bash(touch:*)"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(ws, ".agentls", "settings.json")); err != nil {
		t.Fatal(err)
	}
	for _, c := range callers {
		r := c.call(ctx, "bash", map[string]any{"command": "touch after-" + c.name})
		t.Logf("%s denial: %q", c.name, r.Text)
		if !r.IsError || !strings.Contains(r.Text, "Bash(touch:*)") {
			t.Errorf("%s: next call after the deny rule was saved: isError=%v %q, want a denial naming Bash(touch:*)", c.name, r.IsError, r.Text)
		}
		if _, err := os.Stat(filepath.Join(ws, "after-"+c.name)); err == nil {
			t.Errorf("%s: the denied command ran", c.name)
		}
	}
}

// TestTwoProcessesPeerExit: one process ending (the editor's shutdown/exit,
// agentls mcp's stdin EOF) while the other runs a bash call: the
// survivor's call completes normally and it keeps serving.
func TestTwoProcessesPeerExit(t *testing.T) {
	slow(t)
	t.Parallel()
	for _, editorExits := range []bool{true, false} {
		name := "mcp survives editor exit"
		if !editorExits {
			name = "editor survives mcp stdin EOF"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := twoProcCtx(t, 15*time.Second)
			ws := twoProcWS(t, map[string]string{"a.txt": "a\n"})
			env := twoProcEnv(t)
			ed := twoProcEditor(t, ws, env...)
			mc := twoProcStartMCP(t, ws, env...)
			survivor := func(ctx context.Context, n string, a any) twoProcRes { return twoProcTool(t, ed, ctx, n, a) }
			if editorExits {
				survivor = mc.tool
			}
			done := make(chan twoProcRes, 1)
			go func() {
				done <- survivor(ctx, "bash", map[string]any{"command": "touch started; sleep 1.5; echo survived"})
			}()
			deadline := time.Now().Add(8 * time.Second)
			for {
				if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("survivor's command did not start")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if editorExits {
				if code := ed.Shutdown(ctx); code != 0 {
					t.Errorf("editor exit code %d", code)
				}
			} else {
				mc.stdin.Close()
				select {
				case <-mc.exited:
				case <-time.After(5 * time.Second):
					t.Error("agentls mcp did not exit at stdin EOF")
				}
			}
			select {
			case r := <-done:
				if r.IsError || r.Text != "survived" {
					t.Errorf("survivor's bash call: isError=%v %q, want \"survived\"", r.IsError, r.Text)
				}
			case <-ctx.Done():
				t.Fatal("survivor's bash call did not finish")
			}
			if r := survivor(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
				t.Errorf("survivor after its peer exited: %q", r.Text)
			}
		})
	}
}
