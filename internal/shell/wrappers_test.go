package shell

import (
	"slices"
	"testing"
)

// innerWords lists the literal words of every command of cmds and of the
// commands they wrap.
func innerWords(cmds []Command) [][]string {
	var out [][]string
	for _, c := range cmds {
		if c.Words != nil {
			out = append(out, c.Words)
		}
		out = append(out, innerWords(c.Inner)...)
	}
	return out
}

func TestWrappersExposeTheCommandTheyRun(t *testing.T) {
	tests := []struct {
		line string
		want []string // the wrapped command's words
	}{
		{"flock /tmp/l rm v", []string{"rm", "v"}},
		{"flock -n -w 3 /tmp/l rm v", []string{"rm", "v"}},
		{"flock --timeout 3 /tmp/l rm v", []string{"rm", "v"}},
		{"flock /tmp/l -c 'rm v'", []string{"rm", "v"}},
		{"flock -x /tmp/l --command 'rm v'", []string{"rm", "v"}},
		{"unshare rm v", []string{"rm", "v"}},
		{"unshare -m -n --fork rm v", []string{"rm", "v"}},
		{"unshare -m/run/ns --setuid 0 -R / rm v", []string{"rm", "v"}},
		{"unshare -r -- rm v", []string{"rm", "v"}},
		{"runuser -u bob rm v", []string{"rm", "v"}},
		{"runuser -u bob -- rm v", []string{"rm", "v"}},
		{"runuser -l bob -c 'rm v'", []string{"rm", "v"}},
		{"runuser bob -c 'rm v'", []string{"rm", "v"}},
		{"setpriv --reuid 1000 --regid=1000 --clear-groups rm v", []string{"rm", "v"}},
		{"setpriv --no-new-privs rm v", []string{"rm", "v"}},
		{"nsenter -t 1 -m -u -i -n -p rm v", []string{"rm", "v"}},
		{"nsenter --target 1 --mount rm v", []string{"rm", "v"}},
		{"taskset 0x1 rm v", []string{"rm", "v"}},
		{"taskset -c 0,1 rm v", []string{"rm", "v"}},
		{"taskset -a -c 0-3 rm v", []string{"rm", "v"}},
		{"chrt 10 rm v", []string{"rm", "v"}},
		{"chrt -f 10 rm v", []string{"rm", "v"}},
		{"chrt --idle 0 rm v", []string{"rm", "v"}},
		{"chrt -o rm v", []string{"rm", "v"}},
		{"chrt -d -T 1000 -D 2000 0 rm v", []string{"rm", "v"}},
		{"prlimit --nofile=10 rm v", []string{"rm", "v"}},
		{"prlimit -n10 --as=1000000 rm v", []string{"rm", "v"}},
		{"script -c 'rm v'", []string{"rm", "v"}},
		{"script -q -c 'rm v' /dev/null", []string{"rm", "v"}},
		{"script /tmp/log -c 'rm v'", []string{"rm", "v"}},
		{"script --command='rm v' log", []string{"rm", "v"}},
		{"strace -f -o trace.txt rm v", []string{"rm", "v"}},
		{"unbuffer -p rm v", []string{"rm", "v"}},
		{"firejail --private rm v", []string{"rm", "v"}},
		{". /dev/stdin <<< 'rm v'", []string{"rm", "v"}},
		{"source /dev/stdin <<'EOF'\nrm v\nEOF", []string{"rm", "v"}},
		{"bash /dev/stdin <<< 'rm v'", []string{"rm", "v"}},
		// Syntax not followed: each literal word is tried as the command.
		{"parallel -j4 rm ::: a b", []string{"rm", ":::", "a", "b"}},
		{"ltrace -o log rm v", []string{"rm", "v"}},
		{"systemd-run --user -p X=1 rm v", []string{"rm", "v"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			a := Analyze(tt.line, Options{})
			if !slices.ContainsFunc(innerWords(a.Commands), func(w []string) bool { return slices.Equal(w, tt.want) }) {
				t.Errorf("Analyze(%q) runs %q, want %q among them", tt.line, innerWords(a.Commands), tt.want)
			}
			if !a.Destructive {
				t.Errorf("Analyze(%q) is not destructive; it runs rm", tt.line)
			}
			if a.ReadOnly {
				t.Errorf("Analyze(%q) is read-only", tt.line)
			}
		})
	}
}

// A wrapper form that runs nothing is not a wrapper.
func TestWrapperFormsThatRunNothing(t *testing.T) {
	for _, line := range []string{"taskset -p 0x1 42", "taskset -pc 0 42", "chrt -p 42", "chrt -m",
		"prlimit", "prlimit -p 42 --nofile=10", "flock 9", "command -v rm", "exec 3>/dev/null", "ionice -c 3 -p 42"} {
		a := Analyze(line, Options{})
		for _, c := range a.Commands {
			if c.Wrapper || c.Opaque {
				t.Errorf("Analyze(%q): %+v counts as running a command", line, c)
			}
		}
	}
}

func TestComputedProgramsAreOpaque(t *testing.T) {
	for _, line := range []string{
		`bash -c "$(printf 'r\x6d v')"`,
		`sh -c "$X"`,
		`eval "$(echo rm v)"`,
		`eval $X`,
		`source <(echo rm v)`,
		`. <(echo rm v)`,
		`source "$f"`,
		`bash <(curl -s example.com/x)`,
		`su -c "$X"`,
		`script -c "$X"`,
		`flock /tmp/l -c "$X"`,
		`runuser bob -c "$X"`,
		`env -S "$X"`,
		`trap "$X" EXIT`,
		`watch "$X"`,
		`sudo $FLAGS rm v`,
		`parallel $X ::: a`,
		`cat cmds | . /dev/stdin`,
	} {
		a := Analyze(line, Options{})
		if !opaque(a.Commands) {
			t.Errorf("Analyze(%q): no command is opaque: %+v", line, a.Commands)
		}
		if a.ReadOnly {
			t.Errorf("Analyze(%q) is read-only", line)
		}
	}
	// A script file written literally is not read, but it is known.
	for _, line := range []string{"bash build.sh", "source venv/bin/activate", "sudo -s", "bash -c 'ls'"} {
		if a := Analyze(line, Options{}); opaque(a.Commands) {
			t.Errorf("Analyze(%q) is opaque", line)
		}
	}
}

func opaque(cmds []Command) bool {
	for _, c := range cmds {
		if c.Opaque || opaque(c.Inner) {
			return true
		}
	}
	return false
}
