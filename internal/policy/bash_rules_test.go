package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every way of running rm that the parser used to miss is refused by a
// deny rule on rm, in every mode.
func TestBashDenyRuleCoversWrappersAndComputedPrograms(t *testing.T) {
	lines := []string{
		`bash -c "$(printf 'r\x6d v')"`,
		`eval "$(echo rm v)"`,
		`eval $X`,
		`source <(echo rm v)`,
		`. /dev/stdin <<< 'rm v'`,
		`flock /tmp/l rm v`,
		`flock -n /tmp/l -c 'rm v'`,
		`unshare -r rm v`,
		`runuser -u bob rm v`,
		`setpriv --reuid 1000 rm v`,
		`nsenter -t 1 -m rm v`,
		`taskset -c 0 rm v`,
		`chrt -f 10 rm v`,
		`prlimit --nofile=10 rm v`,
		`script -q -c 'rm v' /dev/null`,
	}
	for _, mode := range []string{ModeDefault, ModeAcceptEdits, ModeBypass, ModeReadOnly} {
		cfg := &Config{Mode: mode, Root: testRoot, Deny: rules(t, SourceWorkspace, []string{"Bash(rm:*)"})}
		for _, line := range lines {
			v := cfg.Evaluate(bash(line))
			if v.Decision != Deny || !strings.Contains(v.Rule, "Bash(rm:*)") {
				t.Errorf("%s: %q: got %s by %q (%s), want deny by Bash(rm:*)", mode, line, v.Decision, v.Rule, v.Reason)
			}
		}
	}
}

// A deny rule matched only because the program is computed says why and
// what to do; a literal command the rule does not name still runs.
func TestComputedProgramRefusalSaysWhy(t *testing.T) {
	cfg := &Config{Mode: ModeBypass, Root: testRoot, Deny: rules(t, SourceWorkspace, []string{"Bash(rm:*)"})}
	v := cfg.Evaluate(bash(`eval "$X"`))
	if v.Decision != Deny || !strings.Contains(v.Reason, "only known when it runs") || !strings.Contains(v.Reason, "literally") {
		t.Errorf("got %s (%s), want a deny saying the program is computed", v.Decision, v.Reason)
	}
	if v := cfg.Evaluate(bash("flock /tmp/l ls")); v.Decision != Allow {
		t.Errorf("flock /tmp/l ls: got %s (%s), want allow", v.Decision, v.Reason)
	}
	if v := (&Config{Root: testRoot}).Evaluate(bash(`eval "$X"`)); v.Decision == Allow {
		t.Errorf(`eval "$X" judged read-only: %s`, v.Reason)
	}
}

// A Read deny rule covers a bash argument that reaches the file through a
// symlink.
func TestReadDenyRuleSeesThroughSymlinkedArguments(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".env"), []byte("K=v\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"envlink": ".env", "selflink": ".", "sub": root} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &Config{Mode: ModeBypass, Root: root, Deny: rules(t, SourceWorkspace, []string{"Read(./.env)"})}
	for _, line := range []string{"cat envlink", "cat selflink/.env", "cat ./selflink/selflink/.env", "cat sub/.env", "cat " + root + "/envlink", "cat .env"} {
		req := bash(line)
		req.Cwd = root
		if v := cfg.Evaluate(req); v.Decision != Deny {
			t.Errorf("%q: got %s (%s), want deny by Read(./.env)", line, v.Decision, v.Reason)
		}
	}
	req := bash("cat selflink/README")
	req.Cwd = root
	if v := cfg.Evaluate(req); v.Decision != Allow {
		t.Errorf("cat selflink/README: got %s (%s), want allow", v.Decision, v.Reason)
	}
}
