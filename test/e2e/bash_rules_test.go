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

// A Read deny rule and the built-in secret-file ask see the file a
// redirection or a dd operand reads (`cat < .env`, `dd if=.env`), and an
// Edit deny rule holds for the commands that change its file (`rm`, `cp`
// onto it, `sed -i`, `> file`, also inside `bash -c`), while read-only
// commands still read it. Before, only the arguments of commands were
// matched, and only against Read rules: `cat < .env` read a denied file
// and `echo x > f` overwrote one the user had denied editing.
func TestBashPathRulesCoverRedirectionsAndEditDenies(t *testing.T) {
	t.Parallel()
	e := a17cStart(t, map[string]string{
		".agentls/settings.json": a17cSettings(map[string][]string{
			"deny": {"Read(./.env)", "Edit(config/prod.yaml)"},
		}, nil),
		".env":             "SECRET=1\n",
		"db/.env.local":    "TOKEN=2\n",
		"config/prod.yaml": "replicas: 3\n",
	}, nil, nil)
	const denyEnv = "denied by the rule Read(./.env) (.agentls/settings.json)"
	const denyProd = "denied by the rule Edit(config/prod.yaml) (.agentls/settings.json)"
	a17cRun(t, e, []a17cCase{
		a17cCmd("input redirection", "cat < .env", "deny", denyEnv),
		a17cCmd("redirection of a loop", "while read l; do echo $l; done < .env", "deny", denyEnv),
		a17cCmd("redirection in bash -c", "bash -c 'cat 0<.env'", "deny", denyEnv),
		a17cCmd("dd operand", "dd if=.env", "deny", denyEnv),
		a17cCmd("secret file by redirection", "cat < db/.env.local", "ask", ""),
		a17cCmd("output redirection", "echo replicas: 0 > config/prod.yaml", "deny", denyProd),
		a17cCmd("append", "echo x >> config/prod.yaml", "deny", denyProd),
		a17cCmd("rm", "rm config/prod.yaml", "deny", denyProd),
		a17cCmd("cp onto it", "cp .agentls/settings.json config/prod.yaml", "deny", denyProd),
		a17cCmd("sed -i", "sed -i s/3/0/ config/prod.yaml", "deny", denyProd),
		a17cCmd("wrapped", "bash -c 'truncate -s0 config/prod.yaml'", "deny", denyProd),
		a17cCmd("read-only command still reads it", "cat config/prod.yaml", "allow", "replicas: 3"),
	})
	if got := readFile(t, filepath.Join(e.ws, "config/prod.yaml")); got != "replicas: 3\n" {
		t.Errorf("config/prod.yaml = %q, want it unchanged", got)
	}
}
