package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentls/agentls/internal/tools"
)

// extensionLike returns n registered-deferred tools; the first is the
// migration tool the search tests look for.
func extensionLike(t *testing.T, n int, deferred bool) []*tools.Tool {
	t.Helper()
	base := []struct{ name, desc string }{
		{"db_migrate", "Run database schema migrations up to the latest version."},
		{"db_seed", "Fill the development database with fixture rows."},
		{"db_console", "Open a SQL console on the database and run one query."},
		{"deploy_preview", "Deploy the current branch to a preview environment."},
		{"lint_css", "Lint stylesheets with stylelint."},
		{"run_e2e", "Run end-to-end browser tests."},
		{"build_docker", "Build the Docker image."},
		{"k8s_logs", "Tail logs of a Kubernetes pod."},
	}
	var out []*tools.Tool
	for i := range n {
		b := base[i%len(base)]
		name := b.name
		if i >= len(base) {
			name = fmt.Sprintf("%s_%d", b.name, i)
		}
		tool, err := tools.NewTool(name, b.desc, map[string]any{
			"type":       "object",
			"properties": map[string]any{"target": map[string]any{"type": "string", "description": "what to act on"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		tool.SetHandler(func(map[string]any) tools.Labels { return tools.Labels{} }, func(ctx context.Context, c *tools.Call, args map[string]any) (tools.Result, error) {
			return tools.Text("ran " + c.Tool), nil
		})
		tool.Deferred = deferred
		out = append(out, tool)
	}
	return out
}

func newSearchRegistry(t *testing.T, exts []*tools.Tool) (*tools.Registry, *atomic.Int32) {
	t.Helper()
	reg := tools.NewRegistry()
	reg.MustRegister(Builtins(tools.DefaultLimits())...)
	reg.MustRegister(NewToolSearch(reg))
	reg.MustRegister(exts...)
	var changes atomic.Int32
	reg.OnChange(func() { changes.Add(1) })
	return reg, &changes
}

func coreNames() []string {
	var names []string
	for _, t := range Builtins(tools.DefaultLimits()) {
		names = append(names, t.Name)
	}
	return append(names, tools.ToolSearchName)
}

func listNames(reg *tools.Registry) []string {
	var names []string
	for _, t := range reg.List(false) {
		names = append(names, t.Name)
	}
	return names
}

func TestToolSearchActivates(t *testing.T) {
	reg, changes := newSearchRegistry(t, extensionLike(t, 40, true))
	if got, want := listNames(reg), coreNames(); !reflect.DeepEqual(got, want) {
		t.Fatalf("tools/list before search = %v, want only %v", got, want)
	}
	x := &tools.Executor{Registry: reg, Env: &tools.Env{}}
	res := x.Call(context.Background(), tools.Request{Name: tools.ToolSearchName, Arguments: json.RawMessage(`{"query":"database migration","limit":3}`)}, nil)
	if res.IsError {
		t.Fatalf("tool_search failed: %s", res.TextOf())
	}
	act, _ := res.Details["activated"].([]string)
	if len(act) == 0 || act[0] != "db_migrate" || len(act) > 3 {
		t.Fatalf("activated %v, want db_migrate first and at most 3", act)
	}
	text := res.TextOf()
	if i, j := strings.Index(text, "## db_migrate"), strings.Index(text, "## "); i < 0 || i != j {
		t.Errorf("db_migrate is not the first match:\n%s", text)
	}
	if !strings.Contains(text, `Input schema: {"properties":{"target"`) {
		t.Errorf("result lacks the full schema:\n%s", text)
	}
	for _, n := range act {
		if !reg.IsActive(n) {
			t.Errorf("%s returned but not active", n)
		}
	}
	if changes.Load() != 1 {
		t.Errorf("OnChange fired %d times, want 1", changes.Load())
	}
	if got := len(listNames(reg)); got != len(coreNames())+len(act) {
		t.Errorf("tools/list has %d tools after search, want %d", got, len(coreNames())+len(act))
	}
	// The same search again finds the rest, not the already active tools.
	res = x.Call(context.Background(), tools.Request{Name: tools.ToolSearchName, Arguments: json.RawMessage(`{"query":"database migration","limit":3}`)}, nil)
	for _, n := range res.Details["activated"].([]string) {
		if slices.Contains(act, n) {
			t.Errorf("second search returned already active %s", n)
		}
	}
}

func TestToolSearchResults(t *testing.T) {
	tests := []struct {
		name    string
		exts    int
		args    string
		isError bool
		want    []string // substrings of the text
		nAct    int
	}{
		{"default limit", 40, `{"query":"database"}`, false, []string{"## db_"}, ToolSearchDefaultLimit},
		{"limit above maximum is refused", 40, `{"query":"database","limit":50}`, true, []string{"≤ 20"}, 0},
		{"nothing matches lists deferred names", 3, `{"query":"zebra"}`, true, []string{"db_migrate, db_seed, db_console"}, 0},
		{"no deferred tools", 0, `{"query":"database"}`, false, []string{"no deferred tools"}, 0},
		{"missing query", 3, `{}`, true, []string{"query"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg, _ := newSearchRegistry(t, extensionLike(t, tc.exts, true))
			x := &tools.Executor{Registry: reg, Env: &tools.Env{}}
			res := x.Call(context.Background(), tools.Request{Name: tools.ToolSearchName, Arguments: json.RawMessage(tc.args)}, nil)
			if res.IsError != tc.isError {
				t.Fatalf("isError = %v, want %v: %s", res.IsError, tc.isError, res.TextOf())
			}
			for _, w := range tc.want {
				if !strings.Contains(res.TextOf(), w) {
					t.Errorf("text lacks %q:\n%s", w, res.TextOf())
				}
			}
			if got := len(listNames(reg)) - len(coreNames()); got != tc.nAct {
				t.Errorf("%d tools activated, want %d", got, tc.nAct)
			}
		})
	}
}

// TestToolSearchNotes: what the registry's notes say (servers still
// starting) ends every answer, a match or not; without notes nothing is
// added.
func TestToolSearchNotes(t *testing.T) {
	const note = `MCP server "slow" is still starting, so its tools are not listed yet: search again in a few seconds.`
	tests := []struct {
		name, query string
		notes       []string
	}{
		{"a match", "database", []string{note}},
		{"no match", "zebra", []string{note}},
		{"no notes", "database", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg, _ := newSearchRegistry(t, extensionLike(t, 3, true))
			reg.SetSearchNotes(func() []string { return tc.notes })
			x := &tools.Executor{Registry: reg, Env: &tools.Env{}}
			text := x.Call(context.Background(), tools.Request{Name: tools.ToolSearchName, Arguments: json.RawMessage(`{"query":"` + tc.query + `"}`)}, nil).TextOf()
			if got := strings.HasSuffix(text, "\n\n"+note); got != (tc.notes != nil) {
				t.Errorf("ends with the note: %v, want %v:\n%s", got, tc.notes != nil, text)
			}
			if tc.notes == nil && strings.Contains(text, "still starting") {
				t.Errorf("a note without notes:\n%s", text)
			}
		})
	}
}

func TestDeferredToolCalledByName(t *testing.T) {
	reg, changes := newSearchRegistry(t, extensionLike(t, 40, true))
	x := &tools.Executor{Registry: reg, Env: &tools.Env{}}
	res := x.Call(context.Background(), tools.Request{Name: "deploy_preview", Arguments: json.RawMessage(`{"target":"main"}`)}, nil)
	if res.IsError || res.TextOf() != "ran deploy_preview" {
		t.Fatalf("calling a deferred tool: %+v", res)
	}
	if !reg.IsActive("deploy_preview") || changes.Load() != 1 {
		t.Errorf("deferred tool not activated by its call (active=%v, changes=%d)", reg.IsActive("deploy_preview"), changes.Load())
	}
}

func TestApplyDeferThreshold(t *testing.T) {
	ncore := len(coreNames())
	tests := []struct {
		name       string
		exts       int
		threshold  int
		wantActive int
		wantChange bool
	}{
		{"under the threshold nothing changes", 10, 30, ncore + 10, false},
		{"exactly at the threshold nothing changes", 30 - ncore, 30, 30, false},
		{"over the threshold defers the excess", 40, 30, 30, true},
		{"zero means the default", 40, 0, tools.DefaultDeferThreshold, true},
		{"core tools stay even above a tiny threshold", 5, 2, ncore, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg, changes := newSearchRegistry(t, extensionLike(t, tc.exts, false))
			reg.ApplyDeferThreshold(tc.threshold)
			names := listNames(reg)
			if len(names) != tc.wantActive {
				t.Errorf("%d active, want %d: %v", len(names), tc.wantActive, names)
			}
			for _, c := range coreNames() {
				if !reg.IsActive(c) {
					t.Errorf("core tool %s deferred", c)
				}
			}
			if (changes.Load() > 0) != tc.wantChange {
				t.Errorf("OnChange fired %d times, want change=%v", changes.Load(), tc.wantChange)
			}
		})
	}
}

func TestApplyDeferThresholdKeepsActivated(t *testing.T) {
	reg, _ := newSearchRegistry(t, extensionLike(t, 40, true))
	reg.Activate("db_migrate")
	reg.ApplyDeferThreshold(1)
	if !reg.IsActive("db_migrate") {
		t.Error("a tool activated by search was deferred again")
	}
}

// The description's numbers must be the enforced constants.
func TestToolSearchDescriptionNumbers(t *testing.T) {
	tool := NewToolSearch(tools.NewRegistry())
	allowed := map[string]bool{
		fmt.Sprint(ToolSearchDefaultLimit): true,
		fmt.Sprint(ToolSearchMaxLimit):     true,
		fmt.Sprint(ToolSearchListedNames):  true,
	}
	for _, n := range regexp.MustCompile(`\d+`).FindAllString(tool.Description, -1) {
		if !allowed[n] {
			t.Errorf("description states %s, which is no constant of tool_search", n)
		}
	}
	if got := prop(tool.Schema, "limit")["maximum"]; got != float64(ToolSearchMaxLimit) {
		t.Errorf("schema maximum = %v, want %d", got, ToolSearchMaxLimit)
	}
}

// A long query is echoed cut to toolSearchEcho characters; an empty one is
// refused; a search for tools an earlier one enabled names them.
func TestToolSearchAnswersEdgeQueries(t *testing.T) {
	reg, _ := newSearchRegistry(t, extensionLike(t, 3, true))
	long := strings.Repeat("zq", 5000)
	r := runToolSearch(reg, toolSearchInput{Query: long}, "")
	if !r.IsError || strings.Contains(r.TextOf(), long[:toolSearchEcho+1]) || !strings.Contains(r.TextOf(), long[:toolSearchEcho]+"…") {
		t.Errorf("a 10,000-character query: %.300q, want it echoed cut at %d characters", r.TextOf(), toolSearchEcho)
	}
	if r := runToolSearch(reg, toolSearchInput{Query: "  "}, ""); !r.IsError || !strings.Contains(r.TextOf(), "`query` is empty") {
		t.Errorf("blank query: %q", r.TextOf())
	}
	runToolSearch(reg, toolSearchInput{Query: "database migrations"}, "")
	r = runToolSearch(reg, toolSearchInput{Query: "database migrations"}, "")
	if r.IsError || !strings.Contains(r.TextOf(), "Already in your tool list") || !strings.Contains(r.TextOf(), "db_migrate") {
		t.Errorf("the same search again: %q", r.TextOf())
	}
}
