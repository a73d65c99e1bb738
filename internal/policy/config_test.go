package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/settings"
)

func TestParseRuleErrors(t *testing.T) {
	cases := []struct {
		name, rule, msg string
		col             int
	}{
		{"unclosed paren", "Bash(npm test", "unclosed '(' at column 5", 5},
		{"text after paren", "Bash(ls) -la", "unexpected text after ')' at column 9", 9},
		{"nested unclosed", "Bash(echo $(ls)", "unclosed '(' at column 5", 5},
		{"stray close", "Bash)", "')' without '(' at column 5", 5},
		{"empty specifier", "Read()", "empty specifier", 5},
		{"missing tool", "(ls)", "missing tool name", 1},
		{"bad tool char", "Ba sh", "invalid character ' ' in tool name at column 3", 3},
		{"bad glob", "Read([abc)", "invalid path pattern", 6},
		{"empty", "  ", "empty rule", 0},
		{"column counts leading space", "  Bash(x", "unclosed '(' at column 7", 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseRule(c.rule)
			re, ok := err.(*RuleError)
			if !ok || !strings.Contains(err.Error(), c.msg) || re.Col != c.col {
				t.Fatalf("ParseRule(%q) = %v, want %q at column %d", c.rule, err, c.msg, c.col)
			}
		})
	}
	for _, ok := range []string{"Bash", "bash(npm run test:*)", "Read(./.env)", "Edit(//abs/x)", "mcp__srv__tool", "mcp__srv__*", "Bash(echo $(ls))", `Bash(echo ")")`, "WebFetch(domain:x.com)"} {
		if _, err := ParseRule(ok); err != nil {
			t.Errorf("ParseRule(%q): %v", ok, err)
		}
	}
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadPrecedence(t *testing.T) {
	ws, user := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(user, settings.UserFile), `{"mode": "acceptEdits", "permissions": {"allow": ["Bash(make:*)"], "deny": ["Bash(curl:*)"]}}`)
	writeFile(t, filepath.Join(ws, settings.WorkspaceFile), `{"mode": "readOnly", "permissions": {"allow": ["Bash(curl:*)", "Bash(npm test:*)"], "ask": ["Bash(git push:*)"]}}`)
	writeFile(t, filepath.Join(ws, settings.LocalFile), `{"permissions": {"defaultMode": "default", "deny": ["Read(./private/**)"]}}`)

	type check struct {
		name string
		req  Request
		want Decision
		rule string
	}
	checks := []check{
		{"user deny beats workspace allow", bash("curl x"), Deny, "Bash(curl:*) (user settings)"},
		{"workspace allow applies", bash("npm test"), Allow, "Bash(npm test:*) (.agentls/settings.json)"},
		{"user allow applies", bash("make all"), Allow, "(user settings)"},
		{"workspace ask applies", bash("git push"), Ask, "Bash(git push:*)"},
		{"local deny applies", Request{Tool: "read", ReadOnly: true, InWorkspace: true,
			Paths: []PathRef{{Rel: "private/a", Abs: filepath.ToSlash(filepath.Join(ws, "private/a"))}}}, Deny, settings.LocalFile},
	}

	t.Run("local mode beats workspace and user", func(t *testing.T) {
		c, probs := Load([]string{ws}, nil, user)
		if len(probs) != 0 {
			t.Fatalf("problems: %v", probs)
		}
		if c.Mode != ModeDefault {
			t.Fatalf("mode %q, want default (settings.local.json)", c.Mode)
		}
		for _, ch := range checks {
			if v := c.Evaluate(ch.req); v.Decision != ch.want || !strings.Contains(v.Rule, ch.rule) {
				t.Errorf("%s: got %s by %q, want %s by %q", ch.name, v.Decision, v.Rule, ch.want, ch.rule)
			}
		}
	})
	t.Run("editor mode beats files, rules union", func(t *testing.T) {
		c, _ := Load([]string{ws}, &settings.Settings{Mode: ModeBypass, Permissions: settings.Permissions{Deny: []string{"Bash(make:*)"}}}, user)
		if c.Mode != ModeBypass {
			t.Fatalf("mode %q", c.Mode)
		}
		if v := c.Evaluate(bash("make all")); v.Decision != Deny || !strings.Contains(v.Rule, SourceEditor) {
			t.Errorf("editor deny: %+v", v)
		}
		if v := c.Evaluate(bash("curl x")); v.Decision != Deny {
			t.Errorf("user deny lost under bypass: %+v", v)
		}
	})
	t.Run("workspace mode beats user", func(t *testing.T) {
		os.Remove(filepath.Join(ws, settings.LocalFile))
		defer writeFile(t, filepath.Join(ws, settings.LocalFile), `{}`)
		c, _ := Load([]string{ws}, nil, user)
		if c.Mode != ModeReadOnly {
			t.Fatalf("mode %q, want readOnly", c.Mode)
		}
	})
	t.Run("no files", func(t *testing.T) {
		c, probs := Load([]string{t.TempDir()}, nil, "")
		if c.Mode != ModeDefault || len(probs) != 0 || len(c.Allow)+len(c.Ask)+len(c.Deny) != 0 {
			t.Fatalf("got %+v %v", c, probs)
		}
	})
}

func TestLoadProblems(t *testing.T) {
	cases := []struct {
		name, local, want string
		keepsRules        bool
		mode              string
	}{
		{"bad rule drops only itself", `{"permissions": {"deny": ["Read(./x)"], "allow": ["Bash(ls)", "Bash(npm test"]}}`,
			`.agentls/settings.local.json: permissions.allow[1] "Bash(npm test": unclosed '(' at column 5; this rule is ignored; the file's other rules apply`, true, ModeDefault},
		{"bad json", "{\n  \"mode\": \"default\",\n  oops\n}",
			".agentls/settings.local.json: invalid JSON: line 3, column 3", false, ModeDefault},
		{"bad mode", `{"mode": "yolo", "permissions": {"deny": ["Read(./x)"]}}`,
			`mode must be one of default, acceptEdits, readOnly, bypass; got "yolo"; the mode is ignored, the rules apply`, true, ModeDefault},
		{"bypass refused from workspace", `{"mode": "bypass", "permissions": {"deny": ["Read(./x)"]}}`,
			"mode bypass is honoured only from the editor or the user settings", true, ModeDefault},
		{"claude mode names", `{"permissions": {"defaultMode": "plan", "deny": ["Read(./x)"]}}`, "", true, ModeReadOnly},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			writeFile(t, filepath.Join(ws, settings.LocalFile), c.local)
			cfg, probs := Load([]string{ws}, nil, "")
			if c.want == "" && len(probs) != 0 || c.want != "" && (len(probs) != 1 || !strings.Contains(probs[0].String(), c.want)) {
				t.Fatalf("problems %v, want one containing %q", probs, c.want)
			}
			if got := len(cfg.Deny) == 1; got != c.keepsRules {
				t.Errorf("rules kept = %v, want %v", got, c.keepsRules)
			}
			if cfg.Mode != c.mode {
				t.Errorf("mode %q, want %q", cfg.Mode, c.mode)
			}
		})
	}
	t.Run("problem fields", func(t *testing.T) {
		_, probs := Load(nil, &settings.Settings{Permissions: settings.Permissions{Ask: []string{"Bash", "Read(./a", "Edit)"}}}, "")
		if len(probs) != 2 {
			t.Fatalf("got %v", probs)
		}
		p := probs[0]
		if p.File != SourceEditor || p.List != "ask" || p.Index != 1 || p.Rule != "Read(./a" || p.Pos != 5 {
			t.Errorf("got %+v", p)
		}
	})
}

// Reload keeps the rules of a file that became invalid (and says so), and
// drops those of a deleted file.
func TestReloadKeepsABrokenFilesRules(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, settings.WorkspaceFile)
	writeFile(t, file, `{"permissions": {"deny": ["Bash(curl:*)"]}}`)
	c, probs := Load([]string{ws}, nil, "")
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	curl := Request{Tool: "bash", Command: "curl x", InWorkspace: true}
	for _, tc := range []struct {
		name, content string
		remove        bool
		want          Decision
		problem       string
	}{
		{"invalid JSON keeps the deny", `{"permissions": {"deny": [`, false, Deny, "stay in force"},
		{"an invalid rule drops only itself", `{"permissions": {"deny": ["Bash(curl:*)", "Read(./a"]}}`, false, Deny, "this rule is ignored; the file's other rules apply"},
		{"fixed: its rules apply", `{"permissions": {"allow": ["Bash(curl:*)"]}}`, false, Allow, ""},
		{"deleted: its rules go", "", true, Ask, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.remove {
				os.Remove(file)
			} else {
				writeFile(t, file, tc.content)
			}
			next, probs := c.Reload([]string{ws}, nil, "")
			c.Replace(next)
			if v := c.Evaluate(curl); v.Decision != tc.want {
				t.Errorf("curl: %s by %q, want %s", v.Decision, v.Rule, tc.want)
			}
			text := fmt.Sprint(probs)
			if tc.problem != "" && !strings.Contains(text, tc.problem) || tc.problem == "" && len(probs) > 0 {
				t.Errorf("problems %s, want %q", text, tc.problem)
			}
		})
	}
}

// Each workspace folder's settings files are read, named by their absolute
// path after the first folder's, and their path rules hold for that
// folder's files only, anchored at its root.
func TestLoadFolderRulesHoldInTheirFolder(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(a, settings.WorkspaceFile), `{"permissions": {"deny": ["Read(secret.txt)"]}}`)
	writeFile(t, filepath.Join(b, settings.WorkspaceFile), `{"permissions": {"deny": ["Read(/sub/anchored.txt)", "Bash(deploy:*)"]}}`)
	c, probs := Load([]string{a, b}, nil, "")
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	at := func(root, rel string) Request {
		return Request{Tool: "read", ReadOnly: true, InWorkspace: true, Paths: []PathRef{{Rel: rel, Abs: filepath.ToSlash(filepath.Join(root, rel))}}}
	}
	bFile := filepath.Join(b, settings.WorkspaceFile)
	for _, tc := range []struct {
		name string
		req  Request
		want Decision
		rule string
	}{
		{"first folder's rule in the first folder", at(a, "x/secret.txt"), Deny, "Read(secret.txt) (" + settings.WorkspaceFile + ")"},
		{"first folder's rule not in the second", at(b, "secret.txt"), Allow, ""},
		{"second folder's anchored rule at its root", at(b, "sub/anchored.txt"), Deny, "Read(/sub/anchored.txt) (" + bFile + ")"},
		{"second folder's anchored rule not in the first", at(a, "sub/anchored.txt"), Allow, ""},
		{"second folder's command rule holds for the session", bash("deploy prod"), Deny, "Bash(deploy:*) (" + bFile + ")"},
	} {
		if v := c.Evaluate(tc.req); v.Decision != tc.want || !strings.Contains(v.Rule, tc.rule) {
			t.Errorf("%s: got %s by %q, want %s by %q", tc.name, v.Decision, v.Rule, tc.want, tc.rule)
		}
	}
}

// A bash command's path arguments are taken where it runs: a relative one
// in the second folder falls under that folder's rules, and the editor's
// relative rules match it relative to its own folder.
func TestBashArgumentsResolveInTheCommandsFolder(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(b, settings.WorkspaceFile), `{"permissions": {"deny": ["Read(/private/**)"]}}`)
	c, probs := Load([]string{a, b}, &settings.Settings{Permissions: settings.Permissions{Deny: []string{"Read(keys/**)"}}}, "")
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	run := func(cmd, cwd string) Request { r := bash(cmd); r.Cwd = cwd; return r }
	for _, tc := range []struct {
		name string
		req  Request
		want Decision
		rule string
	}{
		{"second folder's rule, command run there", run("cat private/x.txt", b), Deny, "Read(/private/**)"},
		{"second folder's rule, command run in the first", run("cat private/x.txt", a), Allow, ""},
		{"second folder's rule, absolute argument", run("cat "+filepath.Join(b, "private/x.txt"), a), Deny, "Read(/private/**)"},
		{"editor's relative rule in the second folder", run("cat keys/id", b), Deny, "Read(keys/**) (initializationOptions)"},
		{"no cwd: the first folder", run("cat private/x.txt", ""), Allow, ""},
	} {
		if v := c.Evaluate(tc.req); v.Decision != tc.want || !strings.Contains(v.Rule, tc.rule) {
			t.Errorf("%s: got %s by %q, want %s by %q", tc.name, v.Decision, v.Rule, tc.want, tc.rule)
		}
	}
}

// When the folders change, the new first folder anchors the editor's rules
// (Replace takes the folders along with the rules).
func TestReplaceTakesTheNewFolders(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	editor := &settings.Settings{Permissions: settings.Permissions{Deny: []string{"Read(/secret.txt)"}}}
	c, _ := Load([]string{a, b}, editor, "")
	next, _ := c.Reload([]string{b}, editor, "")
	c.Replace(next)
	at := func(root string) Request {
		return Request{Tool: "read", ReadOnly: true, InWorkspace: true, Paths: []PathRef{{Rel: "secret.txt", Abs: filepath.ToSlash(filepath.Join(root, "secret.txt"))}}}
	}
	if root, folders := c.workspace(); root != b || len(folders) != 1 || folders[0] != b {
		t.Errorf("after Replace: root %q, folders %q; want %q alone", root, folders, b)
	}
	if v := c.Evaluate(at(b)); v.Decision != Deny {
		t.Errorf("b/secret.txt after b became the first folder: %s by %q, want deny", v.Decision, v.Rule)
	}
	// A bash argument is taken in the new first folder.
	if v := c.Evaluate(bashIn("cat secret.txt", "")); v.Decision != Deny {
		t.Errorf("cat secret.txt in the (new) first folder: %s by %q, want deny", v.Decision, v.Rule)
	}
}

func bashIn(cmd, cwd string) Request { r := bash(cmd); r.Cwd = cwd; return r }

// A typo in one rule (an unbalanced parenthesis) never switches off the
// file's other deny rules.
func TestTypoInOneRuleKeepsTheOtherDenyRules(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, settings.WorkspaceFile), `{"permissions": {"deny": ["Bash(rm:*)", "Bash(curl:*"]}}`)
	c, probs := Load([]string{ws}, nil, "")
	if len(probs) != 1 || !strings.Contains(probs[0].String(), `"Bash(curl:*"`) {
		t.Fatalf("problems %v, want the curl rule reported", probs)
	}
	if v := c.Evaluate(Request{Tool: "bash", Command: "rm -f x", InWorkspace: true}); v.Decision != Deny {
		t.Errorf("rm: %s by %q, want the rm deny rule to hold", v.Decision, v.Rule)
	}
}

// A settings file that is not valid JSON when the session starts (no
// earlier good content) leaves its rules unknown: only read-only calls
// run, and the refusal names the file, line and column.
func TestBrokenSettingsFileAtStartAllowsOnlyReadOnlyCalls(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, settings.WorkspaceFile)
	writeFile(t, file, "{\"permissions\": {\"deny\": [\"Bash(rm:*)\"],}}")
	c, probs := Load([]string{ws}, nil, "")
	if len(probs) != 1 || !strings.Contains(probs[0].String(), "line 1, column") {
		t.Fatalf("problems %v, want the file's line and column", probs)
	}
	for _, mode := range []string{"", ModeBypass} {
		c.Mode = mode
		v := c.Evaluate(Request{Tool: "bash", Command: "touch x", InWorkspace: true})
		if v.Decision != Deny || v.Rule != BuiltinBrokenSettings || !strings.Contains(v.Reason, ".agentls/settings.json") || !strings.Contains(v.Reason, "line 1, column") {
			t.Errorf("mode %q: touch: %+v, want a refusal naming the file, line and column", mode, v)
		}
		if v := c.Evaluate(Request{Tool: "bash", Command: "ls", InWorkspace: true}); v.Decision != Allow {
			t.Errorf("mode %q: ls: %+v, want a read-only call to run", mode, v)
		}
	}
	// Fixed: the refusal ends with the next reload.
	writeFile(t, file, `{"permissions": {"deny": ["Bash(rm:*)"]}}`)
	next, probs := c.Reload([]string{ws}, nil, "")
	c.Replace(next)
	if len(probs) != 0 {
		t.Fatalf("problems after the fix: %v", probs)
	}
	if v := c.Evaluate(Request{Tool: "bash", Command: "touch x", InWorkspace: true}); v.Decision == Deny {
		t.Errorf("touch after the fix: %+v", v)
	}
}

// A rule edited into a typo while the session runs does not lift the rule
// it was: the file's earlier ask and deny rules stay until it is fixed.
func TestTypoWhileRunningKeepsTheEarlierDenyRule(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, settings.WorkspaceFile)
	writeFile(t, file, `{"permissions": {"deny": ["Bash(rm:*)"]}}`)
	c, _ := Load([]string{ws}, nil, "")
	writeFile(t, file, `{"permissions": {"deny": ["Bash(rm:*"]}}`)
	next, probs := c.Reload([]string{ws}, nil, "")
	c.Replace(next)
	if !strings.Contains(fmt.Sprint(probs), "earlier ask and deny rules stay in force") {
		t.Errorf("problems %v, want the kept rules reported", probs)
	}
	if v := c.Evaluate(Request{Tool: "bash", Command: "rm -f x", InWorkspace: true}); v.Decision != Deny {
		t.Errorf("rm after the typo: %s by %q, want the earlier deny rule", v.Decision, v.Rule)
	}
}

// A rule that parses but can never match (a specifier its tool cannot
// have, a path with an empty, '.' or '..' part inside) is reported and
// kept; it does not count as a bad rule, so it never triggers keeping an
// earlier version of the file. Rules that can match are not reported.
func TestUnmatchableRulesAreReportedAndKept(t *testing.T) {
	for _, tc := range []struct {
		rule        string
		unmatchable bool
	}{
		{"tool_search(secret)", true},
		{"Read(src//a.txt)", true},
		{"Edit(./src/./a.txt)", true},
		{"Read(src/../secret.txt)", true},
		{"Read(../outside/x)", false},
		{"Read(../../x)", false},
		{"Read(//etc/passwd)", false},
		{"Read(~/.ssh/**)", false},
		{"Read(src/)", false},
		{"Bash(rm:*)", false},
		{"mcp__github__create_issue", false},
	} {
		r, err := ParseRule(tc.rule)
		if err != nil {
			t.Fatalf("%s: %v", tc.rule, err)
		}
		src, probs := parseSettings(SourceWorkspace, SourceWorkspace, settings.Settings{Permissions: settings.Permissions{Deny: []string{tc.rule}}}, true)
		if len(src.lists[2]) != 1 {
			t.Errorf("%s: the rule was not kept", tc.rule)
		}
		if got := r.unmatchable() != ""; got != tc.unmatchable || (len(probs) == 1) != tc.unmatchable {
			t.Errorf("%s: unmatchable = %v, problems %v; want %v", tc.rule, got, probs, tc.unmatchable)
		}
		if badRule(probs) {
			t.Errorf("%s: counted as a rule that did not parse", tc.rule)
		}
	}
}

// A rule naming a tool that does not exist never matches: it is reported
// (the rule stays, in case such a tool appears); tool families, upstream
// servers' tools (mcp__server…, server__tool) and the tools known are not.
func TestRulesOnUnknownToolsAreReported(t *testing.T) {
	c := &Config{Deny: []Rule{MustParseRule("Frobnicate"), MustParseRule("Glob(*.env)"), MustParseRule("mcp__x__y"), MustParseRule("github__create_issue"), MustParseRule("lint")}}
	for i := range c.Deny {
		c.Deny[i].Source = SourceWorkspace
	}
	probs := c.UnknownTools(func(tool string) bool { return tool == "lint" })
	if len(probs) != 1 || !strings.Contains(probs[0].String(), "no tool is named Frobnicate") {
		t.Fatalf("problems = %v, want one naming Frobnicate", probs)
	}
}
