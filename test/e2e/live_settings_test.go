package e2e

// Settings files edited while a session runs (docs/tools.md: they "are read
// again when they change: the new mode and rules apply from the next call").

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// liveWaitLog waits for a window/logMessage containing every one of subs.
func liveWaitLog(c *harness.Client, subs ...string) bool {
	_, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
		if n.Method != "window/logMessage" {
			return false
		}
		for _, s := range subs {
			if !strings.Contains(string(n.Params), s) {
				return false
			}
		}
		return true
	})
	return ok
}

// A deny rule saved while running holds for the very next call; a broken
// or partly invalid file is reported and keeps the rules it had (a broken
// file never lifts a deny rule); the user's settings file is read live too,
// and a removed rule is lifted.
func TestLiveSettingsDenyRuleAppliesToNextCall(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "alpha\n", "b.txt": "bravo\n", "c.txt": "charlie\n"})
	xdg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdg, "agentls"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, ctx := startIn(t, ws, bypass(), "XDG_CONFIG_HOME="+xdg)
	read := func(p string) harness.Result { return c.CallTool(ctx, "read", map[string]any{"path": p}) }
	denied := func(p string) bool { return waitUntil(5*time.Second, func() bool { return read(p).IsError }) }
	wantResult(t, "read before any rule", read("a.txt"), false, "alpha")

	settings := filepath.Join(ws, ".agentls", "settings.json")
	writeFile(t, settings, `{"permissions": {"deny": ["Read(a.txt)"]}}`)
	r := read("a.txt")
	wantResult(t, "the call right after saving a deny rule", r, true, "Read(a.txt)", "settings.json")
	wantLacks(t, "denial", r.Text(), "alpha")

	writeFile(t, settings, `{"permissions": {"deny": ["Read(a.txt)"], }`)
	if !liveWaitLog(c, "settings.json") {
		t.Errorf("broken settings.json not reported; logs: %q", logMessages(c, 0))
	}
	time.Sleep(300 * time.Millisecond) // let a reload, if any, happen before judging
	wantResult(t, "a.txt after settings.json broke", read("a.txt"), true)
	writeFile(t, settings, `{"permissions": {"deny": ["Read(a.txt)"]}}`)

	local := filepath.Join(ws, ".agentls", "settings.local.json")
	writeFile(t, local, `{"permissions": {"deny": ["Read(b.txt)"`)
	if !liveWaitLog(c, "settings.local.json") {
		t.Errorf("broken settings.local.json not reported; logs: %q", logMessages(c, 0))
	}
	wantResult(t, "settings.json's rule beside a broken local file", read("a.txt"), true)
	wantResult(t, "a broken file's rule", read("b.txt"), false, "bravo")

	writeFile(t, local, `{"permissions": {"deny": ["Read(b.txt)", "Bogus((("]}}`)
	if !liveWaitLog(c, "settings.local.json", "Bogus(((") {
		t.Errorf("invalid rule not reported naming file and rule; logs: %q", logMessages(c, 0))
	}
	if !denied("b.txt") {
		t.Errorf("an invalid rule switched off its file's valid Read(b.txt)")
	}

	writeFile(t, filepath.Join(xdg, "agentls", "settings.json"), `{"permissions": {"deny": ["Read(c.txt)"]}}`)
	if !denied("c.txt") {
		t.Errorf("deny Read(c.txt) in $XDG_CONFIG_HOME/agentls/settings.json never applied")
	}
	wantResult(t, "user-file denial", read("c.txt"), true, "Read(c.txt)")

	writeFile(t, settings, `{}`)
	if !waitUntil(5*time.Second, func() bool { return !read("a.txt").IsError }) {
		t.Errorf("removing deny Read(a.txt) never took effect")
	}
}

// docs/protocol.md "Limits": a settings file's limits apply live (the
// built-in tools are rebuilt, their descriptions state the new limit); a
// wrong value is reported and that file's limits ignored. (The next
// session: governance/limits_from_settings_file_enforced.txtar; the
// editor's limits win: TestFolderLimits.)
func TestLiveSettingsLimitsApplyLiveAndToNextSession(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"ten.txt": numberedLines(10, func(i int) string { return fmt.Sprint("line ", i) })})
	readDesc := func(c *harness.Client, ctx context.Context) string {
		d, _ := folderCfgList(t, c, ctx, false)["read"]["description"].(string)
		return d
	}
	read := func(c *harness.Client, ctx context.Context) string {
		return c.CallTool(ctx, "read", map[string]any{"path": "ten.txt"}).Text()
	}
	s1, ctx1 := startIn(t, ws, bypass())
	wantContains(t, "before", read(s1, ctx1), "lines 1-10 of 10")
	before := readDesc(s1, ctx1)
	writeFile(t, filepath.Join(ws, ".agentls", "settings.json"), `{"limits": {"readLines": 5}}`)
	if !waitUntil(5*time.Second, func() bool { return strings.Contains(read(s1, ctx1), "lines 1-3 of 10") }) {
		t.Fatalf("the running session never took readLines 5 (3 lines beside the header and notice)")
	}
	if d := readDesc(s1, ctx1); d == before || !strings.Contains(d, "A result is at most 5 lines") {
		t.Errorf("read's description does not state the new limit:\n%s", d)
	}
	writeFile(t, filepath.Join(ws, ".agentls", "settings.local.json"), `{"limits": {"readLines": 0, "readBytes": 8192}}`)
	s2, ctx2 := startIn(t, ws, bypass())
	if !liveWaitLog(s2, "settings.local.json", "readLines") {
		t.Errorf("out-of-range readLines not reported; logs: %q", logMessages(s2, 0))
	}
	wantContains(t, "beside an invalid local file", read(s2, ctx2), "lines 1-3 of 10", "offset=4")
	wantContains(t, "the next session's read description", readDesc(s2, ctx2), "A result is at most 5 lines")
}

// A mode set in .agentls/settings.json live applies from the next call; a
// workspace file cannot select bypass (docs/tools.md "Permissions").
func TestLiveSettingsModeChange(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, nil)
	c, ctx := startIn(t, ws, nil) // default mode, no confirm capability: an ask is a refusal
	write := func() bool {
		return !c.CallTool(ctx, "write", map[string]any{"path": "w1.txt", "content": "one\n"}).IsError
	}
	if write() {
		t.Fatalf("default mode without confirm: write was not refused")
	}
	writeFile(t, filepath.Join(ws, ".agentls", "settings.json"), `{"mode": "acceptEdits"}`)
	if !waitUntil(5*time.Second, write) {
		t.Fatalf("mode acceptEdits from .agentls/settings.json never applied")
	}
	writeFile(t, filepath.Join(ws, ".agentls", "settings.json"), `{"mode": "bypass", "permissions": {"deny": ["Read(marker.txt)"]}}`)
	writeFile(t, filepath.Join(ws, "marker.txt"), "m\n")
	if !waitUntil(5*time.Second, func() bool { return c.CallTool(ctx, "read", map[string]any{"path": "marker.txt"}).IsError }) {
		t.Fatalf("settings.json with bypass never re-read")
	}
	wantResult(t, "bash under a workspace file's bypass", c.CallTool(ctx, "bash", map[string]any{"command": "touch pwned_by_bypass"}), true)
	if _, err := os.Stat(filepath.Join(ws, "pwned_by_bypass")); err == nil {
		t.Errorf("bash ran under a workspace-selected bypass")
	}
}
