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
	e := claudeStart(t, map[string]string{
		".agentls/settings.json": claudeSettings(map[string][]string{
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
	claudeRun(t, e, []claudeCase{
		claudeCmd("flock", "flock "+filepath.Join(e.ws, "lock")+" rm v", "deny", denyRm),
		claudeCmd("taskset", "taskset -c 0 rm v", "deny", denyRm),
		claudeCmd("script -c", "script -q -c 'rm v' /dev/null", "deny", denyRm),
		claudeCmd("bash -c computed", `bash -c "$(printf 'r\x6d v')"`, "deny", "only known when it runs"),
		claudeCmd("source process substitution", "source <(echo rm v)", "deny", denyRm),
		claudeCmd("dot stdin", ". /dev/stdin <<< 'rm v'", "deny", denyRm),
		claudeCmd("symlink to the file", "cat envlink", "deny", denyEnv),
		claudeCmd("symlink to the folder", "cat selflink/.env", "deny", denyEnv),
	})
	if _, err := os.Stat(filepath.Join(e.ws, "v")); err != nil {
		t.Errorf("v was removed: %v", err)
	}
}

// A Read deny rule and the built-in secret-file ask see the file a
// redirection or a dd operand reads (`cat < .env`, `dd if=.env`), and an
// Edit deny rule holds for the commands that change its file (`rm`, `cp`
// onto it, `sed -i`, `> file`, also inside `bash -c`), while read-only
// commands still read it. Before, only the arguments of commands were
// matched, and only against Read rules: `cat < .env` read a denied file
// and `echo x > f` overwrote one the user had denied editing.
func TestBashPathRulesCoverRedirectionsAndEditDenies(t *testing.T) {
	t.Parallel()
	e := claudeStart(t, map[string]string{
		".agentls/settings.json": claudeSettings(map[string][]string{
			"deny": {"Read(./.env)", "Edit(config/prod.yaml)"},
		}, nil),
		".env":             "SECRET=1\n",
		"db/.env.local":    "TOKEN=2\n",
		"config/prod.yaml": "replicas: 3\n",
	}, nil, nil)
	const denyEnv = "denied by the rule Read(./.env) (.agentls/settings.json)"
	const denyProd = "denied by the rule Edit(config/prod.yaml) (.agentls/settings.json)"
	claudeRun(t, e, []claudeCase{
		claudeCmd("input redirection", "cat < .env", "deny", denyEnv),
		claudeCmd("redirection of a loop", "while read l; do echo $l; done < .env", "deny", denyEnv),
		claudeCmd("redirection in bash -c", "bash -c 'cat 0<.env'", "deny", denyEnv),
		claudeCmd("dd operand", "dd if=.env", "deny", denyEnv),
		claudeCmd("secret file by redirection", "cat < db/.env.local", "ask", ""),
		claudeCmd("output redirection", "echo replicas: 0 > config/prod.yaml", "deny", denyProd),
		claudeCmd("append", "echo x >> config/prod.yaml", "deny", denyProd),
		claudeCmd("rm", "rm config/prod.yaml", "deny", denyProd),
		claudeCmd("cp onto it", "cp .agentls/settings.json config/prod.yaml", "deny", denyProd),
		claudeCmd("sed -i", "sed -i s/3/0/ config/prod.yaml", "deny", denyProd),
		claudeCmd("wrapped", "bash -c 'truncate -s0 config/prod.yaml'", "deny", denyProd),
		claudeCmd("read-only command still reads it", "cat config/prod.yaml", "allow", "replicas: 3"),
	})
	if got := readFile(t, filepath.Join(e.ws, "config/prod.yaml")); got != "replicas: 3\n" {
		t.Errorf("config/prod.yaml = %q, want it unchanged", got)
	}
}
