package e2e

// Contract tests of extension tools (.agentls/tools/*.json),
// written from docs/tools.md ("Extension tools") only.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// extTool is one extension tool definition: name, command, string
// properties (or full property schemas) and extra fields.
func extTool(name, command string, props map[string]any, required []string, extra map[string]any) map[string]any {
	if props == nil {
		props = map[string]any{}
	}
	schema := map[string]any{"type": "object", "properties": props}
	if required != nil {
		schema["required"] = required
	}
	def := map[string]any{
		"name":        name,
		"description": "Audit tool " + name + ".",
		"inputSchema": schema,
		"command":     command,
		"deferred":    false,
		"timeout":     30,
	}
	for k, v := range extra {
		def[k] = v
	}
	return def
}

var extStr = map[string]any{"type": "string"}

// extWS makes a workspace whose .agentls/tools holds defs (file base name →
// definition object, or a raw string written as is) and files.
func extWS(t *testing.T, defs map[string]any, files map[string]string) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, def := range defs {
		body, ok := def.(string)
		if !ok {
			b, err := json.Marshal(def)
			if err != nil {
				t.Fatal(err)
			}
			body = string(b)
		}
		extWrite(t, filepath.Join(ws, ".agentls", "tools", name), body)
	}
	for name, body := range files {
		extWrite(t, filepath.Join(ws, filepath.FromSlash(name)), body)
	}
	return ws
}

func extWrite(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

type extOpts struct {
	init    map[string]any // initializationOptions
	confirm func(params map[string]any) map[string]any
	env     []string
}

// extStart starts agentls on ws and initializes it.
func extStart(t *testing.T, ws string, o extOpts) (*harness.Client, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	t.Cleanup(cancel)
	c := harness.Start(t, harness.Options{Root: ws, Env: o.env})
	caps := map[string]any{}
	if o.confirm != nil {
		answer := o.confirm
		c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			var p map[string]any
			_ = json.Unmarshal(params, &p)
			if method == "tools/confirm" {
				return answer(p), nil
			}
			return nil, fmt.Errorf("a11x: unexpected request %s", method)
		}
		caps = map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}}
	}
	params := map[string]any{"capabilities": caps}
	if o.init != nil {
		params["initializationOptions"] = o.init
	}
	c.Initialize(ctx, params)
	return c, ctx
}

func extBypass() extOpts { return extOpts{init: map[string]any{"mode": "bypass"}} }

// extList returns tools/list by name.
func extList(t *testing.T, ctx context.Context, c *harness.Client, params map[string]any) map[string]map[string]any {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	var res struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", params, &res); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]map[string]any{}
	for _, tl := range res.Tools {
		name, _ := tl["name"].(string)
		if fn, ok := tl["function"].(map[string]any); ok {
			name, _ = fn["name"].(string)
		}
		out[name] = tl
	}
	return out
}

// extLogs joins every window/logMessage message received so far.
func extLogs(c *harness.Client) string {
	var b strings.Builder
	for _, n := range c.Notes("window/logMessage") {
		var p struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(n.Params, &p)
		b.WriteString(p.Message)
		b.WriteString("\n")
	}
	return b.String()
}

// extProcs lists pids whose command line contains marker.
func extProcs(marker string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(string(b), marker) {
			stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if strings.Contains(string(stat), ") Z ") { // zombie: already dead
				continue
			}
			pids = append(pids, pid)
		}
	}
	return pids
}

// extLinux skips tests that scan /proc elsewhere.
func extLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("scans /proc")
	}
}

// extWait polls cond for up to d.
func extWait(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func extContains(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s: want %q in:\n%s", what, w, text)
		}
	}
}

func extJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func extExists(p string) bool { _, err := os.Lstat(p); return err == nil }

// extMarker is a unique, sleep-compatible number (sleep 100.<digits>).
func extMarker() string {
	return fmt.Sprintf("100.%09d", rand.IntN(1e9))
}

// ---------------------------------------------------------------------------
// Listing, annotations, deferral

func TestExtensionListedWithAnnotations(t *testing.T) {
	t.Parallel()
	ws := extWS(t, map[string]any{
		"ro.json": extTool("a11x_ro", "cat README.md", nil, nil, map[string]any{"readOnly": true}),
		// readOnly claimed, but the shell analysis disagrees: not read-only.
		"liar.json": extTool("a11x_liar", "touch made-by-liar", nil, nil, map[string]any{"readOnly": true}),
		"rm.json":   extTool("a11x_rm", "true", nil, nil, map[string]any{"destructive": true}),
		// destructive by shell analysis even though the file says false.
		"rm2.json":   extTool("a11x_rm2", "rm -f {{f}}", map[string]any{"f": extStr}, nil, map[string]any{"destructive": false}),
		"plain.json": extTool("a11x_plain", "touch x", nil, nil, nil),
		"def.json": func() map[string]any {
			d := extTool("a11x_def", "true", nil, nil, nil)
			delete(d, "deferred") // default is deferred
			return d
		}(),
	}, map[string]string{"README.md": "hi\n"})
	c, ctx := extStart(t, ws, extBypass())
	list := extList(t, ctx, c, nil)
	hints := func(name string) (ro, destr bool) {
		tl, ok := list[name]
		if !ok {
			t.Fatalf("%s not in tools/list: %v", name, extJSON(list))
		}
		ann, _ := tl["annotations"].(map[string]any)
		ro, _ = ann["readOnlyHint"].(bool)
		destr, _ = ann["destructiveHint"].(bool)
		return
	}
	cases := []struct {
		name      string
		ro, destr bool
	}{
		{"a11x_ro", true, false},
		{"a11x_liar", false, false},
		{"a11x_rm", false, true},
		{"a11x_rm2", false, true},
		{"a11x_plain", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ro, destr := hints(tc.name)
			if ro != tc.ro || destr != tc.destr {
				t.Errorf("%s: readOnlyHint=%v destructiveHint=%v, want %v %v (%s)", tc.name, ro, destr, tc.ro, tc.destr, extJSON(list[tc.name]))
			}
		})
	}
	t.Run("schema and description as in the file", func(t *testing.T) {
		tl := list["a11x_rm2"]
		if tl["description"] == nil || !strings.Contains(fmt.Sprint(tl["description"]), "Audit tool a11x_rm2.") {
			t.Errorf("description = %v", tl["description"])
		}
		s, _ := tl["inputSchema"].(map[string]any)
		props, _ := s["properties"].(map[string]any)
		if s["type"] != "object" || props["f"] == nil {
			t.Errorf("inputSchema = %s", extJSON(s))
		}
	})
	t.Run("deferred by default, listed with includeDeferred", func(t *testing.T) {
		if _, ok := list["a11x_def"]; ok {
			t.Errorf("deferred tool a11x_def is in the default tools/list")
		}
		all := extList(t, ctx, c, map[string]any{"includeDeferred": true})
		tl, ok := all["a11x_def"]
		if !ok {
			t.Fatalf("a11x_def missing with includeDeferred")
		}
		meta, _ := tl["_meta"].(map[string]any)
		if meta["deferred"] != true {
			t.Errorf("_meta.deferred = %v, want true", meta["deferred"])
		}
		if m, _ := all["a11x_ro"]["_meta"].(map[string]any); m["deferred"] == true {
			t.Errorf("a11x_ro (deferred:false) has _meta.deferred true")
		}
	})
	t.Run("openai and anthropic formats carry the schema", func(t *testing.T) {
		oa := extList(t, ctx, c, map[string]any{"format": "openai"})
		fn, _ := oa["a11x_rm2"]["function"].(map[string]any)
		if p, _ := fn["parameters"].(map[string]any); p["type"] != "object" {
			t.Errorf("openai entry = %s", extJSON(oa["a11x_rm2"]))
		}
		an := extList(t, ctx, c, map[string]any{"format": "anthropic"})
		if p, _ := an["a11x_rm2"]["input_schema"].(map[string]any); p["type"] != "object" {
			t.Errorf("anthropic entry = %s", extJSON(an["a11x_rm2"]))
		}
	})
}

func TestExtensionDeferredActivation(t *testing.T) {
	t.Parallel()
	mk := func(name, desc string) map[string]any {
		d := extTool(name, "printf 'ran %s' "+name, nil, nil, nil)
		d["deferred"] = true
		d["description"] = desc
		return d
	}
	ws := extWS(t, map[string]any{
		"z.json": mk("a11x_zebra_report", "Summarize zebra crossings in the traffic logs."),
		"d.json": mk("a11x_direct", "Something unrelated to animals."),
	}, nil)
	c, ctx := extStart(t, ws, extBypass())
	if _, ok := extList(t, ctx, c, nil)["a11x_zebra_report"]; ok {
		t.Fatal("deferred tool listed before tool_search")
	}
	t.Run("tool_search finds and activates", func(t *testing.T) {
		before := len(c.Notes("tools/listChanged"))
		r := c.CallTool(ctx, "tool_search", map[string]any{"query": "zebra crossings"})
		if r.IsError {
			t.Fatalf("tool_search: %s", r.Text())
		}
		extContains(t, "tool_search result", r.Text(), "a11x_zebra_report")
		if !extWait(5*time.Second, func() bool { return len(c.Notes("tools/listChanged")) > before }) {
			t.Errorf("no tools/listChanged after tool_search activated a tool")
		}
		if _, ok := extList(t, ctx, c, nil)["a11x_zebra_report"]; !ok {
			t.Errorf("a11x_zebra_report not in tools/list after tool_search")
		}
		r = c.CallTool(ctx, "a11x_zebra_report", map[string]any{})
		if r.IsError || r.Text() != "ran a11x_zebra_report" {
			t.Errorf("call after activation: isError=%v %q", r.IsError, r.Text())
		}
	})
	t.Run("calling a deferred tool by name works and activates it", func(t *testing.T) {
		before := len(c.Notes("tools/listChanged"))
		r := c.CallTool(ctx, "a11x_direct", map[string]any{})
		if r.IsError || r.Text() != "ran a11x_direct" {
			t.Fatalf("direct call: isError=%v %q", r.IsError, r.Text())
		}
		if !extWait(5*time.Second, func() bool { return len(c.Notes("tools/listChanged")) > before }) {
			t.Errorf("no tools/listChanged after a deferred tool was called by name")
		}
		if _, ok := extList(t, ctx, c, nil)["a11x_direct"]; !ok {
			t.Errorf("a11x_direct not listed after being called")
		}
	})
}

// ---------------------------------------------------------------------------
// Argument validation

func TestExtensionArgumentValidation(t *testing.T) {
	t.Parallel()
	ws := extWS(t, map[string]any{
		"v.json": extTool("a11x_val", "printf '[%s]' {{pattern}} {{count}} {{kind}}", map[string]any{
			"pattern": map[string]any{"type": "string", "description": "Test name regexp."},
			"count":   map[string]any{"type": "integer"},
			"kind":    map[string]any{"type": "string", "enum": []any{"unit", "e2e"}},
		}, []string{"pattern"}, map[string]any{"readOnly": true}),
	}, nil)
	c, ctx := extStart(t, ws, extBypass())
	cases := []struct {
		name    string
		args    map[string]any
		isError bool
		wants   []string
		exact   string
	}{
		{"missing required names the field", map[string]any{}, true, []string{"pattern", "Usage: a11x_val"}, ""},
		{"wrong type string for integer", map[string]any{"pattern": "x", "count": "many"}, true, []string{"count", "Usage: a11x_val"}, ""},
		{"wrong type object for string", map[string]any{"pattern": map[string]any{"a": 1}}, true, []string{"pattern"}, ""},
		{"wrong type array for integer", map[string]any{"pattern": "x", "count": []any{1}}, true, []string{"count"}, ""},
		{"value outside enum", map[string]any{"pattern": "x", "kind": "smoke"}, true, []string{"kind"}, ""},
		{"numeric string is normalized", map[string]any{"pattern": "x", "count": "7"}, false, nil, "[x][7]"},
		{"unknown field is named, not an error", map[string]any{"pattern": "x", "bogus": 1}, false, []string{"[x]", "ignored `bogus`: not a field of this tool"}, ""},
		{"valid call", map[string]any{"pattern": "TestA", "count": 2, "kind": "e2e"}, false, nil, "[TestA][2][e2e]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "a11x_val", tc.args)
			if r.IsError != tc.isError {
				t.Fatalf("isError=%v, want %v: %s", r.IsError, tc.isError, r.Text())
			}
			extContains(t, tc.name, r.Text(), tc.wants...)
			if tc.exact != "" && r.Text() != tc.exact {
				t.Errorf("text = %q, want %q", r.Text(), tc.exact)
			}
		})
	}
	t.Run("dropped unknown field reported in details.normalized", func(t *testing.T) {
		r := c.CallTool(ctx, "a11x_val", map[string]any{"pattern": "x", "bogus": 1})
		if !strings.Contains(extJSON(r.Details["normalized"]), "bogus") {
			t.Errorf("details.normalized = %s, want it to name bogus", extJSON(r.Details["normalized"]))
		}
	})
}

// ---------------------------------------------------------------------------
// Placeholders

func TestExtensionPlaceholderQuoting(t *testing.T) {
	t.Parallel()
	ws := extWS(t, map[string]any{
		"e.json":  extTool("a11x_echo", "printf '[%s]' a {{v}} b", map[string]any{"v": extStr}, nil, map[string]any{"readOnly": true}),
		"e2.json": extTool("a11x_echo2", "printf '[%s]' {{v}}{{w}}", map[string]any{"v": extStr, "w": extStr}, nil, nil),
	}, map[string]string{"one.txt": "1", "two.txt": "2"})
	c, ctx := extStart(t, ws, extBypass())
	hostile := []struct{ name, v string }{
		{"command substitution", "$(touch pwned1)"},
		{"backticks", "`touch pwned2`"},
		{"semicolon", "; touch pwned3; rm -rf x"},
		{"and-and", "x && touch pwned4"},
		{"pipe", "x | touch pwned5"},
		{"single quote", "it's '$(touch pwned6)'"},
		{"double quote", `say "hi" "$(touch pwned7)"`},
		{"newline", "line1\ntouch pwned8\nline3"},
		{"leading dash", "-n"},
		{"leading dashes", "--help"},
		{"glob star", "*"},
		{"glob pattern", "*.txt"},
		{"question glob", "???.txt"},
		{"empty string", ""},
		{"variable", "$HOME ${PATH}"},
		{"tilde", "~"},
		{"brace expansion", "{a,b}"},
		{"redirect", "> pwned9"},
		{"backslash", `a\b\\c\`},
		{"spaces kept", "  two  spaces  "},
		{"tab", "a\tb"},
		{"history bang", "!!"},
		{"unicode", "naïve — ünïcødé"},
		{"ansi-c quote", "$'\\x41'"},
		{"process substitution", "<(touch pwned10)"},
		{"comment", "# not a comment"},
	}
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "a11x_echo", map[string]any{"v": tc.v})
			want := "[a][" + tc.v + "][b]"
			if r.IsError || r.Text() != want {
				t.Errorf("v=%q: isError=%v text=%q, want %q", tc.v, r.IsError, r.Text(), want)
			}
		})
	}
	t.Run("missing optional substitutes nothing", func(t *testing.T) {
		r := c.CallTool(ctx, "a11x_echo", map[string]any{})
		if r.IsError || r.Text() != "[a][b]" {
			t.Errorf("isError=%v text=%q, want [a][b]", r.IsError, r.Text())
		}
	})
	t.Run("adjacent placeholders", func(t *testing.T) {
		r := c.CallTool(ctx, "a11x_echo2", map[string]any{"v": "x y", "w": "$(touch pwned11)"})
		// Two adjacent quoted words concatenate into one shell word.
		if r.IsError || r.Text() != "[x y$(touch pwned11)]" {
			t.Errorf("isError=%v text=%q", r.IsError, r.Text())
		}
	})
	// Nothing executed: the workspace holds exactly what we put there.
	ents, err := os.ReadDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if got := strings.Join(names, ","); got != ".agentls,one.txt,two.txt" {
		t.Errorf("workspace after hostile values = %s, want .agentls,one.txt,two.txt (something executed)", got)
	}
}

func TestExtensionPlaceholderTypes(t *testing.T) {
	t.Parallel()
	ws := extWS(t, map[string]any{
		"t.json": extTool("a11x_types", "printf '[%s]' a {{n}} {{f}} {{b}} {{list}} z", map[string]any{
			"n":    map[string]any{"type": "integer"},
			"f":    map[string]any{"type": "number"},
			"b":    map[string]any{"type": "boolean"},
			"list": map[string]any{"type": "array", "items": extStr},
		}, nil, map[string]any{"readOnly": true}),
	}, nil)
	c, ctx := extStart(t, ws, extBypass())
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"integer as JSON text", map[string]any{"n": 42}, "[a][42][z]"},
		{"negative integer", map[string]any{"n": -3}, "[a][-3][z]"},
		{"number as JSON text", map[string]any{"f": 1.5}, "[a][1.5][z]"},
		{"true", map[string]any{"b": true}, "[a][true][z]"},
		{"false", map[string]any{"b": false}, "[a][false][z]"},
		{"array one word per element", map[string]any{"list": []any{"p q", "$(touch pwned)", "*"}}, "[a][p q][$(touch pwned)][*][z]"},
		{"empty array substitutes nothing", map[string]any{"list": []any{}}, "[a][z]"},
		{"all together", map[string]any{"n": 1, "f": 0.25, "b": true, "list": []any{"x"}}, "[a][1][0.25][true][x][z]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "a11x_types", tc.args)
			if r.IsError || r.Text() != tc.want {
				t.Errorf("isError=%v text=%q, want %q", r.IsError, r.Text(), tc.want)
			}
		})
	}
	if extExists(filepath.Join(ws, "pwned")) {
		t.Errorf("an array element was executed")
	}
}

// ---------------------------------------------------------------------------
// Bash machinery

func TestExtensionTimeoutKillsGroup(t *testing.T) {
	slow(t)
	t.Parallel()
	extLinux(t)
	marker := extMarker()
	ws := extWS(t, map[string]any{
		// A grandchild in the background plus a foreground sleep.
		"s.json": extTool("a11x_sleep", "echo started; (sleep "+marker+") & sleep "+marker+"; wait", nil, nil, map[string]any{"timeout": 1}),
	}, nil)
	c, ctx := extStart(t, ws, extBypass())
	start := time.Now()
	r := c.CallTool(ctx, "a11x_sleep", map[string]any{})
	took := time.Since(start)
	if took < 900*time.Millisecond || took > 6*time.Second {
		t.Errorf("timeout 1 took %v, want ~1 s (+ up to 2 s grace)", took)
	}
	if !r.IsError {
		t.Errorf("timed-out call is not isError: %s", r.Text())
	}
	extContains(t, "timeout result", r.Text(), "started", "Timed out after 1s")
	if !extWait(5*time.Second, func() bool { return len(extProcs(marker)) == 0 }) {
		t.Errorf("processes survived the timeout: %v", extProcs(marker))
	}
	t.Run("recovery hint fits an extension tool", func(t *testing.T) {
		// The model cannot raise an extension tool's timeout (it is fixed in the
		// file and is no argument), so "Raise timeout" misleads it.
		if strings.Contains(r.Text(), "Raise timeout") {
			t.Errorf("timeout notice tells the model to raise a timeout it cannot set: %q", r.Text())
		}
	})
}

func TestExtensionCancelKillsGroup(t *testing.T) {
	t.Parallel()
	extLinux(t)
	marker := extMarker()
	ws := extWS(t, map[string]any{
		"s.json": extTool("a11x_block", "sleep "+marker, nil, nil, nil),
	}, nil)
	c, ctx := extStart(t, ws, extBypass())
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.TryCallTool(cctx, "a11x_block", map[string]any{})
		done <- err
	}()
	if !extWait(10*time.Second, func() bool { return len(extProcs(marker)) > 0 }) {
		cancel()
		t.Fatal("the command never started")
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("cancelled call returned a result, want RequestCancelled")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled call did not return")
	}
	if !extWait(5*time.Second, func() bool { return len(extProcs(marker)) == 0 }) {
		t.Errorf("process survived cancellation: %v", extProcs(marker))
	}
}

func TestExtensionTimeoutBounds(t *testing.T) {
	t.Parallel()
	over := extTool("a11x_t601", "true", nil, nil, map[string]any{"timeout": 601})
	ok := extTool("a11x_t600", "true", nil, nil, map[string]any{"timeout": 600})
	ws := extWS(t, map[string]any{"over.json": over, "ok.json": ok}, nil)
	c, ctx := extStart(t, ws, extBypass())
	all := extList(t, ctx, c, map[string]any{"includeDeferred": true})
	if _, ok := all["a11x_t600"]; !ok {
		t.Errorf("timeout 600 (the maximum) rejected")
	}
	if _, ok := all["a11x_t601"]; ok {
		// Either skipped with a report or clamped is defensible; accepting it
		// silently as 601 is not. Probe: the tool must not claim 601 s.
		if strings.Contains(fmt.Sprint(all["a11x_t601"]["description"]), "601") {
			t.Errorf("timeout 601 accepted as is")
		}
	} else {
		extContains(t, "log", extLogs(c), "over.json")
	}
}

func TestExtensionOutputLikeBash(t *testing.T) {
	t.Parallel()
	long := "for i in $(seq 1 3000); do echo line$i; done; echo 'FAIL: TestBuried' >&2; seq 1 2000"
	ws := extWS(t, map[string]any{
		"l.json": extTool("a11x_long", long, nil, nil, nil),
	}, nil)
	c, ctx := extStart(t, ws, extBypass())
	ext := c.CallTool(ctx, "a11x_long", map[string]any{})
	bash := c.CallTool(ctx, "bash", map[string]any{"command": long})
	spillRe := regexp.MustCompile(`/[^\s"]+\.log`)
	t.Run("same text as bash except the spill path", func(t *testing.T) {
		e := spillRe.ReplaceAllString(ext.Text(), "SPILL")
		b := spillRe.ReplaceAllString(bash.Text(), "SPILL")
		if e != b {
			t.Errorf("extension output differs from bash's:\next:  %.600q\nbash: %.600q", e, b)
		}
	})
	t.Run("notice names the lines shown and the spill file", func(t *testing.T) {
		extContains(t, "notice", ext.Text(), "showing lines 3005-5001 of 5001", `"offset": 1`, "FAIL: TestBuried") // 2000 lines in all: the failure line, its heading and the notice among them
		spill := spillRe.FindString(ext.Text())
		if spill == "" {
			t.Fatalf("no spill path in %.400q", ext.Text())
		}
		b, err := os.ReadFile(spill)
		if err != nil {
			t.Fatalf("spill file: %v", err)
		}
		if n := strings.Count(string(b), "\n"); n != 5001 {
			t.Errorf("spill file has %d lines, want 5001", n)
		}
		r := c.CallTool(ctx, "read", map[string]any{"path": spill, "offset": 1, "limit": 3})
		if r.IsError || !strings.Contains(r.Text(), "line1") {
			t.Errorf("read of the spill file: %v %.300q", r.IsError, r.Text())
		}
	})
	t.Run("kept tail ends with the last line", func(t *testing.T) {
		if !strings.HasSuffix(strings.TrimRight(ext.Text(), "\n"), "\n2000") {
			t.Errorf("tail does not end with the last line: ...%q", ext.Text()[max(0, len(ext.Text())-60):])
		}
	})
}

func TestExtensionSecretsMasked(t *testing.T) {
	t.Parallel()
	aws := "AKIA" + "QZXWVUTSRPONMLKJ"
	gh := "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
	if len(gh) != 40 {
		t.Fatalf("bad fixture: %d", len(gh))
	}
	ws := extWS(t, map[string]any{
		"k.json": extTool("a11x_keys", "echo aws="+aws+"; echo token {{v}}", map[string]any{"v": extStr}, nil, nil),
	}, nil)
	c, ctx := extStart(t, ws, extBypass())
	r := c.CallTool(ctx, "a11x_keys", map[string]any{"v": gh})
	whole := extJSON(r)
	for _, secret := range []string{aws, gh} {
		if strings.Contains(whole, secret) {
			t.Errorf("secret %s… leaks in the result: %s", secret[:6], whole)
		}
	}
	extContains(t, "masked output", r.Text(), "aws=[REDACTED:", "token [REDACTED:")
	for _, n := range c.Notes("") {
		for _, secret := range []string{aws, gh} {
			if strings.Contains(string(n.Params), secret) {
				t.Errorf("secret leaks in %s notification", n.Method)
			}
		}
	}
}

func TestExtensionExitCwdEnv(t *testing.T) {
	t.Parallel()
	ws := extWS(t, map[string]any{
		"x.json":   extTool("a11x_exit", "echo before; exit {{code}}", map[string]any{"code": map[string]any{"type": "integer"}}, nil, nil),
		"p.json":   extTool("a11x_pwd", "pwd", nil, nil, map[string]any{"readOnly": true}),
		"env.json": extTool("a11x_env", `printf '%s|%s|%s|' "$PAGER" "$GIT_PAGER" "$GIT_TERMINAL_PROMPT"; wc -c`, nil, nil, nil),
		"sig.json": extTool("a11x_sig", "kill -9 $$", nil, nil, nil),
	}, nil)
	c, ctx := extStart(t, ws, extBypass())
	t.Run("non-zero exit is isError with the code", func(t *testing.T) {
		r := c.CallTool(ctx, "a11x_exit", map[string]any{"code": 3})
		if !r.IsError {
			t.Errorf("exit 3 not isError: %q", r.Text())
		}
		extContains(t, "exit 3", r.Text(), "before", "[Exit code 3]")
	})
	t.Run("zero exit is no error", func(t *testing.T) {
		r := c.CallTool(ctx, "a11x_exit", map[string]any{"code": 0})
		if r.IsError || strings.Contains(r.Text(), "Exit code") {
			t.Errorf("exit 0: isError=%v %q", r.IsError, r.Text())
		}
	})
	t.Run("killed by signal says so", func(t *testing.T) {
		r := c.CallTool(ctx, "a11x_sig", map[string]any{})
		if !r.IsError {
			t.Errorf("killed command not isError: %q", r.Text())
		}
		if !strings.Contains(strings.ToLower(r.Text()), "sigkill") && !strings.Contains(strings.ToLower(r.Text()), "signal") {
			t.Errorf("signal not named: %q", r.Text())
		}
	})
	t.Run("cwd is the workspace root", func(t *testing.T) {
		r := c.CallTool(ctx, "a11x_pwd", map[string]any{})
		if r.IsError || strings.TrimSpace(r.Text()) != ws {
			t.Errorf("pwd = %q, want %q", r.Text(), ws)
		}
	})
	t.Run("environment and stdin as for bash", func(t *testing.T) {
		r := c.CallTool(ctx, "a11x_env", map[string]any{})
		if r.IsError || strings.TrimSpace(r.Text()) != "cat|cat|0|0" {
			t.Errorf("env/stdin = %q, want cat|cat|0|0", r.Text())
		}
	})
}

func TestExtensionProgressAndChangedFiles(t *testing.T) {
	slow(t)
	t.Parallel()
	ws := extWS(t, map[string]any{
		"p.json": extTool("a11x_prog", "echo first-chunk; sleep 1.5; echo second-chunk", nil, nil, nil),
		"w.json": extTool("a11x_append", "echo more >> notes.txt", nil, nil, nil),
	}, map[string]string{"notes.txt": "one\n"})
	c, ctx := extStart(t, ws, extBypass())
	t.Run("output tail streamed as tools/progress", func(t *testing.T) {
		r := c.CallTool(ctx, "a11x_prog", map[string]any{})
		if r.IsError {
			t.Fatalf("%s", r.Text())
		}
		found := false
		for _, n := range c.Notes("tools/progress") {
			var p map[string]any
			_ = json.Unmarshal(n.Params, &p)
			if p["callId"] == r.CallID && strings.Contains(fmt.Sprint(p["output"]), "first-chunk") {
				found = true
				if p["tool"] != "a11x_prog" {
					t.Errorf("progress tool = %v, want a11x_prog", p["tool"])
				}
			}
		}
		if !found {
			t.Errorf("no tools/progress with the output tail for %s: %v", r.CallID, len(c.Notes("tools/progress")))
		}
	})
	t.Run("files changed are listed and stamps go stale", func(t *testing.T) {
		if r := c.CallTool(ctx, "read", map[string]any{"path": "notes.txt"}); r.IsError {
			t.Fatal(r.Text())
		}
		r := c.CallTool(ctx, "a11x_append", map[string]any{})
		extContains(t, "changed files", r.Text(), "Changed by this command", "notes.txt")
		e := c.CallTool(ctx, "edit", map[string]any{"path": "notes.txt", "edits": []any{map[string]any{"oldText": "one", "newText": "uno"}}})
		if !e.IsError {
			t.Errorf("edit after the tool changed the file was not refused as stale: %s", e.Text())
		}
	})
}

// ---------------------------------------------------------------------------
// Bad files

func TestExtensionBadFilesSkipped(t *testing.T) {
	t.Parallel()
	good := extTool("a11x_good", "printf ok", nil, nil, nil)
	n64 := "a" + strings.Repeat("b", 63)
	n65 := n64 + "c"
	noCmd := extTool("a11x_nocmd", "", nil, nil, nil)
	delete(noCmd, "command")
	emptyCmd := extTool("a11x_emptycmd", "", nil, nil, nil)
	strSchema := extTool("a11x_strschema", "true", nil, nil, nil)
	strSchema["inputSchema"] = map[string]any{"type": "string"}
	arrSchema := extTool("a11x_arrschema", "true", nil, nil, nil)
	arrSchema["inputSchema"] = []any{}
	badNames := map[string]string{
		"long.json":  n65,
		"space.json": "a11x bad",
		"dot.json":   "a11x.bad",
		"empty.json": "",
		"slash.json": "a11x/bad",
		"read.json":  "read",
		"Bash.json":  "Bash",
		"ts.json":    "tool_search",
	}
	defs := map[string]any{
		"good.json":      good,
		"n64.json":       extTool(n64, "printf ok64", nil, nil, nil),
		"broken.json":    `{"name": "a11x_broken", "command": `,
		"nocmd.json":     noCmd,
		"emptycmd.json":  emptyCmd,
		"strschema.json": strSchema,
		"arrschema.json": arrSchema,
		"notobj.json":    `["a11x_notobj"]`,
		"sq.json":        extTool("a11x_sq", "echo '{{v}}'", map[string]any{"v": extStr}, nil, nil),
		"dq.json":        extTool("a11x_dq", `echo "{{v}}"`, map[string]any{"v": extStr}, nil, nil),
		"bq.json":        extTool("a11x_bq", "echo `{{v}}`", map[string]any{"v": extStr}, nil, nil),
		"glued.json":     extTool("a11x_glued", "echo $HOME{{v}}", map[string]any{"v": extStr}, nil, nil),
		"heredoc.json":   extTool("a11x_heredoc", "cat <<EOF\n{{v}}\nEOF", map[string]any{"v": extStr}, nil, nil),
		"ghost.json":     extTool("a11x_ghost", "echo {{nosuch}}", map[string]any{"v": extStr}, nil, nil),
	}
	for file, name := range badNames {
		defs[file] = extTool(name, "touch pwned-"+strings.TrimSuffix(file, ".json"), nil, nil, nil)
	}
	ws := extWS(t, defs, map[string]string{".agentls/tools/README.md": "not a tool"})
	c, ctx := extStart(t, ws, extBypass())
	all := extList(t, ctx, c, map[string]any{"includeDeferred": true})
	t.Run("good tools still load", func(t *testing.T) {
		for _, n := range []string{"a11x_good", n64} {
			if _, ok := all[n]; !ok {
				t.Errorf("%s missing", n)
			}
		}
		if r := c.CallTool(ctx, "a11x_good", map[string]any{}); r.IsError || r.Text() != "ok" {
			t.Errorf("a11x_good: %v %q", r.IsError, r.Text())
		}
	})
	t.Run("core tools keep their definitions", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": ".agentls/tools/good.json"})
		if r.IsError || !strings.Contains(r.Text(), "a11x_good") {
			t.Errorf("read is no longer the core read: %v %.200q", r.IsError, r.Text())
		}
		c.CallTool(ctx, "Bash", map[string]any{"command": "true"})
		for file := range badNames {
			if p := filepath.Join(ws, "pwned-"+strings.TrimSuffix(file, ".json")); extExists(p) {
				t.Errorf("the command of bad file %s ran", file)
			}
		}
	})
	// Each skipped file is reported in window/logMessage naming the file and
	// the reason (docs/tools.md).
	var logs string
	extWait(5*time.Second, func() bool {
		logs = extLogs(c)
		return strings.Contains(logs, "ghost.json")
	})
	reasons := map[string][]string{
		"broken.json":    {},
		"nocmd.json":     {"command"},
		"emptycmd.json":  {"command"},
		"strschema.json": {"inputSchema", "object"},
		"arrschema.json": {"inputSchema"},
		"notobj.json":    {"object"},
		"sq.json":        {"{{v}}", "quote"},
		"dq.json":        {"{{v}}", "quote"},
		"bq.json":        {"{{v}}"},
		"glued.json":     {"{{v}}"},
		"heredoc.json":   {"{{v}}"},
		"ghost.json":     {"{{nosuch}}"},
		"long.json":      {n65},
		"space.json":     {"a11x bad"},
		"dot.json":       {"a11x.bad"},
		"empty.json":     {"name"},
		"slash.json":     {"a11x/bad"},
		"read.json":      {"read", "core"},
		"Bash.json":      {"Bash", "core"},
		"ts.json":        {"tool_search"},
	}
	for file, wants := range reasons {
		t.Run("reported "+file, func(t *testing.T) {
			var line string
			for _, l := range strings.Split(logs, "\n") {
				if strings.Contains(l, filepath.Join(".agentls", "tools", file)) {
					line = l
				}
			}
			if line == "" {
				t.Fatalf("no window/logMessage names %s; logs:\n%s", file, logs)
			}
			extContains(t, file, line, wants...)
		})
	}
	t.Run("bad tools are not registered", func(t *testing.T) {
		for _, n := range []string{"a11x_broken", "a11x_nocmd", "a11x_emptycmd", "a11x_strschema", "a11x_arrschema", "a11x_sq", "a11x_dq", "a11x_bq", "a11x_glued", "a11x_heredoc", "a11x_ghost", n65, "a11x bad", "a11x.bad", "a11x/bad"} {
			if _, ok := all[n]; ok {
				t.Errorf("invalid tool %q registered", n)
			}
		}
	})
	t.Run("README.md in the dir is not a tool file", func(t *testing.T) {
		if strings.Contains(logs, "README.md") {
			t.Errorf("a non-.json file was reported as a bad tool: %s", logs)
		}
	})
}

func TestExtensionUnknownFieldInFile(t *testing.T) {
	t.Parallel()
	// Docs are silent on unknown fields in a definition: loading the tool
	// (fields ignored) or skipping it with a report naming the file and the
	// field are both acceptable; silently dropping the tool is not.
	for _, field := range []string{"$schema", "author"} {
		t.Run(field, func(t *testing.T) {
			t.Parallel()
			d := extTool("a11x_extra", "printf ok", nil, nil, nil)
			d[field] = "x"
			ws := extWS(t, map[string]any{"extra.json": d}, nil)
			c, ctx := extStart(t, ws, extBypass())
			all := extList(t, ctx, c, map[string]any{"includeDeferred": true})
			if _, ok := all["a11x_extra"]; ok {
				return
			}
			extContains(t, "unknown field report", extLogs(c), "extra.json", field)
		})
	}
}

// ---------------------------------------------------------------------------
// Live reload

func TestExtensionLiveReload(t *testing.T) {
	slow(t)
	t.Parallel()
	ws := extWS(t, map[string]any{"keep.json": extTool("a11x_keep", "printf keep", nil, nil, nil)}, nil)
	c, ctx := extStart(t, ws, extBypass())
	p := filepath.Join(ws, ".agentls", "tools", "live.json")
	listed := func(name string) map[string]any { return extList(t, ctx, c, nil)[name] }
	waitChanged := func(what string, before int) {
		t.Helper()
		if !extWait(5*time.Second, func() bool { return len(c.Notes("tools/listChanged")) > before }) {
			t.Errorf("%s: no tools/listChanged within 5 s", what)
		}
	}

	before := len(c.Notes("tools/listChanged"))
	extWrite(t, p, extJSON(extTool("a11x_live", "printf v1", nil, nil, nil)))
	if !extWait(5*time.Second, func() bool { return listed("a11x_live") != nil }) {
		t.Fatal("added tool not listed within 5 s")
	}
	waitChanged("add", before)
	if r := c.CallTool(ctx, "a11x_live", map[string]any{}); r.Text() != "v1" {
		t.Errorf("new tool output %q, want v1", r.Text())
	}

	before = len(c.Notes("tools/listChanged"))
	d := extTool("a11x_live", "printf v2", nil, nil, nil)
	d["description"] = "Second version."
	extWrite(t, p, extJSON(d))
	if !extWait(5*time.Second, func() bool { return fmt.Sprint(listed("a11x_live")["description"]) == "Second version." }) {
		t.Errorf("changed description not listed within 5 s: %v", listed("a11x_live")["description"])
	}
	waitChanged("change", before)
	if r := c.CallTool(ctx, "a11x_live", map[string]any{}); r.Text() != "v2" {
		t.Errorf("redefined tool output %q, want v2", r.Text())
	}

	before = len(c.Notes("tools/listChanged"))
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if !extWait(5*time.Second, func() bool { return listed("a11x_live") == nil }) {
		t.Errorf("deleted tool still listed after 5 s")
	}
	waitChanged("delete", before)
	if r := c.CallTool(ctx, "a11x_live", map[string]any{}); !r.IsError {
		t.Errorf("deleted tool still callable: %q", r.Text())
	}
	if listed("a11x_keep") == nil {
		t.Errorf("untouched tool a11x_keep vanished")
	}

	t.Run("rename to another file name keeps one tool", func(t *testing.T) {
		q := filepath.Join(ws, ".agentls", "tools", "keep.json")
		r := filepath.Join(ws, ".agentls", "tools", "kept.json")
		if err := os.Rename(q, r); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond) // let a reload (if any) settle
		if out := c.CallTool(ctx, "a11x_keep", map[string]any{}); out.IsError || out.Text() != "keep" {
			t.Errorf("after rename: %v %q", out.IsError, out.Text())
		}
	})
}

func TestExtensionLiveReloadDirCreated(t *testing.T) {
	t.Parallel()
	// No .agentls at start: creating the directory and a tool later works too.
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, ctx := extStart(t, ws, extBypass())
	extWrite(t, filepath.Join(ws, ".agentls", "tools", "late.json"), extJSON(extTool("a11x_late", "printf late", nil, nil, nil)))
	if !extWait(5*time.Second, func() bool { return extList(t, ctx, c, nil)["a11x_late"] != nil }) {
		t.Errorf("tool in a newly created .agentls/tools not listed within 5 s")
	}
}

func TestExtensionLiveReloadInvalidEdit(t *testing.T) {
	t.Parallel()
	ws := extWS(t, map[string]any{"t.json": extTool("a11x_flip", "printf ok", nil, nil, nil)}, nil)
	c, ctx := extStart(t, ws, extBypass())
	p := filepath.Join(ws, ".agentls", "tools", "t.json")
	extWrite(t, p, `{"name": "a11x_flip", "command": `)
	if !extWait(5*time.Second, func() bool { return strings.Contains(extLogs(c), "t.json") }) {
		t.Errorf("a file that became invalid was not reported within 5 s; logs: %s", extLogs(c))
	}
	// Server still serves.
	if r := c.CallTool(ctx, "read", map[string]any{"path": ".agentls/tools/t.json"}); r.IsError {
		t.Errorf("server broken after invalid tool file: %s", r.Text())
	}
}

// ---------------------------------------------------------------------------
// User directory

func TestExtensionUserDirAndPrecedence(t *testing.T) {
	t.Parallel()
	cfg := t.TempDir()
	extWrite(t, filepath.Join(cfg, "agentls", "tools", "u.json"), extJSON(extTool("a11x_user", "printf user", nil, nil, nil)))
	extWrite(t, filepath.Join(cfg, "agentls", "tools", "both.json"), extJSON(extTool("a11x_both", "printf from-user", nil, nil, nil)))
	ws := extWS(t, map[string]any{"both.json": extTool("a11x_both", "printf from-workspace", nil, nil, nil)}, nil)
	o := extBypass()
	o.env = []string{"XDG_CONFIG_HOME=" + cfg}
	c, ctx := extStart(t, ws, o)
	if r := c.CallTool(ctx, "a11x_user", map[string]any{}); r.IsError || r.Text() != "user" {
		t.Errorf("user tool: %v %q", r.IsError, r.Text())
	}
	if r := c.CallTool(ctx, "a11x_both", map[string]any{}); r.Text() != "from-workspace" {
		t.Errorf("workspace definition should win: %q", r.Text())
	}
}

// ---------------------------------------------------------------------------
// Governance

func TestExtensionPermissionRules(t *testing.T) {
	t.Parallel()
	tools := map[string]any{
		"rt.json": extTool("run_tests", "touch ran-run_tests", nil, nil, nil),
		"ro.json": extTool("a11x_look", "ls", nil, nil, map[string]any{"readOnly": true}),
		"mk.json": extTool("a11x_make", "touch ran-make", nil, nil, nil),
		"li.json": extTool("a11x_liar", "touch ran-liar", nil, nil, map[string]any{"readOnly": true}),
	}
	cases := []struct {
		name    string
		init    map[string]any
		files   map[string]string
		tool    string
		denied  bool
		marker  string
		wantMsg []string
	}{
		{"init deny by name", map[string]any{"mode": "bypass", "permissions": map[string]any{"deny": []any{"run_tests"}}}, nil, "run_tests", true, "ran-run_tests", []string{"run_tests"}},
		{"init deny is case-insensitive", map[string]any{"mode": "bypass", "permissions": map[string]any{"deny": []any{"Run_Tests"}}}, nil, "run_tests", true, "ran-run_tests", []string{"Run_Tests"}},
		{"deny of another tool does not match", map[string]any{"mode": "bypass", "permissions": map[string]any{"deny": []any{"run_test"}}}, nil, "run_tests", false, "ran-run_tests", nil},
		{"workspace settings deny", map[string]any{"mode": "bypass"}, map[string]string{".agentls/settings.json": `{"permissions": {"deny": ["run_tests"]}}`}, "run_tests", true, "ran-run_tests", []string{"run_tests", ".agentls/settings.json"}},
		{"readOnly mode denies a writing tool", map[string]any{"mode": "readOnly"}, nil, "a11x_make", true, "ran-make", nil},
		{"readOnly mode runs a read-only tool", map[string]any{"mode": "readOnly"}, nil, "a11x_look", false, "", nil},
		{"default mode runs a read-only tool", nil, nil, "a11x_look", false, "", nil},
		{"readOnly mode denies a tool whose readOnly claim the shell analysis rejects", map[string]any{"mode": "readOnly"}, nil, "a11x_liar", true, "ran-liar", nil},
		{"ask rule by name asks for a read-only tool (no confirm capability)", map[string]any{"permissions": map[string]any{"ask": []any{"a11x_look"}}}, nil, "a11x_look", true, "", []string{"approval", "a11x_look"}},
		{"default mode asks for a writing tool (no confirm capability)", nil, nil, "a11x_make", true, "ran-make", []string{"approval"}},
		{"allow rule lets it run in default mode", map[string]any{"permissions": map[string]any{"allow": []any{"a11x_make"}}}, nil, "a11x_make", false, "ran-make", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := extWS(t, tools, tc.files)
			c, ctx := extStart(t, ws, extOpts{init: tc.init})
			r := c.CallTool(ctx, tc.tool, map[string]any{})
			if r.IsError != tc.denied {
				t.Fatalf("isError=%v, want %v: %s", r.IsError, tc.denied, r.Text())
			}
			extContains(t, tc.name, r.Text(), tc.wantMsg...)
			if tc.marker != "" && extExists(filepath.Join(ws, tc.marker)) == tc.denied {
				t.Errorf("marker %s exists=%v after denied=%v", tc.marker, !tc.denied, tc.denied)
			}
		})
	}
}

func TestExtensionDestructiveAsks(t *testing.T) {
	t.Parallel()
	ws := extWS(t, map[string]any{
		"d.json": extTool("a11x_nuke", "touch nuked", nil, nil, map[string]any{"destructive": true}),
	}, nil)
	var asked []map[string]any
	answers := make(chan map[string]any, 4)
	c, ctx := extStart(t, ws, extOpts{
		init: map[string]any{"mode": "acceptEdits"},
		confirm: func(p map[string]any) map[string]any {
			answers <- p
			return map[string]any{"decision": "rejectOnce", "message": "not today"}
		},
	})
	r := c.CallTool(ctx, "a11x_nuke", map[string]any{})
	select {
	case p := <-answers:
		asked = append(asked, p)
	default:
	}
	if len(asked) != 1 {
		t.Fatalf("destructive extension tool ran without a tools/confirm: %v %q", r.IsError, r.Text())
	}
	if asked[0]["tool"] != "a11x_nuke" {
		t.Errorf("confirm tool = %v", asked[0]["tool"])
	}
	if !r.IsError || !strings.Contains(r.Text(), "denied by the user: not today") {
		t.Errorf("reject result: %v %q", r.IsError, r.Text())
	}
	if extExists(filepath.Join(ws, "nuked")) {
		t.Errorf("command ran despite the rejection")
	}
}

func TestExtensionConfigWriteAsks(t *testing.T) {
	t.Parallel()
	newTool := extJSON(extTool("a11x_planted", "touch planted", nil, nil, nil))
	cases := []struct {
		name     string
		files    map[string]string
		decision string
		call     func(t *testing.T, ctx context.Context, c *harness.Client) harness.Result
		check    func(t *testing.T, ws string, r harness.Result)
	}{
		{
			name:     "write a new tool file is asked, reject writes nothing",
			decision: "rejectOnce",
			call: func(t *testing.T, ctx context.Context, c *harness.Client) harness.Result {
				return c.CallTool(ctx, "write", map[string]any{"path": ".agentls/tools/planted.json", "content": newTool})
			},
			check: func(t *testing.T, ws string, r harness.Result) {
				if !r.IsError || extExists(filepath.Join(ws, ".agentls", "tools", "planted.json")) {
					t.Errorf("rejected write: isError=%v, file exists=%v", r.IsError, extExists(filepath.Join(ws, ".agentls", "tools", "planted.json")))
				}
			},
		},
		{
			name:     "workspace allow rule cannot lift the ask",
			files:    map[string]string{".agentls/settings.json": `{"permissions": {"allow": ["Edit(.agentls/**)", "Edit"]}}`},
			decision: "rejectOnce",
			call: func(t *testing.T, ctx context.Context, c *harness.Client) harness.Result {
				return c.CallTool(ctx, "write", map[string]any{"path": ".agentls/tools/planted.json", "content": newTool})
			},
			check: func(t *testing.T, ws string, r harness.Result) {
				if !r.IsError || extExists(filepath.Join(ws, ".agentls", "tools", "planted.json")) {
					t.Errorf("workspace allow lifted the built-in ask: %v %q", r.IsError, r.Text())
				}
			},
		},
		{
			name:     "edit of an existing tool file is asked",
			files:    map[string]string{".agentls/tools/t.json": extJSON(extTool("a11x_t", "printf safe", nil, nil, nil))},
			decision: "rejectOnce",
			call: func(t *testing.T, ctx context.Context, c *harness.Client) harness.Result {
				if r := c.CallTool(ctx, "read", map[string]any{"path": ".agentls/tools/t.json"}); r.IsError {
					t.Fatalf("read: %s", r.Text())
				}
				return c.CallTool(ctx, "edit", map[string]any{"path": ".agentls/tools/t.json", "edits": []any{map[string]any{"oldText": "printf safe", "newText": "touch evil"}}})
			},
			check: func(t *testing.T, ws string, r harness.Result) {
				b, _ := os.ReadFile(filepath.Join(ws, ".agentls", "tools", "t.json"))
				if !r.IsError || strings.Contains(string(b), "touch evil") {
					t.Errorf("rejected edit changed the file: %v %s", r.IsError, b)
				}
			},
		},
		{
			name:     "allowOnce writes and the tool appears",
			decision: "allowOnce",
			call: func(t *testing.T, ctx context.Context, c *harness.Client) harness.Result {
				return c.CallTool(ctx, "write", map[string]any{"path": ".agentls/tools/planted.json", "content": newTool})
			},
			check: func(t *testing.T, ws string, r harness.Result) {
				if r.IsError || !extExists(filepath.Join(ws, ".agentls", "tools", "planted.json")) {
					t.Errorf("allowed write failed: %q", r.Text())
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := extWS(t, nil, tc.files)
			got := make(chan map[string]any, 8)
			c, ctx := extStart(t, ws, extOpts{
				init: map[string]any{"mode": "acceptEdits"},
				confirm: func(p map[string]any) map[string]any {
					got <- p
					return map[string]any{"decision": tc.decision}
				},
			})
			r := tc.call(t, ctx, c)
			var q map[string]any
			select {
			case q = <-got:
			default:
				t.Fatalf("no tools/confirm for a change under .agentls/tools (acceptEdits): %v %q", r.IsError, r.Text())
			}
			if q["rule"] != "builtin:agentls-config" {
				t.Errorf("confirm rule = %v, want builtin:agentls-config (reason %v)", q["rule"], q["reason"])
			}
			tc.check(t, ws, r)
		})
	}
	t.Run("without confirm capability the write is refused", func(t *testing.T) {
		t.Parallel()
		ws := extWS(t, nil, nil)
		c, ctx := extStart(t, ws, extOpts{init: map[string]any{"mode": "acceptEdits"}})
		r := c.CallTool(ctx, "write", map[string]any{"path": ".agentls/tools/planted.json", "content": newTool})
		if !r.IsError || extExists(filepath.Join(ws, ".agentls", "tools", "planted.json")) {
			t.Errorf("write under .agentls/tools without approval: %v %q", r.IsError, r.Text())
		}
		extContains(t, "refusal", r.Text(), "approval")
	})
}

func TestExtensionAwkwardValues(t *testing.T) {
	t.Parallel()
	ws := extWS(t, map[string]any{
		"c.json": extTool("a11x_count", "printf '%s' {{v}} | wc -c", map[string]any{"v": extStr}, nil, nil),
	}, nil)
	c, ctx := extStart(t, ws, extBypass())
	t.Run("large value arrives whole or is refused clearly", func(t *testing.T) {
		big := strings.Repeat("a", 200_000)
		r := c.CallTool(ctx, "a11x_count", map[string]any{"v": big})
		if !r.IsError && strings.TrimSpace(r.Text()) != "200000" {
			t.Errorf("200000-byte value: command received %q bytes", strings.TrimSpace(r.Text()))
		}
		if r.IsError && !strings.Contains(r.Text(), "`v`") && !strings.Contains(r.Text(), `"v"`) {
			t.Errorf("200000-byte value refused without naming the argument: %q", r.Text())
		}
		t.Logf("200000-byte value: isError=%v %.200q", r.IsError, r.Text())
	})
	t.Run("NUL byte is refused naming the argument", func(t *testing.T) {
		// A NUL cannot reach a command line: the value cannot arrive exactly,
		// so the call must fail and say which argument to fix.
		r := c.CallTool(ctx, "a11x_count", map[string]any{"v": "a\x00b"})
		if !r.IsError {
			t.Fatalf("NUL value not refused: %q", r.Text())
		}
		if !strings.Contains(r.Text(), "NUL") && !strings.Contains(r.Text(), "`v`") && !strings.Contains(r.Text(), `"v"`) {
			t.Errorf("refusal does not say which argument or why: %q", r.Text())
		}
	})
}

func TestExtensionDuplicateNames(t *testing.T) {
	t.Parallel()
	ws := extWS(t, map[string]any{
		"one.json": extTool("a11x_dup", "printf one", nil, nil, nil),
		"two.json": extTool("a11x_dup", "printf two", nil, nil, nil),
		"up.json":  extTool("A11X_DUP", "printf upper", nil, nil, nil),
	}, nil)
	c, ctx := extStart(t, ws, extBypass())
	r := c.CallTool(ctx, "a11x_dup", map[string]any{})
	if r.IsError {
		t.Fatalf("a11x_dup: %s", r.Text())
	}
	// Which one wins is not specified; the others must be reported.
	files := map[string]string{"one": "one.json", "two": "two.json", "upper": "up.json"}
	logs := extLogs(c)
	for out, file := range files {
		if out == r.Text() {
			continue
		}
		extContains(t, "duplicate report", logs, filepath.Join(".agentls", "tools", file))
	}
}

func TestExtensionLiveReloadDeferred(t *testing.T) {
	t.Parallel()
	ws := extWS(t, map[string]any{"keep.json": extTool("a11x_keep2", "printf keep", nil, nil, nil)}, nil)
	c, ctx := extStart(t, ws, extBypass())
	d := extTool("a11x_quokka_stats", "printf quokka", nil, nil, nil)
	d["deferred"] = true
	d["description"] = "Count quokka sightings."
	extWrite(t, filepath.Join(ws, ".agentls", "tools", "q.json"), extJSON(d))
	if !extWait(5*time.Second, func() bool {
		return extList(t, ctx, c, map[string]any{"includeDeferred": true})["a11x_quokka_stats"] != nil
	}) {
		t.Fatal("new deferred tool not registered within 5 s")
	}
	if extList(t, ctx, c, nil)["a11x_quokka_stats"] != nil {
		t.Errorf("new deferred tool active before tool_search")
	}
	r := c.CallTool(ctx, "tool_search", map[string]any{"query": "quokka sightings"})
	extContains(t, "tool_search", r.Text(), "a11x_quokka_stats")
	if extList(t, ctx, c, nil)["a11x_quokka_stats"] == nil {
		t.Errorf("not active after tool_search")
	}
}

func TestExtensionUserDirLiveReload(t *testing.T) {
	t.Parallel()
	cfg := t.TempDir()
	extWrite(t, filepath.Join(cfg, "agentls", "tools", "seed.json"), extJSON(extTool("a11x_seed", "printf seed", nil, nil, nil)))
	ws := extWS(t, nil, nil)
	o := extBypass()
	o.env = []string{"XDG_CONFIG_HOME=" + cfg}
	c, ctx := extStart(t, ws, o)
	before := len(c.Notes("tools/listChanged"))
	extWrite(t, filepath.Join(cfg, "agentls", "tools", "later.json"), extJSON(extTool("a11x_user_later", "printf later", nil, nil, nil)))
	if !extWait(5*time.Second, func() bool { return extList(t, ctx, c, nil)["a11x_user_later"] != nil }) {
		t.Fatal("tool added to the user directory not listed within 5 s")
	}
	if !extWait(5*time.Second, func() bool { return len(c.Notes("tools/listChanged")) > before }) {
		t.Errorf("no tools/listChanged for a user-directory tool")
	}
}

func TestExtensionConfirmArgumentsMasked(t *testing.T) {
	t.Parallel()
	gh := "ghp_" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7"
	ws := extWS(t, map[string]any{
		"d.json": extTool("a11x_push", "printf '%s' {{token}} >/dev/null", map[string]any{"token": extStr}, nil, map[string]any{"destructive": true}),
	}, nil)
	got := make(chan map[string]any, 2)
	c, ctx := extStart(t, ws, extOpts{
		init: map[string]any{"mode": "acceptEdits"},
		confirm: func(p map[string]any) map[string]any {
			got <- p
			return map[string]any{"decision": "rejectOnce"}
		},
	})
	c.CallTool(ctx, "a11x_push", map[string]any{"token": gh})
	select {
	case q := <-got:
		if q["tool"] != "a11x_push" {
			t.Errorf("confirm tool = %v", q["tool"])
		}
		if strings.Contains(extJSON(q), gh) {
			t.Errorf("tools/confirm carries the raw token: %s", extJSON(q))
		}
		if _, ok := q["arguments"].(map[string]any); !ok {
			t.Errorf("confirm arguments missing: %s", extJSON(q))
		}
	default:
		t.Fatal("destructive extension tool did not ask")
	}
}

func TestExtensionCLICall(t *testing.T) {
	t.Parallel()
	ws := extWS(t, map[string]any{
		"e.json": extTool("a11x_cli", "printf '[%s]' {{v}}", map[string]any{"v": extStr}, nil, map[string]any{"readOnly": true}),
	}, nil)
	cmd := harness.Command(t, []string{"call", "a11x_cli", `{"v": "$(touch pwned)"}`, "--root", ws})
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "[$(touch pwned)]" {
		t.Errorf("agentls call: err=%v out=%q", err, out)
	}
	if extExists(filepath.Join(ws, "pwned")) {
		t.Errorf("value executed through agentls call")
	}
}

func TestExtensionMetaSource(t *testing.T) {
	t.Parallel()
	ws := extWS(t, map[string]any{"s.json": extTool("a11x_src", "true", nil, nil, nil)}, nil)
	c, ctx := extStart(t, ws, extBypass())
	list := extList(t, ctx, c, nil)
	em, _ := list["a11x_src"]["_meta"].(map[string]any)
	cm, _ := list["read"]["_meta"].(map[string]any)
	if em["source"] == nil || em["source"] == "" || fmt.Sprint(em["source"]) == fmt.Sprint(cm["source"]) {
		t.Errorf("_meta.source of an extension tool = %v (core: %v): want a distinct source", em["source"], cm["source"])
	}
}

// A placeholder that is a bare word in any shell context (glued to a
// literal prefix, an assignment, a for list, case, [[ ]]) keeps the value
// one literal word.
func TestExtensionPlaceholderContexts(t *testing.T) {
	t.Parallel()
	v := map[string]any{"v": extStr}
	defs := map[string]any{
		"flag.json":   extTool("a11x_flag", "printf '[%s]' --run={{v}}", v, nil, nil),
		"assign.json": extTool("a11x_assign", `X={{v}}; printf '[%s]' "$X"`, v, nil, nil),
		"for.json":    extTool("a11x_for", `for a in {{v}}; do printf '[%s]' "$a"; done`, v, nil, nil),
		"case.json":   extTool("a11x_case", "case {{v}} in x) printf X;; *) printf other;; esac", v, nil, nil),
		"test.json":   extTool("a11x_test", "[[ {{v}} == x ]] && printf same || printf diff", v, nil, nil),
		"redir.json":  extTool("a11x_redir", "printf hi > {{v}}", v, nil, nil),
		"subst.json":  extTool("a11x_subst", `printf '[%s]' "$(printf '%s' {{v}})"`, v, nil, nil),
	}
	ws := extWS(t, defs, nil)
	c, ctx := extStart(t, ws, extBypass())
	hostile := "$(touch pwned) * x"
	cases := []struct{ tool, want string }{
		{"a11x_flag", "[--run=" + hostile + "]"},
		{"a11x_assign", "[" + hostile + "]"},
		{"a11x_for", "[" + hostile + "]"},
		{"a11x_case", "other"},
		{"a11x_test", "diff"},
		{"a11x_redir", ""},
		// The placeholder is a bare word of the inner command; the quoted
		// value stays one literal word there (docs/tools.md's criterion).
		{"a11x_subst", "[" + hostile + "]"},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			r := c.CallTool(ctx, tc.tool, map[string]any{"v": hostile})
			if r.IsError || (tc.want != "" && r.Text() != tc.want) {
				t.Errorf("isError=%v text=%q, want %q", r.IsError, r.Text(), tc.want)
			}
		})
	}
	if extExists(filepath.Join(ws, "pwned")) {
		t.Errorf("a value was executed")
	}
	if b, err := os.ReadFile(filepath.Join(ws, hostile)); err != nil || string(b) != "hi" {
		t.Errorf("redirect target is not the literal file name: %v", err)
	}
}

func TestExtensionEnvSecretMasked(t *testing.T) {
	t.Parallel()
	val := fmt.Sprintf("s3cr3tV4lue%09d", rand.IntN(1e9))
	ws := extWS(t, map[string]any{
		"e.json": extTool("a11x_printenv", `printf 'v=%s' "$A11X_SERVICE_TOKEN"`, nil, nil, nil),
	}, nil)
	o := extBypass()
	o.env = []string{"A11X_SERVICE_TOKEN=" + val}
	c, ctx := extStart(t, ws, o)
	r := c.CallTool(ctx, "a11x_printenv", map[string]any{})
	if strings.Contains(extJSON(r), val) || !strings.HasPrefix(r.Text(), "v=[REDACTED") {
		t.Errorf("value of a secret-looking server variable not masked: %q", r.Text())
	}
}

func extensionToolDef(name, command string, extra map[string]any) string {
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

func listedTools(t *testing.T, c *harness.Client, ctx context.Context, params map[string]any) map[string]map[string]any {
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
	slow(t)
	t.Parallel()
	files := map[string]string{
		".agentls/tools/echoer.json":   extensionToolDef("echoer", `printf '[%s]' {{a}} {{b}}`, map[string]any{"deferred": false}),
		".agentls/tools/slow.json":     extensionToolDef("slow", `sleep 30; : {{a}}`, map[string]any{"deferred": false, "timeout": 1}),
		".agentls/tools/broken.json":   `{"name": "broken", "description": `,
		".agentls/tools/badname.json":  extensionToolDef("bad name!", "echo x", map[string]any{"deferred": false}),
		".agentls/tools/toolong.json":  extensionToolDef(strings.Repeat("x", 65), "echo x", map[string]any{"deferred": false}),
		".agentls/tools/collide.json":  extensionToolDef("Read", "echo x", map[string]any{"deferred": false}),
		".agentls/tools/collide2.json": extensionToolDef("bash", "echo x", map[string]any{"deferred": false}),
		".agentls/tools/lister.json": `{"name": "lister", "description": "List.", "deferred": false, "command": "printf '<%s>' {{items}}",
			"inputSchema": {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}}}`,
		".agentls/tools/deferred.json": extensionToolDef("zeta_hidden", "echo hidden {{a}}", map[string]any{"deferred": true}),
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
		all := listedTools(t, c, ctx, map[string]any{"includeDeferred": true})
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
		active := listedTools(t, c, ctx, nil)
		if _, ok := active["zeta_hidden"]; ok {
			t.Fatal("a deferred tool is active before tool_search")
		}
		if _, ok := active["tool_search"]; !ok {
			t.Error("tool_search is not always active")
		}
		all := listedTools(t, c, ctx, map[string]any{"includeDeferred": true})
		z, ok := all["zeta_hidden"]
		if !ok || z["_meta"].(map[string]any)["deferred"] != true {
			t.Fatalf("includeDeferred: %v", z)
		}
	})
}
