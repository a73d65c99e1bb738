package builtin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/proc"
)

// Models trained on Claude Code or Codex give bash timeouts in
// milliseconds; one that can only be milliseconds is read as such and the
// repair is reported, anything else is still refused.
func TestBashTimeoutInMilliseconds(t *testing.T) {
	x, _ := newLocalExecutor(t, nil, nil)
	cases := []struct {
		name     string
		args     string
		wantNorm string // "" = no repair
		wantErr  string // "" = the command runs
	}{
		{"seconds", `{"command":"echo ok","timeout":30}`, "", ""},
		{"claude code milliseconds", `{"command":"echo ok","timeout":120000}`, "timeout: 120000 → timeout 120 (milliseconds read as seconds)", ""},
		{"the maximum in milliseconds", `{"command":"echo ok","timeout":"600000"}`, "timeout: 600000 → timeout 600", ""},
		{"codex timeout_ms", `{"command":"echo ok","timeout_ms":1500}`, "timeout_ms: 1500 → timeout 2", ""},
		{"not a whole second", `{"command":"echo ok","timeout":1234}`, "", "`timeout` must be ≤ 600, got 1234"},
		{"beyond the maximum in milliseconds", `{"command":"echo ok","timeout":601000}`, "", "`timeout` must be ≤ 600, got 601000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, x, "bash", tc.args)
			norm := fmt.Sprint(r.Details["normalized"])
			if tc.wantNorm != "" && !strings.Contains(norm, tc.wantNorm) {
				t.Errorf("details.normalized = %s, want %q", norm, tc.wantNorm)
			}
			if tc.wantNorm == "" && strings.Contains(norm, "milliseconds") {
				t.Errorf("details.normalized = %s, want no millisecond repair", norm)
			}
			if tc.wantErr != "" {
				if !r.IsError || !strings.Contains(r.TextOf(), tc.wantErr) {
					t.Errorf("result = %q, want an error containing %q", r.TextOf(), tc.wantErr)
				}
				return
			}
			if r.IsError || !strings.Contains(r.TextOf(), "ok") {
				t.Errorf("result = %q, want the command's output", r.TextOf())
			}
		})
	}
}

// The repaired timeout is the one enforced: 1000 ms stops a sleep after
// about a second.
func TestBashMillisecondTimeoutIsEnforced(t *testing.T) {
	x, _ := newLocalExecutor(t, nil, nil)
	start := time.Now()
	r := call(t, x, "bash", `{"command":"sleep 30","timeout":1000}`)
	if took := time.Since(start); !r.IsError || r.Details["timedOut"] != true || took > 10*time.Second {
		t.Fatalf("sleep 30 with timeout 1000 (ms) = %q after %v, want a timeout after about 1 s", r.TextOf(), took)
	}
}

// A command no shell can be given is refused before anything runs, with
// the reason and what to do instead, not the exec error.
func TestBashRefusesCommandsNoCommandLineCarries(t *testing.T) {
	x, dir := newLocalExecutor(t, nil, nil)
	long := "echo " + strings.Repeat("x", proc.MaxCommandBytes) + " > made.txt"
	for _, tc := range []struct {
		name, command, want string
	}{
		{"NUL byte", "echo a\x00b > made.txt", "contains a NUL byte, which no command line can carry; nothing was run"},
		{"too long", long, fmt.Sprintf("the command is %d bytes, more than one command line can carry (%d bytes); nothing was run", len(long), proc.MaxCommandBytes)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"command": tc.command})
			r := call(t, x, "bash", string(args))
			if !r.IsError || !strings.Contains(r.TextOf(), tc.want) {
				t.Errorf("result = %.300q, want an error containing %q", r.TextOf(), tc.want)
			}
			if strings.Contains(r.TextOf(), "fork/exec") {
				t.Errorf("the exec error leaks: %.300q", r.TextOf())
			}
			if _, err := os.Stat(filepath.Join(dir, "made.txt")); err == nil {
				t.Error("the command ran")
			}
		})
	}
}
