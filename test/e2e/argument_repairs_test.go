package e2e

// Statements of docs/tools.md and docs/protocol.md a user would notice
// when broken:
// continuation hints that do not continue, argument repairs the contract
// promises, details and notifications missing their fields, capability-less
// clients being asked what they cannot answer.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
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

// repairsCall runs tools/call with raw params (callId, odd argument shapes).
func repairsCall(t *testing.T, ctx context.Context, c *harness.Client, params map[string]any) harness.Result {
	t.Helper()
	var r harness.Result
	if err := c.Call(ctx, "tools/call", params, &r); err != nil {
		t.Fatalf("tools/call %v: %v", params["name"], err)
	}
	return r
}

// repairsNumbered parses read's numbered lines ("%6d→text") into line → text.
func repairsNumbered(t *testing.T, text string) (first, last int, lines []string) {
	t.Helper()
	re := regexp.MustCompile(`^ *(\d+)→(.*)$`)
	for _, l := range strings.Split(text, "\n") {
		m := re.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if first == 0 {
			first = n
		} else if n != last+1 {
			t.Fatalf("numbered lines jump from %d to %d", last, n)
		}
		last = n
		lines = append(lines, m[2])
	}
	return first, last, lines
}

// Arguments sent as one JSON string are parsed. (`agentls call` takes only
// an object, so this stays here; the other repairs are pinned by the
// scripts in cmd/agentls/testdata/script/arguments.)
func TestContractArgumentsAsJSONString(t *testing.T) {
	body := numberedLines(30, func(i int) string { return fmt.Sprintf("row %d", i) })
	c, _, ctx := start(t, map[string]string{"a.txt": body})
	r := repairsCall(t, ctx, c, map[string]any{"name": "read", "arguments": `{"path":"a.txt","offset":3,"limit":1}`})
	if r.IsError {
		t.Fatalf("isError:\n%s", r.Text())
	}
	wantContains(t, "JSON string arguments", r.Text(), "a.txt, lines 3-3 of 30", "row 3")
}

func TestContractReadContinuationChains(t *testing.T) {
	long := numberedLines(2500, func(i int) string { return fmt.Sprintf("l%d", i) })
	wide := numberedLines(1500, func(i int) string { return fmt.Sprintf("%04d%s", i, strings.Repeat("w", 96)) })
	c, _, ctx := start(t, map[string]string{"long.txt": long, "wide.txt": wide})
	hint := regexp.MustCompile(`(?i)use offset=(\d+)`)
	cases := []struct {
		name, path, body string
		total            int
		firstPage        string // exact header of the first page
		firstNotice      []string
	}{
		{name: "line limit", path: "long.txt", body: long, total: 2500,
			firstPage: "long.txt, lines 1-1998 of 2500", firstNotice: []string{"lines 1-1998 of 2500", "offset=1999"}},
		{name: "byte limit", path: "wide.txt", body: wide, total: 1500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			offset, pages := 1, 0
			for {
				pages++
				if pages > 20 {
					t.Fatal("no end after 20 pages")
				}
				r := c.CallTool(ctx, "read", map[string]any{"path": tc.path, "offset": offset})
				if r.IsError {
					t.Fatalf("read offset=%d: %s", offset, r.Text())
				}
				text := r.Text()
				first, last, lines := repairsNumbered(t, text)
				if first != offset {
					t.Fatalf("page starts at line %d, asked for %d", first, offset)
				}
				if len(text) > 51200 || strings.Count(text, "\n")+1 > 2000 {
					t.Errorf("page of %d bytes, %d lines exceeds 51,200 bytes / 2,000 lines", len(text), strings.Count(text, "\n")+1)
				}
				header := strings.SplitN(text, "\n", 2)[0]
				if want := fmt.Sprintf("%s, lines %d-%d of %d", tc.path, first, last, tc.total); header != want {
					t.Errorf("header = %q, want %q", header, want)
				}
				if pages == 1 && tc.firstPage != "" && header != tc.firstPage {
					t.Errorf("first header = %q, want %q", header, tc.firstPage)
				}
				if pages == 1 {
					wantContains(t, "first notice", text, tc.firstNotice...)
				}
				got = append(got, lines...)
				m := hint.FindStringSubmatch(text)
				if last == tc.total {
					if m != nil {
						t.Errorf("last page still says %q", m[0])
					}
					break
				}
				if m == nil {
					t.Fatalf("page ending at line %d of %d has no 'use offset=N':\n%s", last, tc.total, text[max(0, len(text)-400):])
				}
				if n, _ := strconv.Atoi(m[1]); n != last+1 {
					t.Fatalf("hint offset=%d after last shown line %d", n, last)
				}
				offset = last + 1
			}
			if strings.Join(got, "\n")+"\n" != tc.body {
				t.Errorf("following the hints did not reproduce the file (%d lines read)", len(got))
			}
		})
	}
	t.Run("window in the middle", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "long.txt", "offset": 10, "limit": 5})
		wantContains(t, "window", r.Text(), "long.txt, lines 10-14 of 2500", "offset=15")
	})
	t.Run("offset 0 is line 1", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "long.txt", "offset": 0, "limit": 1})
		wantResult(t, "offset 0", r, false, "long.txt, lines 1-1 of 2500", "1→l1")
	})
}

// repairsHintChain calls tool with limit raised as each notice says
// ("limit=N") until no notice asks for more, and returns the final text and
// the limits used.
func repairsHintChain(t *testing.T, ctx context.Context, c *harness.Client, tool string, args map[string]any, max int) (string, []int) {
	t.Helper()
	re := regexp.MustCompile(`limit=(\d+)`)
	var used []int
	for i := 0; i < 20; i++ {
		r := c.CallTool(ctx, tool, args)
		if r.IsError {
			t.Fatalf("%s %v: %s", tool, args, r.Text())
		}
		m := re.FindStringSubmatch(r.Text())
		if m == nil {
			return r.Text(), used
		}
		n, _ := strconv.Atoi(m[1])
		if n > max {
			t.Fatalf("%s hint limit=%d exceeds the maximum %d", tool, n, max)
		}
		if prev, ok := args["limit"].(int); ok && n <= prev {
			t.Fatalf("%s hint limit=%d does not raise limit %d", tool, n, prev)
		}
		used = append(used, n)
		args["limit"] = n
	}
	t.Fatalf("%s: hints never ended", tool)
	return "", nil
}

func TestContractLimitHintsReachEverything(t *testing.T) {
	files := map[string]string{}
	var hits strings.Builder
	for i := 0; i < 230; i++ {
		hits.WriteString(fmt.Sprintf("needle %d\n", i))
	}
	files["hits.txt"] = hits.String()
	for i := 0; i < 1200; i++ {
		files[fmt.Sprintf("tree/d%02d/f%04d.go", i%30, i)] = "x\n"
	}
	for i := 0; i < 620; i++ {
		files[fmt.Sprintf("flat/e%04d", i)] = ""
	}
	c, _, ctx := start(t, files)

	t.Run("grep", func(t *testing.T) {
		text, used := repairsHintChain(t, ctx, c, "grep", map[string]any{"pattern": "needle", "path": "hits.txt"}, 1000)
		if n := strings.Count(text, "hits.txt:"); n != 230 {
			t.Errorf("after limits %v: %d matches, want 230", used, n)
		}
		if len(used) == 0 || used[0] != 200 {
			t.Errorf("first hint = %v, want limit=200 (default 100 doubled)", used)
		}
	})
	t.Run("find", func(t *testing.T) {
		text, used := repairsHintChain(t, ctx, c, "find", map[string]any{"pattern": "*.go"}, 10000)
		if n := strings.Count(text, ".go"); n != 1200 {
			t.Errorf("after limits %v: %d paths, want 1200", used, n)
		}
	})
	t.Run("ls", func(t *testing.T) {
		text, used := repairsHintChain(t, ctx, c, "ls", map[string]any{"path": "flat"}, 5000)
		if n := strings.Count(text, "\ne0"); n+repairsBoolInt(strings.HasPrefix(text, "e0")) != 620 {
			t.Errorf("after limits %v: %d entries, want 620:\n%.300s", used, n, text)
		}
	})
}

func repairsBoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// repairsNotesFor returns the params of notifications of method stamped with callID.
func repairsNotesFor(c *harness.Client, method, callID string) []map[string]any {
	var out []map[string]any
	for _, n := range c.Notes(method) {
		var p map[string]any
		if json.Unmarshal(n.Params, &p) == nil && p["callId"] == callID {
			out = append(out, p)
		}
	}
	return out
}

func TestContractEditAndWriteDetails(t *testing.T) {
	c, ws, ctx := start(t, map[string]string{"src/a.go": "package a\n\nvar X = 1\nvar Y = 2\n"})
	a := filepath.Join(ws, "src", "a.go")
	old := readFile(t, a)
	c.CallTool(ctx, "read", map[string]any{"path": "src/a.go"})
	r := repairsCall(t, ctx, c, map[string]any{"name": "edit", "callId": "repair-edit-1",
		"arguments": editCall("src/a.go", "var Y = 2", "var Y = 3")})
	if r.IsError || r.CallID != "repair-edit-1" {
		t.Fatalf("edit: callId %q isError %v: %s", r.CallID, r.IsError, r.Text())
	}
	wantContains(t, "edit result", r.Text(), "Edited src/a.go: 1 replacement, line 4")
	notes := repairsNotesFor(c, "tools/details", "repair-edit-1")
	if len(notes) == 0 {
		t.Fatal("no tools/details notification stamped repair-edit-1 before the reply")
	}
	if notes[0]["tool"] != "edit" {
		t.Errorf("tools/details tool = %v, want edit", notes[0]["tool"])
	}
	for _, d := range []map[string]any{r.Details, notes[0]["details"].(map[string]any)} {
		if d["kind"] != "edit" || d["uri"] != fileURI(a) && d["uri"] != fileURI(repairsEval(t, a)) {
			t.Errorf("kind/uri = %v %v, want edit %s", d["kind"], d["uri"], fileURI(a))
		}
		wantContains(t, "unifiedDiff", fmt.Sprint(d["unifiedDiff"]), "-var Y = 2", "+var Y = 3", "@@")
		if d["firstChangedLine"] != float64(4) {
			t.Errorf("firstChangedLine = %v, want 4", d["firstChangedLine"])
		}
		if d["matchLevel"] != "exact" {
			t.Errorf("matchLevel = %v, want exact", d["matchLevel"])
		}
		edits, _ := d["edits"].([]any)
		if len(edits) == 0 {
			t.Fatalf("details.edits empty: %v", d)
		}
		if got := applyTextEdits(t, old, edits); got != readFile(t, a) {
			t.Errorf("TextEdits applied to the old text give %q, file holds %q", got, readFile(t, a))
		}
		if d["oldHash"] == nil || d["newHash"] == nil || d["oldHash"] == d["newHash"] {
			t.Errorf("oldHash %v newHash %v", d["oldHash"], d["newHash"])
		}
	}
	// The hashes are of the content: the next edit's oldHash is this newHash.
	r2 := c.CallTool(ctx, "edit", editCall("src/a.go", "var X = 1", "var X = 5"))
	if r2.Details["oldHash"] != r.Details["newHash"] {
		t.Errorf("second edit oldHash %v != first newHash %v", r2.Details["oldHash"], r.Details["newHash"])
	}
	if h, want := fmt.Sprint(r2.Details["newHash"]), fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(readFile(t, a)))); h != want {
		t.Errorf("newHash %s, want the file's %s (docs: sha256:…)", h, want)
	}

	t.Run("write of a new file is kind create", func(t *testing.T) {
		r := repairsCall(t, ctx, c, map[string]any{"name": "write", "callId": "repair-w1",
			"arguments": map[string]any{"path": "new/dir/n.txt", "content": "hello\n"}})
		wantResult(t, "create", r, false)
		if r.Details["kind"] != "create" {
			t.Errorf("kind = %v, want create", r.Details["kind"])
		}
		wantContains(t, "create diff", fmt.Sprint(r.Details["unifiedDiff"]), "+hello")
		if n := repairsNotesFor(c, "tools/details", "repair-w1"); len(n) == 0 || n[0]["tool"] != "write" {
			t.Errorf("tools/details for write: %v", n)
		}
	})
	t.Run("write over a read file is kind write with the diff", func(t *testing.T) {
		c.CallTool(ctx, "read", map[string]any{"path": "new/dir/n.txt"})
		r := c.CallTool(ctx, "write", map[string]any{"path": "new/dir/n.txt", "content": "bye\n"})
		wantResult(t, "write", r, false)
		if r.Details["kind"] != "write" {
			t.Errorf("kind = %v, want write", r.Details["kind"])
		}
		wantContains(t, "write diff", fmt.Sprint(r.Details["unifiedDiff"]), "-hello", "+bye")
		// docs/protocol.md: the edit/write details carry all of these.
		for _, k := range []string{"kind", "uri", "unifiedDiff", "edits", "firstChangedLine", "matchLevel", "oldHash", "newHash"} {
			if _, ok := r.Details[k]; !ok {
				t.Errorf("write details lack %s: %v", k, repairsKeys(r.Details))
			}
		}
		if edits, _ := r.Details["edits"].([]any); len(edits) == 0 || applyTextEdits(t, "hello\n", edits) != "bye\n" {
			t.Errorf("write TextEdits %v do not turn the old text into the new", r.Details["edits"])
		}
	})
	t.Run("dryRun returns the diff and writes nothing", func(t *testing.T) {
		before := readFile(t, a)
		r := c.CallTool(ctx, "edit", map[string]any{"path": "src/a.go", "edits": []any{map[string]any{"oldText": "package a", "newText": "package b"}}, "dryRun": true})
		wantResult(t, "dryRun", r, false)
		wantContains(t, "dryRun diff", fmt.Sprint(r.Details["unifiedDiff"]), "-package a", "+package b")
		if readFile(t, a) != before {
			t.Error("dryRun changed the file")
		}
	})
}

func repairsEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestContractCallIDStamping(t *testing.T) {
	slow(t)
	c, _, ctx := start(t, map[string]string{"a.txt": "x\n"})
	t.Run("given callId echoed on result and progress", func(t *testing.T) {
		r := repairsCall(t, ctx, c, map[string]any{"name": "bash", "callId": "repair-bash",
			"arguments": map[string]any{"command": "for i in 1 2 3 4 5; do echo tick$i; sleep 0.1; done"}})
		if r.CallID != "repair-bash" {
			t.Errorf("callId = %q", r.CallID)
		}
		prog := repairsNotesFor(c, "tools/progress", "repair-bash")
		if len(prog) == 0 {
			t.Fatal("no tools/progress stamped with the given callId")
		}
		for _, p := range prog {
			if p["tool"] != "bash" {
				t.Errorf("progress tool = %v, want bash", p["tool"])
			}
		}
	})
	t.Run("generated callIds are distinct and stamp the notifications", func(t *testing.T) {
		r1 := c.CallTool(ctx, "write", map[string]any{"path": "g1.txt", "content": "1\n"})
		r2 := c.CallTool(ctx, "write", map[string]any{"path": "g2.txt", "content": "2\n"})
		if r1.CallID == "" || r2.CallID == "" || r1.CallID == r2.CallID {
			t.Fatalf("generated callIds %q %q", r1.CallID, r2.CallID)
		}
		for _, r := range []harness.Result{r1, r2} {
			if n := repairsNotesFor(c, "tools/details", r.CallID); len(n) != 1 {
				t.Errorf("%d tools/details with callId %s, want 1", len(n), r.CallID)
			}
		}
	})
	t.Run("batch members keep their callIds", func(t *testing.T) {
		var res struct {
			Results []harness.Result `json:"results"`
		}
		err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": []any{
			map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": "b-1"},
			map[string]any{"name": "nope", "arguments": map[string]any{}, "callId": "b-2"},
			map[string]any{"name": "write", "arguments": map[string]any{"path": "b3.txt", "content": "3"}, "callId": "b-3"},
		}}, &res)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) != 3 {
			t.Fatalf("%d results", len(res.Results))
		}
		for i, want := range []string{"b-1", "b-2", "b-3"} {
			if res.Results[i].CallID != want {
				t.Errorf("result %d callId %q, want %q", i, res.Results[i].CallID, want)
			}
		}
		if !res.Results[1].IsError || res.Results[0].IsError || res.Results[2].IsError {
			t.Errorf("isError = %v %v %v, want false true false", res.Results[0].IsError, res.Results[1].IsError, res.Results[2].IsError)
		}
		if n := repairsNotesFor(c, "tools/details", "b-3"); len(n) != 1 {
			t.Errorf("%d tools/details stamped b-3", len(n))
		}
	})
}

func TestContractBashFailureLinesAndSpill(t *testing.T) {
	c, _, ctx := start(t, nil)
	r := c.CallTool(ctx, "bash", map[string]any{"command": "for i in $(seq 1 30); do echo FAIL case$i; done; seq 1 3000"})
	text := r.Text()
	listed := regexp.MustCompile(`(?m)^\s*(\d+)\D+FAIL case(\d+)$`).FindAllStringSubmatch(text, -1)
	if len(listed) != 20 {
		t.Errorf("%d failure lines listed from the cut part, want at most 20 (of 30):\n%.1500s", len(listed), text)
	}
	for _, m := range listed {
		if m[1] != m[2] {
			t.Errorf("failure line %q listed with line number %s", "FAIL case"+m[2], m[1])
		}
	}
	if i, j := strings.Index(text, "FAIL case1"), strings.Index(text, "\n3000"); i < 0 || j < 0 || i > j {
		t.Errorf("failure lines not listed before the tail")
	}
	spill, _ := r.Details["spillPath"].(string)
	m := regexp.MustCompile(`lines (\d+)-(\d+) of (\d+)`).FindStringSubmatch(text)
	if spill == "" || !strings.Contains(text, spill) || m == nil {
		t.Fatalf("notice lacks the spill path or line range (spillPath %q):\n%.600s", spill, text)
	}
	// 2000 lines in all: the 20 failure lines, their heading and the notice
	// among them.
	if m[1] != "1053" || m[2] != "3030" || m[3] != "3030" {
		t.Errorf("range shown = %s-%s of %s, want 1053-3030 of 3030", m[1], m[2], m[3])
	}
	rr := c.CallTool(ctx, "read", map[string]any{"path": spill, "offset": 1053, "limit": 1})
	wantResult(t, "read spill at the first shown line", rr, false, "1053→1023")
}

func TestContractInitializeAndToolsList(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		".agentls/tools/repair_deferred.json": `{"name":"repair_deferred","description":"A deferred test tool that echoes.","inputSchema":{"type":"object","properties":{}},"command":"echo deferred-ran","readOnly":true,"deferred":true}`,
	})
	c := harness.Start(t, harness.Options{Root: ws})
	ctx := testCtx(t, sessionTimeout)
	init := c.Initialize(ctx, bypass())
	si, _ := init["serverInfo"].(map[string]any)
	if si["name"] != "agentls" || si["version"] == nil || si["version"] == "" {
		t.Errorf("serverInfo = %v", si)
	}
	caps, _ := init["capabilities"].(map[string]any)
	exp, _ := caps["experimental"].(map[string]any)
	ag, _ := exp["agentls"].(map[string]any)
	if ag["protocolVersion"] == nil || ag["protocolVersion"] == "" {
		t.Errorf("protocolVersion missing: %v", ag)
	}
	checkWatcherStart(t, ag, c.WatcherMode)
	instr, _ := init["instructions"].(string)
	for _, w := range []string{"read", "before", "edit", "search", "guess", "cat", "grep", "find", "oldText", "unique"} {
		if !strings.Contains(strings.ToLower(instr), strings.ToLower(w)) {
			t.Errorf("instructions lack %q: %q", w, instr)
		}
	}
	var advertised []string
	for _, n := range ag["tools"].([]any) {
		advertised = append(advertised, fmt.Sprint(n))
	}

	list := func(params map[string]any) []map[string]any {
		var res struct {
			Tools []map[string]any `json:"tools"`
		}
		if err := c.Call(ctx, "tools/list", params, &res); err != nil {
			t.Fatalf("tools/list %v: %v", params, err)
		}
		return res.Tools
	}
	active := list(map[string]any{})
	var names []string
	for _, tl := range active {
		names = append(names, fmt.Sprint(tl["name"]))
		ann, _ := tl["annotations"].(map[string]any)
		for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := ann[k].(bool); !ok {
				t.Errorf("%s annotations.%s = %v, want a bool", tl["name"], k, ann[k])
			}
		}
		meta, _ := tl["_meta"].(map[string]any)
		for _, k := range []string{"concurrencySafe", "deferred"} {
			if _, ok := meta[k].(bool); !ok {
				t.Errorf("%s _meta.%s = %v, want a bool", tl["name"], k, meta[k])
			}
		}
		ro := ann["readOnlyHint"] == true
		switch tl["name"] {
		case "read", "ls", "grep", "find", "tool_search":
			if !ro {
				t.Errorf("%s readOnlyHint = false", tl["name"])
			}
		case "edit", "write", "bash":
			if ro {
				t.Errorf("%s readOnlyHint = true", tl["name"])
			}
		}
		if tl["inputSchema"] == nil || tl["description"] == "" {
			t.Errorf("%s lacks inputSchema/description", tl["name"])
		}
	}
	for _, core := range []string{"read", "ls", "grep", "find", "edit", "write", "bash", "tool_search"} {
		if !strings.Contains(","+strings.Join(names, ",")+",", ","+core+",") {
			t.Errorf("tools/list lacks %s: %v", core, names)
		}
	}
	sort.Strings(names)
	sort.Strings(advertised)
	if strings.Join(names, ",") != strings.Join(advertised, ",") {
		t.Errorf("initialize advertises tools %v, tools/list gives %v", advertised, names)
	}
	if strings.Contains(strings.Join(names, ","), "repair_deferred") {
		t.Errorf("deferred tool listed without includeDeferred")
	}
	found := false
	for _, tl := range list(map[string]any{"includeDeferred": true}) {
		if tl["name"] == "repair_deferred" {
			found = true
			if tl["_meta"].(map[string]any)["deferred"] != true {
				t.Errorf("repair_deferred _meta.deferred = %v", tl["_meta"])
			}
		}
	}
	if !found {
		t.Error("includeDeferred does not list the deferred extension tool")
	}
	for _, tl := range list(map[string]any{"format": "openai"}) {
		fn, _ := tl["function"].(map[string]any)
		if tl["type"] != "function" || fn["name"] == nil || fn["description"] == nil || fn["parameters"] == nil {
			t.Errorf("openai entry %v", tl)
		}
	}
	for _, tl := range list(map[string]any{"format": "anthropic"}) {
		if tl["name"] == nil || tl["description"] == nil || tl["input_schema"] == nil || tl["inputSchema"] != nil {
			t.Errorf("anthropic entry keys %v", repairsKeys(tl))
		}
	}
	var res any
	if err := c.Call(ctx, "tools/list", map[string]any{"format": "bogus"}, &res); rpcCode(err) != -32602 {
		t.Errorf("unknown format: err %v, want -32602", err)
	}
}

func repairsKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestContractConfirmFlow(t *testing.T) {
	ws := newWorkspace(t, map[string]string{"a.txt": "alpha\n"})
	c := harness.Start(t, harness.Options{Root: ws})
	var mu sync.Mutex
	var asked []map[string]any
	decision := map[string]any{"decision": "rejectOnce", "message": "not now"}
	c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		var p map[string]any
		json.Unmarshal(params, &p)
		p["_method"] = method
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, p)
		return decision, nil
	}
	ctx := testCtx(t, sessionTimeout)
	c.Initialize(ctx, map[string]any{"capabilities": map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}}})

	r := repairsCall(t, ctx, c, map[string]any{"name": "write", "callId": "repair-ask",
		"arguments": map[string]any{"path": "n.txt", "content": "new\n"}})
	wantResult(t, "rejected write", r, true, "denied by the user: not now")
	if _, err := os.Stat(filepath.Join(ws, "n.txt")); err == nil {
		t.Error("rejected write created the file")
	}
	mu.Lock()
	if len(asked) != 1 {
		t.Fatalf("%d questions, want 1: %v", len(asked), asked)
	}
	q := asked[0]
	mu.Unlock()
	if q["_method"] != "tools/confirm" || q["callId"] != "repair-ask" || q["tool"] != "write" || q["reason"] == nil || q["reason"] == "" {
		t.Errorf("confirm params = %v", q)
	}
	if args, _ := q["arguments"].(map[string]any); args["path"] != "n.txt" {
		t.Errorf("confirm arguments = %v", q["arguments"])
	}
	if pv, _ := q["preview"].(map[string]any); pv == nil || pv["kind"] != "create" || !strings.Contains(fmt.Sprint(pv["unifiedDiff"]), "+new") {
		t.Errorf("confirm preview = %v, want the create details with its diff", q["preview"])
	}
	if n := repairsNotesFor(c, "tools/details", "repair-ask"); len(n) != 0 {
		t.Errorf("rejected write still sent tools/details: %v", n)
	}

	t.Run("allowOnce runs the call", func(t *testing.T) {
		mu.Lock()
		decision = map[string]any{"decision": "allowOnce"}
		mu.Unlock()
		r := c.CallTool(ctx, "bash", map[string]any{"command": "echo made > made.txt"})
		wantResult(t, "allowed bash", r, false)
		if readFile(t, filepath.Join(ws, "made.txt")) != "made\n" {
			t.Error("allowed command did not run")
		}
	})
}

func TestContractCapabilityLessClient(t *testing.T) {
	// A client that declares nothing: every "ask" must become a result, and
	// no request may be sent that it cannot answer.
	ws := newWorkspace(t, map[string]string{"a.txt": "alpha\n", ".env": "TOKEN=x\n"})
	c := harness.Start(t, harness.Options{Root: ws})
	var mu sync.Mutex
	var requests []string
	c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		mu.Lock()
		requests = append(requests, method)
		mu.Unlock()
		return nil, fmt.Errorf("capability-less client cannot answer %s", method)
	}
	ctx := testCtx(t, sessionTimeout)
	c.Initialize(ctx, nil)
	c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": fileURI(filepath.Join(ws, "a.txt")), "languageId": "plaintext", "version": 1, "text": "alpha\n"}})
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	cases := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"write asks in default mode", "write", map[string]any{"path": "b.txt", "content": "b\n"}},
		{"edit asks in default mode", "edit", editCall("a.txt", "alpha", "beta")},
		{"mutating bash asks in default mode", "bash", map[string]any{"command": "touch c.txt"}},
		{"secret file read asks", "read", map[string]any{"path": ".env"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, tc.tool, tc.args)
			wantResult(t, tc.name, r, true, "approval")
		})
	}
	if readFile(t, filepath.Join(ws, "a.txt")) != "alpha\n" {
		t.Error("a.txt changed")
	}
	for _, f := range []string{"b.txt", "c.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("%s created without approval", f)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != 0 {
		t.Errorf("server sent requests the client never declared: %v", requests)
	}
}

func TestContractSearchAndListingRules(t *testing.T) {
	body := numberedLines(40, func(i int) string { return fmt.Sprintf("r%d", i) })
	ws := newWorkspace(t, map[string]string{
		"g.txt":              body,
		"real/inner.go":      "package inner\n",
		".hidden/h.go":       "package h\n",
		"src/config.ts":      "x\n",
		"src/configs.ts":     "x\n",
		"src/config.test.ts": "x\n",
		"src/conf.ts":        "x\n",
		"lib/config.ts.bak":  "x\n",
		"bin.dat":            "needle\x00\x01\x02\n",
	})
	symlink(t, "real", filepath.Join(ws, "alias"))
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, ".git", "inner.go"), "package git\n")
	c, ctx := startIn(t, ws, bypass())
	t.Run("grep merges overlapping context windows and separates others", func(t *testing.T) {
		r := c.CallTool(ctx, "grep", map[string]any{"pattern": "^r(5|7|20)$", "path": "g.txt", "context": 2})
		text := r.Text()
		for i := 3; i <= 9; i++ {
			if n := strings.Count(text, fmt.Sprintf("g.txt-%d- ", i)) + strings.Count(text, fmt.Sprintf("g.txt:%d: ", i)); n != 1 {
				t.Errorf("line %d shown %d times:\n%s", i, n, text)
			}
		}
		wantContains(t, "grep context", text, "g.txt:5: r5", "g.txt-6- r6", "g.txt:7: r7", "g.txt:20: r20", "g.txt-18- r18")
		if i, j := strings.Index(text, "g.txt-9- "), strings.Index(text, "g.txt-18- "); i < 0 || j < 0 || !strings.Contains(text[i:j], "--") {
			t.Errorf("separate windows not separated:\n%s", text)
		}
	})
	t.Run("grep skips binary files", func(t *testing.T) {
		r := c.CallTool(ctx, "grep", map[string]any{"pattern": "needle"})
		wantLacks(t, "grep binary", r.Text(), "bin.dat:")
	})
	t.Run("find: name patterns at any depth, hidden included, .git excluded, symlinks not followed", func(t *testing.T) {
		r := c.CallTool(ctx, "find", map[string]any{"pattern": "*.go"})
		wantContains(t, "find", r.Text(), "real/inner.go", ".hidden/h.go")
		wantLacks(t, "find", r.Text(), "alias/inner.go", ".git/")
		lines := strings.Split(strings.TrimSpace(r.Text()), "\n")
		sorted := append([]string(nil), lines...)
		sort.Strings(sorted)
		if strings.Join(lines, "\n") != strings.Join(sorted, "\n") {
			t.Errorf("find output not sorted by path: %q", lines)
		}
	})
	t.Run("missing file suggests at most 3 similar names", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "src/confg.ts"})
		wantResult(t, "missing", r, true)
		n := 0
		for _, s := range []string{"src/config.ts", "src/configs.ts", "src/config.test.ts", "src/conf.ts", "lib/config.ts.bak"} {
			if regexp.MustCompile(`(^|[\s"'` + "`" + `])` + regexp.QuoteMeta(s) + `($|[\s"'` + "`" + `,.;)])`).MatchString(r.Text()) {
				n++
			}
		}
		if n == 0 || n > 3 {
			t.Errorf("%d suggestions, want 1-3:\n%s", n, r.Text())
		}
		wantContains(t, "missing", r.Text(), "src/config.ts")
	})
	t.Run("directory read suggests ls", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "src"})
		wantResult(t, "dir", r, true, "ls")
	})
	t.Run("ls: sorted, dirs with slash, symlink arrow, dotfiles, no .git", func(t *testing.T) {
		r := c.CallTool(ctx, "ls", map[string]any{})
		text := r.Text()
		wantContains(t, "ls", text, "alias@ -> real", "real/", ".hidden/", "g.txt")
		if regexp.MustCompile(`(?m)^\.git/?$`).MatchString(text) {
			t.Errorf(".git listed:\n%s", text)
		}
	})
	t.Run("paths: leading @, NBSP and NNBSP normalized, absolute inside accepted", func(t *testing.T) {
		writeFile(t, filepath.Join(ws, "my file.txt"), "spaced\n")
		for _, p := range []string{"@my file.txt", "my\u00a0file.txt", "my\u202ffile.txt", filepath.Join(ws, "my file.txt")} {
			r := c.CallTool(ctx, "read", map[string]any{"path": p})
			wantResult(t, p, r, false, "spaced")
		}
		for _, p := range []string{"../outside.txt", "a\x00b", "/dev/zero", "alias/../../x"} {
			r := c.CallTool(ctx, "read", map[string]any{"path": p})
			wantResult(t, fmt.Sprintf("%q", p), r, true)
		}
	})
}

// Arguments that are not an object at all are isError results, and the
// session survives them. (Wrong shapes inside an object are pinned by
// arguments/hostile_shapes_are_errors.txtar; these cannot be sent through
// `agentls call`.)
func TestContractHostileArgumentShapes(t *testing.T) {
	c, _, ctx := start(t, map[string]string{"a.txt": "x\n"})
	cases := []struct {
		name   string
		params map[string]any
	}{
		{"arguments a number", map[string]any{"name": "read", "arguments": 42}},
		{"arguments a string that is not JSON", map[string]any{"name": "read", "arguments": "path=a.txt"}},
		{"arguments true", map[string]any{"name": "read", "arguments": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r harness.Result
			if err := c.Call(ctx, "tools/call", tc.params, &r); err != nil {
				t.Fatalf("protocol error %v; docs/tools.md: invalid input is an isError result", err)
			}
			if !r.IsError {
				t.Errorf("isError = false:\n%s", r.Text())
			}
			if strings.TrimSpace(r.Text()) == "" {
				t.Error("error result without a message telling the model how to correct the call")
			}
		})
	}
	// The session survives all of it.
	r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	wantResult(t, "after hostile input", r, false, "1→x")
}

func TestContractGrepBackendsAgree(t *testing.T) {
	files := map[string]string{
		"b/two.txt":  "Needle two\nfiller\nneedle 2\n",
		"a/one.txt":  "needle one\n",
		"c/skip.bin": "needle\x00binary\n",
		".dot/d.txt": "needle hidden\n",
	}
	var outs []string
	for _, env := range [][]string{nil, {"AGENTLS_GREP_BACKEND=go"}} {
		ws := newWorkspace(t, files)
		c, ctx := startIn(t, ws, bypass(), env...)
		r := c.CallTool(ctx, "grep", map[string]any{"pattern": "needle", "ignoreCase": true, "context": 1})
		wantContains(t, fmt.Sprint(env), r.Text(), "a/one.txt:1: needle one", "b/two.txt:1: Needle two", "b/two.txt-2- filler", "b/two.txt:3: needle 2", ".dot/d.txt:1: needle hidden")
		wantLacks(t, fmt.Sprint(env), r.Text(), "skip.bin:")
		if i, j := strings.Index(r.Text(), ".dot/"), strings.Index(r.Text(), "a/one"); i > j {
			t.Errorf("%v: not in path order:\n%s", env, r.Text())
		}
		outs = append(outs, r.Text())
	}
	if outs[0] != outs[1] {
		t.Errorf("rg and Go searcher differ:\n--- default\n%s\n--- go\n%s", outs[0], outs[1])
	}
}

func TestContractExtensionNames(t *testing.T) {
	def := func(name string) string {
		return fmt.Sprintf(`{"name":%q,"description":"test tool %s","inputSchema":{"type":"object","properties":{}},"command":"echo ran-%s","readOnly":true,"deferred":false}`, name, name, name)
	}
	name64 := strings.Repeat("n", 64)
	ws := newWorkspace(t, map[string]string{
		".agentls/tools/ok.json":    def("repair_ok-1"),
		".agentls/tools/n64.json":   def(name64),
		".agentls/tools/n65.json":   def(strings.Repeat("m", 65)),
		".agentls/tools/space.json": def("has space"),
		".agentls/tools/core.json":  def("read"),
		".agentls/tools/Core.json":  def("Bash"),
		".agentls/tools/bad.json":   `{"name": "broken",`,
	})
	c, ctx := startIn(t, ws, bypass())
	var res struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{"includeDeferred": true}, &res); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, tl := range res.Tools {
		count[fmt.Sprint(tl["name"])]++
	}
	for _, want := range []string{"repair_ok-1", name64} {
		if count[want] != 1 {
			t.Errorf("valid name %s listed %d times", want, count[want])
		}
	}
	for _, bad := range []string{strings.Repeat("m", 65), "has space", "Bash", "broken"} {
		if count[bad] != 0 {
			t.Errorf("invalid name %q registered", bad)
		}
	}
	if count["read"] != 1 || count["bash"] != 1 {
		t.Errorf("core tools read/bash listed %d/%d times", count["read"], count["bash"])
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": ".agentls/tools/ok.json"}); r.IsError || strings.Contains(r.Text(), "ran-read") {
		t.Errorf("read was replaced by the extension: %s", r.Text())
	}
	if r := c.CallTool(ctx, "repair_ok-1", map[string]any{}); !strings.Contains(r.Text(), "ran-repair_ok-1") {
		t.Errorf("valid extension tool: %s", r.Text())
	}
	if !waitUntil(5*time.Second, func() bool {
		all := strings.Join(logMessages(c, 0), "\n")
		return strings.Contains(all, "n65.json") && strings.Contains(all, "space.json") && strings.Contains(all, "bad.json") && strings.Contains(all, "core.json")
	}) {
		t.Errorf("bad files not all reported: %q", logMessages(c, 0))
	}
}

func TestContractCapabilityLessClientBypass(t *testing.T) {
	// Even where nothing asks (bypass), a client without applyEdit or
	// diagnostics must never receive workspace/applyEdit or
	// tools/diagnostics, also for documents it has open.
	ws := newWorkspace(t, map[string]string{"clean.txt": "clean\n", "dirty.txt": "disk\n"})
	c := harness.Start(t, harness.Options{Root: ws})
	var mu sync.Mutex
	var requests []string
	c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		mu.Lock()
		requests = append(requests, method)
		mu.Unlock()
		return nil, fmt.Errorf("cannot answer %s", method)
	}
	ctx := testCtx(t, sessionTimeout)
	c.Initialize(ctx, bypass())
	for name, text := range map[string]string{"clean.txt": "clean\n", "dirty.txt": "unsaved\n"} {
		c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": fileURI(filepath.Join(ws, name)), "languageId": "plaintext", "version": 1, "text": text}})
	}
	c.CallTool(ctx, "read", map[string]any{"path": "clean.txt"})
	c.CallTool(ctx, "read", map[string]any{"path": "dirty.txt"})
	r := c.CallTool(ctx, "edit", editCall("clean.txt", "clean", "edited"))
	wantResult(t, "clean open document", r, false)
	if got := readFile(t, filepath.Join(ws, "clean.txt")); got != "edited\n" {
		t.Errorf("clean document on disk = %q, want edited on disk", got)
	}
	r = c.CallTool(ctx, "edit", editCall("dirty.txt", "unsaved", "x"))
	wantResult(t, "dirty open document", r, true)
	if got := readFile(t, filepath.Join(ws, "dirty.txt")); got != "disk\n" {
		t.Errorf("dirty document's file = %q, want it untouched", got)
	}
	c.CallTool(ctx, "bash", map[string]any{"command": "rm -f clean.txt"})
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != 0 {
		t.Errorf("server sent requests the client never declared: %v", requests)
	}
}

// A generated callId (none sent) is echoed in the reply and stamped on the
// call's notifications.
func TestGeneratedCallIDStampsNotifications(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": "x\n"})
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	r, _ := callWithID(t, c, ctx, "edit", "", editCall("a.txt", "x", "y"))
	if r.IsError || r.CallID == "" {
		t.Fatalf("callId %q: %s", r.CallID, r.Text())
	}
	if _, _, ok := waitDetails(c, r.CallID); !ok {
		t.Errorf("no tools/details stamped with the generated callId %q", r.CallID)
	}
	r, _ = callWithID(t, c, ctx, "bash", "", map[string]any{"command": "echo hi; sleep 0.1"})
	if _, ok := c.WaitNote(time.Second, func(n harness.Note) bool {
		return n.Method == "tools/progress" && strings.Contains(string(n.Params), `"callId":"`+r.CallID+`"`)
	}); !ok {
		t.Errorf("no tools/progress stamped with the generated callId %q", r.CallID)
	}
}

// Bad input gets the documented outcome: the text is asserted, not just isError.
func TestArgumentNormalizationAndValidation(t *testing.T) {
	t.Parallel()
	lines := make([]string, 30)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d", i+1)
	}
	c, _, ctx := start(t, map[string]string{"a.txt": strings.Join(lines, "\n") + "\n"})
	cases := []struct {
		name      string
		tool      string
		args      any
		isError   bool
		want      []string
		wantNorm  []string
		notInText []string
	}{
		{"unknown tool lists tools and the closest name", "raed", map[string]any{}, true,
			[]string{`unknown tool "raed"`, `Did you mean "read"?`, "Available tools: ", "read"}, nil, nil},
		{"missing required field names it and its type", "read", map[string]any{}, true,
			[]string{"missing required field `path` (string)", "Usage: read {path: string, offset?: integer, limit?: integer}"}, nil, nil},
		{"wrong type names field, value and expected type", "read", map[string]any{"path": 42}, true,
			[]string{"`path` must be a string, got a number"}, nil, nil},
		{"negative offset says what to send", "read", map[string]any{"path": "a.txt", "offset": -3}, true,
			[]string{"`offset` must be a line number ≥ 1, got -3"}, nil, nil},
		{"non-numeric string stays an error", "read", map[string]any{"path": "a.txt", "limit": "ten"}, true,
			[]string{"`limit` must be a number, got the string \"ten\""}, nil, nil},
		{"extra fields are dropped and reported", "read", map[string]any{"path": "a.txt", "encoding": "utf8", "verbose": true}, false,
			[]string{"1→line 1"}, []string{`dropped unknown field "encoding"`, `dropped unknown field "verbose"`}, nil},
		{"numeric string limit becomes a number", "read", map[string]any{"path": "a.txt", "limit": "10"}, false,
			[]string{"a.txt, lines 1-10 of 30", "10→line 10", "Use offset=11 to continue."}, []string{`limit: string "10" → number`}, []string{"11→line 11"}},
		{"file_path alias becomes path", "read", map[string]any{"file_path": "a.txt", "offset": "29"}, false,
			[]string{"29→line 29", "30→line 30"}, []string{"file_path → path"}, nil},
		{"arguments as a JSON string are parsed", "read", `{"path": "a.txt", "limit": 1}`, false,
			[]string{"1→line 1"}, []string{"parsed the JSON string"}, nil},
		{"empty Lua table [] means no arguments", "read", []any{}, true,
			[]string{"missing required field `path`"}, nil, nil},
		{"offset past the end names the line count", "read", map[string]any{"path": "a.txt", "offset": 99}, true,
			[]string{"offset 99 is beyond the end of a.txt, which has 30 lines"}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, tc.tool, tc.args)
			if r.IsError != tc.isError {
				t.Fatalf("isError = %v, want %v; text: %s", r.IsError, tc.isError, r.Text())
			}
			checkText(t, r, tc.want, tc.notInText, tc.wantNorm)
		})
	}
}

// checkText asserts what a result's text holds and lacks, and what lenient
// input repair reported in details.normalized.
func checkText(t *testing.T, r harness.Result, want, notWant, wantNorm []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(r.Text(), w) {
			t.Errorf("text lacks %q:\n%s", w, r.Text())
		}
	}
	for _, w := range notWant {
		if strings.Contains(r.Text(), w) {
			t.Errorf("text has %q:\n%s", w, r.Text())
		}
	}
	norm := fmt.Sprint(r.Details["normalized"])
	for _, w := range wantNorm {
		if !strings.Contains(norm, w) {
			t.Errorf("details.normalized lacks %q: %s", w, norm)
		}
	}
}

func TestDetailsDurationAndCallIDEcho(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": "A\n"})
	var r harness.Result
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": "mine-7"}, &r); err != nil {
		t.Fatal(err)
	}
	if r.CallID != "mine-7" {
		t.Errorf("callId = %q", r.CallID)
	}
	if _, ok := r.Details["durationMs"].(float64); !ok {
		t.Errorf("details.durationMs missing: %v", r.Details)
	}
	b, _ := json.Marshal(r.Content)
	if strings.Contains(string(b), "durationMs") {
		t.Error("details leaked into content")
	}
}
