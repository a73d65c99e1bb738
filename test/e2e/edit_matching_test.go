package e2e

// Contract tests of edit, write, bash, tool_search, extension tools and
// the protocol items around them, against docs/tools.md and docs/protocol.md.
// Black-box: everything goes through the wire, as an editor would drive it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/test/harness"
)

// auditCall runs tools/call with an explicit callId (empty: none sent) and
// returns the result and the time the reply arrived.
func auditCall(t *testing.T, c *harness.Client, ctx context.Context, name, callID string, args any) (harness.Result, time.Time) {
	t.Helper()
	p := map[string]any{"name": name, "arguments": args}
	if callID != "" {
		p["callId"] = callID
	}
	var r harness.Result
	if err := c.Call(ctx, "tools/call", p, &r); err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return r, time.Now()
}

// auditDetailsNote is the tools/details notification of one call.
type auditDetailsNote struct {
	CallID  string         `json:"callId"`
	Tool    string         `json:"tool"`
	Details map[string]any `json:"details"`
}

func auditFindDetails(c *harness.Client, callID string) (auditDetailsNote, time.Time, bool) {
	n, ok := c.WaitNote(2*time.Second, func(n harness.Note) bool {
		if n.Method != "tools/details" {
			return false
		}
		var d auditDetailsNote
		json.Unmarshal(n.Params, &d)
		return d.CallID == callID
	})
	var d auditDetailsNote
	json.Unmarshal(n.Params, &d)
	return d, n.At, ok
}

// --- edit -------------------------------------------------------------------

// The initialize result's instructions cover the points docs/tools.md lists.
func TestInstructions(t *testing.T) {
	t.Parallel()
	c := harness.Start(t, harness.Options{Root: t.TempDir()})
	res := c.Initialize(t.Context(), bypass())
	ins := strings.ToLower(fmt.Sprint(res["instructions"]))
	for _, w := range []string{"read a file before editing", "search", "guess", "cat", "grep", "find", "oldtext", "unique"} {
		if !strings.Contains(ins, w) {
			t.Errorf("instructions lack %q:\n%s", w, res["instructions"])
		}
	}
}

// --- write ------------------------------------------------------------------

// --- bash -------------------------------------------------------------------

// The bash tool's description states its numbers and environment, and its
// schema the timeout maximum. (What the command sees is pinned by the
// scripts in cmd/agentls/testdata/script/bash.)
func TestBashDescription(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", nil, &list); err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool["name"] != "bash" {
			continue
		}
		desc := tool["description"].(string)
		for _, w := range []string{"default 120", "maximum 600", "2000 lines", "51200 bytes", "/dev/null", "PAGER=cat", "GIT_TERMINAL_PROMPT=0"} {
			if !strings.Contains(desc, w) {
				t.Errorf("bash description lacks %q", w)
			}
		}
		timeout := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)["timeout"].(map[string]any)
		if timeout["maximum"] != 600.0 {
			t.Errorf("schema timeout.maximum = %v", timeout["maximum"])
		}
		ann := tool["annotations"].(map[string]any)
		if ann["readOnlyHint"] != false {
			t.Errorf("bash readOnlyHint = %v", ann["readOnlyHint"])
		}
	}
}

// Timeout: a grandchild that ignores SIGTERM is SIGKILLed after the grace.
func TestBashTimeoutKillsTermIgnoringGrandchild(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	arg := fmt.Sprintf("1000.%d7", time.Now().UnixNano()%100000)
	t.Cleanup(func() { auditKillArg(arg) })
	t0 := time.Now()
	r := c.CallTool(ctx, "bash", map[string]any{"command": fmt.Sprintf(`sh -c 'trap "" TERM; sleep %s' & wait`, arg), "timeout": 1})
	d := time.Since(t0)
	if !r.IsError || !strings.Contains(r.Text(), "Timed out") || !strings.Contains(r.Text(), "SIGKILL") {
		t.Fatalf("result: %s", r.Text())
	}
	if d > 5*time.Second {
		t.Errorf("took %v; timeout 1 s + 2 s grace", d)
	}
	waitGone(t, arg, 3*time.Second)
}

// A grandchild that moved to its own session still counts as a grandchild
// of the command (docs/tools.md: "no grandchild survives").
func TestBashTimeoutKillsSetsidGrandchild(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	arg := fmt.Sprintf("1000.%d8", time.Now().UnixNano()%100000)
	t.Cleanup(func() { auditKillArg(arg) })
	r := c.CallTool(ctx, "bash", map[string]any{"command": fmt.Sprintf(`setsid sleep %s >/dev/null 2>&1 < /dev/null & sleep 30`, arg), "timeout": 1})
	if !r.IsError || !strings.Contains(r.Text(), "Timed out") {
		t.Fatalf("result: %s", r.Text())
	}
	waitGone(t, arg, 3*time.Second)
}

// auditKillArg kills leftover processes this test started (matched by a
// unique argument), so a failing test leaves nothing behind.
func auditKillArg(arg string) {
	for _, pid := range processesWithArg(arg) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Progress: the output tail streams as tools/progress with callId and tool,
// at least 50 ms apart per call.
func TestBashProgressThrottled(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	sent := time.Now()
	r, replyAt := auditCall(t, c, ctx, "bash", "prog-1", map[string]any{"command": "for i in $(seq 1 150); do echo line $i; sleep 0.005; done"})
	if r.IsError {
		t.Fatal(r.Text())
	}
	n := 0
	for _, note := range c.Notes("tools/progress") {
		var p map[string]any
		json.Unmarshal(note.Params, &p)
		if p["callId"] != "prog-1" {
			continue
		}
		if p["tool"] != "bash" {
			t.Errorf("progress tool = %v", p["tool"])
		}
		if note.At.After(replyAt) {
			t.Errorf("progress after the reply")
		}
		n++
	}
	if n < 3 {
		t.Fatalf("only %d progress notifications for a ~1 s command", n)
	}
	// Receipt times bunch up on a loaded machine (two notes read in one
	// go arrive together), so the throttle is judged by the count: at
	// most one note per 50 ms of the call, plus the first. A server that
	// does not throttle sends one per line, 150.
	took := replyAt.Sub(sent)
	t.Logf("%d progress notes in %v", n, took)
	if most := int(took/(50*time.Millisecond)) + 1; n > most {
		t.Errorf("%d progress notifications in %v, want at most %d (one per 50 ms)", n, took, most)
	}
}

// Output cut by bytes: the tail keeps at most 50 KB, the notice gives the
// spill file's path and the lines shown, and read opens the spill file.
func TestBashByteLimitAndSpillNotice(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	r := c.CallTool(ctx, "bash", map[string]any{"command": `for i in $(seq 1 1000); do printf 'row %04d %s\n' $i xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done`})
	if r.IsError {
		t.Fatal(r.Text())
	}
	txt := r.Text()
	m := regexp.MustCompile(`lines (\d+)-(\d+) of (\d+)`).FindStringSubmatch(txt)
	if m == nil || m[2] != "1000" || m[3] != "1000" {
		t.Fatalf("no line range in the notice:\n%.500s", txt)
	}
	spill, _ := r.Details["spillPath"].(string)
	if spill == "" || !strings.Contains(txt, spill) {
		t.Fatalf("spill path %q not in the notice:\n%.500s", spill, txt)
	}
	tailStart := strings.Index(txt, "row ")
	if tail := txt[tailStart:]; len(tail) > 51200 {
		t.Errorf("tail is %d bytes, want ≤ 51200", len(tail))
	}
	if !strings.Contains(txt, "row 1000 ") || strings.Contains(txt, "row 0001 ") {
		t.Errorf("the tail is not the end of the output")
	}
	rr := c.CallTool(ctx, "read", map[string]any{"path": spill, "offset": 1, "limit": 2})
	if rr.IsError || !strings.Contains(rr.Text(), "row 0001") {
		t.Fatalf("read spill: %s", rr.Text())
	}
}

// Labels from the parsed command, seen through tools/confirm in default
// mode: read-only commands run without asking; others ask with a preview
// saying whether they are read-only and destructive.
func TestBashLabels(t *testing.T) {
	t.Parallel()
	c, s, ws, ctx := startConfirm(t, map[string]string{"a.txt": "a\n"}, "")
	cases := []struct {
		cmd         string
		asks        bool
		destructive bool
	}{
		{"ls -la | grep a; cat a.txt", false, false},
		{"git status && wc -l $(echo a.txt)", false, false},
		{"echo hi > /dev/null", false, false},
		{"touch b", true, false},
		{"ls > out.txt", true, false}, // a new file: nothing overwritten (docs: "`>` onto a file")
		{"ls > a.txt", true, true},
		{"cat a.txt | tee out.txt", true, false},
		{"rm -rf build", true, true},
		{"echo $(rm -f a.txt)", true, true},
		{"git push --force origin main", true, true},
		{"ls && (cd . && rm a.txt)", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			before := s.count()
			s.answers = []map[string]any{{"decision": "rejectOnce"}}
			r := c.CallTool(ctx, "bash", map[string]any{"command": tc.cmd})
			asked := s.count() > before
			if asked != tc.asks {
				t.Fatalf("asked = %v, want %v (result %s)", asked, tc.asks, r.Text())
			}
			if !asked {
				return
			}
			s.mu.Lock()
			q := s.asked[len(s.asked)-1]
			s.mu.Unlock()
			prev, _ := q["preview"].(map[string]any)
			if prev == nil || prev["kind"] != "command" || prev["readOnly"] != false || prev["destructive"] != tc.destructive {
				t.Errorf("preview = %v, want readOnly false, destructive %v", prev, tc.destructive)
			}
			if !r.IsError || !strings.Contains(r.Text(), "denied by the user") {
				t.Errorf("rejected call: %s", r.Text())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); err != nil {
		t.Fatalf("a rejected command ran: %v", err)
	}
}

// --- tool_search and extension tools -----------------------------------------

func auditToolDef(name, command string, extra map[string]any) string {
	def := map[string]any{
		"name": name, "description": "Audit tool " + name + ".",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
			"a": map[string]any{"type": "string"}, "b": map[string]any{"type": "string"}}, "required": []any{"a"}},
		"command": command,
	}
	for k, v := range extra {
		def[k] = v
	}
	b, _ := json.Marshal(def)
	return string(b)
}

func auditListNames(t *testing.T, c *harness.Client, ctx context.Context, params map[string]any) map[string]map[string]any {
	t.Helper()
	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", params, &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, tool := range list.Tools {
		out[tool["name"].(string)] = tool
	}
	return out
}

// Extension tools: missing optional placeholder substitutes nothing, values
// are one quoted word, bad files are reported and skipped, name rules hold,
// the definition's timeout runs through the bash machinery.
func TestExtensionTools(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		".agentls/tools/echoer.json":   auditToolDef("echoer", `printf '[%s]' {{a}} {{b}}`, map[string]any{"deferred": false}),
		".agentls/tools/slow.json":     auditToolDef("slow", `sleep 30; : {{a}}`, map[string]any{"deferred": false, "timeout": 1}),
		".agentls/tools/broken.json":   `{"name": "broken", "description": `,
		".agentls/tools/badname.json":  auditToolDef("bad name!", "echo x", map[string]any{"deferred": false}),
		".agentls/tools/toolong.json":  auditToolDef(strings.Repeat("x", 65), "echo x", map[string]any{"deferred": false}),
		".agentls/tools/collide.json":  auditToolDef("Read", "echo x", map[string]any{"deferred": false}),
		".agentls/tools/collide2.json": auditToolDef("bash", "echo x", map[string]any{"deferred": false}),
		".agentls/tools/lister.json": `{"name": "lister", "description": "List.", "deferred": false, "command": "printf '<%s>' {{items}}",
			"inputSchema": {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}}}`,
		".agentls/tools/deferred.json": auditToolDef("zeta_hidden", "echo hidden {{a}}", map[string]any{"deferred": true}),
	}
	c, _, ctx := start(t, files)
	t.Run("missing optional substitutes nothing", func(t *testing.T) {
		r := c.CallTool(ctx, "echoer", map[string]any{"a": "x y"})
		if r.IsError || strings.TrimSpace(r.Text()) != "[x y]" {
			t.Fatalf("got %q, want [x y]", r.Text())
		}
		r = c.CallTool(ctx, "echoer", map[string]any{"a": "1", "b": "$HOME"})
		if r.IsError || strings.TrimSpace(r.Text()) != "[1][$HOME]" {
			t.Fatalf("got %q, want [1][$HOME]", r.Text())
		}
	})
	t.Run("array argument: one quoted word per element", func(t *testing.T) {
		r := c.CallTool(ctx, "lister", map[string]any{"items": []any{"a b", "$(id)", "c"}})
		if r.IsError || strings.TrimSpace(r.Text()) != "<a b><$(id)><c>" {
			t.Fatalf("got %q", r.Text())
		}
	})
	t.Run("timeout from the definition", func(t *testing.T) {
		t0 := time.Now()
		r := c.CallTool(ctx, "slow", map[string]any{"a": "x"})
		if !r.IsError || !strings.Contains(r.Text(), "Timed out") || time.Since(t0) > 4*time.Second {
			t.Fatalf("after %v: %s", time.Since(t0), r.Text())
		}
	})
	t.Run("bad files reported and skipped", func(t *testing.T) {
		for _, f := range []string{"broken.json", "badname.json", "toolong.json", "collide.json", "collide2.json"} {
			if _, ok := c.WaitNote(2*time.Second, func(n harness.Note) bool {
				return n.Method == "window/logMessage" && strings.Contains(string(n.Params), f)
			}); !ok {
				t.Errorf("%s not reported with window/logMessage", f)
			}
		}
		all := auditListNames(t, c, ctx, map[string]any{"includeDeferred": true})
		for _, n := range []string{"broken", "bad name!", strings.Repeat("x", 65), "Read"} {
			if _, ok := all[n]; ok {
				t.Errorf("invalid tool %q is listed", n)
			}
		}
		if all["bash"]["_meta"].(map[string]any)["source"] == "extension" || !strings.Contains(fmt.Sprint(all["bash"]["description"]), "Run a shell command") {
			t.Errorf("the core bash tool was replaced: %v", all["bash"]["_meta"])
		}
		if _, ok := all["echoer"]; !ok {
			t.Error("a valid tool was not loaded")
		}
	})
	t.Run("includeDeferred lists deferred tools", func(t *testing.T) {
		active := auditListNames(t, c, ctx, nil)
		if _, ok := active["zeta_hidden"]; ok {
			t.Fatal("a deferred tool is active before tool_search")
		}
		if _, ok := active["tool_search"]; !ok {
			t.Error("tool_search is not always active")
		}
		all := auditListNames(t, c, ctx, map[string]any{"includeDeferred": true})
		z, ok := all["zeta_hidden"]
		if !ok || z["_meta"].(map[string]any)["deferred"] != true {
			t.Fatalf("includeDeferred: %v", z)
		}
	})
}

// tool_search finds tools by a parameter name, returns the full schema,
// activates the match and sends tools/listChanged.
func TestToolSearchByParameterName(t *testing.T) {
	t.Parallel()
	def := map[string]any{
		"name": "obscure_task", "description": "Do a thing.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
			"quuxfrobnicator": map[string]any{"type": "integer", "description": "how many", "minimum": 1}}},
		"command": "echo n={{quuxfrobnicator}}",
	}
	b, _ := json.Marshal(def)
	files := map[string]string{".agentls/tools/obscure.json": string(b),
		".agentls/tools/other.json": auditToolDef("other_task", "echo other {{a}}", nil)}
	c, _, ctx := start(t, files)
	r := c.CallTool(ctx, "tool_search", map[string]any{"query": "quuxfrobnicator"})
	if r.IsError || !strings.Contains(r.Text(), "obscure_task") {
		t.Fatalf("search: %s", r.Text())
	}
	if !strings.Contains(r.Text(), `"minimum"`) || !strings.Contains(r.Text(), "how many") {
		t.Errorf("search result lacks the full schema:\n%s", r.Text())
	}
	if i := strings.Index(r.Text(), "other_task"); i >= 0 && i < strings.Index(r.Text(), "obscure_task") {
		t.Errorf("other_task ranked first")
	}
	if _, ok := c.WaitNote(2*time.Second, func(n harness.Note) bool { return n.Method == "tools/listChanged" }); !ok {
		t.Fatal("no tools/listChanged")
	}
	if _, ok := auditListNames(t, c, ctx, nil)["obscure_task"]; !ok {
		t.Fatal("not activated")
	}
	if r := c.CallTool(ctx, "obscure_task", map[string]any{"quuxfrobnicator": 3}); r.IsError || !strings.Contains(r.Text(), "n=3") {
		t.Fatalf("call: %s", r.Text())
	}
}

// --- protocol -----------------------------------------------------------------

// A generated callId (none sent) is echoed in the reply and stamped on the
// call's notifications.
func TestGeneratedCallIDStampsNotifications(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": "x\n"})
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	r, _ := auditCall(t, c, ctx, "edit", "", editCall("a.txt", "x", "y"))
	if r.IsError || r.CallID == "" {
		t.Fatalf("callId %q: %s", r.CallID, r.Text())
	}
	if _, _, ok := auditFindDetails(c, r.CallID); !ok {
		t.Errorf("no tools/details stamped with the generated callId %q", r.CallID)
	}
	r, _ = auditCall(t, c, ctx, "bash", "", map[string]any{"command": "echo hi; sleep 0.1"})
	if _, ok := c.WaitNote(time.Second, func(n harness.Note) bool {
		return n.Method == "tools/progress" && strings.Contains(string(n.Params), `"callId":"`+r.CallID+`"`)
	}); !ok {
		t.Errorf("no tools/progress stamped with the generated callId %q", r.CallID)
	}
}

// callBatch: concurrency-safe calls run in parallel; the others one at a
// time in call order; results come back in call order.
func TestCallBatchConcurrencyAndOrder(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, nil)
	var out struct {
		Results []harness.Result `json:"results"`
	}
	var calls []any
	for i := range 4 {
		calls = append(calls, map[string]any{"name": "test_block", "arguments": map[string]any{"seconds": 0.4}, "callId": fmt.Sprint("p", i)})
	}
	t0 := time.Now()
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &out); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 1200*time.Millisecond {
		t.Errorf("4 concurrency-safe 0.4 s calls took %v (not parallel)", d)
	}
	for i, r := range out.Results {
		if r.CallID != fmt.Sprint("p", i) {
			t.Errorf("result %d has callId %q", i, r.CallID)
		}
	}

	calls = nil
	for i := range 3 {
		// The first sleeps longest: run in parallel, the log would be 3 2 1.
		cmd := fmt.Sprintf("sleep 0.%d; echo %d >> log.txt", 3-i, i+1)
		calls = append(calls, map[string]any{"name": "bash", "arguments": map[string]any{"command": cmd}})
	}
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &out); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(ws, "log.txt")); got != "1\n2\n3\n" {
		t.Errorf("non-concurrency-safe calls ran out of order: %q", got)
	}
}

// $/cancelRequest on a tools/callBatch replies -32800.
func TestCancelBatch(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	errCh := make(chan error, 1)
	go func() {
		var out any
		// A fresh client's ids are sequential: initialize is 1, this is 2.
		_, err := c.Conn.Call(ctx, "tools/callBatch", map[string]any{"calls": []any{
			map[string]any{"name": "test_block", "arguments": map[string]any{"seconds": 20}},
		}}, &out)
		errCh <- err
	}()
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/progress" }); !ok {
		t.Fatal("the batch never started")
	}
	c.Conn.Notify(ctx, "$/cancelRequest", map[string]any{"id": 2})
	select {
	case err := <-errCh:
		var je *jsonrpc2.Error
		if !errors.As(err, &je) || je.Code != -32800 {
			t.Fatalf("err = %v, want -32800", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("cancelled batch did not reply")
	}
}

// workspace/externalChange for a read file deleted outside agentls.
func TestExternalDeletionIsAnnounced(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, map[string]string{"gone.txt": "x\n"})
	c.CallTool(ctx, "read", map[string]any{"path": "gone.txt"})
	os.Remove(filepath.Join(ws, "gone.txt"))
	n, ok := c.WaitNote(2*time.Second, func(n harness.Note) bool {
		return n.Method == "workspace/externalChange" && strings.Contains(string(n.Params), "gone.txt")
	})
	if !ok {
		t.Fatal("no workspace/externalChange for a deleted file")
	}
	var p map[string]any
	json.Unmarshal(n.Params, &p)
	if p["kind"] != "deleted" || p["readStale"] != true || !strings.HasPrefix(fmt.Sprint(p["uri"]), "file://") {
		t.Errorf("notification = %s", n.Params)
	}
}
