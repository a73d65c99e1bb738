package e2e

// The tool surface a client sees through the harness client: `[]` for `{}`
// and the active set changing (tools/listChanged, deferred tools)
// (docs/protocol.md, docs/tools.md).

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// `[]` (how Lua encodes {}) is accepted for any params object, and for a
// tool's arguments.
func TestProtoParamsAsEmptyArray(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": "A\n"})
	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", []any{}, &list); err != nil || len(list.Tools) == 0 || list.Tools[0]["inputSchema"] == nil {
		t.Fatalf("tools/list []: %v, %v", err, list.Tools)
	}
	for _, params := range []any{[]any{}, map[string]any{"calls": []any{}}} {
		var batch map[string]json.RawMessage
		if err := c.Call(ctx, "tools/callBatch", params, &batch); err != nil || string(batch["results"]) != "[]" {
			t.Errorf("tools/callBatch %v: %v, %s; want {\"results\":[]}", params, err, batch["results"])
		}
	}
	var batch struct {
		Results []harness.Result `json:"results"`
	}
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": []any{map[string]any{"name": "ls", "arguments": []any{}}}}, &batch); err != nil || len(batch.Results) != 1 || batch.Results[0].IsError {
		t.Errorf("callBatch with arguments []: %v, %+v", err, batch.Results)
	}
	if r := c.CallTool(ctx, "ls", []any{}); r.IsError || !strings.Contains(r.Text(), "a.txt") {
		t.Fatalf("ls with arguments []: %s", r.Text())
	}
	c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", []any{})
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
		t.Fatalf("after a [] folder change: %s", r.Text())
	}
}

func apToolDef(name string, deferred bool) string {
	b, _ := json.Marshal(map[string]any{
		"name": name, "description": "Audit protocol tool " + name + ".",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"v": map[string]any{"type": "string"}}},
		"command":     "echo " + name + " {{v}}", "readOnly": true, "deferred": deferred,
	})
	return string(b)
}

func apActive(t *testing.T, c *harness.Client, ctx context.Context) map[string]map[string]any {
	t.Helper()
	var out struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", nil, &out); err != nil {
		t.Fatal(err)
	}
	m := map[string]map[string]any{}
	for _, tool := range out.Tools {
		m[tool["name"].(string)] = tool
	}
	return m
}

// tools/listChanged (docs/protocol.md) is a notification, sent when the
// active set changes: an extension tool file appears, tool_search
// activates a deferred tool, or a deferred tool is called by name.
func TestProtoToolsListChanged(t *testing.T) {
	t.Parallel()
	changed := func(t *testing.T, c *harness.Client, since time.Time) harness.Note {
		t.Helper()
		n, ok := c.WaitNote(10*time.Second, func(n harness.Note) bool { return n.Method == "tools/listChanged" && n.At.After(since) })
		if !ok {
			t.Fatal("no tools/listChanged")
		}
		return n
	}
	t.Run("an extension tool file appears", func(t *testing.T) {
		c, ws, ctx := start(t, map[string]string{".agentls/keep": ""})
		since := time.Now()
		writeFile(t, filepath.Join(ws, ".agentls", "tools", "proto_echo.json"), apToolDef("proto_echo", false))
		if n := changed(t, c, since); len(n.Params) > 0 && string(n.Params) != "{}" && string(n.Params) != "null" {
			t.Errorf("tools/listChanged params %s, want {}", n.Params)
		}
		if _, ok := apActive(t, c, ctx)["proto_echo"]; !ok {
			t.Errorf("tools/list after tools/listChanged lacks proto_echo")
		}
		if r := c.CallTool(ctx, "proto_echo", map[string]any{"v": "hi there"}); !strings.Contains(r.Text(), "proto_echo hi there") {
			t.Errorf("proto_echo: %q", r.Text())
		}
	})
	t.Run("tool_search activates a deferred tool", func(t *testing.T) {
		c, _, ctx := start(t, map[string]string{".agentls/tools/frob.json": apToolDef("frobnicate_widgets", true)})
		if _, ok := apActive(t, c, ctx)["frobnicate_widgets"]; ok {
			t.Fatalf("deferred tool active before tool_search")
		}
		since := time.Now()
		wantResult(t, "tool_search", c.CallTool(ctx, "tool_search", map[string]any{"query": "frobnicate widgets"}), false, "frobnicate_widgets")
		changed(t, c, since)
		if _, ok := apActive(t, c, ctx)["frobnicate_widgets"]; !ok {
			t.Errorf("the activated tool is not in tools/list")
		}
	})
	t.Run("a deferred tool called by name", func(t *testing.T) {
		c, _, ctx := start(t, map[string]string{".agentls/tools/ap_hidden.json": apToolDef("ap_hidden", true)})
		since := time.Now()
		if r := c.CallTool(ctx, "ap_hidden", map[string]any{"v": "hi"}); r.IsError || !strings.Contains(r.Text(), "ap_hidden hi") {
			t.Fatalf("call by name: %s", r.Text())
		}
		changed(t, c, since)
		tool, ok := apActive(t, c, ctx)["ap_hidden"]
		if !ok || tool["_meta"].(map[string]any)["deferred"] != false {
			t.Fatalf("not active after the call: %v", tool)
		}
	})
}
