package e2e

// Contract tests of deferred tools and tool_search, written
// from TOOLS.md ("tool_search", "Extension tools"), PROTOCOL.md (tools/list
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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// a13tDef is one extension tool definition file.
type a13tDef struct {
	file     string // file name under .agentls/tools (default name.json)
	name     string
	desc     string
	params   map[string]string // parameter name → description
	deferred *bool             // nil: the default (true)
}

func a13tBool(b bool) *bool { return &b }

// a13tSchema is the inputSchema a13tWrite writes for d.
func a13tSchema(d a13tDef) map[string]any {
	props := map[string]any{}
	for p, desc := range d.params {
		props[p] = map[string]any{"type": "string", "description": desc}
	}
	return map[string]any{"type": "object", "properties": props}
}

func a13tWrite(t *testing.T, ws string, defs ...a13tDef) {
	t.Helper()
	dir := filepath.Join(ws, ".agentls", "tools")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		obj := map[string]any{
			"name":        d.name,
			"description": d.desc,
			"inputSchema": a13tSchema(d),
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

// a13tStart starts a session on ws with the user's config dir isolated.
func a13tStart(t *testing.T, ws string, initOpts map[string]any) (*harness.Client, context.Context) {
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

func a13tList(t *testing.T, ctx context.Context, c *harness.Client, params map[string]any) []map[string]any {
	t.Helper()
	var res struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", params, &res); err != nil {
		t.Fatalf("tools/list %v: %v", params, err)
	}
	return res.Tools
}

// a13tByName indexes an MCP-shaped tool list by name.
func a13tByName(tools []map[string]any) map[string]map[string]any {
	m := map[string]map[string]any{}
	for _, tl := range tools {
		if n, ok := tl["name"].(string); ok {
			m[n] = tl
		}
	}
	return m
}

func a13tActive(t *testing.T, ctx context.Context, c *harness.Client) map[string]map[string]any {
	t.Helper()
	return a13tByName(a13tList(t, ctx, c, nil))
}

// a13tMatchRe finds the "## name" headers of a tool_search answer.
var a13tMatchRe = regexp.MustCompile(`(?m)^## (\S+)$`)

func a13tMatches(text string) []string {
	var out []string
	for _, m := range a13tMatchRe.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

func a13tSearch(t *testing.T, ctx context.Context, c *harness.Client, args map[string]any) harness.Result {
	t.Helper()
	start := time.Now()
	r := c.CallTool(ctx, "tool_search", args)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("tool_search %.80v took %v, want < 2s", args, d)
	}
	return r
}

func a13tChanged(c *harness.Client) int { return len(c.Notes("tools/listChanged")) }

// a13tWaitChanged waits until at least n tools/listChanged have arrived.
func a13tWaitChanged(t *testing.T, c *harness.Client, n int) {
	t.Helper()
	// WaitNote's predicate runs under the client's lock, so poll Notes.
	for deadline := time.Now().Add(5 * time.Second); a13tChanged(c) < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("want %d tools/listChanged, got %d", n, a13tChanged(c))
		}
	}
}

// a13tBarrier calls the never-searched deferred tool name by name, which
// docs say activates it and sends exactly one tools/listChanged; once that
// one has arrived, every notification sent before it has too. It returns
// the count of listChanged notifications before the barrier's own.
func a13tBarrier(t *testing.T, ctx context.Context, c *harness.Client, name string) int {
	t.Helper()
	// Notifications before a reply arrive before it (wire order), so a
	// round trip first flushes whatever the previous call sent.
	a13tList(t, ctx, c, map[string]any{"includeDeferred": true})
	before := a13tChanged(c)
	r := c.CallTool(ctx, name, map[string]any{})
	if r.IsError {
		t.Fatalf("barrier call %s: %s", name, r.Text())
	}
	a13tWaitChanged(t, c, before+1)
	a13tList(t, ctx, c, nil)
	if got := a13tChanged(c); got != before+1 {
		t.Errorf("calling deferred %s by name sent %d tools/listChanged, want 1", name, got-before)
	}
	return before
}

// a13tSearchDesc reads the numbers tool_search's description states.
func a13tSearchDesc(t *testing.T, ctx context.Context, c *harness.Client) (def, max, listed int) {
	t.Helper()
	ts, ok := a13tActive(t, ctx, c)["tool_search"]
	if !ok {
		t.Fatal("tool_search is not in tools/list")
	}
	desc, _ := ts["description"].(string)
	m := regexp.MustCompile(`default (\d+), maximum (\d+)`).FindStringSubmatch(desc)
	if m == nil {
		t.Fatalf("tool_search description states no default/maximum limit: %q", desc)
	}
	l := regexp.MustCompile(`up to (\d+) deferred tools`).FindStringSubmatch(desc)
	if l == nil {
		t.Fatalf("tool_search description states no count of listed tools: %q", desc)
	}
	def, _ = strconv.Atoi(m[1])
	max, _ = strconv.Atoi(m[2])
	listed, _ = strconv.Atoi(l[1])
	return def, max, listed
}

// a13tMany makes n deferred tools matching "deploy", names deploy_svcNNN.
func a13tMany(n int) []a13tDef {
	defs := make([]a13tDef, n)
	for i := range defs {
		defs[i] = a13tDef{name: fmt.Sprintf("deploy_svc%03d", i), desc: "Deploy a service to the cluster.",
			params: map[string]string{"env": "target environment"}}
	}
	return defs
}

// tool_search is active from the start, even with no extension tools.
func TestToolSearchAlwaysActive(t *testing.T) {
	for _, tc := range []struct {
		name string
		defs []a13tDef
	}{
		{"no extension tools", nil},
		{"with deferred tools", a13tMany(3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			a13tWrite(t, ws, tc.defs...)
			c, ctx := a13tStart(t, ws, nil)
			ts, ok := a13tActive(t, ctx, c)["tool_search"]
			if !ok {
				t.Fatal("tool_search missing from tools/list")
			}
			meta, _ := ts["_meta"].(map[string]any)
			if meta["deferred"] != false {
				t.Errorf("tool_search _meta.deferred = %v, want false", meta["deferred"])
			}
		})
	}
}

// Names, descriptions and parameter names are all searched; a word found in
// one place only finds the tool, and not the others.
func TestToolSearchSearchFields(t *testing.T) {
	defs := []a13tDef{
		{name: "frobnicate_widgets", desc: "Adjusts things.", params: map[string]string{"x": "a value"}},
		{name: "tool_beta", desc: "Renders the quixotic report.", params: map[string]string{"y": "a value"}},
		{name: "tool_gamma", desc: "Sends something.", params: map[string]string{"zebraflag": "a value"}},
		{name: "runCamelThing", desc: "Does one job.", params: map[string]string{"z": "a value"}},
		{name: "tool_delta", desc: "Deploys the service.", params: map[string]string{"w": "a value"}},
	}
	for _, tc := range []struct {
		name, query, want string
	}{
		{"word only in the name", "frobnicate", "frobnicate_widgets"},
		{"word only in the description", "quixotic", "tool_beta"},
		{"word only in a parameter name", "zebraflag", "tool_gamma"},
		{"camelCase part of the name", "camel", "runCamelThing"},
		{"another case", "QUIXOTIC", "tool_beta"},
		{"stemmed form", "deploying", "tool_delta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			a13tWrite(t, ws, defs...)
			c, ctx := a13tStart(t, ws, nil)
			r := a13tSearch(t, ctx, c, map[string]any{"query": tc.query})
			got := a13tMatches(r.Text())
			if r.IsError || !reflect.DeepEqual(got, []string{tc.want}) {
				t.Errorf("query %q: matches %v (isError %v), want [%s]\n%s", tc.query, got, r.IsError, tc.want, r.Text())
			}
		})
	}
}

// The answer carries each match's full schema, in the documented format,
// and the count line.
func TestToolSearchResultFormat(t *testing.T) {
	ws := t.TempDir()
	d := a13tDef{name: "db_migrate", desc: "Apply pending database migrations.",
		params: map[string]string{"target": "migration id to stop at", "dryRun": "only print the plan"}}
	a13tWrite(t, ws, d, a13tDef{name: "unrelated_tool", desc: "Something else.", params: map[string]string{"q": "x"}})
	c, ctx := a13tStart(t, ws, nil)
	r := a13tSearch(t, ctx, c, map[string]any{"query": "database migrations"})
	if r.IsError {
		t.Fatalf("isError: %s", r.Text())
	}
	text := r.Text()
	if !strings.HasPrefix(text, `1 tool(s) match "database migrations", best first. They are now enabled: call them by name.`) {
		t.Errorf("head line: %q", strings.SplitN(text, "\n", 2)[0])
	}
	m := regexp.MustCompile(`(?m)^## db_migrate\n(.*)\nInput schema: (.*)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no `## db_migrate` / description / `Input schema:` block in:\n%s", text)
	}
	if m[1] != d.desc {
		t.Errorf("description line %q, want %q", m[1], d.desc)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(m[2]), &got); err != nil {
		t.Fatalf("schema is not JSON: %v: %s", err, m[2])
	}
	want := map[string]any{}
	b, _ := json.Marshal(a13tSchema(d))
	json.Unmarshal(b, &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("schema %v, want the definition's %v", got, want)
	}
	if strings.Contains(text, "unrelated_tool") {
		t.Errorf("a non-matching tool is in the answer:\n%s", text)
	}
}

// Default and maximum limit, and the count of names listed when nothing
// matches, are the numbers tool_search's description states.
func TestToolSearchLimits(t *testing.T) {
	ws := t.TempDir()
	a13tWrite(t, ws, a13tMany(60)...)
	c, ctx := a13tStart(t, ws, nil)
	def, max, listed := a13tSearchDesc(t, ctx, c)
	if def != 5 || max != 20 || listed != 50 {
		t.Errorf("description states default %d, maximum %d, up to %d listed; docs say 5, 20 (listed count undocumented, 50 seen)", def, max, listed)
	}

	// Nothing matches: up to `listed` names, and how to proceed. Run first,
	// while all 60 are deferred.
	r := a13tSearch(t, ctx, c, map[string]any{"query": "kumquat"})
	text := r.Text()
	if !r.IsError || !strings.HasPrefix(text, `No deferred tool matches "kumquat". Deferred tools: `) ||
		!strings.HasSuffix(text, "Search again with other words, or call one of these by name.") {
		t.Errorf("no-match answer (isError %v):\n%s", r.IsError, text)
	}
	if n := a13tListed(text); n != listed {
		t.Errorf("no-match answer lists %d tool names, description says up to %d (of 60)", n, listed)
	}

	for _, tc := range []struct {
		name    string
		limit   any
		want    int
		wantErr string
	}{
		{"default", nil, def, ""},
		{"maximum", max, max, ""},
		{"numeric string", "3", 3, ""},
		{"above maximum", max + 1, 0, fmt.Sprintf("`limit` must be ≤ %d, got %d", max, max+1)},
		{"zero", 0, 0, "`limit` must be ≥ 1, got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"query": "deploy"}
			if tc.limit != nil {
				args["limit"] = tc.limit
			}
			r := a13tSearch(t, ctx, c, args)
			if tc.wantErr != "" {
				if !r.IsError || !strings.Contains(r.Text(), tc.wantErr) || !strings.Contains(r.Text(), "Usage: tool_search") {
					t.Errorf("isError %v, want an error containing %q and a usage line:\n%s", r.IsError, tc.wantErr, r.Text())
				}
				return
			}
			if r.IsError {
				t.Fatalf("isError: %s", r.Text())
			}
			if got := len(a13tMatches(r.Text())); got != tc.want {
				t.Errorf("%d matches, want %d", got, tc.want)
			}
			if s, ok := tc.limit.(string); ok {
				norm := fmt.Sprint(r.Details["normalized"])
				if !strings.Contains(norm, "limit") || !strings.Contains(norm, s) {
					t.Errorf("details.normalized = %q, want the limit repair reported", norm)
				}
			}
		})
	}
}

// An empty query is an error telling what to send.
func TestToolSearchEmptyQuery(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"missing", map[string]any{}},
		{"empty string", map[string]any{"query": ""}},
		{"blank", map[string]any{"query": "   "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			a13tWrite(t, ws, a13tMany(3)...)
			c, ctx := a13tStart(t, ws, nil)
			r := a13tSearch(t, ctx, c, tc.args)
			if !r.IsError || !strings.Contains(r.Text(), "`query`") {
				t.Errorf("isError %v, want an error naming `query` and what to send:\n%s", r.IsError, r.Text())
			}
			if act := r.Details["activated"]; act != nil && len(act.([]any)) != 0 {
				t.Errorf("an empty query activated %v", act)
			}
		})
	}
}

// An exact name ranks first, in any case, even against tools whose
// descriptions repeat the word.
func TestToolSearchRankingExactName(t *testing.T) {
	defs := []a13tDef{
		{name: "migrate", desc: "Runs the schema tool against the configured database server for this project.", params: map[string]string{"to": "x"}},
		{name: "aaa_migrations", desc: "Migrate: migrate migrate migrate all migrations.", params: map[string]string{"migrate": "migrate"}},
		{name: "migrate_helper", desc: "Helps migrate.", params: map[string]string{"m": "x"}},
		{name: "db_migrate_all", desc: "Migrate every database.", params: map[string]string{"m": "x"}},
	}
	for _, tc := range []struct{ name, query, want string }{
		{"single word", "migrate", "migrate"},
		{"single word upper case", "MIGRATE", "migrate"},
		{"multi-part name", "db_migrate_all", "db_migrate_all"},
		{"multi-part name other case", "DB_Migrate_All", "db_migrate_all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			a13tWrite(t, ws, defs...)
			c, ctx := a13tStart(t, ws, nil)
			r := a13tSearch(t, ctx, c, map[string]any{"query": tc.query})
			got := a13tMatches(r.Text())
			if r.IsError || len(got) == 0 || got[0] != tc.want {
				t.Errorf("query %q ranks %v, want %s first\n%s", tc.query, got, tc.want, r.Text())
			}
		})
	}
}

// Activation: one tools/listChanged per search, the matches become
// callable and listed; an identical search changes nothing and sends none.
func TestToolSearchActivation(t *testing.T) {
	ws := t.TempDir()
	a13tWrite(t, ws,
		a13tDef{name: "deploy_api", desc: "Deploy the API service.", params: map[string]string{"env": "x"}},
		a13tDef{name: "deploy_web", desc: "Deploy the web frontend.", params: map[string]string{"env": "x"}},
		a13tDef{name: "deploy_worker", desc: "Deploy the worker.", params: map[string]string{"env": "x"}},
		a13tDef{name: "lint_code", desc: "Run the linter.", params: map[string]string{"fix": "x"}},
		a13tDef{name: "open_ticket", desc: "Open an issue in the tracker.", params: map[string]string{"title": "x"}},
	)
	c, ctx := a13tStart(t, ws, nil)
	deployed := []string{"deploy_api", "deploy_web", "deploy_worker"}

	all := a13tByName(a13tList(t, ctx, c, map[string]any{"includeDeferred": true}))
	active := a13tActive(t, ctx, c)
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

	base := a13tChanged(c)
	r := a13tSearch(t, ctx, c, map[string]any{"query": "deploy"})
	got := a13tMatches(r.Text())
	sort.Strings(got)
	if !reflect.DeepEqual(got, deployed) {
		t.Fatalf("matches %v, want %v\n%s", got, deployed, r.Text())
	}
	a13tWaitChanged(t, c, base+1)
	active = a13tActive(t, ctx, c)
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
	r2 := a13tSearch(t, ctx, c, map[string]any{"query": "deploy"})
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
	before := a13tBarrier(t, ctx, c, "lint_code")
	if got := before - (base + 1); got != 0 {
		t.Errorf("the first search sent %d extra or the second identical search sent %d tools/listChanged, want 1 and 0", before-base, got)
	}
}

// Calling a deferred tool by name, without a search, runs it, activates it
// and sends tools/listChanged once.
func TestToolSearchCallByName(t *testing.T) {
	ws := t.TempDir()
	a13tWrite(t, ws,
		a13tDef{name: "open_ticket", desc: "Open an issue.", params: map[string]string{"title": "x"}},
		a13tDef{name: "close_ticket", desc: "Close an issue.", params: map[string]string{"id": "x"}},
	)
	c, ctx := a13tStart(t, ws, nil)
	if _, ok := a13tActive(t, ctx, c)["open_ticket"]; ok {
		t.Fatal("open_ticket active before use")
	}
	base := a13tChanged(c)
	r := c.CallTool(ctx, "open_ticket", map[string]any{"title": "t"})
	if r.IsError || !strings.Contains(r.Text(), "ran-open_ticket") {
		t.Fatalf("calling deferred open_ticket by name: isError %v: %s", r.IsError, r.Text())
	}
	a13tWaitChanged(t, c, base+1)
	if _, ok := a13tActive(t, ctx, c)["open_ticket"]; !ok {
		t.Error("open_ticket not in tools/list after being called by name")
	}
	// A second call changes nothing; close_ticket's activation is the barrier.
	c.CallTool(ctx, "open_ticket", map[string]any{"title": "t"})
	if before := a13tBarrier(t, ctx, c, "close_ticket"); before != base+1 {
		t.Errorf("%d tools/listChanged for two calls of open_ticket, want 1", before-base)
	}
}

// A search activating several tools sends one tools/listChanged, not one
// per tool.
func TestToolSearchOneNotePerBatch(t *testing.T) {
	ws := t.TempDir()
	defs := a13tMany(8)
	defs = append(defs, a13tDef{name: "zz_barrier", desc: "Unrelated.", params: map[string]string{"q": "x"}})
	a13tWrite(t, ws, defs...)
	c, ctx := a13tStart(t, ws, nil)
	base := a13tChanged(c)
	r := a13tSearch(t, ctx, c, map[string]any{"query": "deploy", "limit": 8})
	if n := len(a13tMatches(r.Text())); n != 8 {
		t.Fatalf("%d matches, want 8:\n%s", n, r.Text())
	}
	a13tWaitChanged(t, c, base+1)
	if before := a13tBarrier(t, ctx, c, "zz_barrier"); before != base+1 {
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
	c0, ctx0 := a13tStart(t, ws0, nil)
	core := len(a13tActive(t, ctx0, c0))

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
				a13tWrite(t, ws, a13tDef{name: n, desc: "Extension tool.", params: map[string]string{"p": "x"}, deferred: a13tBool(false)})
			}
			c, ctx := a13tStart(t, ws, init)
			active := a13tActive(t, ctx, c)
			all := a13tByName(a13tList(t, ctx, c, map[string]any{"includeDeferred": true}))
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

// tools/list in the openai and anthropic formats lists deferred tools in
// that shape with includeDeferred, and leaves them out without it.
func TestToolSearchFormats(t *testing.T) {
	ws := t.TempDir()
	d := a13tDef{name: "open_ticket", desc: "Open an issue in the tracker.", params: map[string]string{"title": "issue title"}}
	a13tWrite(t, ws, d)
	c, ctx := a13tStart(t, ws, nil)
	want := map[string]any{}
	b, _ := json.Marshal(a13tSchema(d))
	json.Unmarshal(b, &want)
	for _, tc := range []struct {
		format string
		pick   func(map[string]any) (name, desc any, schema any)
	}{
		{"openai", func(m map[string]any) (any, any, any) {
			if m["type"] != "function" {
				return nil, nil, nil
			}
			f, _ := m["function"].(map[string]any)
			return f["name"], f["description"], f["parameters"]
		}},
		{"anthropic", func(m map[string]any) (any, any, any) { return m["name"], m["description"], m["input_schema"] }},
	} {
		t.Run(tc.format, func(t *testing.T) {
			find := func(include bool) map[string]any {
				for _, tl := range a13tList(t, ctx, c, map[string]any{"format": tc.format, "includeDeferred": include}) {
					if n, _, _ := tc.pick(tl); n == d.name {
						return tl
					}
				}
				return nil
			}
			if find(false) != nil {
				t.Errorf("deferred %s listed without includeDeferred", d.name)
			}
			tl := find(true)
			if tl == nil {
				t.Fatalf("deferred %s not listed in %s shape with includeDeferred", d.name, tc.format)
			}
			_, desc, schema := tc.pick(tl)
			if desc != d.desc || !reflect.DeepEqual(schema, want) {
				t.Errorf("%s entry %v, want description %q and schema %v", tc.format, tl, d.desc, want)
			}
		})
	}
}

// 200 deferred tools; huge, regex-like and unicode queries answer promptly
// and sensibly.
func TestToolSearchRobustness(t *testing.T) {
	ws := t.TempDir()
	defs := a13tMany(200)
	defs = append(defs,
		a13tDef{name: "deployer_fr", desc: "Déployer le service 日本語 vers la production.", params: map[string]string{"cible": "x"}},
		a13tDef{name: "regex_tool", desc: "Handles the frobulator.", params: map[string]string{"q": "x"}},
	)
	a13tWrite(t, ws, defs...)
	c, ctx := a13tStart(t, ws, nil)
	_, _, listed := a13tSearchDesc(t, ctx, c)

	big := strings.Repeat("nonsenseword ", 10240/13+1)[:10240]
	for _, tc := range []struct {
		name  string
		query string
		want  []string // expected first matches; nil: nothing matches
	}{
		{"regex metacharacters alone", ".*[(", nil},
		{"regex metacharacters around a word", "frobulator.*[(", []string{"regex_tool"}},
		{"unicode", "déployer", []string{"deployer_fr"}},
		{"unicode other case", "DÉPLOYER", []string{"deployer_fr"}},
		{"CJK", "日本語", []string{"deployer_fr"}},
		{"10 KB query, no match", big, nil},
		{"10 KB query with one real word", big[:10200] + " frobulator", []string{"regex_tool"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A fresh session each: a search activates its matches, and
			// active tools are no longer searched.
			c, ctx := a13tStart(t, ws, nil)
			r := a13tSearch(t, ctx, c, map[string]any{"query": tc.query})
			got := a13tMatches(r.Text())
			if tc.want == nil {
				if !r.IsError || !strings.Contains(r.Text(), "No deferred tool matches") || a13tListed(r.Text()) != listed {
					t.Errorf("isError %v, want the no-match answer listing %d names; got %d bytes: %.300s", r.IsError, listed, len(r.Text()), r.Text())
				}
				if len(r.Text()) > 4*1024+len(tc.query) {
					t.Errorf("no-match answer is %d bytes", len(r.Text()))
				}
				t.Logf("answer %d bytes", len(r.Text()))
				return
			}
			if r.IsError || len(got) == 0 || got[0] != tc.want[0] {
				t.Errorf("query %.60q: matches %v (isError %v), want %v first\n%.500s", tc.query, got, r.IsError, tc.want, r.Text())
			}
		})
	}
	// A broad query over 200 tools returns the default count, promptly.
	r := a13tSearch(t, ctx, c, map[string]any{"query": "deploy service cluster"})
	if n := len(a13tMatches(r.Text())); n != 5 {
		t.Errorf("%d matches over 200 tools, want 5", n)
	}
}

// a13tListed counts the names a no-match answer lists (the 60 deploy_svc
// tools and the built-in deferred ones, bash_output and bash_kill).
func a13tListed(text string) int {
	_, names, ok := strings.Cut(text, "Deferred tools: ")
	if !ok {
		return 0
	}
	names, _, _ = strings.Cut(names, ". Search again")
	if i := strings.LastIndex(names, " and "); i >= 0 {
		names = names[:i]
	}
	return len(strings.Split(names, ", "))
}
