package session

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/jobs"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/policy"
	"github.com/agentls/agentls/internal/settings"
	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/internal/tools/builtin"
)

func callTool(s *Session, name string, args map[string]any) tools.Result {
	raw, _ := json.Marshal(args)
	return s.Executor.Call(context.Background(), tools.Request{Name: name, Arguments: raw}, nil)
}

func TestTheFirstJobBringsBashOutputAndBashKillIntoTheToolList(t *testing.T) {
	var mu sync.Mutex
	var events []jobs.Event
	s, err := New(Options{Folders: []ops.FolderSpec{{Path: t.TempDir()}}, Log: slog.New(slog.DiscardHandler), NoUpstream: true, AuditDir: "-",
		UserConfigDir: t.TempDir(), Editor: &settings.Settings{Mode: "bypass"},
		OnJobChanged: func(ev jobs.Event) { mu.Lock(); events = append(events, ev); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	changes := 0
	s.Registry.OnChange(func() { changes++ })
	for _, n := range []string{builtin.BashOutputName, builtin.BashKillName} {
		if s.Registry.IsActive(n) {
			t.Fatalf("%s is active before any job", n)
		}
		if _, ok := s.Registry.Lookup(n); !ok {
			t.Fatalf("%s is not registered", n)
		}
	}
	if r := callTool(s, "bash", map[string]any{"command": "exit 4", "run_in_background": true}); !r.IsError {
		t.Fatalf("%s", r.Content[0].Text)
	}
	for _, n := range []string{builtin.BashOutputName, builtin.BashKillName} {
		if !s.Registry.IsActive(n) {
			t.Errorf("%s not active after a job started", n)
		}
	}
	if changes != 1 {
		t.Errorf("%d tool list changes, want 1", changes)
	}
	callTool(s, "bash", map[string]any{"command": "true", "run_in_background": true})
	if changes != 1 {
		t.Errorf("a second job changed the tool list again (%d)", changes)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []jobs.Event{{Job: "job-1", Status: "running", Command: "exit 4"}, {Job: "job-1", Status: "exited 4", Command: "exit 4"}}
	if len(events) < 2 || events[0] != want[0] || events[1] != want[1] {
		t.Errorf("events %+v, want %+v first", events, want)
	}
}

// confirmRecorder answers every question with a rejection and keeps them.
type confirmRecorder struct {
	mu   sync.Mutex
	asks []policy.ConfirmRequest
}

func (c *confirmRecorder) Confirm(ctx context.Context, req policy.ConfirmRequest) (policy.ConfirmAnswer, error) {
	c.mu.Lock()
	c.asks = append(c.asks, req)
	c.mu.Unlock()
	return policy.ConfirmAnswer{Decision: policy.RejectOnce, Message: "not now"}, nil
}

func TestABackgroundCommandIsAskedAndDeniedAsInTheForeground(t *testing.T) {
	conf := &confirmRecorder{}
	s, err := New(Options{Folders: []ops.FolderSpec{{Path: t.TempDir()}}, Log: slog.New(slog.DiscardHandler), NoUpstream: true, AuditDir: "-",
		UserConfigDir: t.TempDir(), Confirmer: conf,
		Editor: &settings.Settings{Permissions: settings.Permissions{Deny: []string{"Bash(rm:*)"}, Ask: []string{"Bash(touch:*)"}, Allow: []string{"Bash(echo:*)"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		command string
		asked   bool
		denied  bool
	}{
		{"rm -rf build", false, true},
		{"touch marker", true, true},
		{"echo fine", false, false},
	} {
		conf.mu.Lock()
		conf.asks = nil
		conf.mu.Unlock()
		fg := callTool(s, "bash", map[string]any{"command": c.command})
		conf.mu.Lock()
		fgAsks := len(conf.asks)
		conf.asks = nil
		conf.mu.Unlock()
		bg := callTool(s, "bash", map[string]any{"command": c.command, "run_in_background": true})
		conf.mu.Lock()
		bgAsks := len(conf.asks)
		conf.mu.Unlock()
		if fgAsks != bgAsks || (bgAsks > 0) != c.asked {
			t.Errorf("%s: asked %d times in the foreground, %d in the background, want asked=%v", c.command, fgAsks, bgAsks, c.asked)
		}
		if c.denied {
			if !fg.IsError || !bg.IsError || fg.Content[0].Text != bg.Content[0].Text {
				t.Errorf("%s: denials differ:\nforeground: %s\nbackground: %s", c.command, fg.Content[0].Text, bg.Content[0].Text)
			}
			if _, job := bg.Details["job"]; job {
				t.Errorf("%s: a denied command started a job", c.command)
			}
		} else if fg.IsError || bg.IsError || bg.Details["job"] == nil {
			t.Errorf("%s: allowed command: %s / %s", c.command, fg.Content[0].Text, bg.Content[0].Text)
		}
	}
	if n := len(s.Jobs.List()); n != 1 {
		t.Errorf("%d jobs, want only the allowed one", n)
	}
}

func TestClosingTheSessionKillsItsJobs(t *testing.T) {
	s, err := New(Options{Folders: []ops.FolderSpec{{Path: t.TempDir()}}, Log: slog.New(slog.DiscardHandler), NoUpstream: true, AuditDir: "-",
		UserConfigDir: t.TempDir(), Editor: &settings.Settings{Mode: "bypass"}})
	if err != nil {
		t.Fatal(err)
	}
	r := callTool(s, "bash", map[string]any{"command": "echo $$; exec sleep 100", "run_in_background": true})
	var pid int
	if _, err := fmt.Sscan(r.Content[0].Text, &pid); err != nil || pid <= 0 {
		t.Fatalf("no pid: %s", r.Content[0].Text)
	}
	began := time.Now()
	s.Close()
	if syscall.Kill(pid, 0) == nil && !zombie(pid) {
		t.Errorf("job process %d outlived the session (closed in %s)", pid, time.Since(began))
	}
	if !strings.Contains(s.Jobs.List()[0].Status, "killed by SIGTERM") {
		t.Errorf("status %q", s.Jobs.List()[0].Status)
	}
}

func zombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err != nil || strings.Contains(string(stat), ") Z ")
}
