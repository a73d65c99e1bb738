package shell

import (
	"strings"
)

// anyArgsReadOnly are the programs with no option that writes files or
// runs programs: any argument is fine, even one expanded at run time.
// command, exec and trap reach readOnly only in their non-running forms
// (command -v, exec with redirections only, trap -p, ...); env only
// without a command. Read only.
var anyArgsReadOnly = setOf("ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "echo",
	"printf", "true", "false", "test", "[", "which", "type", "stat", "du", "df",
	"uname", "whoami", "id", "printenv", "env", "cut", "tr", "nl", "diff", "cmp", "comm",
	"jq", "basename", "dirname", "realpath", "readlink", "md5sum", "sha1sum",
	"sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum",
	"hexdump", "od", "strings", "column", "seq", "sleep", "nproc", "cd", "pushd",
	"popd", "dirs", ":", "read", "exit", "return", "break", "continue", "shift",
	"set", "command", "exec", "trap")

// checkedReadOnly are the programs with options that write or execute:
// each check returns "" when args only read, or why not. They see only
// arguments that cannot turn into an option at run time. Read only.
var checkedReadOnly = map[string]func(base string, args []word) string{
	"rg": func(base string, args []word) string { return rejectLong(base, args, "--pre", "--hostname-bin") },
	"ag": func(base string, args []word) string { return rejectLong(base, args, "--pager") },
	// -x/--exec made fd a wrapper already.
	"fd":     func(string, []word) string { return "" },
	"fdfind": func(string, []word) string { return "" },
	"tree": func(base string, args []word) string {
		return rejectShort(base, args, optSpec{shortArg: "LPIHT", longArg: []string{"--charset", "--filelimit", "--timefmt", "--sort"}}, "oR")
	},
	"file": func(base string, args []word) string {
		if why := rejectLong(base, args, "--compile"); why != "" {
			return why
		}
		return rejectShort(base, args, optSpec{shortArg: "efFmP"}, "C")
	},
	"sort": func(base string, args []word) string {
		if why := rejectLong(base, args, "--output", "--compress-program"); why != "" {
			return why
		}
		return rejectShort(base, args, optSpec{shortArg: "ktSTo"}, "o")
	},
	"uniq": func(_ string, args []word) string {
		spec := optSpec{shortArg: "fsw", longArg: []string{"--skip-fields", "--skip-chars", "--check-chars"}}
		if ops, _ := spec.scan(args, nil); len(ops) > 1 {
			return "uniq writes its second operand"
		}
		return ""
	},
	"xxd": func(_ string, args []word) string {
		if countXXDOperands(args) > 1 {
			return "xxd writes its second operand"
		}
		return ""
	},
	"date": dateReadOnly,
	"sed":  func(_ string, args []word) string { return sedReadOnly(args) },
	"awk":  awkReadOnly, "gawk": awkReadOnly, "mawk": awkReadOnly, "nawk": awkReadOnly,
	"yq": func(base string, args []word) string {
		if why := rejectLong(base, args, "--inplace", "--split-exp"); why != "" {
			return why
		}
		return rejectShort(base, args, optSpec{}, "is")
	},
	"git":  func(_ string, args []word) string { return gitReadOnly(args) },
	"go":   func(_ string, args []word) string { return goReadOnly(args) },
	"node": versionOnly, "python": versionOnly, "python3": versionOnly, "npm": versionOnly,
	"cargo": versionOnly, "rustc": versionOnly,
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// readOnly returns "" when base with args only reads, or why not. The
// program list and the flags each check rejects are documented in doc.go.
func readOnly(base string, args []word) string {
	if anyArgsReadOnly[base] {
		return ""
	}
	if base == "find" {
		return findReadOnly(args)
	}
	// The rest have options that write or execute: every argument must be
	// one that cannot turn into an option at run time.
	for _, a := range args {
		if uncertainFlag(a) {
			return base + " has an argument that may expand to an option"
		}
	}
	if check, ok := checkedReadOnly[base]; ok {
		return check(base, args)
	}
	return base + " is not a known read-only program"
}

func dateReadOnly(base string, args []word) string {
	if why := rejectLong(base, args, "--set"); why != "" {
		return why
	}
	if why := rejectShort(base, args, optSpec{shortArg: "dfrs", shortOpt: "I"}, "s"); why != "" {
		return why
	}
	ops, _ := optSpec{shortArg: "dfr", shortOpt: "I", longArg: []string{"--date", "--file", "--reference"}}.scan(args, nil)
	for _, o := range ops {
		if !strings.HasPrefix(o.lit, "+") || o.dyn {
			return "date with an operand other than +FORMAT sets the clock"
		}
	}
	return ""
}

func versionOnly(base string, args []word) string {
	if len(args) == 1 && versionFlag(base, args[0].lit) {
		return ""
	}
	return base + " is read-only only as " + base + " --version"
}

func versionFlag(base, f string) bool {
	switch f {
	case "--version":
		return true
	case "-v":
		return base == "node" || base == "npm"
	case "-V":
		return base != "node" && base != "npm"
	}
	return false
}

// rejectLong reports the first literal long option that is one of names or
// an abbreviation GNU getopt would accept for it.
func rejectLong(base string, args []word, names ...string) string {
	for _, a := range args {
		if a.dyn || !strings.HasPrefix(a.lit, "--") || len(a.lit) < 3 {
			continue
		}
		opt, _, _ := strings.Cut(a.lit, "=")
		for _, n := range names {
			if longPrefix(opt, n, 4) {
				return base + " " + n + " writes files or runs programs"
			}
		}
	}
	return ""
}

// rejectShort reports a short option in bad, parsing clusters with spec so
// that option values are not read as options.
func rejectShort(base string, args []word, spec optSpec, bad string) string {
	found := ""
	spec.scan(args, func(name string, _ word) {
		if found == "" && len(name) == 2 && strings.IndexByte(bad, name[1]) >= 0 {
			found = name
		}
	})
	if found != "" {
		return base + " " + found + " writes files or runs programs"
	}
	return ""
}

// countXXDOperands counts xxd's file operands; xxd's single-dash long
// options (-cols 8) and value options are skipped.
func countXXDOperands(args []word) int {
	n := 0
	for i := 0; i < len(args); i++ {
		l := args[i].lit
		switch {
		case l == "-" || !strings.HasPrefix(l, "-"):
			n++
		case l == "-c", l == "-cols", l == "-g", l == "-groupsize", l == "-l", l == "-len",
			l == "-o", l == "-offset", l == "-s", l == "-seek", l == "-n", l == "-name":
			i++
		}
	}
	return n
}

// gitReadOnlySubs are the git subcommands that only read, whatever their
// options (those that write or run programs are rejected before). Read
// only.
var gitReadOnlySubs = setOf("status", "diff", "log", "show", "blame", "rev-parse", "ls-files", "grep",
	"describe", "shortlog", "cat-file", "rev-list", "ls-tree", "merge-base",
	"show-ref", "for-each-ref", "name-rev", "check-ignore", "count-objects",
	"whatchanged", "version", "diff-tree", "diff-files", "diff-index", "annotate",
	"cherry", "var", "check-attr")

// gitReadOnlyChecks are the git subcommands that only read in some forms:
// each returns "" for those, or why not. Read only.
var gitReadOnlyChecks = map[string]func(g gitArgs) string{
	"branch": func(g gitArgs) string {
		if g.has("-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy",
			"-u", "--set-upstream-to", "--unset-upstream", "--edit-description",
			"-t", "--track", "--no-track", "-f", "--force", "--create-reflog") {
			return "git branch with these options changes branches"
		}
		return when(len(g.operands) > 0 && !g.has("-l", "--list"), "git branch <name> creates a branch")
	},
	"tag": func(g gitArgs) string {
		if len(g.names) == 0 && len(g.operands) == 0 {
			return ""
		}
		if g.has("-l", "--list") && !g.has("-d", "--delete", "-a", "--annotate", "-s", "--sign",
			"-u", "--local-user", "-f", "--force", "-m", "--message", "-F", "--file", "-v", "--verify") {
			return ""
		}
		for _, n := range g.names {
			if !gitTagListOpts[n] {
				return "git tag " + n + " changes tags"
			}
		}
		return when(len(g.operands) > 0, "git tag <name> creates a tag")
	},
	"remote": func(g gitArgs) string {
		if op := g.operand(0); len(g.operands) > 0 && op != "show" && op != "get-url" {
			return "git remote " + op + " changes remotes"
		}
		return ""
	},
	"stash": func(g gitArgs) string {
		op := g.operand(0)
		return when(op != "list" && op != "show", "git stash without list changes the repository")
	},
	"worktree": func(g gitArgs) string {
		return when(g.operand(0) != "list", "git worktree without list changes the repository")
	},
	"reflog": func(g gitArgs) string {
		if op := g.operand(0); len(g.operands) > 0 && op != "show" {
			return "git reflog " + op + " changes the reflog"
		}
		return ""
	},
	"config": func(g gitArgs) string {
		if g.has("--add", "--unset", "--unset-all", "--replace-all", "--rename-section",
			"--remove-section", "-e", "--edit") {
			return "git config with these options changes configuration"
		}
		if g.has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list") {
			return ""
		}
		switch op := g.operand(0); {
		case len(g.operands) > 0 && (op == "get" || op == "list"):
			return ""
		case len(g.operands) == 1 && !gitConfigWriteOps[op]:
			return "" // git config name: reads one value
		}
		return "git config sets configuration"
	},
}

// gitTagListOpts are the options of git tag that only filter or format a
// listing; gitConfigWriteOps the git config subcommands that write. Read
// only.
var (
	gitTagListOpts = setOf("-n", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at",
		"--sort", "--format", "--column", "--no-column", "-i", "--ignore-case")
	gitConfigWriteOps = setOf("set", "unset", "rename-section", "remove-section", "edit")
)

// gitReadOnly allows the git subcommands that only read the repository.
func gitReadOnly(args []word) string {
	sub, rest, safe := gitSubcommand(args)
	if !safe {
		if sub == "" && len(args) == 1 && (args[0].lit == "--version" || args[0].lit == "--help") {
			return ""
		}
		return "git global options may run programs or are not literal"
	}
	g := parseGitArgs(sub, rest)
	// Options that write files or run external programs in otherwise
	// read-only subcommands.
	for _, n := range g.names {
		if longPrefix(n, "--output", 5) || longPrefix(n, "--ext-diff", 5) ||
			longPrefix(n, "--open-files-in-pager", 5) || n == "-O" || n == "--exec" {
			return "git " + sub + " " + n + " writes files or runs programs"
		}
	}
	if gitReadOnlySubs[sub] {
		return ""
	}
	if check, ok := gitReadOnlyChecks[sub]; ok {
		return check(g)
	}
	return "git " + sub + " is not a read-only git command"
}

// goReadOnly allows go version, env, list, vet and doc.
func goReadOnly(args []word) string {
	if len(args) == 0 {
		return "go without a subcommand is not read-only"
	}
	sub := args[0].lit
	for _, a := range args[1:] {
		opt, _, _ := strings.Cut(strings.TrimLeft(a.lit, "-"), "=")
		switch opt {
		case "toolexec", "exec", "vettool", "overlay", "modfile":
			return "go " + sub + " " + a.lit + " runs programs or redirects files"
		case "mod":
			if strings.HasSuffix(a.lit, "=mod") {
				return "go -mod=mod may rewrite go.mod"
			}
		}
		if sub == "env" && (a.lit == "-w" || a.lit == "-u") {
			return "go env " + a.lit + " changes the Go environment"
		}
	}
	switch sub {
	case "version", "env", "list", "vet", "doc", "help":
		return ""
	}
	return "go " + sub + " is not a read-only go command"
}

// findReadOnly rejects find's actions that write or execute. The value of
// a test such as -name may be expanded at run time, as long as it stays
// one word; anywhere else an expansion could become an action.
func findReadOnly(args []word) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if uncertainFlag(a) {
			return "find has an argument that may expand to an action"
		}
		switch {
		case a.lit == "-delete", a.lit == "-fls", strings.HasPrefix(a.lit, "-fprint"):
			return "find " + a.lit + " writes files"
		case a.lit == "-exec", a.lit == "-execdir", a.lit == "-ok", a.lit == "-okdir":
			return "find " + a.lit + " runs commands"
		case findTakesValue(a.lit) && i+1 < len(args):
			if args[i+1].split {
				return "find " + a.lit + " has a value that may split into several words"
			}
			i++
		}
	}
	return ""
}

func findTakesValue(p string) bool {
	switch p {
	case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex",
		"-iregex", "-lname", "-ilname", "-type", "-xtype", "-size", "-perm", "-user",
		"-group", "-uid", "-gid", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin",
		"-newer", "-anewer", "-cnewer", "-samefile", "-inum", "-links", "-maxdepth",
		"-mindepth", "-used", "-fstype", "-context", "-printf", "-regextype":
		return true
	}
	return strings.HasPrefix(p, "-newer")
}
