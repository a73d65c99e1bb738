package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

// A Latin-1 file's invalid UTF-8 reaches the client as U+FFFD and the
// connection survives (the default json/v2 codec would fail the reply).
func TestInvalidUTF8SurvivesTheWire(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, nil)
	if err := os.WriteFile(filepath.Join(ws, "latin1.txt"), []byte("caf\xe9 cr\xe8me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := c.CallTool(ctx, "read", map[string]any{"path": "latin1.txt"})
	if r.IsError || !strings.Contains(r.Text(), "caf\uFFFD cr\uFFFDme") || !strings.Contains(r.Text(), "not valid UTF-8") {
		t.Fatalf("read latin1 = %q", r.Text())
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "latin1.txt"}); r.IsError {
		t.Fatal("connection did not survive")
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

func TestCallBatchKeepsOrderAndIsolatesFailures(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": "A\n", "b.txt": "B\n"})
	var out struct {
		Results []harness.Result `json:"results"`
	}
	calls := []any{
		map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": "one"},
		map[string]any{"name": "nope", "arguments": map[string]any{}},
		map[string]any{"name": "test_panic", "arguments": map[string]any{}},
		map[string]any{"name": "read", "arguments": map[string]any{"path": "b.txt"}, "callId": "four"},
	}
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 4 {
		t.Fatalf("got %d results", len(out.Results))
	}
	if out.Results[0].CallID != "one" || !strings.Contains(out.Results[0].Text(), "1→A") {
		t.Errorf("result 0 = %+v", out.Results[0])
	}
	if !out.Results[1].IsError || !strings.Contains(out.Results[1].Text(), "unknown tool") {
		t.Errorf("result 1 = %+v", out.Results[1])
	}
	if !out.Results[2].IsError || !strings.Contains(out.Results[2].Text(), "internal error in test_panic") {
		t.Errorf("result 2 = %+v", out.Results[2])
	}
	if out.Results[3].CallID != "four" || !strings.Contains(out.Results[3].Text(), "1→B") {
		t.Errorf("result 3 = %+v", out.Results[3])
	}
	// The panic did not take the server down.
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
		t.Fatal(r.Text())
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

// ls of .git says what it is and where its contents are reached (git
// through bash), not that ignore rules hide it; includeIgnored lists it.
func TestLsOfGitDirectory(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n", "a.txt": "a\n"})
	r := c.CallTool(ctx, "ls", map[string]any{"path": ".git"})
	if r.IsError || !strings.Contains(r.Text(), "[.git is git's database, not project files") || strings.Contains(r.Text(), "ignored by ignore rules") || strings.Contains(r.Text(), "ignored entries hidden") {
		t.Errorf("ls .git = %q", r.Text())
	}
	r = c.CallTool(ctx, "ls", map[string]any{"path": ".git", "includeIgnored": true})
	if r.IsError || !strings.Contains(r.Text(), "HEAD") || strings.Contains(r.Text(), "git's database") {
		t.Errorf("ls .git with includeIgnored = %q", r.Text())
	}
}
