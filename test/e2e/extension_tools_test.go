package e2e

// Extension tools (.agentls/tools/*.json, docs/tools.md "Extension tools"):
// listed with their labels, run and governed like bash. Elsewhere:
// argument validation and bad files, the scripts
// arguments/extension_tool_arguments_validated and
// permissions/extension_bad_files_reported_and_skipped; placeholders and
// quoting, permissions/extension_placeholder_in_every_shell_context and
// extension_template_quotes_arguments, a value over a command line
// internal/extension's TestValueOverACommandLineIsRefused; rules and modes,
// permissions/extension_tool_rules_and_modes and extension_tools_are_governed
// (a destructive tool asks in acceptEdits); files followed live,
// internal/session's TestConfigFilesReloadWhenTheyChange and
// TestUserConfigReloadsWhenItChanges, the workspace's precedence
// internal/extension's TestLoadPrecedenceAndDefaults.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// extTool is one extension tool definition: name, command, property
// schemas and extra fields.
func extTool(name, command string, props, extra map[string]any) map[string]any {
	if props == nil {
		props = map[string]any{}
	}
	def := map[string]any{
		"name":        name,
		"description": "Extension tool " + name + ".",
		"inputSchema": map[string]any{"type": "object", "properties": props},
		"command":     command,
		"deferred":    false,
		"timeout":     30,
	}
	maps.Copy(def, extra)
	return def
}

var extStr = map[string]any{"type": "string"}

// extWS makes a workspace whose .agentls/tools holds defs (file base name →
// definition) and files.
func extWS(t *testing.T, defs map[string]any, files map[string]string) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, def := range defs {
		writeFile(t, filepath.Join(ws, ".agentls", "tools", name), compactJSON(def))
	}
	for name, body := range files {
		writeFile(t, filepath.Join(ws, filepath.FromSlash(name)), body)
	}
	return ws
}

// extStart starts agentls on ws with initializationOptions init.
func extStart(t *testing.T, ws string, init map[string]any, env ...string) (*harness.Client, context.Context) {
	t.Helper()
	ctx := testCtx(t, 40*time.Second)
	c := harness.Start(t, harness.Options{Root: ws, Env: env})
	c.Initialize(ctx, map[string]any{"initializationOptions": init})
	return c, ctx
}

func extExists(p string) bool { _, err := os.Lstat(p); return err == nil }

// The labels in tools/list come from the definition, checked against the
// command's shell analysis: a workspace readOnly claim of a writing command
// is dropped, a destructive command is labelled so though its file says
// not, a build is neither (every combination is internal/extension's
// TestLabelsDoNotTrustWorkspaceClaims and TestAnnotationsFollowTheDefinition). The
// description and schema are the file's, a tool is deferred unless its file
// says otherwise, and _meta.source tells it from a core tool.
func TestExtensionToolsListedWithTheirLabels(t *testing.T) {
	t.Parallel()
	def := extTool("ext_def", "true", nil, nil)
	delete(def, "deferred")
	ws := extWS(t, map[string]any{
		"liar.json":  extTool("ext_liar", "touch made-by-liar", nil, map[string]any{"readOnly": true}),
		"rm2.json":   extTool("ext_rm2", "rm -f {{f}}", map[string]any{"f": extStr}, map[string]any{"destructive": false}),
		"build.json": extTool("ext_build", "go build ./...", nil, map[string]any{"destructive": false}),
		"def.json":   def,
	}, nil)
	c, ctx := extStart(t, ws, bypassOptions())
	list := listedTools(t, c, ctx, nil)
	for _, tc := range []struct {
		name      string
		ro, destr bool
	}{{"ext_liar", false, false}, {"ext_rm2", false, true}, {"ext_build", false, false}} {
		ann, _ := list[tc.name]["annotations"].(map[string]any)
		if ann["readOnlyHint"] != tc.ro || ann["destructiveHint"] != tc.destr {
			t.Errorf("%s: annotations %v, want readOnlyHint=%v destructiveHint=%v", tc.name, ann, tc.ro, tc.destr)
		}
	}
	rm2 := list["ext_rm2"]
	if s, _ := rm2["inputSchema"].(map[string]any); rm2["description"] != "Extension tool ext_rm2." || s["type"] != "object" || s["properties"].(map[string]any)["f"] == nil {
		t.Errorf("ext_rm2 = %s, want the file's description and schema", compactJSON(rm2))
	}
	if m, _ := rm2["_meta"].(map[string]any); m["source"] == nil || m["source"] == list["read"]["_meta"].(map[string]any)["source"] || m["deferred"] == true {
		t.Errorf("ext_rm2 _meta = %v: want a source of its own and not deferred", m)
	}
	if _, ok := list["ext_def"]; ok {
		t.Errorf("a tool whose file does not say deferred: false is active before tool_search")
	}
	if m, _ := listedTools(t, c, ctx, map[string]any{"includeDeferred": true})["ext_def"]["_meta"].(map[string]any); m["deferred"] != true {
		t.Errorf("includeDeferred: ext_def _meta = %v, want deferred: true", m)
	}
}

// An extension tool's command runs through the bash machinery: the same
// text as bash (tail kept, the lines shown named, the rest spilled to a
// file read can open), the result budget cuts it when the bash limits are
// raised, it runs at the workspace root, its output streams as
// tools/progress, the files it changes are listed and their read stamps go
// stale, and secrets (of its command, its arguments, the server's
// environment) are masked.
func TestExtensionToolRunsLikeBash(t *testing.T) {
	t.Parallel()
	long := "for i in $(seq 1 3000); do echo line$i; done; echo 'FAIL: TestBuried' >&2; seq 1 2000"
	aws := "AKIA" + "QZXWVUTSRPONMLKJ"
	gh := "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
	envVal := fmt.Sprintf("s3cr3tV4lue%09d", rand.IntN(1e9))
	ws := extWS(t, map[string]any{
		"l.json":    extTool("ext_long", long, nil, nil),
		"big.json":  extTool("ext_big", "seq -f 'row %g' 1 {{n}}", map[string]any{"n": map[string]any{"type": "integer"}}, map[string]any{"readOnly": true}),
		"p.json":    extTool("ext_pwd", "pwd", nil, map[string]any{"readOnly": true}),
		"k.json":    extTool("ext_keys", `echo aws=`+aws+`; echo token {{v}}; printf 'v=%s\n' "$EXT_SERVICE_TOKEN"`, map[string]any{"v": extStr}, nil),
		"prog.json": extTool("ext_prog", "echo first-chunk; sleep 1.5; echo second-chunk", nil, nil),
		"w.json":    extTool("ext_append", "echo more >> notes.txt", nil, nil),
	}, map[string]string{"notes.txt": "one\n"})
	c, ctx := extStart(t, ws, map[string]any{"mode": "bypass", "limits": map[string]any{"bashBytes": 1 << 20, "bashLines": 100000}}, "EXT_SERVICE_TOKEN="+envVal)
	spillRe := regexp.MustCompile(`/[^\s"]+\.log`)

	t.Run("the same text as bash", func(t *testing.T) {
		c, ctx := extStart(t, ws, bypassOptions()) // the default bash limits
		ext, bash := c.CallTool(ctx, "ext_long", map[string]any{}), c.CallTool(ctx, "bash", map[string]any{"command": long})
		if e, b := spillRe.ReplaceAllString(ext.Text(), "SPILL"), spillRe.ReplaceAllString(bash.Text(), "SPILL"); e != b {
			t.Errorf("extension output differs from bash's:\next:  %.600q\nbash: %.600q", e, b)
		}
		wantContains(t, "notice", ext.Text(), "showing lines 3005-5001 of 5001", `"offset": 1`, "FAIL: TestBuried")
		if !strings.HasSuffix(strings.TrimRight(ext.Text(), "\n"), "\n2000") {
			t.Errorf("the kept tail does not end with the last line")
		}
		spill := spillRe.FindString(ext.Text())
		if b, err := os.ReadFile(spill); err != nil || strings.Count(string(b), "\n") != 5001 {
			t.Errorf("spill file %q: %v, want the 5001 lines", spill, err)
		}
		wantResult(t, "read of the spill file", c.CallTool(ctx, "read", map[string]any{"path": spill, "offset": 1, "limit": 3}), false, "line1")
	})
	t.Run("the result budget cuts at a line and says where to go on", func(t *testing.T) {
		txt := c.CallTool(ctx, "ext_big", map[string]any{"n": 20000}).Text() // ~190 KB
		if len(txt) > 65536+2048 {
			t.Errorf("text is %d bytes, over the 65,536-byte budget", len(txt))
		}
		m := regexp.MustCompile(`"offset": (\d+)`).FindStringSubmatch(txt)
		if m == nil {
			t.Fatalf("no read offset in the notice:\n%s", txt[max(0, len(txt)-600):])
		}
		next, _ := strconv.Atoi(m[1])
		wantContains(t, "ext_big", txt, fmt.Sprintf("row %d\n", next-1), fmt.Sprintf("lines 1-%d of 20000", next-1))
		wantLacks(t, "ext_big", txt, fmt.Sprintf("row %d\n", next))
		wantResult(t, "read the spill at the offset", c.CallTool(ctx, "read", map[string]any{"path": spillRe.FindString(txt), "offset": next, "limit": 1}), false, fmt.Sprintf("row %d", next))
	})
	t.Run("at the workspace root", func(t *testing.T) {
		if r := c.CallTool(ctx, "ext_pwd", map[string]any{}); strings.TrimSpace(r.Text()) != ws {
			t.Errorf("pwd = %q, want %q", r.Text(), ws)
		}
	})
	t.Run("secrets masked", func(t *testing.T) {
		r := c.CallTool(ctx, "ext_keys", map[string]any{"v": gh})
		wantLacks(t, "ext_keys", compactJSON(r)+compactJSON(c.Notes("")), aws, gh, envVal)
		wantContains(t, "ext_keys", r.Text(), "aws=[REDACTED:", "token [REDACTED:", "v=[REDACTED")
	})
	t.Run("output streamed as tools/progress", func(t *testing.T) {
		slow(t)
		r := c.CallTool(ctx, "ext_prog", map[string]any{})
		found := false
		for _, n := range c.Notes("tools/progress") {
			var p map[string]any
			json.Unmarshal(n.Params, &p)
			found = found || p["callId"] == r.CallID && p["tool"] == "ext_prog" && strings.Contains(fmt.Sprint(p["output"]), "first-chunk")
		}
		if !found {
			t.Errorf("no tools/progress with the tool's name and output for %s", r.CallID)
		}
	})
	t.Run("changed files listed, their stamps stale", func(t *testing.T) {
		c.CallTool(ctx, "read", map[string]any{"path": "notes.txt"})
		wantContains(t, "changed files", c.CallTool(ctx, "ext_append", map[string]any{}).Text(), "Changed by this command", "notes.txt")
		wantResult(t, "edit after the tool changed the file", c.CallTool(ctx, "edit", editCall("notes.txt", "one", "uno")), true)
	})
}

// The definition's timeout ends the command and its whole process group,
// and the notice does not tell the model to raise a timeout it cannot set.
// (Cancelling ends the group as for bash: the bash tests'.)
func TestExtensionTimeoutEndsTheProcessGroup(t *testing.T) {
	slow(t)
	t.Parallel()
	marker := fmt.Sprintf("100.%09d", rand.IntN(1e9)) // a unique sleep argument, to find the processes by
	ws := extWS(t, map[string]any{
		"s.json": extTool("ext_sleep", "echo started; (sleep "+marker+") & sleep "+marker+"; echo done", nil, map[string]any{"timeout": 1}),
	}, nil)
	c, ctx := extStart(t, ws, bypassOptions())
	begin := time.Now()
	r := c.CallTool(ctx, "ext_sleep", map[string]any{})
	if took := time.Since(begin); took < 900*time.Millisecond || took > 6*time.Second {
		t.Errorf("timeout 1 took %v, want about 1 s (+ up to 2 s grace)", took)
	}
	wantResult(t, "timed out", r, true, "started", "Timed out after 1s")
	wantLacks(t, "timed out", r.Text(), "done", "Raise timeout")
	if !waitUntil(5*time.Second, func() bool { return len(processesWithArg(marker)) == 0 }) {
		t.Errorf("processes survived the timeout: %v", processesWithArg(marker))
	}
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
