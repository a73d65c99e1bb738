package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// wrapped is what a wrapper command runs.
type wrapped struct {
	commands [][]word // command words run directly (sudo rm x)
	scripts  []string // command lines run by a shell (bash -c, eval)
	opaque   []word   // words whose meaning we cannot follow; scanned only
	unknown  bool     // it runs something not written literally
	stdin    bool     // a shell that reads its commands from standard input
}

// unwrap reports whether base (with args) runs another command, and what.
func unwrap(base string, args []word) (wrapped, bool) {
	var w wrapped
	switch base {
	case "sudo":
		i, ok := eachOpt(args, "CDghpRrTtUu", "", []string{"--user", "--group", "--host",
			"--prompt", "--chroot", "--role", "--type", "--command-timeout", "--other-user",
			"--close-from", "--chdir"}, nil)
		return w.rest(args, i, ok, true), true
	case "doas":
		i, ok := eachOpt(args, "uC", "", nil, nil)
		return w.rest(args, i, ok, true), true
	case "nohup", "builtin", "busybox":
		return w.rest(args, 0, true, false), true
	case "nice":
		i, ok := eachOpt(args, "n", "", []string{"--adjustment"}, nil)
		return w.rest(args, i, ok, false), true
	case "stdbuf":
		i, ok := eachOpt(args, "ioe", "", []string{"--input", "--output", "--error"}, nil)
		return w.rest(args, i, ok, false), true
	case "setsid":
		i, ok := eachOpt(args, "", "", nil, nil)
		return w.rest(args, i, ok, false), true
	case "time":
		i, ok := eachOpt(args, "fo", "", []string{"--format", "--output"}, nil)
		return w.rest(args, i, ok, false), true
	case "ionice":
		i, ok := eachOpt(args, "cnpPu", "", []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}, nil)
		if ok && i == len(args) {
			return w, false // sets the priority of running processes
		}
		return w.rest(args, i, ok, false), true
	case "exec":
		i, ok := eachOpt(args, "a", "", nil, nil)
		if ok && i == len(args) {
			return w, false // only applies its redirections
		}
		return w.rest(args, i, ok, false), true
	case "command":
		lookup := false
		i, ok := eachOpt(args, "", "", nil, func(name string, _ word) {
			lookup = lookup || name == "-v" || name == "-V"
		})
		if ok && lookup {
			return w, false // command -v: a lookup, like which
		}
		return w.rest(args, i, ok, false), true
	case "timeout":
		i, ok := eachOpt(args, "sk", "", []string{"--signal", "--kill-after"}, nil)
		return w.rest(args, i+1, ok, false), true
	case "xargs":
		i, ok := eachOpt(args, "adEILnPs", "eil", []string{"--arg-file", "--delimiter",
			"--max-args", "--max-procs", "--max-chars", "--process-slot-var"}, nil)
		return w.rest(args, i, ok, false), true
	case "chroot":
		i, ok := eachOpt(args, "", "", nil, nil)
		return w.rest(args, i+1, ok, true), true
	case "env":
		i, ok := eachOpt(args, "uCS", "", []string{"--unset", "--chdir", "--split-string"},
			func(name string, val word) {
				if name == "-S" || name == "--split-string" {
					w.script(val)
				}
			})
		if !ok {
			w.opaque = args
			return w, true
		}
		for i < len(args) && isAssignment(args[i]) {
			i++
		}
		if i == len(args) && w.scripts == nil && !w.unknown {
			return w, false // env alone prints the environment
		}
		return w.rest(args, i, true, false), true
	case "watch":
		direct := false
		i, ok := eachOpt(args, "nq", "", []string{"--interval", "--equexit"}, func(name string, _ word) {
			direct = direct || name == "-x" || name == "--exec"
		})
		if !ok || direct {
			return w.rest(args, i, ok, false), true
		}
		w.joined(args[i:])
		return w, true
	case "eval":
		w.joined(args)
		return w, true
	case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "rbash", "fish":
		dashC := false
		i, ok := eachOpt(args, "oO", "", []string{"--rcfile", "--init-file"}, func(name string, _ word) {
			dashC = dashC || name == "-c"
		})
		switch {
		case !ok:
			w.opaque = args
		case dashC && i < len(args):
			w.script(args[i])
		case i == len(args) || args[i].lit == "-s" || args[i].lit == "-":
			w.unknown, w.stdin = true, true // commands from stdin
		default:
			w.unknown = true // runs a script file
		}
		return w, true
	case "alias":
		// alias zz=rm: the alias's text runs wherever zz is the name of
		// a later command; check it as if it ran here.
		for _, arg := range args {
			if name, value, ok := strings.Cut(arg.lit, "="); ok && name != "" && !arg.dyn {
				w.scripts = append(w.scripts, value)
			} else if ok && arg.dyn {
				w.unknown = true
			}
		}
		if len(w.scripts) == 0 && !w.unknown {
			return w, false // lists aliases
		}
		return w, true
	case "su":
		found := false
		for i := 0; i < len(args); i++ {
			switch l := args[i].lit; {
			case l == "-c" || l == "--command":
				if i+1 < len(args) {
					w.script(args[i+1])
					found = true
				}
			case strings.HasPrefix(l, "--command="):
				w.script(word{lit: strings.TrimPrefix(l, "--command="), dyn: args[i].dyn})
				found = true
			}
		}
		w.unknown = w.unknown || !found // an interactive shell
		return w, true
	case "trap":
		if len(args) > 0 && args[0].lit == "--" {
			args = args[1:]
		}
		if len(args) < 2 || args[0].flag() {
			return w, false // lists, prints or resets traps
		}
		if args[0].lit != "-" {
			w.script(args[0])
		}
		return w, true
	case "find":
		return findExec(args)
	case "fd", "fdfind":
		for i, a := range args {
			switch a.lit {
			case "-x", "--exec", "-X", "--exec-batch":
				w.commands = append(w.commands, untilTerminator(args[i+1:]))
				return w, true
			}
		}
		return w, false
	case "parallel", "flock", "strace", "ltrace", "unbuffer", "runuser", "nsenter",
		"unshare", "firejail", "systemd-run", "script", "sg":
		w.opaque = args
		return w, true
	}
	return w, false
}

// rest records args[i:] as the wrapped command. shell says an empty rest
// starts an interactive shell (sudo -s).
func (w wrapped) rest(args []word, i int, ok, shell bool) wrapped {
	if !ok {
		w.opaque = args
		return w
	}
	for shell && i < len(args) && isAssignment(args[i]) {
		i++
	}
	switch {
	case i < len(args):
		w.commands = append(w.commands, args[i:])
	case shell:
		w.unknown = true
	}
	return w
}

// script records a command line given as one word.
func (w *wrapped) script(s word) {
	if s.dyn {
		w.unknown = true
		return
	}
	w.scripts = append(w.scripts, s.lit)
}

// joined records words that the wrapper joins with spaces and runs as a
// command line (eval, watch).
func (w *wrapped) joined(args []word) {
	parts := make([]string, len(args))
	for i, a := range args {
		if a.dyn {
			w.unknown = true
			w.opaque = args
			return
		}
		parts[i] = a.lit
	}
	if len(parts) > 0 {
		w.scripts = append(w.scripts, strings.Join(parts, " "))
	}
}

// findExec returns the commands of find's -exec, -execdir, -ok, -okdir.
func findExec(args []word) (wrapped, bool) {
	var w wrapped
	for i := 0; i < len(args); i++ {
		switch args[i].lit {
		case "-exec", "-execdir", "-ok", "-okdir":
			cmd := untilTerminator(args[i+1:])
			w.commands = append(w.commands, cmd)
			i += len(cmd)
		}
	}
	return w, w.commands != nil
}

// untilTerminator returns the words before a lone ";" or "+".
func untilTerminator(args []word) []word {
	for i, a := range args {
		if !a.dyn && (a.lit == ";" || a.lit == "+") {
			return args[:i]
		}
	}
	return args
}

// isAssignment reports a VAR=value word (as env and sudo take them).
func isAssignment(w word) bool {
	i := strings.IndexByte(w.lit, '=')
	if i <= 0 || w.node == nil || len(w.node.Parts) == 0 {
		return false
	}
	// The name must be written literally, not produced by an expansion.
	first, ok := w.node.Parts[0].(*syntax.Lit)
	return ok && strings.HasPrefix(first.Value, w.lit[:i]) && syntax.ValidName(w.lit[:i])
}
