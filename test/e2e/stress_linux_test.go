package e2e

// Black-box stress tests of docs/protocol.md and docs/tools.md (edit guard,
// cancellation): the server never crashes, hangs, leaks processes or
// descriptors, or corrupts a file, however hard the client (or the file
// system under it) pushes.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentls/agentls/test/harness"
)

// stressStart is start with a minute for the calls.
func stressStart(t *testing.T, files map[string]string) (*harness.Client, string, context.Context) {
	c, ws, _ := start(t, files)
	return c, ws, testCtx(t, 60*time.Second)
}

// stressMsg is one frame received by the raw client.
type stressMsg struct {
	fields map[string]json.RawMessage
	raw    []byte
}

func (m stressMsg) String() string             { return string(m.raw) }
func (m stressMsg) method() (s string)         { json.Unmarshal(m.fields["method"], &s); return s }
func (m stressMsg) hasID() bool                { _, ok := m.fields["id"]; return ok }
func (m stressMsg) isResponse() bool           { _, ok := m.fields["method"]; return !ok } // no method
func (m stressMsg) result() (r harness.Result) { json.Unmarshal(m.fields["result"], &r); return r }
func (m stressMsg) errCode() int {
	var e struct{ Code int }
	json.Unmarshal(m.fields["error"], &e)
	return e.Code
}

// stressRaw drives agentls frame by frame, so a test can send what no client
// library would (huge, broken, duplicate) and see every reply, -32800 and
// duplicates included (a library client drops replies it no longer waits for).
type stressRaw struct {
	*rawClient[stressMsg]
	ids int // ids handed out by call
}

// stressStartRaw spawns agentls on ws with env added; at cleanup it is
// stopped and its stderr must show no crash.
func stressStartRaw(t *testing.T, ws string, env ...string) *stressRaw {
	t.Helper()
	r := &stressRaw{rawClient: startRaw(t, []string{"--root", ws}, env, lenientFrames(stressDecode))}
	t.Cleanup(func() {
		r.close()
		if s := r.stderr.String(); strings.Contains(s, "panic:") || strings.Contains(s, "fatal error:") {
			t.Errorf("agentls stderr shows a crash:\n%s", s)
		}
	})
	return r
}

// stressDecode splits a frame body into messages: a batch reply (JSON-RPC 2.0
// §6) is an array, whose members are kept.
func stressDecode(body []byte) []stressMsg {
	var parts []json.RawMessage
	if err := json.Unmarshal(body, &parts); err != nil {
		parts = []json.RawMessage{body}
	}
	var ms []stressMsg
	for _, p := range parts {
		m := stressMsg{raw: p}
		if err := json.Unmarshal(p, &m.fields); err != nil {
			m.fields = map[string]json.RawMessage{"unparsable": nil}
		}
		ms = append(ms, m)
	}
	return ms
}

func (r *stressRaw) request(id any, method string, params any) {
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}
func (r *stressRaw) notify(method string, params any) {
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// cancel sends $/cancelRequest for id (from any goroutine).
func (r *stressRaw) cancel(id any) { r.notify("$/cancelRequest", map[string]any{"id": id}) }

// respond answers the server's request whose raw id is id.
func (r *stressRaw) respond(id json.RawMessage, result any) {
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// replies is every response received so far, by raw id.
func (r *stressRaw) replies() map[string][]stressMsg {
	out := map[string][]stressMsg{}
	for _, m := range r.all() {
		if m.isResponse() && m.hasID() {
			id := string(bytes.TrimSpace(m.fields["id"]))
			out[id] = append(out[id], m)
		}
	}
	return out
}

// reply waits for the response whose id is JSON-equal to id and fails the
// test without one.
func (r *stressRaw) reply(id any, timeout time.Duration) stressMsg {
	r.t.Helper()
	want, _ := json.Marshal(id)
	m, ok := r.wait(timeout, func(m stressMsg) bool {
		return m.isResponse() && m.hasID() && bytes.Equal(bytes.TrimSpace(m.fields["id"]), want)
	})
	if !ok {
		r.t.Fatalf("no reply to id %v within %v", id, timeout)
	}
	return m
}

// initialize performs the handshake with params and waits until the
// watchers are armed (tests change files and expect workspace/externalChange).
func (r *stressRaw) initialize(params map[string]any) {
	r.t.Helper()
	if _, ok := params["capabilities"]; !ok {
		params["capabilities"] = map[string]any{}
	}
	r.request("init", "initialize", params)
	if m := r.reply("init", 10*time.Second); m.errCode() != 0 {
		r.t.Fatalf("initialize failed: %s", m.raw)
	}
	r.notify("initialized", map[string]any{})
	if _, ok := r.wait(10*time.Second, func(m stressMsg) bool { return m.method() == harness.WatcherReady }); !ok {
		r.t.Fatalf("no %s within 10s", harness.WatcherReady)
	}
}

// callTool sends tools/call with id.
func (r *stressRaw) callTool(id any, name string, args any) {
	r.request(id, "tools/call", map[string]any{"name": name, "arguments": args})
}

// call runs method under a fresh id, sends $/cancelRequest after
// cancelAfter (0: never) and returns its reply.
func (r *stressRaw) call(cancelAfter time.Duration, method string, params any) stressMsg {
	r.t.Helper()
	r.ids++
	id := fmt.Sprintf("call-%d", r.ids)
	r.request(id, method, params)
	if cancelAfter > 0 {
		time.Sleep(cancelAfter) // the moment of the cancel, not a wait for anything
		r.cancel(id)
	}
	return r.reply(id, 20*time.Second)
}

// tool runs tools/call and fails the test on a protocol error or isError.
func (r *stressRaw) tool(name string, args any) harness.Result {
	r.t.Helper()
	m := r.call(0, "tools/call", map[string]any{"name": name, "arguments": args})
	if m.errCode() != 0 || m.result().IsError {
		r.t.Fatalf("%s: %.300s", name, m.raw)
	}
	return m.result()
}

// docs/protocol.md: tools/call on one connection; docs/tools.md read/grep/find/ls
// output shapes. 200 concurrent calls are all answered, each correctly.
func TestStressTwoHundredConcurrentMixedCalls(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stress")
	}
	const nFiles = 50
	files := map[string]string{}
	for i := range nFiles {
		files[fmt.Sprintf("d/f%03d.txt", i)] = fmt.Sprintf("header %03d\nuniq-%04d-token\nfooter\n", i, i)
	}
	c, _, ctx := stressStart(t, files)

	var wg sync.WaitGroup
	start := time.Now()
	for i := range 200 {
		wg.Go(func() {
			base, tok := fmt.Sprintf("f%03d.txt", i%nFiles), fmt.Sprintf("uniq-%04d-token", i%nFiles)
			name := "d/" + base
			tool := []string{"read", "grep", "find", "ls"}[i%4]
			args := []map[string]any{{"path": name}, {"pattern": tok}, {"pattern": base}, {"path": "d"}}[i%4]
			want := [][]string{{name + ", lines 1-3 of 3", tok}, {name + ":2: " + tok}, {name}, {base, "f000.txt", fmt.Sprintf("f%03d.txt", nFiles-1)}}[i%4]
			r, err := c.TryCallTool(ctx, tool, args)
			if err != nil {
				t.Errorf("call %d %s: protocol error %v", i, tool, err)
				return
			}
			wantResult(t, fmt.Sprintf("call %d %s %v", i, tool, args), r, false, want...)
			// grep and find name exactly the one file.
			if text := r.Text(); (tool == "find" && strings.Count(text, ".txt") != 1) || (tool == "grep" && strings.Count(text, "uniq-") != 1) {
				t.Errorf("call %d %s: expected exactly one hit:\n%s", i, tool, text)
			}
		})
	}
	wg.Wait()
	t.Logf("200 concurrent calls answered in %v", time.Since(start))
	// The server is still healthy afterwards.
	mustRead(t, c, ctx, "d/f000.txt")
}

// docs/protocol.md: tools/callBatch results come in call order; calls with a
// per-file key run in call order, after everything before them.
func TestStressBatchOfHundredMixedCalls(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stress")
	}
	c, ws, ctx := stressStart(t, map[string]string{
		"a.txt": "count=0\nEND\n",
		"b.txt": "n=0\n",
	})
	var calls []map[string]any
	var exp []string // in each result's text
	add := func(name string, args map[string]any, want string) {
		calls = append(calls, map[string]any{"name": name, "arguments": args, "callId": fmt.Sprintf("b-%03d", len(calls))})
		exp = append(exp, want)
	}
	add("read", map[string]any{"path": "a.txt"}, "count=0")
	add("read", map[string]any{"path": "b.txt"}, "n=0")
	ca, cb := 0, 0
	var log []string
	for k := 2; len(calls) < 100; k++ {
		switch k % 6 {
		case 0:
			line := fmt.Sprintf("e%03d", k)
			add("edit", map[string]any{"path": "a.txt", "edits": []map[string]any{
				{"oldText": fmt.Sprintf("count=%d\n", ca), "newText": fmt.Sprintf("count=%d\n", ca+1)},
				{"oldText": "END\n", "newText": line + "\nEND\n"},
			}}, "Edited a.txt")
			ca++
			log = append(log, line)
		case 1:
			add("read", map[string]any{"path": "a.txt"}, fmt.Sprintf("count=%d", ca))
		case 2:
			add("grep", map[string]any{"pattern": "count=", "path": "a.txt"}, fmt.Sprintf("a.txt:1: count=%d", ca))
		case 3:
			add("edit", map[string]any{"path": "b.txt", "edits": []map[string]any{
				{"oldText": fmt.Sprintf("n=%d", cb), "newText": fmt.Sprintf("n=%d", cb+1)},
			}}, "Edited b.txt")
			cb++
		case 4:
			add("bash", map[string]any{"command": fmt.Sprintf("echo k-%d-$((%d+1))", k, k)}, fmt.Sprintf("k-%d-%d", k, k+1))
		case 5:
			add("read", map[string]any{"path": "b.txt"}, fmt.Sprintf("n=%d", cb))
		}
	}
	results := callBatch(t, ctx, c, calls...)
	for i, r := range results {
		if want := fmt.Sprintf("b-%03d", i); r.CallID != want {
			t.Errorf("result %d has callId %q, want %q (results must be in call order)", i, r.CallID, want)
		}
		wantResult(t, fmt.Sprintf("result %d (%s %v)", i, calls[i]["name"], calls[i]["arguments"]), r, false, exp[i])
	}
	wantA := fmt.Sprintf("count=%d\n%sEND\n", ca, strings.Join(log, "\n")+"\n")
	if got, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(got) != wantA {
		t.Errorf("a.txt after the batch:\n%s\nwant:\n%s", got, wantA)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "b.txt")); string(got) != fmt.Sprintf("n=%d\n", cb) {
		t.Errorf("b.txt after the batch: %q, want n=%d", got, cb)
	}
}

// docs/tools.md edit guard + docs' per-file FIFO queue: concurrent edits of one
// file after one read each apply or fail as stale; the file is exactly the
// applied edits, never torn or interleaved.
func TestStressConcurrentEditsOfOneFile(t *testing.T) {
	t.Parallel()
	const nLines = 40
	var sb strings.Builder
	for i := range nLines {
		fmt.Fprintf(&sb, "line-%02d\n", i)
	}
	c, ws, ctx := stressStart(t, map[string]string{
		"s.txt": sb.String(),
		"c.txt": "counter=0\nkeep\n",
		"w.txt": "seed\n",
	})

	t.Run("distinct lines", func(t *testing.T) {
		mustRead(t, c, ctx, "s.txt")
		results := concurrently(nLines, func(i int) harness.Result {
			return c.CallTool(ctx, "edit", editCall("s.txt", fmt.Sprintf("line-%02d\n", i), fmt.Sprintf("line-%02d edited-by-%02d\n", i, i)))
		})
		var want strings.Builder
		applied := 0
		for i, r := range results {
			switch {
			case !r.IsError && strings.HasPrefix(r.Text(), "Edited s.txt"):
				applied++
				fmt.Fprintf(&want, "line-%02d edited-by-%02d\n", i, i)
			case r.IsError && strings.Contains(r.Text(), "since you read it"):
				fmt.Fprintf(&want, "line-%02d\n", i)
			default:
				t.Errorf("edit %d: neither applied nor a stale-read failure: isError=%v %s", i, r.IsError, r.Text())
				fmt.Fprintf(&want, "line-%02d\n", i)
			}
		}
		got, _ := os.ReadFile(filepath.Join(ws, "s.txt"))
		if string(got) != want.String() {
			t.Errorf("s.txt is not exactly the applied edits (%d applied):\n%s\nwant:\n%s", applied, got, want.String())
		}
		t.Logf("%d of %d concurrent edits applied", applied, nLines)
	})

	t.Run("competing edits of one line", func(t *testing.T) {
		mustRead(t, c, ctx, "c.txt")
		results := concurrently(20, func(i int) harness.Result {
			return c.CallTool(ctx, "edit", editCall("c.txt", "counter=0", fmt.Sprintf("counter=%d", i+1)))
		})
		winner := -1
		for i, r := range results {
			if !r.IsError {
				if winner >= 0 {
					t.Errorf("edits %d and %d both replaced the one counter=0", winner, i)
				}
				winner = i
			}
		}
		got, _ := os.ReadFile(filepath.Join(ws, "c.txt"))
		if winner < 0 {
			t.Fatalf("no edit applied; c.txt = %q", got)
		}
		if want := fmt.Sprintf("counter=%d\nkeep\n", winner+1); string(got) != want {
			t.Errorf("c.txt = %q, want the winner's %q", got, want)
		}
	})

	t.Run("concurrent whole-file writes", func(t *testing.T) {
		mustRead(t, c, ctx, "w.txt")
		const n = 16
		contents := make([]string, n)
		for i := range n {
			contents[i] = strings.Repeat(fmt.Sprintf("writer %02d says hello, this is a long line of text\n", i), 4000) // ~200 KB
		}
		results := concurrently(n, func(i int) harness.Result {
			return c.CallTool(ctx, "write", map[string]any{"path": "w.txt", "content": contents[i]})
		})
		got, _ := os.ReadFile(filepath.Join(ws, "w.txt"))
		match := -1
		for i := range n {
			if string(got) == contents[i] {
				match = i
			}
		}
		if match < 0 {
			t.Fatalf("w.txt (%d bytes) equals none of the written contents: torn or interleaved; starts %q", len(got), got[:min(len(got), 80)])
		}
		if results[match].IsError {
			t.Errorf("w.txt holds writer %d's content but that write reported an error: %s", match, results[match].Text())
		}
		for i, r := range results {
			if r.IsError && !strings.Contains(r.Text(), "since you read it") {
				t.Errorf("write %d failed for another reason than a stale read: %s", i, r.Text())
			}
		}
		if got := soakFiles(ws); !slices.Equal(got, []string{"c.txt", "s.txt", "w.txt"}) {
			t.Errorf("leftover files in the workspace after concurrent writes: %v", got)
		}
	})
}

// docs/protocol.md/JSON-RPC: a hostile client gets answers where answers are
// due, and the server stays up: a thousand unknown notifications, ids of
// every JSON type (and values that are no id). Huge, garbage and single bad
// frames are TestProtocolFramesAndMessageErrors'; an id reused while in
// flight, TestSecondRequestWithAnInFlightIDIsRefused; closing stdin mid-call
// or mid-frame, TestLifecycleClosingStdinCancelsAndExits.
func TestStressHostileFrames(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stress")
	}
	ws := newWorkspace(t, map[string]string{"a.txt": "alpha\n"})
	r := stressStartRaw(t, ws)
	r.initialize(bypass())
	// others writes b, proves the server alive with a read under the id
	// probe, and returns the replies to anything else that came meanwhile.
	others := func(t *testing.T, b []byte, probe string) (out []stressMsg) {
		t.Helper()
		before := len(r.all())
		if err := r.writeRaw(b); err != nil {
			t.Fatal(err)
		}
		r.callTool(probe, "read", map[string]any{"path": "a.txt"})
		if m := r.reply(probe, 15*time.Second); m.errCode() != 0 || !strings.Contains(m.result().Text(), "alpha") {
			t.Fatalf("read %s: %s", probe, m.raw)
		}
		for _, m := range r.all()[before:] {
			if m.isResponse() && string(m.fields["id"]) != `"`+probe+`"` {
				out = append(out, m)
			}
		}
		return out
	}
	frame := func(body string) []byte { return fmt.Appendf(nil, "Content-Length: %d\r\n\r\n%s", len(body), body) }
	readWithID := func(id string) []byte {
		return frame(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}`)
	}

	t.Run("1000 unknown notifications", func(t *testing.T) {
		var buf bytes.Buffer
		for i := range 1000 {
			buf.Write(frame(fmt.Sprintf(`{"jsonrpc":"2.0","method":"x/unknown%d","params":{"i":%d}}`, i, i)))
		}
		start := time.Now()
		for _, m := range others(t, buf.Bytes(), "after-notes") {
			t.Errorf("a notification got a response (JSON-RPC: notifications are never answered): %s", m.raw)
		}
		t.Logf("request after 1000 notifications answered in %v", time.Since(start))
	})

	t.Run("ids of every JSON type", func(t *testing.T) {
		for _, id := range []any{"str-id", "", 7, 0, -3, 2147483647, "🦀 ünïcode"} {
			r.callTool(id, "read", map[string]any{"path": "a.txt"})
			if m := r.reply(id, 10*time.Second); m.errCode() != 0 || !strings.Contains(m.result().Text(), "alpha") {
				t.Errorf("id %#v: %s", id, m.raw)
			}
		}
		// Not a valid id: JSON-RPC says -32600 Invalid Request, id null.
		for i, raw := range []string{`true`, `{"a":1}`, `[1]`, `1.5`} {
			got := others(t, readWithID(raw), fmt.Sprintf("after-bad-id-%d", i))
			if raw == `1.5` {
				t.Logf("id 1.5 (fractional, discouraged): %d replies", len(got))
			} else if len(got) != 1 || got[0].errCode() != -32600 {
				t.Errorf("id %s: want one -32600 reply, got %d: %v", raw, len(got), got)
			}
		}
		// id null: at most one reply, and it carries no result of a call
		// the client could not match (JSON-RPC discourages null ids).
		got := others(t, readWithID("null"), "after-null-id")
		for i, m := range got {
			if _, result := m.fields["result"]; i > 0 || result {
				t.Errorf("id null: want at most one reply and no result, got %v", got)
			}
		}
	}) // every step ends with a read answered: the server stayed up
}

// docs/tools.md edit guard: an edit never overwrites a change the model has not
// seen, however the file churns underneath. (One same-size rewrite right
// after the read: internal/editguard TestCheck, edit/stale_after_same_size_rewrite.txtar.)
func TestStressExternalChurn(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stress")
	}
	version := func(v int) string { return fmt.Sprintf("version %02d\nline two\nline three\n", v) }
	c, ws, ctx := stressStart(t, map[string]string{"a.txt": version(0)})
	path := filepath.Join(ws, "a.txt")
	verRe := regexp.MustCompile(`(?m)^\s*1\D+(version \d\d)$`)

	// Every applied edit must name, in its diff, the version the model
	// read. (A check-then-rename window cannot be closed entirely, so a
	// rewrite landing inside it is not judged.)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for v := 11; v <= 60; v++ {
			os.WriteFile(path, []byte(version(v)), 0o644)
			time.Sleep(3 * time.Millisecond)
		}
	}()
	attempts, applied, stale := 0, 0, 0
churn:
	for {
		select {
		case <-done:
			break churn // no edit after the last rewrite: the check below needs it
		default:
		}
		rr := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
		m := verRe.FindStringSubmatch(rr.Text())
		if rr.IsError || m == nil {
			continue // caught mid-write (truncated): nothing to edit on
		}
		seen := m[1]
		// Line 2 changes, so the diff's context shows line 1, the version
		// the edit was applied on.
		r := c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []map[string]any{{"oldText": "line two", "newText": "line two+"}}})
		attempts++
		if r.IsError {
			if strings.Contains(r.Text(), "since you read it") {
				stale++
			} else {
				t.Errorf("edit failed for another reason than a stale read: %s", r.Text())
			}
			continue
		}
		applied++
		diff, _ := r.Details["unifiedDiff"].(string)
		if !strings.Contains(diff, "\n "+seen+"\n") {
			t.Errorf("edit applied on a version the model had not read (read %q):\n%s\nread text:\n%s\nedit text: %s", seen, diff, rr.Text(), r.Text())
		}
	}
	t.Logf("%d edit attempts during the churn: %d applied, %d stale", attempts, applied, stale)
	if attempts == 0 {
		t.Errorf("no edit was attempted during the churn")
	}
	// Once the churn ends, a fresh read makes the edit apply on the latest
	// version.
	latest := readFile(t, path)
	mustRead(t, c, ctx, "a.txt")
	wantResult(t, "edit after a fresh read", c.CallTool(ctx, "edit", editCall("a.txt", "line three", "line 3")), false)
	want := strings.Replace(latest, "line three", "line 3", 1)
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Errorf("a.txt = %q, want %q", got, want)
	}
}

// docs/protocol.md workspace/externalChange under watcher load; the server stays
// responsive during a burst of 5,000 new files.
func TestStressWatcherBurst(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stress")
	}
	c, ws, ctx := stressStart(t, map[string]string{"w.txt": "watched\n", "a.txt": "alpha\n"})
	if watcher := c.WatcherMode; watcher == "degraded" {
		t.Fatalf("watcher %q at start on an idle workspace", watcher)
	}
	mustRead(t, c, ctx, "w.txt")

	burstDone := make(chan error, 1)
	go func() {
		var err error
		for d := 0; d < 50 && err == nil; d++ {
			dir := filepath.Join(ws, "burst", fmt.Sprintf("d%02d", d))
			err = os.MkdirAll(dir, 0o755)
			for f := 0; f < 100 && err == nil; f++ {
				err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", f)), []byte("x\n"), 0o644)
			}
		}
		burstDone <- err
	}()
	// Reads during the burst answer within 2 s each.
	var slow []time.Duration
	reads := 0
	for done := false; !done; reads++ {
		select {
		case err := <-burstDone:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		default:
			t0 := time.Now()
			mustRead(t, c, ctx, "a.txt")
			if d := time.Since(t0); d > 2*time.Second {
				slow = append(slow, d)
			}
		}
	}
	if len(slow) > 0 {
		t.Errorf("%d of %d reads during the burst took over 2 s: %v", len(slow), reads, slow)
	}

	changedAt := time.Now()
	writeFile(t, filepath.Join(ws, "w.txt"), "watched, then changed\n")
	n, ok := c.WaitNote(8*time.Second, func(n harness.Note) bool {
		if n.Method != "workspace/externalChange" || n.At.Before(changedAt) {
			return false
		}
		var p struct {
			URI  string `json:"uri"`
			Kind string `json:"kind"`
		}
		json.Unmarshal(n.Params, &p)
		return strings.HasSuffix(p.URI, "/w.txt") && p.Kind == "changed"
	})
	if !ok {
		t.Fatalf("no workspace/externalChange for w.txt within 8 s after a 5,000-file burst (%d externalChange notes in all)", len(c.Notes("workspace/externalChange")))
	}
	if d := n.At.Sub(changedAt); d > 5*time.Second {
		t.Errorf("externalChange arrived %v after the change, want ≤ 5 s", d)
	} else {
		t.Logf("externalChange after %v; %d reads during the burst", d, reads)
	}
	if strings.Contains(string(n.Params), `"readStale":false`) {
		t.Errorf("externalChange for a file read before it changed says readStale false: %s", n.Params)
	}

	// A file in a directory the burst created is watched too.
	deep := "burst/d49/f099.txt"
	mustRead(t, c, ctx, deep)
	changedAt = time.Now()
	writeFile(t, filepath.Join(ws, filepath.FromSlash(deep)), "changed\n")
	if _, ok := c.WaitNote(8*time.Second, func(n harness.Note) bool {
		return n.Method == "workspace/externalChange" && !n.At.Before(changedAt) && strings.Contains(string(n.Params), "/"+deep+`"`)
	}); !ok {
		t.Errorf("no workspace/externalChange for %s (in a directory created by the burst) within 8 s", deep)
	}
}

// While agentls waits for the client in the middle of an edit or write (the
// approval dialog, the diagnostics baseline, the post-change diagnostics):
// a change the user makes meanwhile is one the model has not seen, so the
// edit must not overwrite it (docs/tools.md edit guard); a cancel that
// comes after the file was written must not claim -32800 and leave the
// change in place (docs/protocol.md: on -32800 "the tool's work is undone
// or stopped").
func TestStressRoundTripsInsideAnEdit(t *testing.T) {
	t.Parallel()
	edit := map[string]any{"path": "a.txt", "edits": []map[string]any{{"oldText": "two", "newText": "TWO"}}}
	for _, tc := range []struct {
		name, caps, mode, tool string
		args                   map[string]any
		want                   string // cancel rows: the file once written; else the first request asked
	}{
		{"user edits while tools/confirm is open", "confirm", "default", "edit", edit, "tools/confirm"},
		{"user edits while the diagnostics baseline is asked", "diagnostics", "bypass", "edit", edit, "tools/diagnostics"},
		{"cancel after the edit was written", "diagnostics", "bypass", "edit", edit, "one\nTWO\nthree\n"},
		{"cancel after the write was written", "diagnostics", "bypass", "write", map[string]any{"path": "a.txt", "content": "replaced\n"}, "replaced\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := newWorkspace(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
			path, cancelRow := filepath.Join(ws, "a.txt"), strings.HasPrefix(tc.name, "cancel")
			r := stressStartRaw(t, ws)
			r.initialize(map[string]any{"initializationOptions": map[string]any{"mode": tc.mode},
				"capabilities": map[string]any{"experimental": map[string]any{"agentls": map[string]any{tc.caps: true}}}})
			r.tool("read", map[string]any{"path": "a.txt"})
			r.callTool("call", tc.tool, tc.args)
			var asked []string
			var reply stressMsg
			for seen, cancelled := map[string]bool{}, false; reply.raw == nil; {
				m, ok := r.wait(10*time.Second, func(m stressMsg) bool {
					return (m.method() != "" && m.hasID() && !seen[string(m.fields["id"])]) || (m.isResponse() && string(m.fields["id"]) == `"call"`)
				})
				switch id := m.fields["id"]; {
				case !ok:
					t.Fatalf("no reply to the %s (the server asked %v)", tc.tool, asked)
				case m.isResponse():
					if reply = m; cancelRow && !cancelled {
						t.Fatalf("no post-change tools/diagnostics request for %s (asked %v): %s", tc.tool, asked, m.raw)
					}
				case cancelRow && m.method() == "tools/diagnostics" && !strings.Contains(string(m.fields["params"]), `"waitMs":0`):
					seen[string(id)], cancelled = true, true
					if got := readFile(t, path); got != tc.want {
						t.Fatalf("file not yet changed when the post-change diagnostics are asked: %q", got)
					}
					r.cancel("call") // and the request stays unanswered
				default:
					seen[string(id)] = true
					if asked = append(asked, m.method()); !cancelRow && len(asked) == 1 {
						writeFile(t, path, "one\ntwo\nthree\nuser line\n") // the user, while the server waits
					}
					r.respond(id, map[string]any{"items": []any{}, "decision": "allowOnce"})
				}
			}
			got, res := readFile(t, path), reply.result()
			switch {
			case cancelRow && reply.errCode() == -32800 && got != "one\ntwo\nthree\n":
				t.Errorf("%s replied -32800 (cancelled) but its change stays on disk (%q): the work was neither stopped nor undone", tc.tool, got)
			case cancelRow:
				t.Logf("reply %.200s; file %q", reply.raw, got)
			case len(asked) == 0 || asked[0] != tc.want:
				t.Fatalf("the edit never sent %s (requests: %v); reply: %s", tc.want, asked, reply.raw)
			case !strings.Contains(got, "user line"):
				t.Errorf("the edit overwrote a change made during %s that the model never read: %s; file now %q", tc.want, reply.raw, got)
			case !res.IsError:
				t.Errorf("edit applied although the file changed after the read: %s", res.Text())
			case !strings.Contains(res.Text(), "since you read it"):
				t.Errorf("edit failed, but not as a stale read: %s", res.Text())
			}
		})
	}
}

// docs/tools.md: a cancelled write (alone or in a batch) of a file the
// model read leaves the file either as it was or whole with one write's
// content, never the content of a write that answered -32800, and no temp
// file. (Cancelled creates: TestSoakCancelBurst.)
func TestStressCancelledOverwrites(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stress")
	}
	orig := strings.Repeat("original line\n", 1000)
	ws := newWorkspace(t, map[string]string{"big.txt": orig})
	r := stressStartRaw(t, ws)
	r.initialize(bypass())
	r.tool("read", map[string]any{"path": "big.txt"})
	const n = 20
	contents := make([]string, n)
	for i := range n {
		contents[i] = strings.Repeat(fmt.Sprintf("content %02d of a cancelled write\n", i), 60000) // ~2 MB
		id, w := fmt.Sprintf("w%02d", i), map[string]any{"path": "big.txt", "content": contents[i]}
		if i%2 == 0 {
			r.callTool(id, "write", w)
		} else { // in a batch: -32800 means the batch committed nothing
			r.request(id, "tools/callBatch", map[string]any{"calls": []any{map[string]any{"name": "write", "arguments": w}, map[string]any{"name": "read", "arguments": map[string]any{"path": "big.txt"}}}})
		}
		r.cancel(id)
	}
	cancelled := make([]bool, n)
	for i := range n {
		switch m := r.reply(fmt.Sprintf("w%02d", i), 20*time.Second); m.errCode() {
		case -32800:
			cancelled[i] = true
		case 0:
		default:
			t.Errorf("write %d: unexpected error %.300s", i, m.raw)
		}
	}
	got, _ := os.ReadFile(filepath.Join(ws, "big.txt"))
	ok := string(got) == orig
	for i := range n {
		if string(got) == contents[i] {
			ok = true
			if cancelled[i] {
				t.Errorf("write %d replied -32800 (cancelled) but its content is on disk: the work was neither stopped nor undone", i)
			}
		}
	}
	if !ok {
		t.Errorf("big.txt (%d bytes) is neither the original nor one whole written content: %q…", len(got), got[:min(len(got), 80)])
	}
	// -32800 may be sent before a cancelled write has wound down
	// (ARCHITECTURE.md); its temp file goes when it has.
	var left []string
	if !waitUntil(5*time.Second, func() bool { left = soakFiles(ws); return len(left) == 1 }) {
		t.Errorf("leftover after cancelled writes: %v", left)
	}
}

// A directory swapped for a symlink to outside the workspace between
// agentls's check of a path and the child's use of it (renameat2
// RENAME_EXCHANGE in a tight loop): grep (both backends) and bash with
// cwd never read or run outside, and a workspace root replaced by a
// symlink is refused, not followed.

// swapAttempts is how many calls race the swap loop per case.
const swapAttempts = 500

// outsideMarker is the text only the directory outside the workspace holds.
const outsideMarker = "OUTSIDE_SECRET_7f3a"

// swapWorkspace makes ws/sub (a directory inside) and ws/link (a symlink
// to a directory outside holding outsideMarker), both holding marker.txt,
// and starts exchanging them until the test ends. It returns ws and how
// many exchanges were made so far.
func swapWorkspace(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ws := resolvedWorkspace(t, map[string]string{"sub/marker.txt": "INSIDE_OK_marker\n"})
	out := resolvedWorkspace(t, map[string]string{"marker.txt": outsideMarker + " marker\n"})
	symlink(t, out, filepath.Join(ws, "link"))
	var swaps atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		a, b := filepath.Join(ws, "sub"), filepath.Join(ws, "link")
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				return
			}
			swaps.Add(1)
		}
	})
	t.Cleanup(func() { close(stop); wg.Wait() })
	return ws, &swaps
}

// raceCalls runs swapAttempts calls of tool with args on 4 connections'
// worth of concurrency and returns how many results named outsideMarker
// and how many ran (were not refused).
func raceCalls(t *testing.T, ctx context.Context, c *harness.Client, tool string, args map[string]any) (escapes, ran int64) {
	t.Helper()
	var esc, ok atomic.Int64
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 4 {
		wg.Go(func() {
			for next.Add(1) <= swapAttempts {
				r, err := c.TryCallTool(ctx, tool, args)
				if err != nil {
					t.Errorf("%s: %v", tool, err)
					return
				}
				text := r.Text()
				if strings.Contains(text, outsideMarker) {
					esc.Add(1)
				}
				if strings.Contains(text, "INSIDE_OK") {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return esc.Load(), ok.Load()
}

// grep (both backends; the directory searched, or one below the start, is
// swapped: rg was handed sub/marker.txt and opened it through the symlink
// "sub" had become) and bash with cwd.
func TestNoToolFollowsADirectorySwappedForASymlink(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("race loop swapping directories for symlinks")
	}
	type race struct {
		name string
		env  []string
		tool string
		args map[string]any
	}
	races := []race{
		{"grep go/searched directory", []string{"AGENTLS_GREP_BACKEND=go"}, "grep", map[string]any{"pattern": "marker", "path": "sub"}},
		{"grep go/directory below the start", []string{"AGENTLS_GREP_BACKEND=go"}, "grep", map[string]any{"pattern": "marker"}},
		{"bash cwd", nil, "bash", map[string]any{"command": "cat marker.txt", "cwd": "sub"}},
	}
	if _, err := exec.LookPath("rg"); err == nil {
		races = append(races, race{"grep rg/searched directory", nil, "grep", map[string]any{"pattern": "marker", "path": "sub"}},
			race{"grep rg/directory below the start", nil, "grep", map[string]any{"pattern": "marker"}})
	} else {
		t.Log("rg not on PATH: only the Go backend is raced")
	}
	for _, rc := range races {
		t.Run(rc.name, func(t *testing.T) {
			ws, swaps := swapWorkspace(t)
			c, ctx := startIn(t, ws, bypass(), rc.env...)
			esc, ran := raceCalls(t, ctx, c, rc.tool, rc.args)
			t.Logf("%d of %d calls ran inside, %d swaps", ran, swapAttempts, swaps.Load())
			if esc > 0 {
				t.Errorf("%s reached outside the workspace in %d of %d calls", rc.tool, esc, swapAttempts)
			}
			if ran == 0 {
				t.Errorf("no call ran: the race tested nothing")
			}
		})
	}
}

func TestWorkspaceRootReplacedBySymlinkIsRefusedNotFollowed(t *testing.T) {
	t.Parallel()
	parent := resolvedWorkspace(t, map[string]string{"ws/marker.txt": "INSIDE_OK_marker\n"})
	ws := filepath.Join(parent, "ws")
	out := resolvedWorkspace(t, map[string]string{"marker.txt": outsideMarker + " marker\n"})
	c, ctx := startIn(t, ws, bypass())
	wantResult(t, "bash before the swap", c.CallTool(ctx, "bash", map[string]any{"command": "cat marker.txt"}), false, "INSIDE_OK")

	if err := os.Rename(ws, ws+".old"); err != nil {
		t.Fatal(err)
	}
	symlink(t, out, ws)

	r := c.CallTool(ctx, "bash", map[string]any{"command": "cat marker.txt; pwd -P"})
	wantResult(t, "bash after the root became a symlink", r, true, "no longer the directory agentls opened", "nothing was run")
	wantLacks(t, "bash after the root became a symlink", r.Text(), outsideMarker)
	r = c.CallTool(ctx, "bash", map[string]any{"command": "cat marker.txt", "cwd": "."})
	wantResult(t, "bash with cwd after the root became a symlink", r, true, "no longer the directory agentls opened")
	wantLacks(t, "bash with cwd after the root became a symlink", r.Text(), outsideMarker)
	r = c.CallTool(ctx, "grep", map[string]any{"pattern": "marker", "path": "sub"})
	wantLacks(t, "grep after the root became a symlink", r.Text(), outsideMarker)
}
