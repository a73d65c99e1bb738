package e2e

// Tool calls as other agents' models emit them (Claude Code,
// Gemini CLI, Codex, pi, crush, opencode) and common model slips. docs/tools.md
// "Input is untrusted": each call must either work with its intended meaning
// (checked on the effect: lines shown, bytes on disk, working directory) or
// fail with a message naming what to send instead, and sending that must
// work. A dropped field that silently changes the effect is a finding.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

// formatsCase is one realistic call. If the call succeeds, its text must hold
// want and lack lacks (the intended meaning). If it fails, errWant must be
// set (nil: an error is not acceptable), the message must hold every
// errWant and none of errLacks, and retry (on retryTool, default tool)
// must then succeed with retryWant.
type formatsCase struct {
	name      string
	tool      string
	args      any
	want      []string
	lacks     []string
	norm      []string // substrings of details.normalized when the call works
	errWant   []string
	errLacks  []string
	retryTool string
	retry     any
	retryWant []string
}

// formatsNormalized is details.normalized joined with newlines.
func formatsNormalized(r harness.Result) string {
	var parts []string
	switch v := r.Details["normalized"].(type) {
	case []any:
		for _, x := range v {
			parts = append(parts, fmt.Sprint(x))
		}
	case nil:
	default:
		parts = append(parts, fmt.Sprint(v))
	}
	return strings.Join(parts, "\n")
}

// formatsRun runs cs on c and checks the outcome; it returns the first result.
func formatsRun(t *testing.T, ctx context.Context, c *harness.Client, cs formatsCase) harness.Result {
	t.Helper()
	r, err := c.TryCallTool(ctx, cs.tool, cs.args)
	if err != nil {
		t.Fatalf("%s %s: protocol error (tool failures must be results): %v", cs.tool, compactJSON(cs.args), err)
	}
	first, _, _ := strings.Cut(r.Text(), "\n")
	t.Logf("outcome isError=%v: %s | normalized: %s", r.IsError, first, strings.ReplaceAll(formatsNormalized(r), "\n", "; "))
	if !r.IsError {
		what := fmt.Sprintf("%s %s (worked)", cs.tool, compactJSON(cs.args))
		formatsContains(t, what, r.Text(), cs.want...)
		formatsLacks(t, what, r.Text(), cs.lacks...)
		formatsContains(t, what+" details.normalized", formatsNormalized(r), cs.norm...)
		return r
	}
	what := fmt.Sprintf("%s %s (isError)", cs.tool, compactJSON(cs.args))
	if cs.errWant == nil {
		t.Errorf("%s: must work with the intended meaning, got an error:\n%s", what, r.Text())
		return r
	}
	formatsContains(t, what, r.Text(), cs.errWant...)
	formatsLacks(t, what, r.Text(), cs.errLacks...)
	if cs.retry != nil {
		tool := cs.retryTool
		if tool == "" {
			tool = cs.tool
		}
		rr := c.CallTool(ctx, tool, cs.retry)
		rwhat := fmt.Sprintf("retry %s %s as the error says", tool, compactJSON(cs.retry))
		if rr.IsError {
			t.Errorf("%s: still an error:\n%s", rwhat, rr.Text())
		}
		formatsContains(t, rwhat, rr.Text(), cs.retryWant...)
	}
	return r
}

// formatsShort is s cut to its first 300 bytes, for failure messages.
func formatsShort(s string) string {
	if len(s) <= 300 {
		return s
	}
	return s[:300] + fmt.Sprintf("… [%d more bytes]", len(s)-300)
}

// formatsContains fails when text lacks any of wants; it quotes text shortened.
func formatsContains(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s: want %q in:\n%s", what, w, formatsShort(text))
		}
	}
}

// formatsLacks fails when text holds any of nots; it quotes text shortened.
func formatsLacks(t *testing.T, what, text string, nots ...string) {
	t.Helper()
	for _, n := range nots {
		if strings.Contains(text, n) {
			t.Errorf("%s: unexpected %q in:\n%s", what, n, formatsShort(text))
		}
	}
}

// formatsStart starts a bypass-mode session on a fresh resolved workspace.
func formatsStart(t *testing.T, files map[string]string) (*harness.Client, string, context.Context) {
	t.Helper()
	ws := resolvedWorkspace(t, files)
	c, ctx := startIn(t, ws, bypass())
	return c, ws, ctx
}

// Arguments sent as one JSON string run the call or name the field to
// send. (`agentls call` takes only an object; the other agents' spellings
// are pinned by the arguments/model_* scripts.)
func TestModelsArgumentsAsJSONString(t *testing.T) {
	c, _, ctx := formatsStart(t, map[string]string{"notes.txt": "one\ntwo\n"})
	formatsRun(t, ctx, c, formatsCase{name: "read", tool: "read", args: `{"path":"notes.txt","limit":1}`,
		want: []string{"     1→one"}, lacks: []string{"→two"},
		errWant: []string{"`path`", "Usage: read {path"}, retry: map[string]any{"path": "notes.txt", "limit": 1}, retryWant: []string{"     1→one"}})
	formatsRun(t, ctx, c, formatsCase{name: "bash", tool: "bash", args: `{"command":"echo hi"}`, want: []string{"hi"},
		errWant: []string{"`command`"}, retry: map[string]any{"command": "echo hi"}, retryWant: []string{"hi"}})
}

// tools/list in every format; every schema is plain enough for OpenAI,
// Anthropic and MCP: no null unions, no $ref, objects with properties.
func TestToolsListFormatsAndSchemas(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	for _, format := range []string{"mcp", "openai", "anthropic"} {
		t.Run(format, func(t *testing.T) {
			var list struct {
				Tools []map[string]any `json:"tools"`
			}
			if err := c.Call(ctx, "tools/list", map[string]any{"format": format}, &list); err != nil {
				t.Fatal(err)
			}
			if len(list.Tools) == 0 {
				t.Fatal("no tools")
			}
			for _, tool := range list.Tools {
				var name string
				var schema any
				switch format {
				case "mcp":
					name, schema = tool["name"].(string), tool["inputSchema"]
					ann, _ := tool["annotations"].(map[string]any)
					for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
						if _, ok := ann[k].(bool); !ok {
							t.Errorf("%s: annotation %s missing", name, k)
						}
					}
					if _, ok := tool["_meta"].(map[string]any)["concurrencySafe"]; !ok {
						t.Errorf("%s: _meta.concurrencySafe missing", name)
					}
				case "openai":
					if tool["type"] != "function" {
						t.Errorf("type = %v", tool["type"])
					}
					fn := tool["function"].(map[string]any)
					name, schema = fn["name"].(string), fn["parameters"]
				case "anthropic":
					name, schema = tool["name"].(string), tool["input_schema"]
				}
				if name == "" || schema == nil {
					t.Fatalf("tool without name or schema: %v", tool)
				}
				if s := schema.(map[string]any); s["type"] != "object" {
					t.Errorf("%s: schema type = %v", name, s["type"])
				}
				walkSchema(t, name, schema)
			}
		})
	}
	var bad struct{}
	if err := c.Call(ctx, "tools/list", map[string]any{"format": "xml"}, &bad); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("format xml: err = %v", err)
	}
}

func walkSchema(t *testing.T, tool string, v any) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["$ref"]; ok {
			t.Errorf("%s: schema has $ref", tool)
		}
		if _, ok := x["$defs"]; ok {
			t.Errorf("%s: schema has $defs", tool)
		}
		if ty, ok := x["type"]; ok {
			if _, isList := ty.([]any); isList {
				t.Errorf("%s: schema has a type union %v", tool, ty)
			}
			if ty == "null" {
				t.Errorf("%s: schema has type null", tool)
			}
		}
		for _, e := range x {
			walkSchema(t, tool, e)
		}
	case []any:
		for _, e := range x {
			walkSchema(t, tool, e)
		}
	}
}
