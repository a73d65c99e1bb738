package e2e

// Contract tests of deferred tools and tool_search, written
// from docs/tools.md ("tool_search", "Extension tools"), docs/protocol.md (tools/list
// includeDeferred, _meta.deferred, tools/listChanged) and docs/tools.md /
// docs/protocol.md (deferThreshold, result format).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// toolSearchDef is one extension tool definition file.
type toolSearchDef struct {
	file     string // file name under .agentls/tools (default name.json)
	name     string
	desc     string
	params   map[string]string // parameter name → description
	deferred *bool             // nil: the default (true)
}

func toolSearchBool(b bool) *bool { return &b }

// toolSearchSchema is the inputSchema toolSearchWrite writes for d.
func toolSearchSchema(d toolSearchDef) map[string]any {
	props := map[string]any{}
	for p, desc := range d.params {
		props[p] = map[string]any{"type": "string", "description": desc}
	}
	return map[string]any{"type": "object", "properties": props}
}

func toolSearchWrite(t *testing.T, ws string, defs ...toolSearchDef) {
	t.Helper()
	dir := filepath.Join(ws, ".agentls", "tools")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		obj := map[string]any{
			"name":        d.name,
			"description": d.desc,
			"inputSchema": toolSearchSchema(d),
			"command":     "echo ran-" + d.name,
			"readOnly":    true,
		}
		if d.deferred != nil {
			obj["deferred"] = *d.deferred
		}
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		f := d.file
		if f == "" {
			f = d.name + ".json"
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// toolSearchStart starts a session on ws with the user's config dir isolated.
func toolSearchStart(t *testing.T, ws string, initOpts map[string]any) (*harness.Client, context.Context) {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: ws, Env: []string{"XDG_CONFIG_HOME=" + t.TempDir()}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	params := map[string]any{}
	if initOpts != nil {
		params["initializationOptions"] = initOpts
	}
	c.Initialize(ctx, params)
	return c, ctx
}

func toolSearchList(t *testing.T, ctx context.Context, c *harness.Client, params map[string]any) []map[string]any {
	t.Helper()
	var res struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", params, &res); err != nil {
		t.Fatalf("tools/list %v: %v", params, err)
	}
	return res.Tools
}

// toolSearchByName indexes an MCP-shaped tool list by name.
func toolSearchByName(tools []map[string]any) map[string]map[string]any {
	m := map[string]map[string]any{}
	for _, tl := range tools {
		if n, ok := tl["name"].(string); ok {
			m[n] = tl
		}
	}
	return m
}

func toolSearchActive(t *testing.T, ctx context.Context, c *harness.Client) map[string]map[string]any {
	t.Helper()
	return toolSearchByName(toolSearchList(t, ctx, c, nil))
}

// toolSearchMatchRe finds the "## name" headers of a tool_search answer.
var toolSearchMatchRe = regexp.MustCompile(`(?m)^## (\S+)$`)

func toolSearchMatches(text string) []string {
	var out []string
	for _, m := range toolSearchMatchRe.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

func toolSearchSearch(t *testing.T, ctx context.Context, c *harness.Client, args map[string]any) harness.Result {
	t.Helper()
	start := time.Now()
	r := c.CallTool(ctx, "tool_search", args)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("tool_search %.80v took %v, want < 2s", args, d)
	}
	return r
}

func toolSearchChanged(c *harness.Client) int { return len(c.Notes("tools/listChanged")) }

// toolSearchWaitChanged waits until at least n tools/listChanged have arrived.
func toolSearchWaitChanged(t *testing.T, c *harness.Client, n int) {
	t.Helper()
	// WaitNote's predicate runs under the client's lock, so poll Notes.
	for deadline := time.Now().Add(5 * time.Second); toolSearchChanged(c) < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("want %d tools/listChanged, got %d", n, toolSearchChanged(c))
		}
	}
}

// toolSearchBarrier calls the never-searched deferred tool name by name, which
// docs say activates it and sends exactly one tools/listChanged; once that
// one has arrived, every notification sent before it has too. It returns
// the count of listChanged notifications before the barrier's own.
func toolSearchBarrier(t *testing.T, ctx context.Context, c *harness.Client, name string) int {
	t.Helper()
	// Notifications before a reply arrive before it (wire order), so a
	// round trip first flushes whatever the previous call sent.
	toolSearchList(t, ctx, c, map[string]any{"includeDeferred": true})
	before := toolSearchChanged(c)
	r := c.CallTool(ctx, name, map[string]any{})
	if r.IsError {
		t.Fatalf("barrier call %s: %s", name, r.Text())
	}
	toolSearchWaitChanged(t, c, before+1)
	toolSearchList(t, ctx, c, nil)
	if got := toolSearchChanged(c); got != before+1 {
		t.Errorf("calling deferred %s by name sent %d tools/listChanged, want 1", name, got-before)
	}
	return before
}

// toolSearchMany makes n deferred tools matching "deploy", names deploy_svcNNN.
func toolSearchMany(n int) []toolSearchDef {
	defs := make([]toolSearchDef, n)
	for i := range defs {
		defs[i] = toolSearchDef{name: fmt.Sprintf("deploy_svc%03d", i), desc: "Deploy a service to the cluster.",
			params: map[string]string{"env": "target environment"}}
	}
	return defs
}

// Activation: one tools/listChanged per search, the matches become
// callable and listed; an identical search changes nothing and sends none.
func TestToolSearchActivation(t *testing.T) {
	ws := t.TempDir()
	toolSearchWrite(t, ws,
		toolSearchDef{name: "deploy_api", desc: "Deploy the API service.", params: map[string]string{"env": "x"}},
		toolSearchDef{name: "deploy_web", desc: "Deploy the web frontend.", params: map[string]string{"env": "x"}},
		toolSearchDef{name: "deploy_worker", desc: "Deploy the worker.", params: map[string]string{"env": "x"}},
		toolSearchDef{name: "lint_code", desc: "Run the linter.", params: map[string]string{"fix": "x"}},
		toolSearchDef{name: "open_ticket", desc: "Open an issue in the tracker.", params: map[string]string{"title": "x"}},
	)
	c, ctx := toolSearchStart(t, ws, nil)
	deployed := []string{"deploy_api", "deploy_web", "deploy_worker"}

	all := toolSearchByName(toolSearchList(t, ctx, c, map[string]any{"includeDeferred": true}))
	active := toolSearchActive(t, ctx, c)
	for _, n := range append(deployed, "lint_code", "open_ticket") {
		tl, ok := all[n]
		if !ok {
			t.Fatalf("%s missing from tools/list includeDeferred", n)
		}
		if meta, _ := tl["_meta"].(map[string]any); meta["deferred"] != true || meta["source"] != "extension" {
			t.Errorf("%s _meta = %v, want deferred true, source extension", n, tl["_meta"])
		}
		if _, ok := active[n]; ok {
			t.Errorf("deferred %s is in tools/list before any search", n)
		}
	}

	base := toolSearchChanged(c)
	r := toolSearchSearch(t, ctx, c, map[string]any{"query": "deploy"})
	got := toolSearchMatches(r.Text())
	sort.Strings(got)
	if !reflect.DeepEqual(got, deployed) {
		t.Fatalf("matches %v, want %v\n%s", got, deployed, r.Text())
	}
	toolSearchWaitChanged(t, c, base+1)
	active = toolSearchActive(t, ctx, c)
	for _, n := range deployed {
		tl, ok := active[n]
		if !ok {
			t.Errorf("%s not in tools/list after tool_search activated it", n)
			continue
		}
		if meta, _ := tl["_meta"].(map[string]any); meta == nil || meta["deferred"] == nil {
			t.Errorf("%s _meta %v lacks deferred", n, tl["_meta"])
		}
	}
	if _, ok := active["lint_code"]; ok {
		t.Error("lint_code was activated by a search that did not match it")
	}
	if r := c.CallTool(ctx, "deploy_web", map[string]any{"env": "prod"}); r.IsError || !strings.Contains(r.Text(), "ran-deploy_web") {
		t.Errorf("activated deploy_web: isError %v: %s", r.IsError, r.Text())
	}

	// The identical search again: nothing new to activate.
	r2 := toolSearchSearch(t, ctx, c, map[string]any{"query": "deploy"})
	t.Logf("second identical search:\n%s", r2.Text())
	if act, _ := r2.Details["activated"].([]any); len(act) != 0 {
		t.Errorf("second identical search activated %v", act)
	}
	for _, n := range deployed {
		if !strings.Contains(r2.Text(), n) {
			t.Errorf("second identical search does not mention %s (active and matching):\n%s", n, r2.Text())
		}
	}
	// lint_code was never searched: calling it by name is the barrier.
	before := toolSearchBarrier(t, ctx, c, "lint_code")
	if got := before - (base + 1); got != 0 {
		t.Errorf("the first search sent %d extra or the second identical search sent %d tools/listChanged, want 1 and 0", before-base, got)
	}
}

// Calling a deferred tool by name, without a search, runs it, activates it
// and sends tools/listChanged once.
func TestToolSearchCallByName(t *testing.T) {
	ws := t.TempDir()
	toolSearchWrite(t, ws,
		toolSearchDef{name: "open_ticket", desc: "Open an issue.", params: map[string]string{"title": "x"}},
		toolSearchDef{name: "close_ticket", desc: "Close an issue.", params: map[string]string{"id": "x"}},
	)
	c, ctx := toolSearchStart(t, ws, nil)
	if _, ok := toolSearchActive(t, ctx, c)["open_ticket"]; ok {
		t.Fatal("open_ticket active before use")
	}
	base := toolSearchChanged(c)
	r := c.CallTool(ctx, "open_ticket", map[string]any{"title": "t"})
	if r.IsError || !strings.Contains(r.Text(), "ran-open_ticket") {
		t.Fatalf("calling deferred open_ticket by name: isError %v: %s", r.IsError, r.Text())
	}
	toolSearchWaitChanged(t, c, base+1)
	if _, ok := toolSearchActive(t, ctx, c)["open_ticket"]; !ok {
		t.Error("open_ticket not in tools/list after being called by name")
	}
	// A second call changes nothing; close_ticket's activation is the barrier.
	c.CallTool(ctx, "open_ticket", map[string]any{"title": "t"})
	if before := toolSearchBarrier(t, ctx, c, "close_ticket"); before != base+1 {
		t.Errorf("%d tools/listChanged for two calls of open_ticket, want 1", before-base)
	}
}

// A search activating several tools sends one tools/listChanged, not one
// per tool.
func TestToolSearchOneNotePerBatch(t *testing.T) {
	ws := t.TempDir()
	defs := toolSearchMany(8)
	defs = append(defs, toolSearchDef{name: "zz_barrier", desc: "Unrelated.", params: map[string]string{"q": "x"}})
	toolSearchWrite(t, ws, defs...)
	c, ctx := toolSearchStart(t, ws, nil)
	base := toolSearchChanged(c)
	r := toolSearchSearch(t, ctx, c, map[string]any{"query": "deploy", "limit": 8})
	if n := len(toolSearchMatches(r.Text())); n != 8 {
		t.Fatalf("%d matches, want 8:\n%s", n, r.Text())
	}
	toolSearchWaitChanged(t, c, base+1)
	if before := toolSearchBarrier(t, ctx, c, "zz_barrier"); before != base+1 {
		t.Errorf("a search activating 8 tools sent %d tools/listChanged, want 1", before-base)
	}
}

// deferThreshold: more non-deferred tools than the threshold allows are
// deferred (the ones registered last) until exactly deferThreshold are
// active; at the threshold all stay active.
func TestToolSearchDeferThreshold(t *testing.T) {
	// Count the tools that are always active (core tools, tool_search and,
	// under the harness, the test-only tools).
	ws0 := t.TempDir()
	c0, ctx0 := toolSearchStart(t, ws0, nil)
	core := len(toolSearchActive(t, ctx0, c0))

	for _, tc := range []struct {
		name      string
		threshold any // nil: the default
		ext       int // extension tools with "deferred": false
	}{
		{"explicit, at the threshold", core + 3, 3},
		{"explicit, one over", core + 3, 4},
		{"explicit, three over", core + 2, 5},
		{"default 30, at it", nil, 30 - core},
		{"default 30, one over", nil, 31 - core},
	} {
		t.Run(tc.name, func(t *testing.T) {
			threshold := 30
			var init map[string]any
			if tc.threshold != nil {
				threshold = tc.threshold.(int)
				init = map[string]any{"deferThreshold": threshold}
			}
			ws := t.TempDir()
			var names []string
			for i := 0; i < tc.ext; i++ {
				n := fmt.Sprintf("ext_%02d", i)
				names = append(names, n)
				toolSearchWrite(t, ws, toolSearchDef{name: n, desc: "Extension tool.", params: map[string]string{"p": "x"}, deferred: toolSearchBool(false)})
			}
			c, ctx := toolSearchStart(t, ws, init)
			active := toolSearchActive(t, ctx, c)
			all := toolSearchByName(toolSearchList(t, ctx, c, map[string]any{"includeDeferred": true}))
			wantActive := core + tc.ext
			if wantActive > threshold {
				wantActive = threshold
			}
			if len(active) != wantActive {
				t.Errorf("%d active tools, want %d (threshold %d, %d always-active, %d non-deferred extension tools)", len(active), wantActive, threshold, core, tc.ext)
			}
			keep := wantActive - core
			for i, n := range names {
				_, isActive := active[n]
				meta, _ := all[n]["_meta"].(map[string]any)
				if i < keep && !isActive {
					t.Errorf("%s (registered early) is not active", n)
				}
				if i >= keep {
					if isActive {
						t.Errorf("%s (registered last) is active, want deferred", n)
					}
					if meta["deferred"] != true {
						t.Errorf("%s _meta.deferred = %v in includeDeferred, want true", n, meta["deferred"])
					}
				}
			}
			if _, ok := active["tool_search"]; !ok {
				t.Error("tool_search deferred by the threshold")
			}
		})
	}
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
		".agentls/tools/other.json": extensionToolDef("other_task", "echo other {{a}}", nil)}
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
	if _, ok := listedTools(t, c, ctx, nil)["obscure_task"]; !ok {
		t.Fatal("not activated")
	}
	if r := c.CallTool(ctx, "obscure_task", map[string]any{"quuxfrobnicator": 3}); r.IsError || !strings.Contains(r.Text(), "n=3") {
		t.Fatalf("call: %s", r.Text())
	}
}
