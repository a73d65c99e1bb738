package e2e

// Black-box acceptance tests for issue 9 item 2 and docs/tools.md "Extension
// tools": non-core tools (.agentls/tools/*.json and upstream MCP servers
// from .agentls/mcp.json) are governed like any other tool — permission
// rules, result budget, spill, secret masking, timeout, audit, progress and
// cancellation. Written from the contract and docs only; the upstream
// server is agentls itself (`agentls mcp --root DIR`), so no network.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/test/harness"
)

// govAlnum returns n random ASCII letters and digits.
func govAlnum(t testing.TB, n int) string {
	t.Helper()
	const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var b strings.Builder
	for i := 0; i < n; i++ {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(abc))))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteByte(abc[k.Int64()])
	}
	return b.String()
}

// govGitHubToken is a GitHub personal access token shape built at run time
// (never a literal in the source, so scanners do not flag this file).
func govGitHubToken(t testing.TB) string { return "gh" + "p_" + govAlnum(t, 36) }

// govSleepArg is a sleep(1) argument unique to this run, so the process can
// be found in /proc by its command line: "29.<digits>".
func govSleepArg(t testing.TB) string {
	t.Helper()
	n, err := rand.Int(rand.Reader, big.NewInt(1e12))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("29.%012d", n.Int64())
}

// govProcs lists live (non-zombie) pids each of words is part of an argument of.
func govProcs(words ...string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cl, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || len(cl) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cl), "\x00"), "\x00")
		all := true
		for _, w := range words {
			found := false
			for _, a := range args {
				if strings.Contains(a, w) {
					found = true
					break
				}
			}
			if !found {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// govConfirm is one tools/confirm question.
type govConfirm struct {
	CallID    string          `json:"callId"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Reason    string          `json:"reason"`
	Rule      string          `json:"rule"`
}

// govAsker answers tools/confirm with a fixed decision and records questions.
type govAsker struct {
	mu       sync.Mutex
	asked    []govConfirm
	decision string
	message  string
}

func (a *govAsker) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != "tools/confirm" {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "a7g: %s", method)
	}
	var q govConfirm
	if err := json.Unmarshal(params, &q); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	return map[string]any{"decision": a.decision, "message": a.message}, nil
}

func (a *govAsker) questions() []govConfirm {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]govConfirm(nil), a.asked...)
}

// govSession starts agentls on ws with its audit log in auditDir, answering
// tools/confirm with asker when not nil (and declaring the capability).
func govSession(t *testing.T, ws, auditDir string, asker *govAsker, opts map[string]any, env ...string) (*harness.Client, context.Context) {
	t.Helper()
	if auditDir != "" {
		env = append(env, "AGENTLS_AUDIT_DIR="+auditDir)
	}
	c := harness.Start(t, harness.Options{Root: ws, Env: env})
	params := map[string]any{"initializationOptions": opts}
	if asker != nil {
		c.OnRequest = asker.handle
		params["capabilities"] = map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}}
	}
	ctx := testCtx(t, 60*time.Second)
	c.Initialize(ctx, params)
	return c, ctx
}

// govAuditEntries is the audit log in dir as decoded JSON lines.
func govAuditEntries(t *testing.T, dir string) []map[string]any {
	t.Helper()
	cmd := harness.Command(t, []string{"audit", "--tail", "0", "--json", "--dir", dir})
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("agentls audit: %v\n%s", err, out)
	}
	var entries []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("audit line is not JSON: %v: %q", err, line)
		}
		entries = append(entries, m)
	}
	return entries
}

// govAuditFor returns the audit entries of tool.
func govAuditFor(entries []map[string]any, tool string) []map[string]any {
	var out []map[string]any
	for _, e := range entries {
		if e["tool"] == tool {
			out = append(out, e)
		}
	}
	return out
}

// govListed returns tools/list (deferred included) by name.
func govListed(t *testing.T, ctx context.Context, c *harness.Client) map[string]map[string]any {
	t.Helper()
	var res struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{"includeDeferred": true}, &res); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]map[string]any{}
	for _, tl := range res.Tools {
		out[fmt.Sprint(tl["name"])] = tl
	}
	return out
}

// govUpstream is a workspace whose .agentls/mcp.json declares agentls
// itself (`agentls mcp --root <up>`) as the stdio server "up".
type govUpstream struct {
	ws, up, cfg string
}

// govNewUpstream writes the workspace, the upstream's own folder and its
// user settings (bypass, so its tools run without asking; bash limits
// raised so the downstream budget is what cuts). shape is "servers" or
// "mcpServers"; env is added to the server's entry.
func govNewUpstream(t *testing.T, shape string, env map[string]string) govUpstream {
	t.Helper()
	u := govUpstream{ws: resolvedWorkspace(t, nil), up: resolvedWorkspace(t, nil), cfg: t.TempDir()}
	writeFile(t, filepath.Join(u.cfg, "agentls", "settings.json"),
		`{"mode": "bypass", "limits": {"bashBytes": 1048576, "bashLines": 100000}}`)
	e := map[string]string{"XDG_CONFIG_HOME": u.cfg}
	for k, v := range env {
		e[k] = v
	}
	cfg := map[string]any{shape: map[string]any{"up": map[string]any{
		"command": harness.Binary(t), "args": []string{"mcp", "--root", u.up}, "env": e,
	}}}
	b, _ := json.Marshal(cfg)
	writeBytes(t, filepath.Join(u.ws, ".agentls", "mcp.json"), b)
	return u
}

// govUpstreamPids is the pids of u's upstream server.
func (u govUpstream) pids() []int { return govProcs("mcp", u.up) }

// govAwaitUpstream calls up__read until the upstream answers (it starts in
// the background), and fails the test after 20 s.
func govAwaitUpstream(t *testing.T, ctx context.Context, c *harness.Client, u govUpstream) {
	t.Helper()
	writeFile(t, filepath.Join(u.up, "ping.txt"), "pong\n")
	var r harness.Result
	if !waitUntil(20*time.Second, func() bool {
		r = c.CallTool(ctx, "up__read", map[string]any{"path": "ping.txt"})
		return !r.IsError && strings.Contains(r.Text(), "pong")
	}) {
		t.Fatalf("upstream never answered up__read: %s", r.Text())
	}
}

// TestGovernanceUpstreamShapes: both config shapes declare stdio servers
// whose tools become deferred <server>__<tool>; tool_search waits for the
// first listing, finds them and sends tools/listChanged; calling works.
func TestGovernanceUpstreamShapes(t *testing.T) {
	t.Parallel()
	for _, shape := range []string{"servers", "mcpServers"} {
		t.Run(shape, func(t *testing.T) {
			u := govNewUpstream(t, shape, nil)
			writeFile(t, filepath.Join(u.up, "hello.txt"), "hello from upstream\n")
			c, ctx := govSession(t, u.ws, "", nil, bypassOptions())
			r := c.CallTool(ctx, "tool_search", map[string]any{"query": "up read", "limit": 1})
			wantResult(t, "first tool_search", r, false, "up__read")
			if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/listChanged" }); !ok {
				t.Errorf("no tools/listChanged after tool_search activated up__read")
			}
			var active struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			}
			if err := c.Call(ctx, "tools/list", map[string]any{}, &active); err != nil {
				t.Fatal(err)
			}
			names := compactJSON(active.Tools)
			wantContains(t, "active tools", names, `"up__read"`)
			wantLacks(t, "active tools", names, `"up__bash"`)
			listed := govListed(t, ctx, c)
			tl, ok := listed["up__bash"]
			if !ok {
				t.Fatalf("up__bash not in tools/list includeDeferred")
			}
			if meta, _ := tl["_meta"].(map[string]any); meta["deferred"] != true {
				t.Errorf("up__bash _meta = %v, want deferred: true", tl["_meta"])
			}
			r = c.CallTool(ctx, "up__read", map[string]any{"path": "hello.txt"})
			wantResult(t, "up__read", r, false, "hello from upstream")
		})
	}
}

// TestGovernanceUpstreamPermissions: mcp__<server>__<tool> and mcp__<server>
// rules deny and ask for upstream tools; the audit log records the calls.
func TestGovernanceUpstreamPermissions(t *testing.T) {
	slow(t)
	t.Parallel()
	u := govNewUpstream(t, "servers", nil)
	writeFile(t, filepath.Join(u.up, "f.txt"), "upstream file\n")
	cases := []struct {
		name      string
		perms     map[string]any
		decision  string
		tool      string
		args      map[string]any
		wantErr   bool
		wantAsked bool
		want      []string
	}{
		{"no rule: read-only upstream read runs", map[string]any{}, "", "up__read", map[string]any{"path": "f.txt"}, false, false, []string{"upstream file"}},
		{"deny mcp__up__read", map[string]any{"deny": []string{"mcp__up__read"}}, "", "up__read", map[string]any{"path": "f.txt"}, true, false, []string{"mcp__up__read"}},
		{"deny mcp__up covers every tool", map[string]any{"deny": []string{"mcp__up"}}, "", "up__ls", map[string]any{}, true, false, []string{"mcp__up"}},
		{"deny mcp__up__bash leaves read", map[string]any{"deny": []string{"mcp__up__bash"}}, "", "up__read", map[string]any{"path": "f.txt"}, false, false, []string{"upstream file"}},
		{"ask mcp__up__read allowOnce", map[string]any{"ask": []string{"mcp__up__read"}}, "allowOnce", "up__read", map[string]any{"path": "f.txt"}, false, true, []string{"upstream file"}},
		{"ask mcp__up rejectOnce", map[string]any{"ask": []string{"mcp__up"}}, "rejectOnce", "up__read", map[string]any{"path": "f.txt"}, true, true, []string{"denied by the user: a7g says no"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			audit := t.TempDir()
			asker := &govAsker{decision: tc.decision, message: "a7g says no"}
			c, ctx := govSession(t, u.ws, audit, asker, map[string]any{"mode": "default", "permissions": tc.perms})
			var r harness.Result
			// The server starts in the background: retry while it is starting.
			waitUntil(20*time.Second, func() bool {
				r = c.CallTool(ctx, tc.tool, tc.args)
				return !strings.Contains(r.Text(), "starting")
			})
			wantResult(t, tc.name, r, tc.wantErr, tc.want...)
			if tc.wantErr {
				wantLacks(t, tc.name, r.Text(), "upstream file")
			}
			qs := asker.questions()
			if tc.wantAsked != (len(qs) > 0) {
				t.Fatalf("asked %d times, want asked=%v", len(qs), tc.wantAsked)
			}
			if tc.wantAsked && (qs[0].Tool != tc.tool || !strings.Contains(qs[0].Rule+qs[0].Reason, "mcp__up")) {
				t.Errorf("confirm question = %+v, want tool %s and the mcp__ rule named", qs[0], tc.tool)
			}
			var entries []map[string]any
			waitUntil(5*time.Second, func() bool { entries = govAuditFor(govAuditEntries(t, audit), tc.tool); return len(entries) > 0 })
			if len(entries) == 0 {
				t.Fatalf("no audit entry for %s", tc.tool)
			}
			last := entries[len(entries)-1]
			if last["isError"] != tc.wantErr {
				t.Errorf("audit entry %v: isError want %v", last, tc.wantErr)
			}
			wantDecision := map[string]string{"": "allow", "allowOnce": "ask:allowOnce", "rejectOnce": "ask:rejectOnce"}[tc.decision]
			if tc.wantErr && !tc.wantAsked {
				wantDecision = "deny"
			}
			if last["decision"] != wantDecision {
				t.Errorf("audit decision = %v, want %s", last["decision"], wantDecision)
			}
		})
	}
}

// TestGovernanceUpstreamBudgetAndMasking: an upstream result over the
// 65,536-byte budget is cut at a line with the read call that goes on in
// the spill file, and a secret the upstream did not mask is masked here.
func TestGovernanceUpstreamBudgetAndMasking(t *testing.T) {
	t.Parallel()
	secret := "a7g" + govAlnum(t, 29)
	// The downstream's environment holds the secret; the upstream's entry
	// clears it, so only the downstream knows it as a secret.
	u := govNewUpstream(t, "servers", map[string]string{"A7G_SERVICE_TOKEN": ""})
	c, ctx := govSession(t, u.ws, "", nil, bypassOptions(), "A7G_SERVICE_TOKEN="+secret)
	govAwaitUpstream(t, ctx, c, u)

	t.Run("reference: the downstream masks the value in its own bash", func(t *testing.T) {
		r := c.CallTool(ctx, "bash", map[string]any{"command": "echo v=" + secret[:8] + "''" + secret[8:]})
		wantLacks(t, "bash", r.Text(), secret)
	})
	t.Run("upstream result masked", func(t *testing.T) {
		// The upstream does not have the value, so it cannot mask it itself.
		r := c.CallTool(ctx, "up__bash", map[string]any{"command": `echo "len=${#A7G_SERVICE_TOKEN}"`})
		wantResult(t, "upstream env", r, false, "len=0")
		r = c.CallTool(ctx, "up__bash", map[string]any{"command": "echo v=" + secret[:8] + "''" + secret[8:]})
		wantResult(t, "up__bash", r, false, "v=")
		wantLacks(t, "up__bash", r.Text()+compactJSON(r.Details), secret)
	})
	t.Run("upstream result cut at the budget and spilled", func(t *testing.T) {
		r := c.CallTool(ctx, "up__bash", map[string]any{"command": "seq -f 'row %g' 1 20000"}) // ~190 KB
		txt := r.Text()
		if len(txt) > 65536+2048 {
			t.Errorf("text is %d bytes, over the 65,536-byte budget", len(txt))
		}
		if !strings.Contains(txt, "row 1\n") {
			t.Errorf("the budget cut should keep the head:\n%s\n…%s", txt[:min(len(txt), 300)], txt[max(0, len(txt)-600):])
		}
		spill := govSpillPath(t, txt)
		m := regexp.MustCompile(`"offset": (\d+)`).FindStringSubmatch(txt)
		if m == nil {
			t.Fatalf("no read offset in the notice:\n%s", txt[max(0, len(txt)-600):])
		}
		next, _ := strconv.Atoi(m[1])
		wantContains(t, "up__bash", txt, fmt.Sprintf("row %d\n", next-1), fmt.Sprintf("lines 1-%d", next-1))
		wantLacks(t, "up__bash", txt, fmt.Sprintf("row %d\n", next))
		rr := c.CallTool(ctx, "read", map[string]any{"path": spill, "offset": next, "limit": 1})
		wantResult(t, "read spill", rr, false, fmt.Sprintf("row %d", next))
	})
}

// TestGovernanceUpstreamCrashRestart: a killed upstream answers with a clear
// isError result and comes back after a backoff restart.
func TestGovernanceUpstreamCrashRestart(t *testing.T) {
	// Not parallel: the call right after the crash must beat the 100 ms restart, which busy neighbours on 2 cores can delay.
	u := govNewUpstream(t, "servers", nil)
	c, ctx := govSession(t, u.ws, "", nil, bypassOptions())
	govAwaitUpstream(t, ctx, c, u)
	pids := u.pids()
	if len(pids) != 1 {
		t.Fatalf("upstream processes = %v, want 1", pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !waitUntil(5*time.Second, func() bool { return len(govProcs(strconv.Itoa(pids[0]))) == 0 && !govAlive(pids[0]) }) {
		t.Fatalf("upstream %d did not die", pids[0])
	}
	r := c.CallTool(ctx, "up__read", map[string]any{"path": "ping.txt"})
	// Docs word it "unavailable … restarting in …"; the contract asks for a
	// clear result: an error naming the server and that it is restarted.
	wantResult(t, "call right after the crash", r, true, `"up"`, "restart")
	wantLacks(t, "call right after the crash", r.Text(), "pong")
	var again harness.Result
	if !waitUntil(15*time.Second, func() bool {
		again = c.CallTool(ctx, "up__read", map[string]any{"path": "ping.txt"})
		return !again.IsError
	}) {
		t.Fatalf("upstream did not come back: %s", again.Text())
	}
	wantResult(t, "after restart", again, false, "pong")
	if now := u.pids(); len(now) != 1 || now[0] == pids[0] {
		t.Errorf("upstream processes after restart = %v, want one new process", now)
	}
}

// govAlive reports whether pid exists and is not a zombie.
func govAlive(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(st, ')')
	return i < 0 || i+2 >= len(st) || st[i+2] != 'Z'
}

// TestGovernanceUpstreamProgressAndCancel: an upstream bash's progress
// reaches the client as tools/progress with the call's callId, and
// cancelling the call kills the upstream's command.
func TestGovernanceUpstreamProgressAndCancel(t *testing.T) {
	slow(t)
	t.Parallel()
	u := govNewUpstream(t, "servers", nil)
	c, ctx := govSession(t, u.ws, "", nil, bypassOptions())
	govAwaitUpstream(t, ctx, c, u)

	t.Run("progress", func(t *testing.T) {
		var r harness.Result
		err := c.Call(ctx, "tools/call", map[string]any{"name": "up__bash", "callId": "gov-progress",
			"arguments": map[string]any{"command": "for i in 1 2 3 4 5 6 7 8; do echo tick$i; sleep 0.15; done"}}, &r)
		if err != nil {
			t.Fatal(err)
		}
		wantResult(t, "up__bash", r, false, "tick8")
		var got []string
		for _, n := range c.Notes("tools/progress") {
			var p struct {
				CallID, Tool, Output, Message string
			}
			json.Unmarshal(n.Params, &p)
			if p.CallID == "gov-progress" {
				got = append(got, p.Tool+"|"+p.Output+p.Message)
			}
		}
		if len(got) < 2 {
			t.Fatalf("tools/progress for the call = %q, want several while it ran", got)
		}
		wantContains(t, "progress", strings.Join(got, "\n"), "up__bash|", "tick1")
	})
	t.Run("cancel", func(t *testing.T) {
		arg := govSleepArg(t)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := c.TryCallTool(cctx, "up__bash", map[string]any{"command": "sleep " + arg + "; echo done"})
			done <- err
		}()
		if !waitUntil(10*time.Second, func() bool { return len(govProcs(arg)) > 0 }) {
			t.Fatalf("the upstream's sleep never started")
		}
		cancel()
		select {
		case err := <-done:
			// The harness returns the context's error once it has sent
			// $/cancelRequest; what matters is that the work stops upstream.
			if err == nil {
				t.Errorf("cancelled call returned a result")
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("cancelled call did not reply")
		}
		if !waitUntil(5*time.Second, func() bool { return len(govProcs(arg)) == 0 }) {
			t.Errorf("the upstream's sleep survives the cancel: %v", govProcs(arg))
		}
		r := c.CallTool(ctx, "up__read", map[string]any{"path": "ping.txt"})
		wantResult(t, "after cancel", r, false, "pong")
	})
}

func TestSpillCapNotice(t *testing.T) {
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

// govSpillPath returns the absolute path in text that exists on disk.
func govSpillPath(t *testing.T, text string) string {
	t.Helper()
	for _, m := range regexp.MustCompile(`(/[^\s"'`+"`"+`]+)`).FindAllString(text, -1) {
		m = strings.TrimRight(m, ".,;:)]}")
		if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() {
			return m
		}
	}
	t.Fatalf("no existing spill file path in:\n%s", text)
	return ""
}
