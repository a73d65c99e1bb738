package builtin

import (
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/tools"
)

// TestCallAllowedForTheSandboxNeverRunsUnconfined: a command the
// permission step allowed because it would run sandboxed is refused when
// the sandbox is off by the time it starts.
func TestCallAllowedForTheSandboxNeverRunsUnconfined(t *testing.T) {
	c := &tools.Call{Env: &tools.Env{}} // no sandbox at all: the settings switched it off
	c.RequireSandbox()
	var spec proc.Spec
	s, refused := confine(c, "make", "/tmp", &spec)
	if refused == nil || s != nil || spec.Wrap != nil {
		t.Fatalf("the command was not refused")
	}
	if !strings.Contains(refused.Content[0].Text, "nothing was run") {
		t.Fatalf("refusal: %s", refused.Content[0].Text)
	}
	// Without the mark, no sandbox means the normal run.
	if s, refused := confine(&tools.Call{Env: &tools.Env{}}, "make", "/tmp", &spec); refused != nil || s != nil {
		t.Fatalf("an unmarked call was refused")
	}
}
