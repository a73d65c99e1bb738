package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// claudeAskMark is the message the test client's user gives when rejecting an
// ask, so an "ask" outcome is recognisable in the result text.
const claudeAskMark = "CLAUDE-ASKED"

// claudeEnv is one session set up like a user who copied Claude Code rules.
type claudeEnv struct {
	ws, home, xdg string
	c             *harness.Client
	mu            sync.Mutex
	confirms      []map[string]any
}

// claudeFiles writes files (relative to dir); those under bin/ are executable.
func claudeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	writeFiles(t, dir, files)
	for name := range files {
		if strings.HasPrefix(name, "bin/") {
			os.Chmod(filepath.Join(dir, name), 0o755)
		}
	}
}

// claudeStart starts agentls on a workspace holding files, with fake npm/git/
// deploy programs on PATH that print what ran, a confirm-capable client that
// rejects every ask with claudeAskMark, and the given initializationOptions.
func claudeStart(t *testing.T, files, userFiles map[string]string, initOpts map[string]any) *claudeEnv {
	t.Helper()
	e := &claudeEnv{ws: t.TempDir(), home: t.TempDir(), xdg: t.TempDir()}
	bin := t.TempDir()
	for _, prog := range []string{"npm", "deploy", "mytool", "pushy"} {
		claudeFiles(t, bin, map[string]string{"bin/" + prog: "#!/bin/sh\necho RAN " + prog + " \"$@\"\n"})
	}
	claudeFiles(t, e.ws, files)
	claudeFiles(t, filepath.Join(e.xdg, "agentls"), userFiles)
	e.c = harness.Start(t, harness.Options{Root: e.ws, Env: []string{
		"HOME=" + e.home, "XDG_CONFIG_HOME=" + e.xdg,
		"PATH=" + filepath.Join(bin, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
	}})
	e.c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		var p map[string]any
		json.Unmarshal(params, &p)
		e.mu.Lock()
		e.confirms = append(e.confirms, p)
		e.mu.Unlock()
		return map[string]any{"decision": "rejectOnce", "message": claudeAskMark}, nil
	}
	params := map[string]any{"capabilities": map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}}}
	if initOpts != nil {
		params["initializationOptions"] = initOpts
	}
	e.c.Initialize(testCtx(t, 10*time.Second), params)
	return e
}

// claudeOutcome is how a call ended: "allow", "ask" or "deny" (plus text).
func (e *claudeEnv) call(t *testing.T, tool string, args map[string]any) (string, string) {
	t.Helper()
	r := e.c.CallTool(testCtx(t, 10*time.Second), tool, args)
	txt := r.Text()
	switch {
	case strings.Contains(txt, claudeAskMark):
		return "ask", txt
	case r.IsError && (strings.Contains(strings.ToLower(txt), "denied") || strings.Contains(txt, "rule") || strings.Contains(txt, "readOnly mode")):
		return "deny", txt
	case r.IsError:
		return "error", txt
	}
	return "allow", txt
}

func claudeSettings(perm map[string][]string) string {
	return compactJSON(map[string]any{"permissions": perm})
}

// claudeCase is one call and the outcome the contract gives it.
type claudeCase struct {
	name string
	tool string
	args map[string]any
	want string // allow, ask, deny
	text string // substring the result must hold ("" = any)
}

func claudeRun(t *testing.T, e *claudeEnv, cases []claudeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tool := tc.tool
			if tool == "" {
				tool = "bash"
			}
			got, txt := e.call(t, tool, tc.args)
			if got != tc.want {
				t.Errorf("%s %v: got %s, want %s; text: %s", tool, tc.args, got, tc.want, txt)
			}
			if tc.text != "" && !strings.Contains(txt, tc.text) {
				t.Errorf("%s %v: text %q lacks %q", tool, tc.args, txt, tc.text)
			}
		})
	}
}

func claudeCmd(name, cmd, want, text string) claudeCase {
	return claudeCase{name: name, args: map[string]any{"command": cmd}, want: want, text: text}
}

// claudeDocs is what a user reads to know what their copied settings do.
func claudeDocs(t *testing.T) (docs string) {
	for _, f := range []string{"../../docs/tools.md", "../../docs/protocol.md", "../../README.md"} {
		docs += readFile(t, f)
	}
	return docs
}

const claudeDenyDeploy = "denied by the rule Bash(deploy:*) (.agentls/settings.json)"

// The confirm reason is the documented sentence naming the rule and file.
func TestClaudeSettingsAskReason(t *testing.T) {
	t.Parallel()
	e := claudeStart(t, map[string]string{
		".agentls/settings.json": claudeSettings(map[string][]string{"ask": {"Bash(mytool:*)", "Read(./a.txt)"}}),
		"a.txt":                  "hello\n",
	}, nil, nil)
	claudeRun(t, e, []claudeCase{
		claudeCmd("bash ask rule", "mytool x", "ask", "denied by the user: "+claudeAskMark),
		{name: "read ask rule", tool: "read", args: map[string]any{"path": "a.txt"}, want: "ask"},
	})
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.confirms) != 2 {
		t.Fatalf("confirms = %v", e.confirms)
	}
	for i, rule := range []string{"Bash(mytool:*) (.agentls/settings.json)", "Read(./a.txt) (.agentls/settings.json)"} {
		if got := e.confirms[i]; got["rule"] != rule || got["reason"] != "the rule "+rule+" asks the user before this call" {
			t.Errorf("confirm %d = rule %q reason %q, want rule %q and the sentence naming it", i, got["rule"], got["reason"], rule)
		}
	}
}

// A workspace allow cannot lift the built-in ask for agentls's own
// configuration (nor the secret-file one: permissions/
// project_cannot_lift_builtins.txtar); an editor or user allow can lift the
// secret-file ask.
func TestClaudeSettingsBuiltinAsks(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		".agentls/settings.json": claudeSettings(map[string][]string{"allow": {"Read(./.env)", "Edit(/.agentls/**)"}}),
		".env":                   "TOKEN=abc\n",
	}
	claudeRun(t, claudeStart(t, files, nil, map[string]any{"mode": "acceptEdits"}), []claudeCase{
		{name: "workspace allow does not lift config ask", tool: "write", args: map[string]any{"path": ".agentls/tools/x.json", "content": "{}"}, want: "ask"},
	})
	e2 := claudeStart(t, files, nil, map[string]any{"mode": "acceptEdits", "permissions": map[string]any{"allow": []string{"Read(./.env)"}}})
	claudeRun(t, e2, []claudeCase{
		{name: "editor allow lifts secret ask", tool: "read", args: map[string]any{"path": ".env"}, want: "allow", text: "TOKEN="},
	})
	e3 := claudeStart(t, files, map[string]string{"settings.json": claudeSettings(map[string][]string{"allow": {"Read(./.env)"}})}, nil)
	claudeRun(t, e3, []claudeCase{
		{name: "user allow lifts secret ask", tool: "read", args: map[string]any{"path": ".env"}, want: "allow", text: "TOKEN="},
	})
}

// An invalid rule: the file is ignored whole and a logMessage error names
// the file, the rule and the column; other files' rules still apply.
func TestClaudeSettingsInvalidRule(t *testing.T) {
	t.Parallel()
	e := claudeStart(t, map[string]string{
		".agentls/settings.json":       claudeSettings(map[string][]string{"deny": {"Bash(deploy:*)"}}),
		".agentls/settings.local.json": claudeSettings(map[string][]string{"allow": {"Bash(npm run test:*"}, "deny": {"Bash(mytool:*)"}}),
	}, nil, nil)
	n, ok := e.c.WaitNote(5*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "settings.local.json")
	})
	if !ok {
		t.Fatal("no window/logMessage naming .agentls/settings.local.json")
	}
	var lm struct {
		Type    int    `json:"type"`
		Message string `json:"message"`
	}
	json.Unmarshal(n.Params, &lm)
	if lm.Type != 1 || !strings.Contains(lm.Message, `Bash(npm run test:*`) || !strings.Contains(lm.Message, "column") {
		t.Errorf("logMessage = %+v, want an error naming the rule and its column", lm)
	}
	claudeRun(t, e, []claudeCase{
		claudeCmd("other file's deny applies", "deploy x", "deny", claudeDenyDeploy),
		claudeCmd("the file's valid deny still applies", "mytool x", "deny", ""),
		claudeCmd("ignored file's allow is gone", "npm run test", "ask", ""),
	})
}

// Claude Code's settings shape (permissions.defaultMode, its mode names, the
// `Bash(cmd *)` wildcard) is accepted from files; agentls's docs must say so,
// since a user reads them to know what their copied settings do.
func TestClaudeSettingsClaudeShapeDocumented(t *testing.T) {
	t.Parallel()
	docs := claudeDocs(t)
	for _, tc := range []struct {
		name, file, cmd, want, doc string
	}{
		{"defaultMode plan", `{"permissions":{"defaultMode":"plan"}}`, "mytool x", "deny", "plan"},
		{"defaultMode bypassPermissions from user file", "", "mytool x", "allow", "bypassPermissions"},
		{"defaultMode key", `{"permissions":{"defaultMode":"readOnly"}}`, "mytool x", "deny", "defaultMode"},
		{"space-star wildcard", `{"permissions":{"allow":["Bash(mytool run *)"]}}`, "mytool run fast", "allow", " *)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{".agentls/settings.json": tc.file}
			var user map[string]string
			if tc.file == "" {
				files = nil
				user = map[string]string{"settings.json": `{"permissions":{"defaultMode":"bypassPermissions"}}`}
			}
			e := claudeStart(t, files, user, nil)
			got, txt := e.call(t, "bash", map[string]any{"command": tc.cmd})
			if got != tc.want {
				t.Skipf("not accepted (%s: %s); nothing to document", got, txt)
			}
			if !strings.Contains(docs, "`"+tc.doc) && !strings.Contains(docs, tc.doc+"`") {
				t.Errorf("agentls accepts %s (%q → %s) but docs/tools.md, docs/protocol.md and README.md never mention %q", tc.name, tc.cmd, got, tc.doc)
			}
		})
	}
}

// Rules naming tools agentls does not have (Claude Code's WebFetch,
// WebSearch, Task, the mcp__server__* wildcard) do not break the file; what
// becomes of them is either reported or documented.
func TestClaudeSettingsForeignToolRules(t *testing.T) {
	t.Parallel()
	rules := []string{"WebFetch(domain:example.com)", "WebSearch", "Task", "mcp__srv__*"}
	e := claudeStart(t, map[string]string{
		".agentls/settings.json": claudeSettings(map[string][]string{"allow": rules, "deny": {"Bash(deploy:*)"}}),
	}, nil, nil)
	claudeRun(t, e, []claudeCase{claudeCmd("file still applies", "deploy x", "deny", claudeDenyDeploy)})
	docs := claudeDocs(t)
	var logs string
	for _, n := range e.c.Notes("window/logMessage") {
		logs += string(n.Params)
	}
	for _, r := range rules {
		name := r
		if i := strings.IndexAny(name, "("); i > 0 {
			name = name[:i]
		}
		docName := name
		if strings.HasPrefix(name, "mcp__") {
			docName = "mcp__<server>__*" // the docs name the form, not this server
		}
		if !strings.Contains(logs, name) && !strings.Contains(docs, docName) {
			t.Errorf("rule %q is accepted silently: no logMessage names it and the docs never say what agentls does with it", r)
		}
	}
}

// An unknown key among the editor's permissions (Claude Code's
// additionalDirectories) is only a warning: the rules beside it hold. (A
// Claude Code mode name or an invalid rule fails initialize:
// TestInitializeInitializationOptions, internal/settings TestInitOptionsRules.)
func TestClaudeSettingsEditorSettings(t *testing.T) {
	t.Parallel()
	e := claudeStart(t, nil, nil, map[string]any{"permissions": map[string]any{"deny": []string{"Bash(deploy:*)"}, "additionalDirectories": []string{"../other"}}})
	if _, ok := e.c.WaitNote(5*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "additionalDirectories")
	}); !ok {
		t.Errorf("no window/logMessage names the unknown key additionalDirectories")
	}
	claudeRun(t, e, []claudeCase{claudeCmd("rules kept", "deploy x", "deny", "denied by the rule Bash(deploy:*) (initializationOptions)")})
}

// A rule error in the user's settings file is reported naming that file.
func TestClaudeSettingsUserFileRuleErrorNamesTheFile(t *testing.T) {
	t.Parallel()
	e := claudeStart(t, nil, map[string]string{"settings.json": `{"permissions":{"deny":["Read(./x"]}}`}, nil)
	if _, ok := e.c.WaitNote(5*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "agentls/settings.json") && strings.Contains(string(n.Params), "Read(./x")
	}); !ok {
		t.Errorf("no window/logMessage names the user settings file and its bad rule; got %v", e.c.Notes("window/logMessage"))
	}
}
