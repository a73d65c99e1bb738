package e2e

// Black-box acceptance tests for what changes while a session runs: settings
// files edited live, extension tools added/changed/removed, deferral and
// tool_search, workspace folders changed live, and text document sync with
// workspace/applyEdit. Sources: docs/tools.md, docs/protocol.md, docs/protocol.md,
// docs/tools.md.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// liveWait bounds every wait for a live reload (watcher debounce is ~100 ms;
// this is generous for a loaded 2-core machine).
const liveWait = 5 * time.Second

// liveCallTimeout bounds an initialize or tool call made by these tests.
const liveCallTimeout = 40 * time.Second

type liveOpts struct {
	init    map[string]any // initializationOptions
	caps    map[string]any // capabilities.experimental.agentls
	folders []string       // workspaceFolders (default: ws)
	env     []string
}

// liveStart spawns agentls rooted at ws and initializes it.
func liveStart(t *testing.T, ws string, o liveOpts) *harness.Client {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: ws, Env: o.env})
	folders := o.folders
	if folders == nil {
		folders = []string{ws}
	}
	var wf []map[string]any
	for _, f := range folders {
		wf = append(wf, map[string]any{"uri": fileURI(f), "name": filepath.Base(f)})
	}
	params := map[string]any{
		"rootUri":          fileURI(folders[0]),
		"workspaceFolders": wf,
		"capabilities":     map[string]any{"experimental": map[string]any{"agentls": o.caps}},
	}
	if o.caps == nil {
		params["capabilities"] = map[string]any{}
	}
	if o.init != nil {
		params["initializationOptions"] = o.init
	}
	c.Initialize(testCtx(t, liveCallTimeout), params)
	return c
}

// liveWaitLog waits for a window/logMessage containing every one of subs.
func liveWaitLog(c *harness.Client, subs ...string) (string, bool) {
	n, ok := c.WaitNote(liveWait, func(n harness.Note) bool {
		if n.Method != "window/logMessage" {
			return false
		}
		for _, s := range subs {
			if !strings.Contains(string(n.Params), s) {
				return false
			}
		}
		return true
	})
	return string(n.Params), ok
}

func liveCount(c *harness.Client, method string) int { return len(c.Notes(method)) }

// liveWaitCount waits until more than n notifications of method arrived.
func liveWaitCount(c *harness.Client, method string, n int) bool {
	// WaitNote rescans from the first note on every wake-up (holding the
	// client's lock, so Notes cannot be called here): count distinct notes.
	seen := map[string]bool{}
	_, ok := c.WaitNote(liveWait, func(note harness.Note) bool {
		if note.Method == method {
			seen[fmt.Sprint(note.At.UnixNano(), string(note.Params))] = true
		}
		return len(seen) > n
	})
	return ok
}

type liveTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
	Meta        map[string]any `json:"_meta"`
}

func liveList(t *testing.T, c *harness.Client, includeDeferred bool) map[string]liveTool {
	t.Helper()
	var res struct {
		Tools []liveTool `json:"tools"`
	}
	if err := c.Call(testCtx(t, liveCallTimeout), "tools/list", map[string]any{"includeDeferred": includeDeferred}, &res); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]liveTool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

func liveNames(m map[string]liveTool) []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// liveUntil polls f (a tool call or listing) until it reports true or the
// wait ends; it returns how many tries it took (0 = never).
func liveUntil(t *testing.T, f func() bool) int {
	t.Helper()
	start := time.Now()
	deadline := start.Add(liveWait)
	for i := 1; ; i++ {
		if f() {
			t.Logf("liveUntil: true after %d tries, %v", i, time.Since(start))
			return i
		}
		if time.Now().After(deadline) {
			return 0
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func liveToolJSON(t *testing.T, def map[string]any) string {
	t.Helper()
	b, err := json.MarshalIndent(def, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ---------------------------------------------------------------------------
// Settings files edited live

func TestLiveSettingsDenyRuleAppliesToNextCall(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "alpha\n", "b.txt": "bravo\n", "c.txt": "charlie\n"})
	xdg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdg, "agentls"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := liveStart(t, ws, liveOpts{init: bypassOptions(), env: []string{"XDG_CONFIG_HOME=" + xdg}})
	ctx := testCtx(t, liveCallTimeout)

	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		if r := c.CallTool(ctx, "read", map[string]any{"path": f}); r.IsError {
			t.Fatalf("read %s before any rule: %s", f, r.Text())
		}
	}

	// 1. A deny rule added to .agentls/settings.json while running.
	writeFile(t, filepath.Join(ws, ".agentls", "settings.json"), `{"permissions": {"deny": ["Read(a.txt)"]}}`)
	var denied harness.Result
	if tries := liveUntil(t, func() bool {
		denied = c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
		return denied.IsError
	}); tries == 0 {
		t.Fatalf("deny Read(a.txt) in .agentls/settings.json never applied: %s", denied.Text())
	}
	wantContains(t, "denial", denied.Text(), "Read(a.txt)", "settings.json")
	wantLacks(t, "denial", denied.Text(), "alpha")

	// 2. A broken settings.local.json is reported; settings.json's rule stays.
	local := filepath.Join(ws, ".agentls", "settings.local.json")
	writeFile(t, local, `{"permissions": {"deny": ["Read(b.txt)"`) // truncated JSON
	if msg, ok := liveWaitLog(c, "settings.local.json"); !ok {
		t.Errorf("broken settings.local.json not reported in window/logMessage; logs: %q", logMessages(c, 0))
	} else {
		t.Logf("report: %s", msg)
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); !r.IsError {
		t.Errorf("deny Read(a.txt) from settings.json stopped working after settings.local.json broke: %s", r.Text())
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "b.txt"}); r.IsError {
		t.Errorf("rule of a broken file applied: %s", r.Text())
	}

	// 3. A file with an invalid rule: reported (file, rule), previous rules keep working.
	writeFile(t, local, `{"permissions": {"deny": ["Read(b.txt)", "Bogus((("]}}`)
	if msg, ok := liveWaitLog(c, "settings.local.json", "Bogus((("); !ok {
		t.Errorf("invalid rule in settings.local.json not reported naming file and rule; logs: %q", logMessages(c, 0))
	} else {
		t.Logf("report: %s", msg)
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); !r.IsError {
		t.Errorf("deny Read(a.txt) lost after an invalid rule in another file: %s", r.Text())
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "b.txt"}); !r.IsError {
		t.Errorf("an invalid rule switched off its file's valid Read(b.txt): %s", r.Text())
	}

	// 4. Fixing the local file makes its rule apply.
	writeFile(t, local, `{"permissions": {"deny": ["Read(b.txt)"]}}`)
	if liveUntil(t, func() bool { return c.CallTool(ctx, "read", map[string]any{"path": "b.txt"}).IsError }) == 0 {
		t.Errorf("deny Read(b.txt) in a repaired settings.local.json never applied")
	}

	// 5. The user's settings file ($XDG_CONFIG_HOME/agentls/settings.json).
	writeFile(t, filepath.Join(xdg, "agentls", "settings.json"), `{"permissions": {"deny": ["Read(c.txt)"]}}`)
	var cr harness.Result
	if liveUntil(t, func() bool {
		cr = c.CallTool(ctx, "read", map[string]any{"path": "c.txt"})
		return cr.IsError
	}) == 0 {
		t.Errorf("deny Read(c.txt) in $XDG_CONFIG_HOME/agentls/settings.json never applied: %s", cr.Text())
	} else {
		wantContains(t, "user-file denial", cr.Text(), "Read(c.txt)")
	}

	// 6. Removing the deny rule lifts it.
	writeFile(t, filepath.Join(ws, ".agentls", "settings.json"), `{}`)
	var ar harness.Result
	if liveUntil(t, func() bool {
		ar = c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
		return !ar.IsError
	}) == 0 {
		t.Errorf("removing deny Read(a.txt) never took effect: %s", ar.Text())
	} else {
		wantContains(t, "read after lift", ar.Text(), "alpha")
	}
}

// The brief: "a deny rule added while running applies to the next call";
// docs/tools.md: settings files "are read again when they change: the new
// mode and rules apply from the next call". The call right after the file
// is saved is the next call.
func TestLiveSettingsDenyRuleNoWindowAfterSave(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "alpha\n"})
	c := liveStart(t, ws, liveOpts{init: bypassOptions()})
	ctx := testCtx(t, liveCallTimeout)
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
		t.Fatalf("read before the rule: %s", r.Text())
	}
	writeFile(t, filepath.Join(ws, ".agentls", "settings.json"), `{"permissions": {"deny": ["Read(a.txt)"]}}`)
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); !r.IsError {
		t.Errorf("the call right after saving deny Read(a.txt) was allowed; it returned:\n%s", r.Text())
	}
}

// A file that breaks after having valid rules: its old deny rules must not
// silently vanish (the brief: "a broken file is reported and the previous
// rules keep working").
func TestLiveSettingsBrokenFileKeepsPreviousRules(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{
		"a.txt":                  "alpha\n",
		".agentls/settings.json": `{"permissions": {"deny": ["Read(a.txt)"]}}`,
	})
	c := liveStart(t, ws, liveOpts{init: bypassOptions()})
	ctx := testCtx(t, liveCallTimeout)
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); !r.IsError {
		t.Fatalf("deny Read(a.txt) at start not applied: %s", r.Text())
	}
	writeFile(t, filepath.Join(ws, ".agentls", "settings.json"), `{"permissions": {"deny": ["Read(a.txt)"], }`)
	if msg, ok := liveWaitLog(c, "settings.json"); !ok {
		t.Errorf("broken settings.json not reported; logs: %q", logMessages(c, 0))
	} else {
		t.Logf("report: %s", msg)
	}
	// Give the reload every chance to have happened before judging.
	time.Sleep(300 * time.Millisecond)
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); !r.IsError {
		t.Errorf("after settings.json broke, its previous deny Read(a.txt) no longer applies; read returned:\n%s", r.Text())
	}
}

func TestLiveSettingsLimitsApplyLiveAndToNextSession(t *testing.T) {
	t.Parallel()
	var body strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&body, "line %d\n", i)
	}
	ws := resolvedWorkspace(t, map[string]string{"ten.txt": body.String(), "z.txt": "zulu\n"})
	ctx := testCtx(t, liveCallTimeout)

	s1 := liveStart(t, ws, liveOpts{init: bypassOptions()})
	descBefore := liveList(t, s1, false)["read"].Description
	r := s1.CallTool(ctx, "read", map[string]any{"path": "ten.txt"})
	wantContains(t, "session 1 read before", r.Text(), "lines 1-10 of 10", "line 10")

	// docs/protocol.md "Limits": a settings file's limits apply live too:
	// the built-in tools are rebuilt (tools/listChanged) with them.
	writeFile(t, filepath.Join(ws, ".agentls", "settings.json"),
		`{"limits": {"readLines": 5}, "permissions": {"deny": ["Read(z.txt)"]}}`)
	if liveUntil(t, func() bool {
		return strings.Contains(s1.CallTool(ctx, "read", map[string]any{"path": "ten.txt"}).Text(), "lines 1-3 of 10")
	}) == 0 {
		t.Fatalf("session 1 never took readLines 5 (3 lines beside the header and notice) from settings.json")
	}
	if d := liveList(t, s1, false)["read"].Description; d == descBefore || !strings.Contains(d, "A result is at most 5 lines") {
		t.Errorf("running session's read description does not state the new limit:\n%s", d)
	}

	// A session opened after the change takes readLines 5.
	s2 := liveStart(t, ws, liveOpts{init: bypassOptions()})
	r = s2.CallTool(ctx, "read", map[string]any{"path": "ten.txt"})
	wantContains(t, "session 2 read", r.Text(), "lines 1-3 of 10", "offset=4")
	wantLacks(t, "session 2 read", r.Text(), "line 4\n")
	d2 := liveList(t, s2, false)["read"].Description
	if d2 == descBefore {
		t.Errorf("session 2's read description is unchanged by readLines 5: %s", d2)
	}
	wantContains(t, "session 2 read description", d2, "5")
	wantLacks(t, "session 2 read description", d2, "2000 lines")

	// A wrong value in settings.local.json: reported, that file's limits
	// ignored, settings.json's still apply.
	writeFile(t, filepath.Join(ws, ".agentls", "settings.local.json"), `{"limits": {"readLines": 0, "readBytes": 8192}}`)
	s3 := liveStart(t, ws, liveOpts{init: bypassOptions()})
	if msg, ok := liveWaitLog(s3, "settings.local.json", "readLines"); !ok {
		t.Errorf("out-of-range readLines in settings.local.json not reported; logs: %q", logMessages(s3, 0))
	} else {
		t.Logf("report: %s", msg)
	}
	r = s3.CallTool(ctx, "read", map[string]any{"path": "ten.txt"})
	wantContains(t, "session 3 read", r.Text(), "lines 1-3 of 10")

	// The editor's initializationOptions win over the files.
	s4 := liveStart(t, ws, liveOpts{init: map[string]any{"mode": "bypass", "limits": map[string]any{"readLines": 7}}})
	r = s4.CallTool(ctx, "read", map[string]any{"path": "ten.txt"})
	wantContains(t, "session 4 read (editor limits win)", r.Text(), "lines 1-5 of 10", "offset=6")
}

// ---------------------------------------------------------------------------
// Extension tools added, changed, removed while running

func TestLiveExtensionToolsLifecycle(t *testing.T) {
	slow(t)
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"keep.txt": "keep\n"})
	tools := filepath.Join(ws, ".agentls", "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	c := liveStart(t, ws, liveOpts{init: bypassOptions()})
	ctx := testCtx(t, liveCallTimeout)
	if _, ok := liveList(t, c, true)["a5l_hello"]; ok {
		t.Fatal("a5l_hello exists before its file")
	}

	hello := map[string]any{
		"name":        "a5l_hello",
		"description": "Greets someone by name.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"who": map[string]any{"type": "string", "description": "whom to greet"}}, "required": []string{"who"}},
		"command":     "printf 'hello <%s>\\n' {{who}}",
		"readOnly":    true,
		"deferred":    false,
	}
	// Added.
	n0 := liveCount(c, "tools/listChanged")
	writeFile(t, filepath.Join(tools, "hello.json"), liveToolJSON(t, hello))
	if !liveWaitCount(c, "tools/listChanged", n0) {
		t.Fatalf("no tools/listChanged after adding .agentls/tools/hello.json")
	}
	list := liveList(t, c, false)
	if tl, ok := list["a5l_hello"]; !ok {
		t.Fatalf("a5l_hello (deferred:false) not in tools/list after listChanged: %v", liveNames(list))
	} else if tl.Description == "" || tl.InputSchema["type"] != "object" {
		t.Errorf("a5l_hello listed without description/schema: %+v", tl)
	}
	r := c.CallTool(ctx, "a5l_hello", map[string]any{"who": "world"})
	if r.IsError || !strings.Contains(r.Text(), "hello <world>") {
		t.Errorf("a5l_hello world: isError=%v %s", r.IsError, r.Text())
	}

	// Placeholders are shell-quoted: hostile values stay one literal word.
	for _, hostile := range []string{"; touch pwned1", "$(touch pwned2)", "`touch pwned3`", "a' ; touch pwned4; '", "x\ntouch pwned5", "*"} {
		r := c.CallTool(ctx, "a5l_hello", map[string]any{"who": hostile})
		if r.IsError || !strings.Contains(r.Text(), "hello <"+hostile+">") {
			t.Errorf("a5l_hello %q: want the literal value echoed; isError=%v %s", hostile, r.IsError, r.Text())
		}
	}
	for i := 1; i <= 5; i++ {
		if _, err := os.Stat(filepath.Join(ws, fmt.Sprintf("pwned%d", i))); err == nil {
			t.Errorf("a hostile placeholder value ran a command: pwned%d exists", i)
		}
	}

	// Changed.
	hello["description"] = "Says goodbye to someone."
	hello["command"] = "printf 'bye <%s>\\n' {{who}}"
	n1 := liveCount(c, "tools/listChanged")
	writeFile(t, filepath.Join(tools, "hello.json"), liveToolJSON(t, hello))
	if !liveWaitCount(c, "tools/listChanged", n1) {
		t.Errorf("no tools/listChanged after changing hello.json")
	}
	var rr harness.Result
	if liveUntil(t, func() bool {
		rr = c.CallTool(ctx, "a5l_hello", map[string]any{"who": "moon"})
		return strings.Contains(rr.Text(), "bye <moon>")
	}) == 0 {
		t.Errorf("changed command never took effect: %s", rr.Text())
	}
	if d := liveList(t, c, false)["a5l_hello"].Description; !strings.Contains(d, "Says goodbye") {
		t.Errorf("changed description not listed: %q", d)
	}

	// Missing optional argument substitutes nothing (not an empty word).
	opt := map[string]any{
		"name":        "a5l_opt",
		"description": "Prints its words in angle brackets.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"word": map[string]any{"type": "string"}}},
		"command":     "printf '<%s>' a {{word}} b",
		"readOnly":    true,
		"deferred":    false,
	}
	n2 := liveCount(c, "tools/listChanged")
	writeFile(t, filepath.Join(tools, "opt.json"), liveToolJSON(t, opt))
	if !liveWaitCount(c, "tools/listChanged", n2) {
		t.Errorf("no tools/listChanged after adding opt.json")
	}
	if liveUntil(t, func() bool { _, ok := liveList(t, c, false)["a5l_opt"]; return ok }) == 0 {
		t.Fatalf("a5l_opt never listed")
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"missing", map[string]any{}, "<a><b>"},
		{"empty string", map[string]any{"word": ""}, "<a><><b>"},
		{"with space", map[string]any{"word": "x y"}, "<a><x y><b>"},
	} {
		r := c.CallTool(ctx, "a5l_opt", tc.args)
		if r.IsError || !strings.Contains(r.Text(), tc.want) {
			t.Errorf("a5l_opt %s: want %q; isError=%v %s", tc.name, tc.want, r.IsError, r.Text())
		}
		if tc.name == "missing" {
			wantLacks(t, "a5l_opt missing", r.Text(), "<a><><b>")
		}
	}

	// Bad files are reported and skipped; the rest keeps working.
	writeFile(t, filepath.Join(tools, "broken.json"), `{"name": "a5l_broken", "command": `)
	if _, ok := liveWaitLog(c, "broken.json"); !ok {
		t.Errorf("invalid JSON tool file not reported; logs: %q", logMessages(c, 0))
	}
	clash := map[string]any{"name": "Read", "description": "shadow read", "inputSchema": map[string]any{"type": "object"}, "command": "echo shadowed", "deferred": false}
	writeFile(t, filepath.Join(tools, "clash.json"), liveToolJSON(t, clash))
	if _, ok := liveWaitLog(c, "clash.json"); !ok {
		t.Errorf("tool file colliding with core tool read not reported; logs: %q", logMessages(c, 0))
	}
	badName := map[string]any{"name": "bad name!", "description": "x", "inputSchema": map[string]any{"type": "object"}, "command": "echo x", "deferred": false}
	writeFile(t, filepath.Join(tools, "badname.json"), liveToolJSON(t, badName))
	if _, ok := liveWaitLog(c, "badname.json"); !ok {
		t.Errorf("tool file with an invalid name not reported; logs: %q", logMessages(c, 0))
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "keep.txt"}); r.IsError || strings.Contains(r.Text(), "shadowed") || !strings.Contains(r.Text(), "keep") {
		t.Errorf("core read affected by a colliding extension file: %s", r.Text())
	}
	if r := c.CallTool(ctx, "a5l_hello", map[string]any{"who": "still"}); r.IsError || !strings.Contains(r.Text(), "bye <still>") {
		t.Errorf("good extension tool broke after bad files appeared: %s", r.Text())
	}
	all := liveList(t, c, true)
	for _, n := range []string{"a5l_broken", "bad name!"} {
		if _, ok := all[n]; ok {
			t.Errorf("invalid tool %q registered", n)
		}
	}

	// Removed: listChanged, gone from tools/list, a call is a clear isError.
	n3 := liveCount(c, "tools/listChanged")
	if err := os.Remove(filepath.Join(tools, "hello.json")); err != nil {
		t.Fatal(err)
	}
	if !liveWaitCount(c, "tools/listChanged", n3) {
		t.Errorf("no tools/listChanged after removing hello.json")
	}
	if liveUntil(t, func() bool { _, ok := liveList(t, c, true)["a5l_hello"]; return !ok }) == 0 {
		t.Errorf("a5l_hello still listed after its file was removed")
	}
	r = c.CallTool(ctx, "a5l_hello", map[string]any{"who": "ghost"})
	if !r.IsError {
		t.Errorf("call of a removed extension tool is not isError: %s", r.Text())
	}
	t.Logf("removed tool call: %s", r.Text())
	wantContains(t, "removed tool call", strings.ToLower(r.Text()), "a5l_hello", "unknown tool")
	wantLacks(t, "removed tool call", r.Text(), "bye <ghost>")
}

// A new deferred extension tool (deferred is the default) appears without
// being active; tool_search finds it, activates it and sends listChanged.
func TestLiveExtensionNewDeferredToolFoundByToolSearch(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, nil)
	tools := filepath.Join(ws, ".agentls", "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	c := liveStart(t, ws, liveOpts{init: bypassOptions()})
	ctx := testCtx(t, liveCallTimeout)
	def := map[string]any{
		"name":        "a5l_quasar_frobnicate",
		"description": "Frobnicates the quasar widgets of the project.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"widget": map[string]any{"type": "string", "description": "which widget"}}, "required": []string{"widget"}},
		"command":     "printf 'frob <%s>\\n' {{widget}}",
		"readOnly":    true,
	}
	writeFile(t, filepath.Join(tools, "quasar.json"), liveToolJSON(t, def))
	if liveUntil(t, func() bool { _, ok := liveList(t, c, true)["a5l_quasar_frobnicate"]; return ok }) == 0 {
		t.Fatalf("deferred tool never registered (tools/list includeDeferred)")
	}
	deferredEntry := liveList(t, c, true)["a5l_quasar_frobnicate"]
	if deferredEntry.Meta["deferred"] != true {
		t.Errorf("new extension tool without `deferred` should be deferred (default true): _meta=%v", deferredEntry.Meta)
	}
	if _, ok := liveList(t, c, false)["a5l_quasar_frobnicate"]; ok {
		t.Errorf("deferred tool listed in tools/list without includeDeferred")
	}
	n0 := liveCount(c, "tools/listChanged")
	r := c.CallTool(ctx, "tool_search", map[string]any{"query": "frobnicate quasar widgets"})
	if r.IsError {
		t.Fatalf("tool_search: %s", r.Text())
	}
	wantContains(t, "tool_search result", r.Text(), "a5l_quasar_frobnicate", "widget")
	if !liveWaitCount(c, "tools/listChanged", n0) {
		t.Errorf("no tools/listChanged after tool_search activated a tool")
	}
	if tl, ok := liveList(t, c, false)["a5l_quasar_frobnicate"]; !ok {
		t.Errorf("tool_search match not active in tools/list")
	} else if tl.Meta["deferred"] == true {
		t.Errorf("activated tool still _meta.deferred true")
	}
	if r := c.CallTool(ctx, "a5l_quasar_frobnicate", map[string]any{"widget": "w1"}); r.IsError || !strings.Contains(r.Text(), "frob <w1>") {
		t.Errorf("activated tool call: %s", r.Text())
	}
}

// ---------------------------------------------------------------------------
// Deferral with a small deferThreshold

func TestLiveDeferThreshold(t *testing.T) {
	t.Parallel()
	mk := func(name, desc string) string {
		return liveToolJSON(t, map[string]any{
			"name": name, "description": desc,
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "string"}}},
			"command":     "printf '" + name + " <%s>\\n' {{n}}", "readOnly": true, "deferred": false,
		})
	}
	ws := resolvedWorkspace(t, map[string]string{
		".agentls/tools/alpha.json": mk("a5l_alpha", "Alpha centauri star chart lookup."),
		".agentls/tools/beta.json":  mk("a5l_beta", "Betelgeuse supernova countdown."),
	})
	ctx := testCtx(t, liveCallTimeout)

	// Reference: with the default threshold (30), deferred:false tools are active.
	ref := liveStart(t, ws, liveOpts{init: bypassOptions()})
	refList := liveList(t, ref, false)
	for _, n := range []string{"a5l_alpha", "a5l_beta"} {
		if _, ok := refList[n]; !ok {
			t.Errorf("default threshold: %s (deferred:false) not active: %v", n, liveNames(refList))
		}
	}

	c := liveStart(t, ws, liveOpts{init: map[string]any{"mode": "bypass", "deferThreshold": 2}})
	active := liveList(t, c, false)
	for _, core := range []string{"read", "ls", "grep", "find", "edit", "write", "bash", "tool_search"} {
		if tl, ok := active[core]; !ok {
			t.Errorf("core tool %s deferred with deferThreshold 2: %v", core, liveNames(active))
		} else if tl.Meta["deferred"] == true {
			t.Errorf("core tool %s has _meta.deferred true", core)
		}
	}
	for _, n := range []string{"a5l_alpha", "a5l_beta"} {
		if _, ok := active[n]; ok {
			t.Errorf("deferThreshold 2: non-core %s still active: %v", n, liveNames(active))
		}
	}
	all := liveList(t, c, true)
	for _, n := range []string{"a5l_alpha", "a5l_beta"} {
		if tl, ok := all[n]; !ok {
			t.Errorf("includeDeferred: %s missing", n)
		} else if tl.Meta["deferred"] != true {
			t.Errorf("includeDeferred: %s _meta.deferred = %v, want true", n, tl.Meta["deferred"])
		}
	}

	// tool_search activates a match and sends listChanged.
	n0 := liveCount(c, "tools/listChanged")
	r := c.CallTool(ctx, "tool_search", map[string]any{"query": "betelgeuse supernova"})
	t.Logf("tool_search: %s", r.Text())
	wantContains(t, "tool_search", r.Text(), "a5l_beta")
	wantLacks(t, "tool_search (not a match)", r.Text(), "a5l_alpha")
	if !liveWaitCount(c, "tools/listChanged", n0) {
		t.Errorf("no tools/listChanged after tool_search")
	}
	active = liveList(t, c, false)
	if tl, ok := active["a5l_beta"]; !ok || tl.Meta["deferred"] == true {
		t.Errorf("a5l_beta not active after tool_search: ok=%v meta=%v", ok, tl.Meta)
	}
	if _, ok := active["a5l_alpha"]; ok {
		t.Errorf("a5l_alpha became active though tool_search did not match it")
	}

	// docs/tools.md: calling a deferred tool directly by name works and
	// activates it; docs/protocol.md: tools/listChanged is sent for that.
	n1 := liveCount(c, "tools/listChanged")
	r = c.CallTool(ctx, "a5l_alpha", map[string]any{"n": "direct"})
	if r.IsError || !strings.Contains(r.Text(), "a5l_alpha <direct>") {
		t.Errorf("deferred a5l_alpha called by name: isError=%v %s", r.IsError, r.Text())
	}
	if !liveWaitCount(c, "tools/listChanged", n1) {
		t.Errorf("no tools/listChanged after a deferred tool was called by name")
	}
	if _, ok := liveList(t, c, false)["a5l_alpha"]; !ok {
		t.Errorf("a5l_alpha not active after being called by name")
	}
}

// ---------------------------------------------------------------------------
// workspace/didChangeWorkspaceFolders

func TestLiveWorkspaceFolders(t *testing.T) {
	t.Parallel()
	a := resolvedWorkspace(t, map[string]string{"a.txt": "in folder a\n"})
	b := resolvedWorkspace(t, map[string]string{"sub/b.txt": "needle in folder b\n"})
	bFile := filepath.Join(b, "sub", "b.txt")
	c := liveStart(t, a, liveOpts{init: bypassOptions()})
	ctx := testCtx(t, liveCallTimeout)
	folder := map[string]any{"uri": fileURI(b), "name": "b"}
	change := func(added, removed []any) {
		t.Helper()
		if err := c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": added, "removed": removed}}); err != nil {
			t.Fatal(err)
		}
	}

	// Before: b is outside the workspace.
	if r := c.CallTool(ctx, "read", map[string]any{"path": bFile}); !r.IsError {
		t.Fatalf("read in b before adding it was allowed: %s", r.Text())
	}

	change([]any{folder}, []any{})
	r := c.CallTool(ctx, "read", map[string]any{"path": bFile})
	if r.IsError {
		t.Fatalf("read of an absolute path in an added folder (first call after the notification): %s", r.Text())
	}
	wantContains(t, "read in added folder", r.Text(), "needle in folder b")
	r = c.CallTool(ctx, "grep", map[string]any{"pattern": "needle", "path": b})
	if r.IsError || !strings.Contains(r.Text(), "b.txt:1:") {
		t.Errorf("grep in added folder: isError=%v %s", r.IsError, r.Text())
	}
	r = c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt", "path": b})
	if r.IsError || !strings.Contains(r.Text(), "b.txt") {
		t.Errorf("find in added folder: isError=%v %s", r.IsError, r.Text())
	}
	r = c.CallTool(ctx, "ls", map[string]any{"path": filepath.Join(b, "sub")})
	if r.IsError || !strings.Contains(r.Text(), "b.txt") {
		t.Errorf("ls in added folder: isError=%v %s", r.IsError, r.Text())
	}
	// Folder a still works.
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
		t.Errorf("first folder broke after adding b: %s", r.Text())
	}

	// Remove b: its paths are refused with a clear message.
	change([]any{}, []any{folder})
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"read", map[string]any{"path": bFile}},
		{"grep", map[string]any{"pattern": "needle", "path": b}},
		{"find", map[string]any{"pattern": "*.txt", "path": b}},
		{"edit", map[string]any{"path": bFile, "edits": []any{map[string]any{"oldText": "needle", "newText": "pin"}}}},
		{"write", map[string]any{"path": filepath.Join(b, "new.txt"), "content": "x\n"}},
	} {
		r := c.CallTool(ctx, tc.tool, tc.args)
		if !r.IsError {
			t.Errorf("%s in removed folder allowed: %s", tc.tool, r.Text())
			continue
		}
		t.Logf("%s in removed folder: %s", tc.tool, r.Text())
		wantContains(t, tc.tool+" in removed folder", strings.ToLower(r.Text()), "outside")
		wantLacks(t, tc.tool+" in removed folder", r.Text(), "needle in folder b")
	}
	if got := readFile(t, bFile); got != "needle in folder b\n" {
		t.Errorf("removed folder's file changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(b, "new.txt")); err == nil {
		t.Errorf("write created a file in a removed folder")
	}

	// Re-add b: the read stamp taken before the removal must not carry over.
	change([]any{folder}, []any{})
	r = c.CallTool(ctx, "edit", map[string]any{"path": bFile, "edits": []any{map[string]any{"oldText": "needle", "newText": "pin"}}})
	if !r.IsError {
		t.Errorf("edit in re-added folder used a read stamp from before the folder was removed: %s", r.Text())
	} else {
		wantContains(t, "edit without fresh read", strings.ToLower(r.Text()), "read")
	}
	if r.IsError {
		if got := readFile(t, bFile); got != "needle in folder b\n" {
			t.Errorf("refused edit changed the file: %q", got)
		}
	}
	// After a fresh read the edit goes through.
	if r := c.CallTool(ctx, "read", map[string]any{"path": bFile}); r.IsError {
		t.Fatalf("read in re-added folder: %s", r.Text())
	}
	want := "pin in folder b\n"
	if strings.Contains(readFile(t, bFile), "pin") {
		want = readFile(t, bFile) // the edit above went through (finding reported)
	} else if r := c.CallTool(ctx, "edit", map[string]any{"path": bFile, "edits": []any{map[string]any{"oldText": "needle", "newText": "pin"}}}); r.IsError {
		t.Errorf("edit after fresh read in re-added folder: %s", r.Text())
	}
	if got := readFile(t, bFile); got != want {
		t.Errorf("disk after edit: %q, want %q", got, want)
	}
}

// ---------------------------------------------------------------------------
// Text document sync and workspace/applyEdit

// liveEditor is a minimal editor: it holds open documents, answers
// workspace/applyEdit by applying the edits and sending didChange as an
// editor does, or refuses them.
type liveEditor struct {
	t      *testing.T
	c      *harness.Client
	mu     sync.Mutex
	docs   map[string]string // uri → text
	vers   map[string]int
	refuse string // non-empty: answer applied:false with this reason
	asked  []json.RawMessage
	other  []string // other server→client requests seen
}

func (e *liveEditor) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != "workspace/applyEdit" {
		e.mu.Lock()
		e.other = append(e.other, method)
		e.mu.Unlock()
		return nil, fmt.Errorf("a5l editor: no handler for %s", method)
	}
	e.mu.Lock()
	e.asked = append(e.asked, params)
	refuse := e.refuse
	e.mu.Unlock()
	if refuse != "" {
		return map[string]any{"applied": false, "failureReason": refuse}, nil
	}
	var p struct {
		Edit struct {
			DocumentChanges []struct {
				TextDocument struct {
					URI     string `json:"uri"`
					Version int    `json:"version"`
				} `json:"textDocument"`
				Edits []liveTextEdit `json:"edits"`
			} `json:"documentChanges"`
		} `json:"edit"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return map[string]any{"applied": false, "failureReason": err.Error()}, nil
	}
	for _, dc := range p.Edit.DocumentChanges {
		e.mu.Lock()
		text, ok := e.docs[dc.TextDocument.URI]
		ver := e.vers[dc.TextDocument.URI]
		e.mu.Unlock()
		if !ok || ver != dc.TextDocument.Version {
			return map[string]any{"applied": false, "failureReason": fmt.Sprintf("version %d, editor has %d (open %v)", dc.TextDocument.Version, ver, ok)}, nil
		}
		newText, err := liveApply(text, dc.Edits)
		if err != nil {
			return map[string]any{"applied": false, "failureReason": err.Error()}, nil
		}
		e.change(ctx, dc.TextDocument.URI, newText)
	}
	return map[string]any{"applied": true}, nil
}

func (e *liveEditor) open(ctx context.Context, uri, text string) {
	e.mu.Lock()
	e.docs[uri] = text
	e.vers[uri] = 1
	e.mu.Unlock()
	if err := e.c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "plaintext", "version": 1, "text": text}}); err != nil {
		e.t.Fatal(err)
	}
}

// change replaces the whole text and sends didChange.
func (e *liveEditor) change(ctx context.Context, uri, text string) {
	e.mu.Lock()
	e.docs[uri] = text
	e.vers[uri]++
	v := e.vers[uri]
	e.mu.Unlock()
	if err := e.c.Conn.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": v},
		"contentChanges": []any{map[string]any{"text": text}},
	}); err != nil {
		e.t.Error(err)
	}
}

func (e *liveEditor) close(ctx context.Context, uri string) {
	e.mu.Lock()
	delete(e.docs, uri)
	e.mu.Unlock()
	if err := e.c.Conn.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *liveEditor) text(uri string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.docs[uri]
}

type livePos struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type liveTextEdit struct {
	Range struct {
		Start livePos `json:"start"`
		End   livePos `json:"end"`
	} `json:"range"`
	NewText string `json:"newText"`
}

// liveApply applies LSP TextEdits (ASCII text: UTF-16 units are bytes),
// all ranges in the original text.
func liveApply(text string, edits []liveTextEdit) (string, error) {
	offset := func(p livePos) (int, error) {
		off := 0
		for l := 0; l < p.Line; l++ {
			i := strings.IndexByte(text[off:], '\n')
			if i < 0 {
				return 0, fmt.Errorf("line %d past end", p.Line)
			}
			off += i + 1
		}
		if off+p.Character > len(text) {
			return 0, fmt.Errorf("character %d past end", p.Character)
		}
		return off + p.Character, nil
	}
	type span struct {
		s, e int
		nt   string
	}
	var spans []span
	for _, ed := range edits {
		s, err := offset(ed.Range.Start)
		if err != nil {
			return "", err
		}
		en, err := offset(ed.Range.End)
		if err != nil {
			return "", err
		}
		spans = append(spans, span{s, en, ed.NewText})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].s > spans[j].s })
	for _, sp := range spans {
		text = text[:sp.s] + sp.nt + text[sp.e:]
	}
	return text, nil
}

func TestLiveTextSyncWithApplyEdit(t *testing.T) {
	t.Parallel()
	disk := "line one\nline two\nline three\n"
	ws := resolvedWorkspace(t, map[string]string{"doc.txt": disk})
	path := filepath.Join(ws, "doc.txt")
	uri := fileURI(path)
	c := harness.Start(t, harness.Options{Root: ws})
	ed := &liveEditor{t: t, c: c, docs: map[string]string{}, vers: map[string]int{}}
	c.OnRequest = ed.handle
	ctx := testCtx(t, liveCallTimeout)
	c.Initialize(ctx, map[string]any{
		"rootUri":               fileURI(ws),
		"initializationOptions": bypassOptions(),
		"capabilities":          map[string]any{"experimental": map[string]any{"agentls": map[string]any{"applyEdit": true}}},
	})

	ed.open(ctx, uri, "line one\nline two UNSAVED\nline three\n")
	r := c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"})
	t.Logf("read of open document: %s", r.Text())
	wantContains(t, "read of open document", r.Text(), "line two UNSAVED", "unsaved text from the editor")
	if v, _ := r.Details["editorVersion"].(float64); v != 1 {
		t.Errorf("details.editorVersion = %v, want 1", r.Details["editorVersion"])
	}
	// grep sees the disk.
	if r := c.CallTool(ctx, "grep", map[string]any{"pattern": "UNSAVED"}); strings.Contains(r.Text(), "doc.txt:") {
		t.Errorf("grep saw the unsaved buffer, want the disk: %s", r.Text())
	}

	// Edit goes through workspace/applyEdit; disk untouched.
	r = c.CallTool(ctx, "edit", map[string]any{"path": "doc.txt", "edits": []any{map[string]any{"oldText": "line one", "newText": "line 1"}}})
	if r.IsError {
		t.Fatalf("edit of an open document with applyEdit: %s", r.Text())
	}
	ed.mu.Lock()
	asked := len(ed.asked)
	var first json.RawMessage
	if asked > 0 {
		first = ed.asked[0]
	}
	ed.mu.Unlock()
	if asked != 1 {
		t.Fatalf("workspace/applyEdit requests: %d, want 1", asked)
	}
	wantContains(t, "applyEdit params", string(first), `"documentChanges"`, `"changes"`, uri)
	t.Logf("edit result: %s\napplyEdit: %s", r.Text(), first)
	wantContains(t, "edit result", r.Text(), "in the editor")
	if r.Details["inEditor"] != true || r.Details["saved"] != false {
		t.Errorf("details.inEditor=%v saved=%v, want true/false", r.Details["inEditor"], r.Details["saved"])
	}
	if got := readFile(t, path); got != disk {
		t.Errorf("disk changed by an edit routed to the editor: %q", got)
	}
	if got := ed.text(uri); got != "line 1\nline two UNSAVED\nline three\n" {
		t.Errorf("editor document after applyEdit: %q", got)
	}
	r = c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"})
	wantContains(t, "read after applyEdit", r.Text(), "line 1", "line two UNSAVED")

	// The next edit follows the document (stamp refreshed by the didChange).
	r = c.CallTool(ctx, "edit", map[string]any{"path": "doc.txt", "edits": []any{map[string]any{"oldText": "line three", "newText": "line 3"}}})
	if r.IsError {
		t.Errorf("second edit after the editor applied the first: %s", r.Text())
	} else if got := ed.text(uri); got != "line 1\nline two UNSAVED\nline 3\n" {
		t.Errorf("editor document after second applyEdit: %q", got)
	}

	// applied:false → isError with the editor's reason; disk and document untouched.
	ed.mu.Lock()
	ed.refuse = "a5l: the user undid it"
	ed.mu.Unlock()
	before := ed.text(uri)
	c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"})
	r = c.CallTool(ctx, "edit", map[string]any{"path": "doc.txt", "edits": []any{map[string]any{"oldText": "UNSAVED", "newText": "REFUSED"}}})
	if !r.IsError {
		t.Errorf("applied:false did not make the edit an isError: %s", r.Text())
	}
	t.Logf("applied:false: %s", r.Text())
	wantContains(t, "applied:false result", r.Text(), "a5l: the user undid it")
	if got := readFile(t, path); got != disk {
		t.Errorf("disk written after applied:false: %q", got)
	}
	if got := ed.text(uri); got != before {
		t.Errorf("document changed after applied:false: %q", got)
	}

	// didClose → read sees the disk again, without the note.
	ed.close(ctx, uri)
	r = c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"})
	wantContains(t, "read after didClose", r.Text(), "line one", "line two\n")
	wantLacks(t, "read after didClose", r.Text(), "UNSAVED", "unsaved text", "line 1")
	if _, ok := r.Details["editorVersion"]; ok {
		t.Errorf("details.editorVersion present after didClose: %v", r.Details["editorVersion"])
	}
	// ...and an edit after didClose changes the disk, without asking the editor.
	ed.mu.Lock()
	nAsked := len(ed.asked)
	ed.mu.Unlock()
	r = c.CallTool(ctx, "edit", map[string]any{"path": "doc.txt", "edits": []any{map[string]any{"oldText": "line two", "newText": "line 2"}}})
	if r.IsError {
		t.Errorf("edit after didClose: %s", r.Text())
	}
	if got := readFile(t, path); got != "line one\nline 2\nline three\n" {
		t.Errorf("disk after edit of a closed document: %q", got)
	}
	ed.mu.Lock()
	if len(ed.asked) != nAsked {
		t.Errorf("workspace/applyEdit sent for a closed document")
	}
	ed.mu.Unlock()
}

func TestLiveTextSyncWithoutApplyEdit(t *testing.T) {
	t.Parallel()
	disk := "alpha\nbeta\n"
	ws := resolvedWorkspace(t, map[string]string{"dirty.txt": disk, "clean.txt": "gamma\n"})
	c := harness.Start(t, harness.Options{Root: ws})
	ed := &liveEditor{t: t, c: c, docs: map[string]string{}, vers: map[string]int{}}
	c.OnRequest = ed.handle
	ctx := testCtx(t, liveCallTimeout)
	c.Initialize(ctx, map[string]any{"rootUri": fileURI(ws), "initializationOptions": bypassOptions()})

	dirty := fileURI(filepath.Join(ws, "dirty.txt"))
	clean := fileURI(filepath.Join(ws, "clean.txt"))
	ed.open(ctx, dirty, "alpha\nbeta typed\n")
	ed.open(ctx, clean, "gamma\n")

	r := c.CallTool(ctx, "read", map[string]any{"path": "dirty.txt"})
	wantContains(t, "read of dirty document", r.Text(), "beta typed", "unsaved text from the editor")
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"edit", map[string]any{"path": "dirty.txt", "edits": []any{map[string]any{"oldText": "alpha", "newText": "ALPHA"}}}},
		{"write", map[string]any{"path": "dirty.txt", "content": "replaced\n"}},
	} {
		r := c.CallTool(ctx, tc.tool, tc.args)
		if !r.IsError {
			t.Errorf("%s of an open document with unsaved changes, client without applyEdit, was not refused: %s", tc.tool, r.Text())
		}
		t.Logf("%s refusal: %s", tc.tool, r.Text())
		wantContains(t, tc.tool+" refusal", strings.ToLower(r.Text()), "save", "revert")
		if got := readFile(t, filepath.Join(ws, "dirty.txt")); got != disk {
			t.Errorf("%s wrote the disk under an unsaved document: %q", tc.tool, got)
		}
	}

	// An open document equal to the disk is edited on disk as usual.
	c.CallTool(ctx, "read", map[string]any{"path": "clean.txt"})
	r = c.CallTool(ctx, "edit", map[string]any{"path": "clean.txt", "edits": []any{map[string]any{"oldText": "gamma", "newText": "GAMMA"}}})
	if r.IsError {
		t.Errorf("edit of an open document equal to the disk: %s", r.Text())
	}
	if got := readFile(t, filepath.Join(ws, "clean.txt")); got != "GAMMA\n" {
		t.Errorf("clean.txt on disk: %q", got)
	}

	// Saving (the buffer now equals the disk) then lets edit proceed.
	writeFile(t, filepath.Join(ws, "dirty.txt"), "alpha\nbeta typed\n")
	c.Conn.Notify(ctx, "textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": dirty}})
	c.CallTool(ctx, "read", map[string]any{"path": "dirty.txt"})
	r = c.CallTool(ctx, "edit", map[string]any{"path": "dirty.txt", "edits": []any{map[string]any{"oldText": "alpha", "newText": "ALPHA"}}})
	if r.IsError {
		t.Errorf("edit after the document was saved: %s", r.Text())
	}
	if got := readFile(t, filepath.Join(ws, "dirty.txt")); got != "ALPHA\nbeta typed\n" {
		t.Errorf("dirty.txt on disk after save+edit: %q", got)
	}

	ed.mu.Lock()
	defer ed.mu.Unlock()
	if len(ed.asked) != 0 || len(ed.other) != 0 {
		t.Errorf("server sent requests to a client without capabilities: applyEdit=%d other=%v", len(ed.asked), ed.other)
	}
}

// The user typing after the model's read makes the next edit fail.
func TestLiveTextSyncTypingAfterReadIsStale(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"t.txt": "one\ntwo\n"})
	path := filepath.Join(ws, "t.txt")
	uri := fileURI(path)
	c := harness.Start(t, harness.Options{Root: ws})
	ed := &liveEditor{t: t, c: c, docs: map[string]string{}, vers: map[string]int{}}
	c.OnRequest = ed.handle
	ctx := testCtx(t, liveCallTimeout)
	c.Initialize(ctx, map[string]any{
		"rootUri":               fileURI(ws),
		"initializationOptions": bypassOptions(),
		"capabilities":          map[string]any{"experimental": map[string]any{"agentls": map[string]any{"applyEdit": true}}},
	})
	ed.open(ctx, uri, "one\ntwo\n")
	c.CallTool(ctx, "read", map[string]any{"path": "t.txt"})
	ed.change(ctx, uri, "one\ntwo\nthree typed\n")
	r := c.CallTool(ctx, "edit", map[string]any{"path": "t.txt", "edits": []any{map[string]any{"oldText": "one", "newText": "ONE"}}})
	if !r.IsError {
		t.Errorf("edit after the user typed since the read was not refused: %s", r.Text())
	}
	wantContains(t, "stale edit", r.Text(), "changed in the editor since you read it")
	if got := ed.text(uri); got != "one\ntwo\nthree typed\n" {
		t.Errorf("document changed by a refused edit: %q", got)
	}
	if got := readFile(t, path); got != "one\ntwo\n" {
		t.Errorf("disk changed: %q", got)
	}
}

// An editor that saves: the edit found the document clean, the editor
// applies it and saves, so the result says "in the editor (saved)".
func TestLiveTextSyncApplyEditSavedAndWrite(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"s.txt": "red\ngreen\n"})
	path := filepath.Join(ws, "s.txt")
	uri := fileURI(path)
	c := harness.Start(t, harness.Options{Root: ws})
	ed := &liveEditor{t: t, c: c, docs: map[string]string{}, vers: map[string]int{}}
	ctx := testCtx(t, liveCallTimeout)
	c.OnRequest = func(rctx context.Context, method string, params json.RawMessage) (any, error) {
		res, err := ed.handle(rctx, method, params)
		if m, ok := res.(map[string]any); ok && m["applied"] == true {
			// Save, as the bundled clients do for a document the edit found clean.
			if err := os.WriteFile(path, []byte(ed.text(uri)), 0o644); err != nil {
				return nil, err
			}
			c.Conn.Notify(rctx, "textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}})
		}
		return res, err
	}
	c.Initialize(ctx, map[string]any{
		"rootUri":               fileURI(ws),
		"initializationOptions": bypassOptions(),
		"capabilities":          map[string]any{"experimental": map[string]any{"agentls": map[string]any{"applyEdit": true}}},
	})
	ed.open(ctx, uri, "red\ngreen\n")
	c.CallTool(ctx, "read", map[string]any{"path": "s.txt"})
	r := c.CallTool(ctx, "edit", map[string]any{"path": "s.txt", "edits": []any{map[string]any{"oldText": "green", "newText": "blue"}}})
	t.Logf("saved edit: %s", r.Text())
	if r.IsError {
		t.Fatalf("edit: %s", r.Text())
	}
	wantContains(t, "saved edit result", r.Text(), "in the editor (saved)")
	if r.Details["inEditor"] != true || r.Details["saved"] != true {
		t.Errorf("details.inEditor=%v saved=%v, want true/true", r.Details["inEditor"], r.Details["saved"])
	}
	if got := readFile(t, path); got != "red\nblue\n" {
		t.Errorf("disk after saved edit: %q", got)
	}

	// write of an open document also goes through the editor.
	ed.mu.Lock()
	n := len(ed.asked)
	ed.mu.Unlock()
	r = c.CallTool(ctx, "write", map[string]any{"path": "s.txt", "content": "all new\n"})
	t.Logf("write: %s", r.Text())
	if r.IsError {
		t.Fatalf("write of an open document: %s", r.Text())
	}
	ed.mu.Lock()
	if len(ed.asked) != n+1 {
		t.Errorf("write of an open document sent %d workspace/applyEdit, want 1", len(ed.asked)-n)
	}
	ed.mu.Unlock()
	wantContains(t, "write result", r.Text(), "in the editor")
	if got := ed.text(uri); got != "all new\n" {
		t.Errorf("document after write: %q", got)
	}
}

// didChange: incremental ranges in UTF-16 code units; a change that cannot
// be applied drops the document (warning) and the disk is used again.
func TestLiveTextSyncIncrementalChanges(t *testing.T) {
	t.Parallel()
	disk := "héllo 😀 world\nsecond\n"
	ws := resolvedWorkspace(t, map[string]string{"u.txt": disk})
	uri := fileURI(filepath.Join(ws, "u.txt"))
	c := liveStart(t, ws, liveOpts{init: bypassOptions()})
	ctx := testCtx(t, liveCallTimeout)
	notify := func(method string, params map[string]any) {
		t.Helper()
		if err := c.Conn.Notify(ctx, method, params); err != nil {
			t.Fatal(err)
		}
	}
	rng := func(l1, c1, l2, c2 int) map[string]any {
		return map[string]any{"start": map[string]any{"line": l1, "character": c1}, "end": map[string]any{"line": l2, "character": c2}}
	}
	notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "plaintext", "version": 1, "text": disk}})
	// "world" starts at UTF-16 column 9 (h é l l o ␠ = 6, 😀 = 2 units, ␠ = 1).
	notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"range": rng(0, 9, 0, 14), "text": "there"}, map[string]any{"range": rng(1, 0, 1, 6), "text": "2nd"}},
	})
	r := c.CallTool(ctx, "read", map[string]any{"path": "u.txt"})
	wantContains(t, "read after incremental changes", r.Text(), "héllo 😀 there", "2nd", "unsaved text from the editor")
	if v, _ := r.Details["editorVersion"].(float64); v != 2 {
		t.Errorf("details.editorVersion = %v, want 2", r.Details["editorVersion"])
	}

	// A range outside the text: the document is dropped with a warning.
	notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 3},
		"contentChanges": []any{map[string]any{"range": rng(40, 0, 40, 1), "text": "x"}},
	})
	r = c.CallTool(ctx, "read", map[string]any{"path": "u.txt"})
	wantContains(t, "read after a bad didChange (disk)", r.Text(), "héllo 😀 world", "second")
	wantLacks(t, "read after a bad didChange (disk)", r.Text(), "there", "unsaved text")
	if _, ok := liveWaitLog(c, "u.txt"); !ok {
		t.Errorf("no window/logMessage for an unappliable didChange; logs: %q", logMessages(c, 0))
	}
}

// Extension tools from the user's directory, and the workspace's
// definition winning over the user's (docs/tools.md).
func TestLiveExtensionUserDirAndPrecedence(t *testing.T) {
	t.Parallel()
	xdg := t.TempDir()
	def := func(out string) string {
		return liveToolJSON(t, map[string]any{
			"name": "a5l_who", "description": "Says where it was defined.",
			"inputSchema": map[string]any{"type": "object"}, "command": "echo " + out, "readOnly": true, "deferred": false,
		})
	}
	writeFile(t, filepath.Join(xdg, "agentls", "tools", "who.json"), def("from-user"))
	ws := resolvedWorkspace(t, nil)
	if err := os.MkdirAll(filepath.Join(ws, ".agentls", "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := liveStart(t, ws, liveOpts{init: bypassOptions(), env: []string{"XDG_CONFIG_HOME=" + xdg}})
	ctx := testCtx(t, liveCallTimeout)
	if r := c.CallTool(ctx, "a5l_who", map[string]any{}); r.IsError || !strings.Contains(r.Text(), "from-user") {
		t.Fatalf("user-directory tool: isError=%v %s", r.IsError, r.Text())
	}
	writeFile(t, filepath.Join(ws, ".agentls", "tools", "who.json"), def("from-workspace"))
	var r harness.Result
	if liveUntil(t, func() bool {
		r = c.CallTool(ctx, "a5l_who", map[string]any{})
		return strings.Contains(r.Text(), "from-workspace")
	}) == 0 {
		t.Errorf("workspace definition did not win over the user's: %s", r.Text())
	}
	// A new tool in the user's directory while running.
	n0 := liveCount(c, "tools/listChanged")
	writeFile(t, filepath.Join(xdg, "agentls", "tools", "later.json"), liveToolJSON(t, map[string]any{
		"name": "a5l_later", "description": "Added later by the user.", "inputSchema": map[string]any{"type": "object"},
		"command": "echo later-ok", "readOnly": true, "deferred": false,
	}))
	if !liveWaitCount(c, "tools/listChanged", n0) {
		t.Errorf("no tools/listChanged after adding a tool in the user's directory")
	}
	if liveUntil(t, func() bool {
		return strings.Contains(c.CallTool(ctx, "a5l_later", map[string]any{}).Text(), "later-ok")
	}) == 0 {
		t.Errorf("tool added to the user's directory never became callable")
	}
}

// docs/protocol.md: after didChangeWorkspaceFolders, extension tools are read
// again from the new folders.
func TestLiveWorkspaceFoldersBringTheirTools(t *testing.T) {
	t.Parallel()
	a := resolvedWorkspace(t, nil)
	b := resolvedWorkspace(t, map[string]string{".agentls/tools/bt.json": liveToolJSON(t, map[string]any{
		"name": "a5l_bfolder", "description": "Tool of folder b.", "inputSchema": map[string]any{"type": "object"},
		"command": "echo b-tool-ok", "readOnly": true, "deferred": false,
	})})
	c := liveStart(t, a, liveOpts{init: bypassOptions()})
	ctx := testCtx(t, liveCallTimeout)
	if _, ok := liveList(t, c, true)["a5l_bfolder"]; ok {
		t.Fatal("folder b's tool registered before b was added")
	}
	folder := map[string]any{"uri": fileURI(b), "name": "b"}
	n0 := liveCount(c, "tools/listChanged")
	c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{folder}, "removed": []any{}}})
	if !liveWaitCount(c, "tools/listChanged", n0) {
		t.Errorf("no tools/listChanged after adding a folder with an extension tool")
	}
	if liveUntil(t, func() bool { _, ok := liveList(t, c, false)["a5l_bfolder"]; return ok }) == 0 {
		t.Fatalf("folder b's tool not listed after adding b: %v", liveNames(liveList(t, c, true)))
	}
	if r := c.CallTool(ctx, "a5l_bfolder", map[string]any{}); r.IsError || !strings.Contains(r.Text(), "b-tool-ok") {
		t.Errorf("folder b's tool: %s", r.Text())
	}
	n1 := liveCount(c, "tools/listChanged")
	c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{}, "removed": []any{folder}}})
	if !liveWaitCount(c, "tools/listChanged", n1) {
		t.Errorf("no tools/listChanged after removing the folder")
	}
	if liveUntil(t, func() bool { _, ok := liveList(t, c, true)["a5l_bfolder"]; return !ok }) == 0 {
		t.Errorf("folder b's tool still registered after b was removed")
	}
	if r := c.CallTool(ctx, "a5l_bfolder", map[string]any{}); !r.IsError {
		t.Errorf("folder b's tool callable after b was removed: %s", r.Text())
	}
}

// docs/tools.md: "the non-core tools registered last are deferred until
// exactly deferThreshold are active (the earlier ones stay listed)".
func TestLiveDeferThresholdKeepsExactlyThreshold(t *testing.T) {
	t.Parallel()
	mk := func(name string) string {
		return liveToolJSON(t, map[string]any{"name": name, "description": "Tool " + name + ".",
			"inputSchema": map[string]any{"type": "object"}, "command": "echo " + name, "readOnly": true, "deferred": false})
	}
	ws := resolvedWorkspace(t, map[string]string{
		".agentls/tools/one.json":   mk("a5l_one"),
		".agentls/tools/two.json":   mk("a5l_two"),
		".agentls/tools/three.json": mk("a5l_three"),
	})
	ref := liveList(t, liveStart(t, ws, liveOpts{init: bypassOptions()}), false)
	for _, n := range []string{"a5l_one", "a5l_two", "a5l_three"} {
		if _, ok := ref[n]; !ok {
			t.Fatalf("default threshold: %s not active: %v", n, liveNames(ref))
		}
	}
	threshold := len(ref) - 2 // room for exactly one of the three
	c := liveStart(t, ws, liveOpts{init: map[string]any{"mode": "bypass", "deferThreshold": threshold}})
	active := liveList(t, c, false)
	if len(active) != threshold {
		t.Errorf("deferThreshold %d: %d tools active, want exactly %d: %v", threshold, len(active), threshold, liveNames(active))
	}
	n := 0
	for _, name := range []string{"a5l_one", "a5l_two", "a5l_three"} {
		if _, ok := active[name]; ok {
			n++
		}
	}
	if n != 1 {
		t.Errorf("deferThreshold %d: %d of the 3 extension tools active, want 1: %v", threshold, n, liveNames(active))
	}
}

// A mode set in .agentls/settings.json live applies from the next call; a
// workspace file cannot select bypass (docs/tools.md "Permissions").
func TestLiveSettingsModeChange(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, nil)
	c := liveStart(t, ws, liveOpts{}) // default mode, no confirm capability
	ctx := testCtx(t, liveCallTimeout)
	r := c.CallTool(ctx, "write", map[string]any{"path": "w1.txt", "content": "one\n"})
	if !r.IsError {
		t.Fatalf("default mode without confirm: write was not refused: %s", r.Text())
	}
	writeFile(t, filepath.Join(ws, ".agentls", "settings.json"), `{"mode": "acceptEdits"}`)
	if liveUntil(t, func() bool {
		return !c.CallTool(ctx, "write", map[string]any{"path": "w1.txt", "content": "one\n"}).IsError
	}) == 0 {
		t.Fatalf("mode acceptEdits from .agentls/settings.json never applied")
	}
	if got := readFile(t, filepath.Join(ws, "w1.txt")); got != "one\n" {
		t.Errorf("w1.txt: %q", got)
	}
	// bypass from a workspace file: not honoured; a non-read-only command
	// still needs approval (here: an isError, as there is no confirm).
	writeFile(t, filepath.Join(ws, ".agentls", "settings.json"), `{"mode": "bypass", "permissions": {"deny": ["Read(marker.txt)"]}}`)
	writeFile(t, filepath.Join(ws, "marker.txt"), "m\n")
	if liveUntil(t, func() bool { return c.CallTool(ctx, "read", map[string]any{"path": "marker.txt"}).IsError }) == 0 {
		t.Fatalf("settings.json with bypass never re-read")
	}
	r = c.CallTool(ctx, "bash", map[string]any{"command": "touch pwned_by_bypass"})
	if !r.IsError {
		t.Errorf("a workspace settings file selected bypass: bash ran: %s", r.Text())
	}
	if _, err := os.Stat(filepath.Join(ws, "pwned_by_bypass")); err == nil {
		t.Errorf("bash ran under a workspace-selected bypass")
	}
}
