package e2e

// Deferred tools on the wire: which tools tools/list shows and the
// tools/listChanged notifications that activating them sends. What a
// search answers is pinned by cmd/agentls/testdata/script/tool_search.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// toolSearchWrite writes one extension tool per name that prints
// ran-<name>; deferred nil leaves the default (deferred).
func toolSearchWrite(t *testing.T, ws string, deferred *bool, names ...string) {
	t.Helper()
	dir := filepath.Join(ws, ".agentls", "tools")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		desc := "Deploy " + n + " to the cluster."
		if strings.HasPrefix(n, "zz_") {
			desc = "Unrelated."
		}
		obj := map[string]any{"name": n, "description": desc, "command": "echo ran-" + n, "readOnly": true,
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"env": map[string]any{"type": "string", "description": "target"}}}}
		if deferred != nil {
			obj["deferred"] = *deferred
		}
		b, _ := json.Marshal(obj)
		writeFile(t, filepath.Join(dir, n+".json"), string(b))
	}
}

// toolSearchStart starts a session on ws with the user's config dir isolated.
func toolSearchStart(t *testing.T, ws string, initOpts map[string]any) (*harness.Client, context.Context) {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: ws, Env: []string{"XDG_CONFIG_HOME=" + t.TempDir()}})
	ctx := testCtx(t, 30*time.Second)
	params := map[string]any{}
	if initOpts != nil {
		params["initializationOptions"] = initOpts
	}
	c.Initialize(ctx, params)
	return c, ctx
}

// A search activating eight tools sends one tools/listChanged and the
// matches are listed and run; the identical search again and a second call
// of an active tool send none; calling a deferred tool by name, without a
// search, runs it, lists it and sends one. Each count is taken after
// calling a never-searched tool by name: its own note arrives after every
// note sent before it.
func TestToolSearchListChanged(t *testing.T) {
	ws := t.TempDir()
	var deploy []string
	for i := range 8 {
		deploy = append(deploy, fmt.Sprintf("deploy_svc%03d", i))
	}
	toolSearchWrite(t, ws, nil, append(deploy, "zz_one", "zz_two")...)
	c, ctx := toolSearchStart(t, ws, nil)
	changed := func() int { return len(c.Notes("tools/listChanged")) }
	barrier := func(name string) int {
		t.Helper()
		listedTools(t, c, ctx, nil) // flushes what the previous call sent
		before := changed()
		wantResult(t, name, c.CallTool(ctx, name, map[string]any{}), false, "ran-"+name)
		if !waitUntil(5*time.Second, func() bool { return changed() > before }) {
			t.Fatalf("calling deferred %s by name sent no tools/listChanged", name)
		}
		if _, ok := listedTools(t, c, ctx, nil)[name]; !ok || changed() != before+1 {
			t.Errorf("%s called by name: listed %v, %d tools/listChanged, want 1", name, ok, changed()-before)
		}
		return before
	}
	for _, n := range deploy {
		if _, ok := listedTools(t, c, ctx, nil)[n]; ok {
			t.Fatalf("deferred %s listed before any search", n)
		}
	}
	base := changed()
	r := c.CallTool(ctx, "tool_search", map[string]any{"query": "deploy", "limit": 8})
	if n := strings.Count(r.Text(), "\n## deploy_svc"); n != 8 && !strings.HasPrefix(r.Text(), "## deploy_svc") {
		t.Fatalf("%d matches, want 8:\n%s", n, r.Text())
	}
	if got := barrier("zz_one") - base; got != 1 {
		t.Errorf("a search activating 8 tools sent %d tools/listChanged, want 1", got)
	}
	active := listedTools(t, c, ctx, nil)
	for _, n := range deploy {
		if _, ok := active[n]; !ok {
			t.Errorf("%s not listed after the search activated it", n)
		}
	}
	wantResult(t, "activated tool", c.CallTool(ctx, deploy[3], map[string]any{"env": "prod"}), false, "ran-"+deploy[3])
	r = c.CallTool(ctx, "tool_search", map[string]any{"query": "deploy", "limit": 8})
	if act, _ := r.Details["activated"].([]any); len(act) != 0 || !strings.Contains(r.Text(), deploy[0]) {
		t.Errorf("identical search activated %v:\n%s", act, r.Text())
	}
	c.CallTool(ctx, "zz_one", map[string]any{})
	before := barrier("zz_two")
	if got := before - (base + 2); got != 0 {
		t.Errorf("the identical search and a second call of an active tool sent %d tools/listChanged, want 0", got)
	}
}

// deferThreshold: more non-deferred tools than the threshold allows are
// deferred (the ones registered last) until exactly deferThreshold are
// active; at the threshold all stay active; tool_search never is.
func TestToolSearchDeferThreshold(t *testing.T) {
	// The tools that are always active: core tools, tool_search and, under
	// the harness, the test-only tools.
	c0, ctx0 := toolSearchStart(t, t.TempDir(), nil)
	core := len(listedTools(t, c0, ctx0, nil))
	notDeferred := false
	for _, tc := range []struct {
		name      string
		threshold int // 0: the default
		ext       int // extension tools with "deferred": false
	}{
		{"explicit, at the threshold", core + 3, 3},
		{"explicit, one over", core + 3, 4},
		{"explicit, three over", core + 2, 5},
		{"default 30, at it", 0, 30 - core},
		{"default 30, one over", 0, 31 - core},
	} {
		t.Run(tc.name, func(t *testing.T) {
			threshold, init := 30, map[string]any(nil)
			if tc.threshold != 0 {
				threshold, init = tc.threshold, map[string]any{"deferThreshold": tc.threshold}
			}
			ws := t.TempDir()
			var names []string
			for i := range tc.ext {
				names = append(names, fmt.Sprintf("ext_%02d", i))
			}
			toolSearchWrite(t, ws, &notDeferred, names...)
			c, ctx := toolSearchStart(t, ws, init)
			active := listedTools(t, c, ctx, nil)
			all := listedTools(t, c, ctx, map[string]any{"includeDeferred": true})
			wantActive := min(core+tc.ext, threshold)
			if len(active) != wantActive {
				t.Errorf("%d active tools, want %d (threshold %d, %d always active, %d non-deferred extension tools)", len(active), wantActive, threshold, core, tc.ext)
			}
			for i, n := range names {
				_, isActive := active[n]
				meta, _ := all[n]["_meta"].(map[string]any)
				if early := i < wantActive-core; isActive != early || meta["deferred"] == early {
					t.Errorf("%s (registered %d of %d): active %v, _meta.deferred %v", n, i+1, len(names), isActive, meta["deferred"])
				}
			}
			if _, ok := active["tool_search"]; !ok {
				t.Error("tool_search deferred by the threshold")
			}
		})
	}
}
