package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// wrapped is what a wrapper command runs.
type wrapped struct {
	commands [][]word // command words run directly (sudo rm x)
	scripts  []string // command lines run by a shell (bash -c, eval)
	// opaque are words whose meaning we cannot follow (options that are
	// not literal, a syntax we do not know): they are scanned for
	// destructive names, and each literal word is tried as the start of
	// the command.
	opaque  []word
	unknown bool // it runs something not written literally (a script file, a shell)
	// computed: what it runs is computed when it runs (bash -c "$(…)",
	// eval "$x", source <(…)), so no rule can be checked against it.
	computed bool
	stdin    bool // a shell that reads its commands from standard input
}

// wrapperSpec is the option syntax of a program that runs the command written
// after its options and operands: the common shape, as data.
type wrapperSpec struct {
	opts optSpec
	// operands come before the command: timeout DURATION, chroot DIR,
	// flock FILE, taskset MASK, chrt PRIORITY.
	operands int
	// numeric: an operand is skipped only when it is a number (chrt's
	// priority may be left out).
	numeric bool
	// scriptOpts take a command line for a shell as their value (script
	// -c, flock -c, runuser -c); flock also takes one after its operand.
	scriptOpts []string
	// idleOpts make the wrapper run nothing (command -v, taskset -p).
	idleOpts []string
	// bare: every argument is the command; no options are parsed.
	bare bool
	// shell: without a command it starts an interactive shell.
	shell bool
	// idle: without a command it runs nothing (exec applies its
	// redirections, ionice and prlimit print, flock locks a descriptor).
	idle bool
	// assigns: VAR=value words may precede the command (sudo VAR=x cmd).
	assigns bool
	// files: the operands are files, never the command (script [FILE]),
	// and options may follow them.
	files bool
}

// wrappers are the programs whose syntax wrapperSpec describes. Read only.
var wrappers = map[string]wrapperSpec{
	"sudo": {opts: optSpec{shortArg: "CDghpRrTtUu", longArg: []string{"--user", "--group", "--host",
		"--prompt", "--chroot", "--role", "--type", "--command-timeout", "--other-user",
		"--close-from", "--chdir"}}, shell: true, assigns: true},
	"doas":    {opts: optSpec{shortArg: "uC"}, shell: true, assigns: true},
	"nohup":   {bare: true},
	"builtin": {bare: true},
	"busybox": {bare: true},
	"nice":    {opts: optSpec{shortArg: "n", longArg: []string{"--adjustment"}}},
	"stdbuf":  {opts: optSpec{shortArg: "ioe", longArg: []string{"--input", "--output", "--error"}}},
	"setsid":  {},
	"time":    {opts: optSpec{shortArg: "fo", longArg: []string{"--format", "--output"}}},
	// ionice without a command sets the priority of running processes.
	"ionice": {opts: optSpec{shortArg: "cnpPu", longArg: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}}, idle: true},
	"exec":   {opts: optSpec{shortArg: "a"}, idle: true},
	// command -v is a lookup, like which.
	"command": {idleOpts: []string{"-v", "-V"}},
	"timeout": {opts: optSpec{shortArg: "sk", longArg: []string{"--signal", "--kill-after"}}, operands: 1},
	"xargs": {opts: optSpec{shortArg: "adEILnPs", shortOpt: "eil", longArg: []string{"--arg-file", "--delimiter",
		"--max-args", "--max-procs", "--max-chars", "--process-slot-var"}}},
	"chroot": {operands: 1, shell: true},
	// flock [opts] FILE CMD…, flock [opts] FILE -c CMD; flock FD runs nothing.
	"flock": {opts: optSpec{shortArg: "wEc", longArg: []string{"--timeout", "--wait", "--conflict-exit-code", "--command"}},
		operands: 1, scriptOpts: []string{"-c", "--command"}, idle: true},
	// Short namespace options take their file only attached (-m/path).
	"unshare": {opts: optSpec{shortArg: "SGRwl", shortOpt: "muinpUCT", longArg: []string{"--setuid", "--setgid",
		"--root", "--wd", "--propagation", "--setgroups", "--map-user", "--map-group", "--map-users",
		"--map-groups", "--monotonic", "--boottime", "--load-interp"}}, shell: true},
	"setpriv": {opts: optSpec{longArg: []string{"--reuid", "--regid", "--ruid", "--rgid", "--euid", "--egid",
		"--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig",
		"--selinux-label", "--apparmor-profile", "--landlock-access", "--landlock-rule", "--seccomp-filter"}}},
	"nsenter": {opts: optSpec{shortArg: "tSGW", shortOpt: "muinpUCTrw", longArg: []string{"--target", "--setuid",
		"--setgid", "--wdns"}}, shell: true},
	// taskset [-a] [-c] MASK CMD…; taskset -p changes a running process.
	"taskset": {operands: 1, idleOpts: []string{"-p", "--pid"}},
	// chrt [opts] [PRIORITY] CMD…; chrt -p changes a running process,
	// chrt -m prints the priority ranges.
	"chrt": {opts: optSpec{shortArg: "TPD", longArg: []string{"--sched-runtime", "--sched-period", "--sched-deadline"}},
		operands: 1, numeric: true, idleOpts: []string{"-p", "--pid", "-m", "--max"}},
	// prlimit --nofile=N CMD…; resource options take their value attached.
	"prlimit": {opts: optSpec{shortArg: "po", shortOpt: "cdefilmnqrstuvxy", longArg: []string{"--pid", "--output"}},
		idleOpts: []string{"-p", "--pid"}, idle: true},
	// script [opts] [FILE]: runs -c's command line, else a shell; FILE
	// is the typescript it writes.
	"script": {opts: optSpec{shortArg: "cEIOBTmo", shortOpt: "t", longArg: []string{"--command", "--echo",
		"--log-in", "--log-out", "--log-io", "--log-timing", "--logging-format", "--output-limit"}},
		scriptOpts: []string{"-c", "--command"}, files: true, shell: true},
	"strace": {opts: optSpec{shortArg: "abeEIoOpPsSuUX", longArg: []string{"--output", "--attach", "--trace-path",
		"--string-limit", "--user", "--env", "--columns", "--summary-sort-by"}}},
	"unbuffer": {},
	"firejail": {},
}

// wrapperFuncs are the wrappers whose syntax does not fit wrapperSpec.
var wrapperFuncs = map[string]func(args []word) (wrapped, bool){
	"env":      unwrapEnv,
	"watch":    unwrapWatch,
	"eval":     unwrapEval,
	"source":   unwrapSource,
	".":        unwrapSource,
	"alias":    unwrapAlias,
	"su":       unwrapSu,
	"runuser":  unwrapRunuser,
	"trap":     unwrapTrap,
	"find":     findExec,
	"fd":       unwrapFd,
	"fdfind":   unwrapFd,
	"bash":     unwrapShell,
	"sh":       unwrapShell,
	"zsh":      unwrapShell,
	"dash":     unwrapShell,
	"ksh":      unwrapShell,
	"mksh":     unwrapShell,
	"ash":      unwrapShell,
	"rbash":    unwrapShell,
	"fish":     unwrapShell,
	"parallel": unwrapUnknownSyntax, "ltrace": unwrapUnknownSyntax,
	"systemd-run": unwrapUnknownSyntax, "sg": unwrapUnknownSyntax,
}

// unwrap reports whether base (with args) runs another command, and what.
func unwrap(base string, args []word) (wrapped, bool) {
	if fn, ok := wrapperFuncs[base]; ok {
		return fn(args)
	}
	if spec, ok := wrappers[base]; ok {
		return spec.unwrap(args)
	}
	return wrapped{}, false
}

func (s wrapperSpec) unwrap(args []word) (wrapped, bool) {
	var w wrapped
	if s.bare {
		return w.rest(args, 0, true, false, false), true
	}
	idle := false
	see := func(name string, val word) {
		if slices.Contains(s.scriptOpts, name) {
			w.script(val)
		}
		idle = idle || slices.Contains(s.idleOpts, name)
	}
	if s.files {
		if _, ok := s.opts.scan(args, see); !ok {
			w.cannotFollow(args)
		} else if w.scripts == nil && !w.computed {
			w.unknown = s.shell
		}
		return w, true
	}
	i, ok := eachOpt(args, s.opts.shortArg, s.opts.shortOpt, s.opts.longArg, see)
	switch {
	case !ok:
		w.cannotFollow(args)
		return w, true
	case idle:
		return wrapped{}, false
	case w.scripts != nil || w.computed:
		return w, true
	}
	for n := 0; n < s.operands && i < len(args); n++ {
		if s.numeric && (args[i].dyn || !isDigits(args[i].lit)) {
			break
		}
		i++
	}
	if i+1 < len(args) && !args[i].dyn && slices.Contains(s.scriptOpts, args[i].lit) {
		w.script(args[i+1]) // flock FILE -c CMD
		return w, true
	}
	if i >= len(args) && s.idle {
		return wrapped{}, false
	}
	return w.rest(args, i, true, s.shell, s.assigns), true
}

func unwrapEnv(args []word) (wrapped, bool) {
	var w wrapped
	i, ok := eachOpt(args, "uCS", "", []string{"--unset", "--chdir", "--split-string"},
		func(name string, val word) {
			if name == "-S" || name == "--split-string" {
				w.script(val)
			}
		})
	if !ok {
		w.cannotFollow(args)
		return w, true
	}
	for i < len(args) && isAssignment(args[i]) {
		i++
	}
	if i == len(args) && w.scripts == nil && !w.unknown {
		return w, false // env alone prints the environment
	}
	return w.rest(args, i, true, false, false), true
}

func unwrapWatch(args []word) (wrapped, bool) {
	var w wrapped
	direct := false
	i, ok := eachOpt(args, "nq", "", []string{"--interval", "--equexit"}, func(name string, _ word) {
		direct = direct || name == "-x" || name == "--exec"
	})
	if !ok || direct {
		return w.rest(args, i, ok, false, false), true
	}
	w.joined(args[i:])
	return w, true
}

func unwrapEval(args []word) (wrapped, bool) {
	var w wrapped
	w.joined(args)
	return w, true
}

// unwrapShell covers bash -c LINE, a shell reading standard input, and a
// shell running a script file.
func unwrapShell(args []word) (wrapped, bool) {
	var w wrapped
	dashC := false
	i, ok := eachOpt(args, "oO", "", []string{"--rcfile", "--init-file"}, func(name string, _ word) {
		dashC = dashC || name == "-c"
	})
	switch {
	case !ok:
		w.cannotFollow(args)
	case dashC && i < len(args):
		w.script(args[i])
	case i == len(args) || args[i].lit == "-s" || args[i].lit == "-":
		w.unknown, w.stdin = true, true // commands from stdin
	default:
		w.scriptFile(args[i])
	}
	return w, true
}

// unwrapSource covers source FILE and . FILE: the shell runs the file's
// commands.
func unwrapSource(args []word) (wrapped, bool) {
	var w wrapped
	if len(args) > 0 && args[0].lit == "--" && !args[0].dyn {
		args = args[1:]
	}
	if len(args) == 0 {
		return w, false // an error: runs nothing
	}
	w.scriptFile(args[0])
	return w, true
}

func unwrapAlias(args []word) (wrapped, bool) {
	// alias zz=rm: the alias's text runs wherever zz is the name of a
	// later command; check it as if it ran here.
	var w wrapped
	for _, arg := range args {
		if name, value, ok := strings.Cut(arg.lit, "="); ok && name != "" && !arg.dyn {
			w.scripts = append(w.scripts, value)
		} else if ok && arg.dyn {
			w.unknown, w.computed = true, true
		}
	}
	if len(w.scripts) == 0 && !w.unknown {
		return w, false // lists aliases
	}
	return w, true
}

func unwrapSu(args []word) (wrapped, bool) {
	var w wrapped
	found := false
	for i := 0; i < len(args); i++ {
		switch l := args[i].lit; {
		case l == "-c" || l == "--command" || l == "--session-command":
			if i+1 < len(args) {
				w.script(args[i+1])
				found = true
			}
		case strings.HasPrefix(l, "--command=") || strings.HasPrefix(l, "--session-command="):
			_, v, _ := strings.Cut(l, "=")
			w.script(word{lit: v, dyn: args[i].dyn})
			found = true
		}
	}
	w.unknown = w.unknown || !found // an interactive shell
	return w, true
}

// unwrapRunuser covers runuser -u USER CMD… and the su-like runuser
// [-l] USER -c LINE.
func unwrapRunuser(args []word) (wrapped, bool) {
	var w wrapped
	user := false
	spec := optSpec{shortArg: "ugGscw", longArg: []string{"--user", "--group", "--supp-group", "--shell",
		"--command", "--session-command", "--whitelist-environment"}}
	see := func(name string, val word) {
		switch name {
		case "-c", "--command", "--session-command":
			w.script(val)
		case "-u", "--user":
			user = true
		}
	}
	// Options may come after the user name, as for su.
	if _, ok := spec.scan(args, see); !ok {
		w.cannotFollow(args)
		return w, true
	}
	if !user {
		if w.scripts == nil && !w.computed {
			w.unknown = true // an interactive shell, or a script file
		}
		return w, true
	}
	w = wrapped{}
	i, ok := eachOpt(args, spec.shortArg, "", spec.longArg, see)
	return w.rest(args, i, ok, true, false), true
}

func unwrapTrap(args []word) (wrapped, bool) {
	var w wrapped
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
}

func unwrapFd(args []word) (wrapped, bool) {
	var w wrapped
	for i, a := range args {
		switch a.lit {
		case "-x", "--exec", "-X", "--exec-batch":
			w.commands = append(w.commands, untilTerminator(args[i+1:]))
			return w, true
		}
	}
	return w, false
}

// unwrapUnknownSyntax is for wrappers whose syntax is not modelled.
func unwrapUnknownSyntax(args []word) (wrapped, bool) {
	var w wrapped
	w.cannotFollow(args)
	return w, true
}

// cannotFollow records words of a wrapper whose syntax cannot be followed.
// An expansion among them could be the command itself.
func (w *wrapped) cannotFollow(args []word) {
	w.opaque = args
	for _, a := range args {
		if a.dyn {
			w.unknown, w.computed = true, true
		}
	}
}

// rest records args[i:] as the wrapped command. shell says an empty rest
// starts an interactive shell (sudo -s); assigns skips VAR=value words.
func (w wrapped) rest(args []word, i int, ok, shell, assigns bool) wrapped {
	if !ok {
		w.cannotFollow(args)
		return w
	}
	for assigns && i < len(args) && isAssignment(args[i]) {
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
		w.unknown, w.computed = true, true
		return
	}
	w.scripts = append(w.scripts, s.lit)
}

// stdinFiles name a shell's standard input as a file.
var stdinFiles = []string{"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}

// scriptFile records a script file a shell runs. Its content is not read:
// a literal path runs something unknown, a computed one (<(…), "$f")
// something that cannot be known before it runs, and standard input is
// what the command's here-document or pipe holds.
func (w *wrapped) scriptFile(f word) {
	switch {
	case f.dyn:
		w.unknown, w.computed = true, true
	case slices.Contains(stdinFiles, f.lit):
		w.unknown, w.stdin = true, true
	default:
		w.unknown = true
	}
}

// joined records words that the wrapper joins with spaces and runs as a
// command line (eval, watch).
func (w *wrapped) joined(args []word) {
	parts := make([]string, len(args))
	for i, a := range args {
		if a.dyn {
			w.unknown, w.computed = true, true
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
