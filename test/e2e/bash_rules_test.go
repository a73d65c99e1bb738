package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// Bash deny rules hold against wrappers and computed programs, and Read
// deny rules against arguments that reach the file through a symlink.
func TestBashRulesSeeWrappersComputedProgramsAndSymlinks(t *testing.T) {
	t.Parallel()
	e := a17cStart(t, map[string]string{
		".agentls/settings.json": a17cSettings(map[string][]string{
			"deny": {"Bash(rm:*)", "Read(./.env)"},
		}, nil),
		".env": "SECRET=1\n",
		"v":    "victim\n",
	}, nil, nil)
	for link, target := range map[string]string{"envlink": ".env", "selflink": "."} {
		if err := os.Symlink(target, filepath.Join(e.ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	const denyRm = "denied by the rule Bash(rm:*) (.agentls/settings.json)"
	const denyEnv = "denied by the rule Read(./.env) (.agentls/settings.json)"
	a17cRun(t, e, []a17cCase{
		a17cCmd("flock", "flock "+filepath.Join(e.ws, "lock")+" rm v", "deny", denyRm),
		a17cCmd("taskset", "taskset -c 0 rm v", "deny", denyRm),
		a17cCmd("script -c", "script -q -c 'rm v' /dev/null", "deny", denyRm),
		a17cCmd("bash -c computed", `bash -c "$(printf 'r\x6d v')"`, "deny", "only known when it runs"),
		a17cCmd("source process substitution", "source <(echo rm v)", "deny", denyRm),
		a17cCmd("dot stdin", ". /dev/stdin <<< 'rm v'", "deny", denyRm),
		a17cCmd("symlink to the file", "cat envlink", "deny", denyEnv),
		a17cCmd("symlink to the folder", "cat selflink/.env", "deny", denyEnv),
	})
	if _, err := os.Stat(filepath.Join(e.ws, "v")); err != nil {
		t.Errorf("v was removed: %v", err)
	}
}
