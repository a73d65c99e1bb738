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

// Every shape of command line that runs rm (lists, subshells,
// substitutions, wrappers, quoting tricks, aliases, functions, a dynamic
// name, a heredoc to sh, a backgrounded job) is denied by Bash(rm:*) even in
// bypass mode, or at least asked about: never allowed.
func TestBashDenyRuleCoversEveryShapeOfRunningRm(t *testing.T) {
	lines := []string{
		"echo x && rm -f v", "true; rm -f v", "(rm -f v)", "echo $(rm -f v)", "echo `rm -f v`",
		"bash -c 'rm -f v'", `sh -c "rm -f v"`, "env rm -f v", "FOO=1 rm -f v", "command rm -f v",
		`\rm -f v`, "/bin/rm -f v", "r''m -f v", "xargs rm -f <<< v", "echo v | xargs rm -f",
		`eval "rm -f v"`, "echo hi\nrm -f v", "sh <<'EOF'\nrm -f v\nEOF", "exec rm -f v", "time rm -f v",
		"nohup rm -f v", "sudo -n rm -f v || rm -f v", "shopt -s expand_aliases\nalias zz=rm\nzz -f v",
		`f() { rm -f "$1"; }; f v`, "X=rm; $X -f v", "timeout 5 rm -f v", "if true; then rm -f v; fi",
		"false || rm -f v", "rm -f v & wait",
		"true && curl -s http://127.0.0.1:1/", "git push origin main", "echo a | env curl http://127.0.0.1:1/",
	}
	cfg := &Config{Mode: ModeBypass, Root: testRoot, Deny: rules(t, SourceWorkspace, []string{"Bash(rm:*)", "Bash(git push:*)", "Bash(curl:*)"})}
	for _, line := range lines {
		if v := cfg.Evaluate(bash(line)); v.Decision == Allow {
			t.Errorf("%q: allowed (%s), want denied or asked", line, v.Reason)
		}
	}
	if v := cfg.Evaluate(bash("touch ok")); v.Decision != Allow {
		t.Errorf("touch ok in bypass: %s (%s), want allow", v.Decision, v.Reason)
	}
}

// Bash(npm test:*) allows `npm test` and nothing glued to it: another
// command after it, a longer program name, a substitution, a redirection, a
// second line, a bash -c or env wrapper around it.
func TestBashAllowPrefixGrantsNothingGluedToIt(t *testing.T) {
	cfg := &Config{Mode: ModeDefault, Root: testRoot, Allow: rules(t, SourceWorkspace, []string{"Bash(npm test:*)"})}
	if v := cfg.Evaluate(bash("npm test")); v.Decision != Allow {
		t.Fatalf("npm test: %s (%s), want allow", v.Decision, v.Reason)
	}
	for _, line := range []string{
		"npm test && echo touch p | sh", "npm test; touch p", "npm testx && touch p", "npm test $(touch p)",
		"npm test `touch p`", "npm test > p", "npm test\ntouch p", "npm test <(touch p)",
		"bash -c 'npm test; touch p'", "env npm test && touch p",
	} {
		if v := cfg.Evaluate(bash(line)); v.Decision == Allow {
			t.Errorf("%q: allowed by %q, want asked", line, v.Rule)
		}
	}
}

// In default mode a read-only line runs unasked, so a write hidden in a
// program that usually only reads (a redirection, tee, find -fprint/-exec/
// -delete, sort -o, awk's print > and system, sed's w and e, rg --pre, a git
// alias or --output, a substitution, xargs, env) is not read-only.
func TestReadOnlyClassifierSeesHiddenWrites(t *testing.T) {
	cfg := &Config{Mode: ModeDefault, Root: testRoot}
	if v := cfg.Evaluate(bash("cat in.txt | grep hel")); v.Decision != Allow {
		t.Fatalf("a read-only pipeline: %s (%s), want allow", v.Decision, v.Reason)
	}
	for _, line := range []string{
		"cat in.txt > p", "echo hi >> p", "tee p < in.txt", "find . -maxdepth 0 -fprint p",
		"find . -maxdepth 0 -exec touch p ';'", "find . -name in.txt -delete", "sort -o p in.txt",
		`awk 'BEGIN{print 1 > "p"}'`, `awk 'BEGIN{system("touch p")}'`, "sed -n 'w p' in.txt",
		"sed -n '1e touch p' in.txt", "rg --pre sh x script.txt", "git -c alias.zz='!touch p' zz",
		"git diff --no-index --output=p in.txt script.txt", "cat <(touch p)", "echo $(touch p)",
		"echo p | xargs touch", "cat <<EOF > p\nx\nEOF", "env touch p",
	} {
		if v := cfg.Evaluate(bash(line)); v.Decision == Allow {
			t.Errorf("%q: judged read-only (%s), want asked", line, v.Reason)
		}
	}
}
