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

// claudeFiles writes files (relative to dir) with their contents.
func claudeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(name, "bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// claudeStart starts agentls on a workspace holding files, with fake npm/git/
// deploy programs on PATH that print what ran, a confirm-capable client that
// rejects every ask with claudeAskMark, and the given initializationOptions.
func claudeStart(t *testing.T, files, userFiles map[string]string, initOpts map[string]any) *claudeEnv {
	t.Helper()
	return claudeStartIn(t, t.TempDir(), t.TempDir(), files, userFiles, initOpts)
}

// claudeStartIn is claudeStart with a given workspace and HOME.
func claudeStartIn(t *testing.T, ws, home string, files, userFiles map[string]string, initOpts map[string]any) *claudeEnv {
	t.Helper()
	e := &claudeEnv{ws: ws, home: home, xdg: t.TempDir()}
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
	if initOpts != nil && initOpts["_noinit"] != nil {
		return e
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.c.Initialize(ctx, params)
	return e
}

// claudeOutcome is how a call ended: "allow", "ask" or "deny" (plus text).
func (e *claudeEnv) call(t *testing.T, tool string, args map[string]any) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := e.c.CallTool(ctx, tool, args)
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

func (e *claudeEnv) bash(t *testing.T, cmd string) (string, string) {
	t.Helper()
	return e.call(t, "bash", map[string]any{"command": cmd})
}

func claudeSettings(perm map[string][]string, extra map[string]any) string {
	m := map[string]any{"permissions": perm}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
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

const claudeDenyDeploy = "denied by the rule Bash(deploy:*) (.agentls/settings.json)"

// Claude Code's Bash rule forms: `:*` prefix with a word boundary, exact
// commands, every simple command of a compound line checked, wrappers.
func TestClaudeSettingsBashRules(t *testing.T) {
	t.Parallel()
	e := claudeStart(t, map[string]string{
		".agentls/settings.json": claudeSettings(map[string][]string{
			"allow": {"Bash(npm run test:*)", "Bash(mytool sync)"},
			"deny":  {"Bash(deploy:*)"},
		}, nil),
	}, nil, nil)
	claudeRun(t, e, []claudeCase{
		claudeCmd("prefix bare", "npm run test", "allow", "RAN npm run test"),
		claudeCmd("prefix with args", "npm run test -- -x", "allow", "RAN npm run test -- -x"),
		claudeCmd("prefix word boundary", "npm run testing", "ask", ""),
		claudeCmd("prefix does not match shorter", "npm run", "ask", ""),
		claudeCmd("exact", "mytool sync", "allow", "RAN mytool sync"),
		claudeCmd("exact with extra arg", "mytool sync --force", "ask", ""),
		claudeCmd("exact is not a prefix of another word", "mytool synchronize", "ask", ""),
		claudeCmd("deny plain", "deploy prod", "deny", claudeDenyDeploy),
		claudeCmd("deny bare name", "deploy", "deny", claudeDenyDeploy),
		claudeCmd("deny after and", "npm run test && deploy x", "deny", claudeDenyDeploy),
		claudeCmd("deny after or", "npm run test || deploy x", "deny", claudeDenyDeploy),
		claudeCmd("deny after semicolon", "npm run test; deploy x", "deny", claudeDenyDeploy),
		claudeCmd("deny in pipe", "npm run test | deploy x", "deny", claudeDenyDeploy),
		claudeCmd("deny in command substitution", "echo $(deploy x)", "deny", claudeDenyDeploy),
		claudeCmd("deny in backticks", "echo `deploy x`", "deny", claudeDenyDeploy),
		claudeCmd("deny in subshell", "(deploy x)", "deny", claudeDenyDeploy),
		claudeCmd("deny with leading assignment", "FOO=1 deploy x", "deny", claudeDenyDeploy),
		claudeCmd("deny under env", "env FOO=1 deploy x", "deny", claudeDenyDeploy),
		claudeCmd("deny under sudo", "sudo deploy x", "deny", claudeDenyDeploy),
		claudeCmd("deny under command", "command deploy x", "deny", claudeDenyDeploy),
		claudeCmd("deny under xargs", "echo x | xargs deploy", "deny", claudeDenyDeploy),
		claudeCmd("deny inside bash -c", "bash -c 'deploy x'", "deny", claudeDenyDeploy),
		claudeCmd("deny inside sh -c after allowed", "npm run test && sh -c \"deploy x\"", "deny", claudeDenyDeploy),
		claudeCmd("deny by path base name", "/usr/local/bin/deploy x", "deny", claudeDenyDeploy),
		claudeCmd("deny in here-document", "sh <<'EOF'\ndeploy x\nEOF", "deny", claudeDenyDeploy),
		claudeCmd("deny in eval", "eval 'deploy x'", "deny", claudeDenyDeploy),
		claudeCmd("computed name is refused", "X=deploy; $X prod", "deny", claudeDenyDeploy),
		claudeCmd("pipe into sh is refused", "echo 'deploy x' | sh", "deny", claudeDenyDeploy),
		claudeCmd("allow must cover every part and", "npm run test && mytool other", "ask", ""),
		claudeCmd("allow must cover every part semicolon", "npm run test; mytool other", "ask", ""),
		claudeCmd("allow must cover every part pipe", "npm run test | mytool other", "ask", ""),
		claudeCmd("allow must cover substitution", "npm run test $(mytool other)", "ask", ""),
		claudeCmd("allowed plus read-only", "npm run test && echo done", "allow", "done"),
		claudeCmd("two allowed", "npm run test && mytool sync", "allow", "RAN mytool sync"),
		claudeCmd("env wrapper not matched by prefix", "env FOO=1 npm run test", "ask", ""),
		claudeCmd("bash -c not matched by prefix", "bash -c 'npm run test'", "ask", ""),
		claudeCmd("sudo not matched by prefix", "sudo npm run test", "ask", ""),
		claudeCmd("xargs not matched by prefix", "echo x | xargs npm run test", "ask", ""),
		claudeCmd("eval not matched by prefix", "eval 'npm run test'", "ask", ""),
	})
}

// Tool names are case-insensitive; deny > ask > allow whatever the order.
func TestClaudeSettingsPrecedence(t *testing.T) {
	t.Parallel()
	e := claudeStart(t, map[string]string{
		".agentls/settings.json": claudeSettings(map[string][]string{
			"allow": {"bash(mytool:*)", "BASH(mytool ask:*)", "Bash(mytool deny:*)"},
			"ask":   {"Bash(mytool ask:*)", "Bash(mytool deny:*)"},
			"deny":  {"bAsH(mytool deny:*)"},
		}, nil),
	}, nil, nil)
	claudeRun(t, e, []claudeCase{
		claudeCmd("allow", "mytool run", "allow", "RAN mytool run"),
		claudeCmd("ask beats allow", "mytool ask now", "ask", ""),
		claudeCmd("deny beats ask and allow", "mytool deny now", "deny", "denied by the rule bAsH(mytool deny:*) (.agentls/settings.json)"),
	})
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.confirms) != 1 {
		t.Fatalf("confirms = %d, want 1", len(e.confirms))
	}
	if r, _ := e.confirms[0]["rule"].(string); r != "Bash(mytool ask:*) (.agentls/settings.json)" {
		t.Errorf("confirm rule = %q, want the ask rule and its file", r)
	}
}

// Deny rules from every source apply, each refusal naming its source;
// allows of one source do not lift another's deny.
func TestClaudeSettingsSources(t *testing.T) {
	t.Parallel()
	e := claudeStart(t, map[string]string{
		".agentls/settings.json":       claudeSettings(map[string][]string{"deny": {"Bash(mytool ws:*)"}, "allow": {"Bash(mytool local:*)", "Bash(mytool user:*)"}}, nil),
		".agentls/settings.local.json": claudeSettings(map[string][]string{"deny": {"Bash(mytool local:*)"}, "allow": {"Bash(mytool ws:*)", "Bash(mytool ok:*)"}}, nil),
	}, map[string]string{
		"settings.json": claudeSettings(map[string][]string{"deny": {"Bash(mytool user:*)"}, "allow": {"Bash(mytool ed:*)"}}, nil),
	}, map[string]any{"permissions": map[string]any{"deny": []string{"Bash(mytool ed:*)"}, "allow": []string{"Bash(mytool user:*)"}}})
	claudeRun(t, e, []claudeCase{
		claudeCmd("workspace deny beats local allow", "mytool ws x", "deny", "denied by the rule Bash(mytool ws:*) (.agentls/settings.json)"),
		claudeCmd("local deny beats workspace allow", "mytool local x", "deny", "denied by the rule Bash(mytool local:*) (.agentls/settings.local.json)"),
		claudeCmd("user deny beats editor allow", "mytool user x", "deny", "denied by the rule Bash(mytool user:*)"),
		claudeCmd("editor deny beats user allow", "mytool ed x", "deny", "denied by the rule Bash(mytool ed:*) (initializationOptions)"),
		claudeCmd("local allow", "mytool ok x", "allow", "RAN mytool ok x"),
	})
}

// Path specifiers: gitignore style; ./x and /x at the root, //abs, ~/x,
// bare names at any depth, ** globs; Read rules hide from grep/find/ls.
func TestClaudeSettingsPathRules(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	e := claudeStartIn(t, ws, filepath.Join(real, "h"), map[string]string{
		".agentls/settings.json": claudeSettings(map[string][]string{"deny": {
			"Read(./dot.txt)", "Read(/root.txt)", "Read(//" + strings.TrimPrefix(filepath.ToSlash(real), "/") + "/abs.txt)",
			"Read(anydepth.txt)", "Read(**/*.priv)", "Read(~/home.txt)", "Read(/secretdir/**)",
			"Edit(/src/**/*.ts)",
		}}, nil),
		"dot.txt": "NEEDLE dot\n", "sub/dot.txt": "NEEDLE subdot\n",
		"root.txt": "NEEDLE root\n", "sub/root.txt": "NEEDLE subroot\n",
		"abs.txt": "NEEDLE abs\n", "anydepth.txt": "NEEDLE any0\n", "sub/deep/anydepth.txt": "NEEDLE any2\n",
		"k.priv": "NEEDLE priv\n", "sub/k.priv": "NEEDLE subpriv\n",
		"secretdir/a/b.txt": "NEEDLE sd\n", "open.txt": "NEEDLE open\n",
		"src/a/b.ts": "x\n", "src/a/b.js": "x\n", "src/c.ts": "x\n",
		// HOME is the workspace's h/, so ~/home.txt is h/home.txt.
		"h/home.txt": "NEEDLE home\n",
	}, nil, map[string]any{"mode": "acceptEdits"})
	if err := os.Symlink("root.txt", filepath.Join(e.ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	e.call(t, "read", map[string]any{"path": "src/a/b.js"})
	e.call(t, "read", map[string]any{"path": "src/a/b.ts"})
	read := func(p string) map[string]any { return map[string]any{"path": p} }
	claudeRun(t, e, []claudeCase{
		{name: "dot anchored", tool: "read", args: read("dot.txt"), want: "deny", text: "denied by the rule Read(./dot.txt) (.agentls/settings.json)"},
		{name: "dot anchored not deeper", tool: "read", args: read("sub/dot.txt"), want: "allow", text: "subdot"},
		{name: "slash anchored", tool: "read", args: read("root.txt"), want: "deny", text: "Read(/root.txt)"},
		{name: "slash anchored not deeper", tool: "read", args: read("sub/root.txt"), want: "allow", text: "subroot"},
		{name: "double slash absolute", tool: "read", args: read("abs.txt"), want: "deny", text: "abs.txt)"},
		{name: "bare name at root", tool: "read", args: read("anydepth.txt"), want: "deny", text: "Read(anydepth.txt)"},
		{name: "bare name deep", tool: "read", args: read("sub/deep/anydepth.txt"), want: "deny", text: "Read(anydepth.txt)"},
		{name: "double star root", tool: "read", args: read("k.priv"), want: "deny", text: "Read(**/*.priv)"},
		{name: "double star deep", tool: "read", args: read("sub/k.priv"), want: "deny", text: "Read(**/*.priv)"},
		{name: "tilde home", tool: "read", args: read("h/home.txt"), want: "deny", text: "Read(~/home.txt)"},
		{name: "dir double star", tool: "read", args: read("secretdir/a/b.txt"), want: "deny", text: "Read(/secretdir/**)"},
		{name: "absolute path in workspace", tool: "read", args: read(filepath.Join(e.ws, "root.txt")), want: "deny", text: "Read(/root.txt)"},
		{name: "symlink resolves to denied real path", tool: "read", args: read("link.txt"), want: "deny", text: "Read(/root.txt)"},
		{name: "edit rule covers edit", tool: "edit", args: map[string]any{"path": "src/a/b.ts", "oldText": "x", "newText": "z"}, want: "deny", text: "denied by the rule Edit(/src/**/*.ts) (.agentls/settings.json)"},
		{name: "edit rule double star matches zero dirs", tool: "write", args: map[string]any{"path": "src/c.ts", "content": "y\n"}, want: "deny", text: "Edit(/src/**/*.ts)"},
		{name: "edit rule covers write", tool: "write", args: map[string]any{"path": "src/a/b.ts", "content": "y\n"}, want: "deny", text: "Edit(/src/**/*.ts)"},
		{name: "edit rule covers new file", tool: "write", args: map[string]any{"path": "src/new/c.ts", "content": "y\n"}, want: "deny", text: "Edit(/src/**/*.ts)"},
		{name: "edit rule leaves others", tool: "write", args: map[string]any{"path": "src/a/b.js", "content": "y\n"}, want: "allow"},
	})
	if b, _ := os.ReadFile(filepath.Join(e.ws, "src/a/b.ts")); string(b) != "x\n" {
		t.Errorf("denied write changed src/a/b.ts: %q", b)
	}
	t.Run("grep hides denied", func(t *testing.T) {
		_, txt := e.call(t, "grep", map[string]any{"pattern": "NEEDLE"})
		for _, hidden := range []string{"NEEDLE dot", "NEEDLE root", "NEEDLE abs", "any0", "any2", "NEEDLE priv", "subpriv", "NEEDLE sd", "NEEDLE home"} {
			if strings.Contains(txt, hidden) {
				t.Errorf("grep shows %q:\n%s", hidden, txt)
			}
		}
		for _, shown := range []string{"NEEDLE open", "subdot", "subroot"} {
			if !strings.Contains(txt, shown) {
				t.Errorf("grep lacks %q:\n%s", shown, txt)
			}
		}
	})
	t.Run("find hides denied", func(t *testing.T) {
		_, txt := e.call(t, "find", map[string]any{"pattern": "**/*"})
		for _, hidden := range []string{"anydepth.txt", "k.priv", "secretdir/a/b.txt", "abs.txt"} {
			if strings.Contains(txt, hidden) {
				t.Errorf("find lists %q:\n%s", hidden, txt)
			}
		}
		if !strings.Contains(txt, "open.txt") {
			t.Errorf("find lacks open.txt:\n%s", txt)
		}
	})
	t.Run("ls hides denied", func(t *testing.T) {
		_, txt := e.call(t, "ls", map[string]any{"path": "."})
		for _, line := range strings.Split(txt, "\n") {
			l := strings.TrimSpace(line)
			if l == "root.txt" || l == "dot.txt" || l == "k.priv" || l == "abs.txt" {
				t.Errorf("ls lists %q:\n%s", l, txt)
			}
		}
		if !strings.Contains(txt, "open.txt") {
			t.Errorf("ls lacks open.txt:\n%s", txt)
		}
	})
}

// The confirm reason is the documented sentence naming the rule and file.
func TestClaudeSettingsAskReason(t *testing.T) {
	t.Parallel()
	e := claudeStart(t, map[string]string{
		".agentls/settings.json": claudeSettings(map[string][]string{"ask": {"Bash(mytool:*)", "Read(./a.txt)"}}, nil),
		"a.txt":                  "hello\n",
	}, nil, nil)
	claudeRun(t, e, []claudeCase{
		claudeCmd("bash ask rule", "mytool x", "ask", "denied by the user: "+claudeAskMark),
		{name: "read ask rule", tool: "read", args: map[string]any{"path": "a.txt"}, want: "ask"},
	})
	e.mu.Lock()
	defer e.mu.Unlock()
	want := []struct{ rule, reason string }{
		{"Bash(mytool:*) (.agentls/settings.json)", "the rule Bash(mytool:*) (.agentls/settings.json) asks the user before this call"},
		{"Read(./a.txt) (.agentls/settings.json)", "the rule Read(./a.txt) (.agentls/settings.json) asks the user before this call"},
	}
	if len(e.confirms) != len(want) {
		t.Fatalf("confirms = %v", e.confirms)
	}
	for i, w := range want {
		if got := e.confirms[i]["rule"]; got != w.rule {
			t.Errorf("confirm %d rule = %q, want %q", i, got, w.rule)
		}
		if got := e.confirms[i]["reason"]; got != w.reason {
			t.Errorf("confirm %d reason = %q, want %q", i, got, w.reason)
		}
	}
}

// Modes from each source, and which source wins.
func TestClaudeSettingsModes(t *testing.T) {
	t.Parallel()
	newFile := func(n string) claudeCase {
		return claudeCase{name: "write new " + n, tool: "write", args: map[string]any{"path": n, "content": "x\n"}}
	}
	for _, tc := range []struct {
		name      string
		files     map[string]string
		user      map[string]string
		init      map[string]any
		cmd, file string // outcomes for `mytool x` and writing a new file
	}{
		{name: "workspace readOnly", files: map[string]string{".agentls/settings.json": `{"mode":"readOnly"}`}, cmd: "deny", file: "deny"},
		{name: "workspace acceptEdits", files: map[string]string{".agentls/settings.json": `{"mode":"acceptEdits"}`}, cmd: "ask", file: "allow"},
		{name: "workspace cannot select bypass", files: map[string]string{".agentls/settings.json": `{"mode":"bypass"}`}, cmd: "ask", file: "ask"},
		{name: "local cannot select bypass", files: map[string]string{".agentls/settings.local.json": `{"mode":"bypass"}`}, cmd: "ask", file: "ask"},
		{name: "user file bypass", user: map[string]string{"settings.json": `{"mode":"bypass"}`}, cmd: "allow", file: "allow"},
		{name: "local beats workspace", files: map[string]string{".agentls/settings.json": `{"mode":"readOnly"}`, ".agentls/settings.local.json": `{"mode":"acceptEdits"}`}, cmd: "ask", file: "allow"},
		{name: "workspace beats user", files: map[string]string{".agentls/settings.json": `{"mode":"acceptEdits"}`}, user: map[string]string{"settings.json": `{"mode":"readOnly"}`}, cmd: "ask", file: "allow"},
		{name: "editor beats files", files: map[string]string{".agentls/settings.local.json": `{"mode":"acceptEdits"}`}, init: map[string]any{"mode": "default"}, cmd: "ask", file: "ask"},
		{name: "editor bypass keeps deny", files: map[string]string{".agentls/settings.json": claudeSettings(map[string][]string{"deny": {"Bash(mytool:*)"}}, nil)}, init: map[string]any{"mode": "bypass"}, cmd: "deny", file: "allow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := claudeStart(t, tc.files, tc.user, tc.init)
			w := newFile("n.txt")
			w.want = tc.file
			claudeRun(t, e, []claudeCase{claudeCmd("bash", "mytool x", tc.cmd, ""), w})
		})
	}
}

// Claude Code's mode names are not agentls modes: the editor gets -32602
// naming the field (docs: "a mode that does not exist").
func TestClaudeSettingsClaudeModeNames(t *testing.T) {
	t.Parallel()
	for _, m := range []string{"plan", "bypassPermissions", "dontAsk"} {
		t.Run(m, func(t *testing.T) {
			e := claudeStart(t, nil, nil, map[string]any{"_noinit": true})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var res map[string]any
			err := e.c.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"mode": m}}, &res)
			if err == nil || !strings.Contains(err.Error(), "mode") {
				t.Fatalf("initialize mode %q: err = %v, want -32602 naming mode", m, err)
			}
		})
	}
}

// A workspace allow cannot lift the built-in asks; an editor allow can.
func TestClaudeSettingsBuiltinAsks(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		".agentls/settings.json": claudeSettings(map[string][]string{"allow": {"Read(./.env)", "Edit(/.agentls/**)"}}, nil),
		".env":                   "TOKEN=abc\n",
	}
	e := claudeStart(t, files, nil, map[string]any{"mode": "acceptEdits"})
	claudeRun(t, e, []claudeCase{
		{name: "workspace allow does not lift secret ask", tool: "read", args: map[string]any{"path": ".env"}, want: "ask"},
		{name: "workspace allow does not lift config ask", tool: "write", args: map[string]any{"path": ".agentls/tools/x.json", "content": "{}"}, want: "ask"},
	})
	e2 := claudeStart(t, files, nil, map[string]any{"mode": "acceptEdits", "permissions": map[string]any{"allow": []string{"Read(./.env)"}}})
	claudeRun(t, e2, []claudeCase{
		{name: "editor allow lifts secret ask", tool: "read", args: map[string]any{"path": ".env"}, want: "allow", text: "TOKEN="},
	})
	e3 := claudeStart(t, files, map[string]string{"settings.json": claudeSettings(map[string][]string{"allow": {"Read(./.env)"}}, nil)}, nil)
	claudeRun(t, e3, []claudeCase{
		{name: "user allow lifts secret ask", tool: "read", args: map[string]any{"path": ".env"}, want: "allow", text: "TOKEN="},
	})
}

// An invalid rule: the file is ignored whole and a logMessage error names
// the file, the rule and the column; other files' rules still apply.
func TestClaudeSettingsInvalidRule(t *testing.T) {
	t.Parallel()
	e := claudeStart(t, map[string]string{
		".agentls/settings.json":       claudeSettings(map[string][]string{"deny": {"Bash(deploy:*)"}}, nil),
		".agentls/settings.local.json": claudeSettings(map[string][]string{"allow": {"Bash(npm run test:*"}, "deny": {"Bash(mytool:*)"}}, nil),
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
	var docs string
	for _, f := range []string{"../../docs/tools.md", "../../docs/protocol.md", "../../README.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs += string(b)
	}
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
			got, txt := e.bash(t, tc.cmd)
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
		".agentls/settings.json": claudeSettings(map[string][]string{"allow": rules, "deny": {"Bash(deploy:*)"}}, nil),
	}, nil, nil)
	claudeRun(t, e, []claudeCase{claudeCmd("file still applies", "deploy x", "deny", claudeDenyDeploy)})
	b1, _ := os.ReadFile("../../docs/tools.md")
	b2, _ := os.ReadFile("../../docs/protocol.md")
	docs := string(b1) + string(b2)
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

// agentls call reads the same settings files: deny rules and --mode
// readOnly refuse; what would ask is approved by running the command.
func TestClaudeSettingsCall(t *testing.T) {
	t.Parallel()
	ws, xdg, bin := t.TempDir(), t.TempDir(), t.TempDir()
	claudeFiles(t, ws, map[string]string{".agentls/settings.json": claudeSettings(map[string][]string{"deny": {"Bash(deploy:*)"}}, nil)})
	claudeFiles(t, filepath.Join(xdg, "agentls"), map[string]string{"settings.json": claudeSettings(map[string][]string{"deny": {"Bash(mytool user:*)"}}, nil)})
	claudeFiles(t, bin, map[string]string{"bin/deploy": "#!/bin/sh\necho RAN deploy\n", "bin/mytool": "#!/bin/sh\necho RAN mytool \"$@\"\n"})
	env := []string{"XDG_CONFIG_HOME=" + xdg, "PATH=" + filepath.Join(bin, "bin") + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, tc := range []struct {
		name   string
		args   []string
		want   string
		failed bool
	}{
		{"workspace deny", []string{"call", "bash", `{"command":"deploy x"}`, "--root", ws}, claudeDenyDeploy, true},
		{"user deny", []string{"call", "bash", `{"command":"mytool user x"}`, "--root", ws}, "denied by the rule Bash(mytool user:*)", true},
		{"ask approved by running", []string{"call", "bash", `{"command":"mytool x"}`, "--root", ws}, "RAN mytool x", false},
		{"mode readOnly", []string{"call", "--mode", "readOnly", "--root", ws, "bash", `{"command":"mytool x"}`}, "readOnly mode", true},
		{"mode plan is not an agentls mode", []string{"call", "--mode", "plan", "--root", ws, "bash", `{"command":"mytool x"}`}, "mode", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := harness.Command(t, tc.args, env...)
			out, err := cmd.CombinedOutput()
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("output %q lacks %q", out, tc.want)
			}
			if (err != nil) != tc.failed {
				t.Errorf("exit error = %v, want failure %v; output %q", err, tc.failed, out)
			}
			if strings.Contains(string(out), "RAN deploy") || (tc.failed && strings.Contains(string(out), "RAN mytool")) {
				t.Errorf("refused command ran: %q", out)
			}
		})
	}
}

// The `*` wildcard agentls accepts (Claude Code's current form) behaves as
// Claude Code documents: ` *` keeps a word boundary, `*` anywhere matches
// any text, and a deny with a wildcard still checks every simple command.
func TestClaudeSettingsWildcard(t *testing.T) {
	t.Parallel()
	e := claudeStart(t, map[string]string{
		".agentls/settings.json": claudeSettings(map[string][]string{
			"allow": {"Bash(mytool run *)", "Bash(mytool x*)"},
			"deny":  {"Bash(deploy * --prod)", "Bash(pushy go*)", "Bash(npm publish *)"},
		}, nil),
	}, nil, nil)
	const deny = "denied by the rule Bash(deploy * --prod) (.agentls/settings.json)"
	claudeRun(t, e, []claudeCase{
		claudeCmd("space star with args", "mytool run fast", "allow", "RAN mytool run fast"),
		claudeCmd("space star keeps word boundary", "mytool running", "ask", ""),
		claudeCmd("star without space is a plain prefix", "mytool xyz", "allow", "RAN mytool xyz"),
		claudeCmd("space star not through and", "mytool run fast && mytool other", "ask", ""),
		claudeCmd("middle star deny", "deploy app --prod", "deny", deny),
		claudeCmd("middle star deny in compound", "echo hi; deploy app --prod", "deny", deny),
		claudeCmd("middle star no match", "deploy app --staging", "ask", ""),
		claudeCmd("trailing star deny without space", "pushy go now", "deny", "denied by the rule Bash(pushy go*) (.agentls/settings.json)"),
		claudeCmd("trailing space star deny", "npm publish --tag x", "deny", "denied by the rule Bash(npm publish *) (.agentls/settings.json)"),
		claudeCmd("trailing space star deny in compound", "echo hi && npm publish --tag x", "deny", "denied by the rule Bash(npm publish *) (.agentls/settings.json)"),
	})
}

// Editor-supplied settings: an invalid rule fails initialize naming it; an
// unknown key (Claude Code's additionalDirectories) is a logMessage warning.
func TestClaudeSettingsEditorSettings(t *testing.T) {
	t.Parallel()
	t.Run("invalid rule", func(t *testing.T) {
		// Docs: a value that changes the meaning fails initialize with
		// -32602; dropping the editor's deny rules changes it.
		e := claudeStart(t, nil, nil, map[string]any{"_noinit": true})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var res map[string]any
		err := e.c.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"permissions": map[string]any{"deny": []string{"Bash(deploy:*)", "Bash(mytool:*"}}}}, &res)
		if err != nil {
			if !strings.Contains(err.Error(), "Bash(mytool:*") {
				t.Errorf("initialize error %v does not name the rule", err)
			}
			return
		}
		e.c.Conn.Notify(ctx, "initialized", map[string]any{})
		got, txt := e.bash(t, "deploy x")
		t.Errorf("initialize with an invalid editor rule succeeded; the valid editor deny Bash(deploy:*) then gives %s: %q", got, txt)
	})
	t.Run("unknown key warned", func(t *testing.T) {
		e := claudeStart(t, nil, nil, map[string]any{"permissions": map[string]any{"deny": []string{"Bash(deploy:*)"}, "additionalDirectories": []string{"../other"}}})
		if _, ok := e.c.WaitNote(5*time.Second, func(n harness.Note) bool {
			return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "additionalDirectories")
		}); !ok {
			t.Errorf("no window/logMessage names the unknown key additionalDirectories")
		}
		claudeRun(t, e, []claudeCase{claudeCmd("rules kept", "deploy x", "deny", "denied by the rule Bash(deploy:*) (initializationOptions)")})
	})
}

// A user-file rule error names the user file; a settings file edited
// mid-session applies from the next call, and a broken save keeps the rules.
func TestClaudeSettingsReload(t *testing.T) {
	t.Parallel()
	e := claudeStart(t, map[string]string{".agentls/settings.json": claudeSettings(map[string][]string{"deny": {"Bash(mytool a:*)"}}, nil)},
		map[string]string{"settings.json": `{"permissions":{"deny":["Read(./x"]}}`}, nil)
	if _, ok := e.c.WaitNote(5*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "agentls/settings.json") && strings.Contains(string(n.Params), "Read(./x")
	}); !ok {
		t.Errorf("no window/logMessage names the user settings file and its bad rule; got %v", e.c.Notes("window/logMessage"))
	}
	claudeRun(t, e, []claudeCase{claudeCmd("before", "mytool b", "ask", "")})
	claudeFiles(t, e.ws, map[string]string{".agentls/settings.json": claudeSettings(map[string][]string{"deny": {"Bash(mytool a:*)", "Bash(mytool b:*)"}}, nil)})
	claudeRun(t, e, []claudeCase{claudeCmd("after edit", "mytool b", "deny", "denied by the rule Bash(mytool b:*) (.agentls/settings.json)")})
	claudeFiles(t, e.ws, map[string]string{".agentls/settings.json": `{"permissions":{"deny":["Bash(mytool a:*)"`})
	claudeRun(t, e, []claudeCase{
		claudeCmd("half-done save keeps deny a", "mytool a", "deny", "Bash(mytool a:*)"),
		claudeCmd("half-done save keeps deny b", "mytool b", "deny", "Bash(mytool b:*)"),
	})
}
