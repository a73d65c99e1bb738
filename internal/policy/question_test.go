package policy

import (
	"fmt"
	"strings"
	"testing"
)

func TestRenderShowsWhatIsApproved(t *testing.T) {
	t.Run("an edit shows the path and the diff", func(t *testing.T) {
		diff := "--- a/main.go\n+++ b/main.go\n@@ -1,1 +1,1 @@\n-package main\n+package app\n"
		title, msg := Render(ConfirmRequest{Tool: "edit", Reason: "this call is not read-only; the user must approve it",
			Preview: map[string]any{"kind": "edit", "path": "main.go", "unifiedDiff": diff}})
		if title != "agentls: Edit main.go" {
			t.Errorf("title %q", title)
		}
		for _, want := range []string{"`main.go`", "```diff\n--- a/main.go", "-package main\n+package app\n```", "agentls asks because this call is not read-only."} {
			if !strings.Contains(msg, want) {
				t.Errorf("message lacks %q:\n%s", want, msg)
			}
		}
	})
	t.Run("a long diff stops at the 60th changed line and counts the rest", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("--- a/f\n+++ b/f\n@@ -1,100 +1,100 @@\n")
		for i := 1; i <= 50; i++ {
			fmt.Fprintf(&b, "-old %d\n+new %d\n", i, i)
		}
		_, msg := Render(ConfirmRequest{Tool: "write", Preview: map[string]any{"kind": "write", "path": "f", "unifiedDiff": b.String()}})
		if !strings.Contains(msg, "+new 30\n") || strings.Contains(msg, "-old 31\n") {
			t.Errorf("want changed lines up to the 60th (+new 30) only:\n%s", msg)
		}
		if !strings.Contains(msg, "40 more changed lines not shown.") {
			t.Errorf("want the count of the rest:\n%s", msg)
		}
	})
	t.Run("a diff holding a code fence cannot close the block", func(t *testing.T) {
		diff := "--- a/r.md\n+++ b/r.md\n@@ -1 +1 @@\n-x\n+```\n"
		_, msg := Render(ConfirmRequest{Tool: "edit", Preview: map[string]any{"kind": "edit", "path": "r.md", "unifiedDiff": diff}})
		if !strings.Contains(msg, "````diff\n") {
			t.Errorf("want a longer fence:\n%s", msg)
		}
	})
	t.Run("a command shows itself, its cwd and why it is not read-only", func(t *testing.T) {
		title, msg := Render(ConfirmRequest{Tool: "bash", Preview: map[string]any{"kind": "command", "command": "echo hi > out.txt", "cwd": "sub", "reasons": []any{"> overwrites out.txt"}}})
		if title != "agentls: Run echo hi > out.txt" {
			t.Errorf("title %q", title)
		}
		for _, want := range []string{"```sh\necho hi > out.txt\n```", "in `sub`", "Not read-only: > overwrites out.txt."} {
			if !strings.Contains(msg, want) {
				t.Errorf("message lacks %q:\n%s", want, msg)
			}
		}
	})
	t.Run("another tool shows its path", func(t *testing.T) {
		title, msg := Render(ConfirmRequest{Tool: "read", Arguments: map[string]any{"path": ".env"}})
		if title != "agentls: Run read" || !strings.Contains(msg, "`.env`") {
			t.Errorf("title %q message %q", title, msg)
		}
	})
}

func TestHowToAllowGivesARuleThatAllowsThisVeryCall(t *testing.T) {
	for _, req := range []Request{edit("src/main.go"), write("new file.txt"), bash("go build ./..."), edit("a[1].txt")} {
		c := &Config{Root: testRoot, Home: testHome, Mode: ModeDefault}
		v := c.Evaluate(req)
		if v.Decision != Ask || v.Rule != "mode:default" {
			t.Fatalf("%+v: %+v, want an ask of the mode", req, v)
		}
		how := HowToAllow(req, v, Hints{})
		rule := AllowRule(req)
		if !strings.Contains(how, `.agentls/settings.local.json in the workspace: {"permissions":{"allow":[`+fmt.Sprintf("%q", rule)+`]}}`) {
			t.Errorf("%s", how)
		}
		c.Allow = rules(t, SourceLocal, []string{rule})
		if got := c.Evaluate(req); got.Decision != Allow {
			t.Errorf("with %s the call is %s (%s)", rule, got.Decision, got.Reason)
		}
		// The rule is this call's: a sibling is still asked about.
		if other := edit("src/other.go"); req.Tool == "edit" && c.Evaluate(other).Decision != Ask {
			t.Errorf("%s also allows src/other.go", rule)
		}
	}
	t.Run("a built-in ask names the user settings, whose rules lift it", func(t *testing.T) {
		req := bash("rm -rf build")
		c := &Config{Root: testRoot, Home: testHome, Mode: ModeDefault}
		v := c.Evaluate(req)
		how := HowToAllow(req, v, Hints{UserSettings: "/home/u/.config/agentls/settings.json"})
		if v.Rule != BuiltinDestructive || !strings.Contains(how, "user settings (/home/u/.config/agentls/settings.json)") || !strings.Contains(how, `Bash(rm -rf build)`) {
			t.Fatalf("%+v: %s", v, how)
		}
		c.Allow = rules(t, SourceUser, []string{AllowRule(req)})
		if got := c.Evaluate(req); got.Decision != Allow {
			t.Errorf("the user's allow rule leaves it %s", got.Decision)
		}
	})
	t.Run("a user's ask rule is named, since an allow rule cannot lift it", func(t *testing.T) {
		req := edit("main.go")
		c := &Config{Root: testRoot, Home: testHome, Mode: ModeDefault, Ask: rules(t, SourceWorkspace, []string{"Edit(main.go)"})}
		v := c.Evaluate(req)
		how := HowToAllow(req, v, Hints{})
		if !strings.Contains(how, "Edit(main.go) (.agentls/settings.json)") || !strings.Contains(how, "remove it") {
			t.Errorf("%s", how)
		}
	})
}
