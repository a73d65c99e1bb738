package shell

import (
	"fmt"
	"slices"
	"strings"
)

// alwaysDestructive are the programs destructive whatever their
// arguments, with why ("%s" is the program's name). Read only.
var alwaysDestructive = map[string]string{
	"rm": "rm deletes files", "rmdir": "rmdir deletes directories", "unlink": "unlink deletes a file",
	"shred": "shred destroys file contents", "dd": "dd writes raw data", "truncate": "truncate cuts files",
	"fdisk": partitions, "sfdisk": partitions, "cfdisk": partitions, "gdisk": partitions,
	"sgdisk": partitions, "parted": partitions, "wipefs": partitions,
	"kill": "%s kills processes", "pkill": "%s kills processes", "killall": "%s kills processes",
	"shutdown": halts, "reboot": halts, "halt": halts, "poweroff": halts,
}

const (
	partitions = "%s rewrites disk partitions"
	halts      = "%s stops the machine"
)

// destructiveChecks are the programs destructive with some arguments:
// each returns why, or "". Read only.
var destructiveChecks = map[string]func(base string, args []word) string{
	"chmod": recursiveDestructive, "chown": recursiveDestructive, "chgrp": recursiveDestructive,
	"systemctl": func(_ string, args []word) string {
		if op := firstOperand(args, optSpec{}); op == "poweroff" || op == "reboot" || op == "halt" {
			return "systemctl " + op + " stops the machine"
		}
		return ""
	},
	"find": func(_ string, args []word) string {
		return when(hasWord(args, "-delete"), "find -delete deletes files")
	},
	"rsync": func(_ string, args []word) string {
		for _, a := range args {
			if strings.HasPrefix(a.lit, "--delete") || a.lit == "--remove-source-files" {
				return "rsync " + a.lit + " deletes files"
			}
		}
		return ""
	},
	"crontab": func(_ string, args []word) string {
		return when(hasShort(args, 'r'), "crontab -r deletes the crontab")
	},
	"git":    func(_ string, args []word) string { return gitDestructive(args) },
	"docker": dockerDestructive, "podman": dockerDestructive,
	"kubectl": clusterDestructive, "oc": clusterDestructive,
	"helm": func(_ string, args []word) string {
		if op := firstOperand(args, optSpec{}); op == "uninstall" || op == "delete" {
			return "helm " + op + " removes a release"
		}
		return ""
	},
	"npm": unpublishDestructive, "pnpm": unpublishDestructive, "yarn": unpublishDestructive,
	"terraform": destroyDestructive, "tofu": destroyDestructive,
}

func recursiveDestructive(base string, args []word) string {
	return when(hasShort(args, 'R') || hasLong(args, "--recursive"), base+" -R changes a whole tree")
}

func clusterDestructive(base string, args []word) string {
	return when(hasWord(args, "delete") || hasWord(args, "drain"), base+" deletes cluster resources")
}

func unpublishDestructive(base string, args []word) string {
	return when(hasWord(args, "unpublish"), base+" unpublish removes a published package")
}

func destroyDestructive(base string, args []word) string {
	return when(hasWord(args, "destroy") || hasWord(args, "-destroy"), base+" destroy deletes infrastructure")
}

// when is why if cond holds, else "".
func when(cond bool, why string) string {
	if cond {
		return why
	}
	return ""
}

// destructive returns why running base with args may destroy data, stop
// processes or the machine, or "" when it does not.
func destructive(base string, args []word) string {
	if strings.HasPrefix(base, "mkfs") {
		return base + " formats a filesystem"
	}
	if why, ok := alwaysDestructive[base]; ok {
		return strings.ReplaceAll(why, "%s", base)
	}
	if check, ok := destructiveChecks[base]; ok {
		return check(base, args)
	}
	return ""
}

// gitArgs are a git subcommand's options (by name, values skipped) and
// operands, parsed with the subcommand's option syntax (gitOpts).
type gitArgs struct {
	sub      string
	rest     []word // the words after the subcommand
	names    []string
	operands []word
}

func parseGitArgs(sub string, rest []word) gitArgs {
	g := gitArgs{sub: sub, rest: rest}
	g.operands, _ = gitOpts[sub].scan(rest, func(name string, _ word) { g.names = append(g.names, name) })
	return g
}

// has reports whether any of opts was given.
func (g gitArgs) has(opts ...string) bool {
	for _, n := range g.names {
		if slices.Contains(opts, n) {
			return true
		}
	}
	return false
}

// operand is the i-th operand's text, "" when there are fewer.
func (g gitArgs) operand(i int) string {
	if i >= len(g.operands) {
		return ""
	}
	return g.operands[i].lit
}

// gitDestructiveSubs are the git subcommands that can lose work or remote
// history: each returns why, or "". Read only.
var gitDestructiveSubs = map[string]func(g gitArgs) string{
	"push": func(g gitArgs) string {
		if g.has("-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror", "--prune") {
			return "git push --force rewrites remote history"
		}
		if g.has("-d", "--delete") {
			return "git push --delete deletes remote refs"
		}
		for _, o := range g.operands {
			if strings.HasPrefix(o.lit, "+") {
				return fmt.Sprintf("git push %s force-pushes", o.lit)
			}
			if strings.HasPrefix(o.lit, ":") {
				return fmt.Sprintf("git push %s deletes a remote ref", o.lit)
			}
		}
		return ""
	},
	"reset": func(g gitArgs) string { return when(g.has("--hard"), "git reset --hard discards uncommitted changes") },
	"clean": func(g gitArgs) string { return when(g.has("-f", "--force"), "git clean -f deletes untracked files") },
	"checkout": func(g gitArgs) string {
		return when(g.has("-f", "--force") || hasWord(g.rest, "--") || hasWord(g.operands, "."),
			"git checkout of paths discards uncommitted changes")
	},
	"restore": func(g gitArgs) string {
		return when(!g.has("-S", "--staged") || g.has("-W", "--worktree"), "git restore discards uncommitted changes")
	},
	"switch": func(g gitArgs) string {
		return when(g.has("-f", "--force", "--discard-changes"), "git switch --discard-changes discards uncommitted changes")
	},
	"branch": func(g gitArgs) string {
		return when(g.has("-D") || (g.has("-d", "--delete") && g.has("-f", "--force")), "git branch -D deletes an unmerged branch")
	},
	"stash": func(g gitArgs) string {
		if op := g.operand(0); op == "drop" || op == "clear" {
			return "git stash " + op + " deletes stashed changes"
		}
		return ""
	},
	"tag": func(g gitArgs) string { return when(g.has("-d", "--delete"), "git tag -d deletes tags") },
	"rm":  func(g gitArgs) string { return when(g.has("-f", "--force"), "git rm -f deletes modified files") },
}

// gitDestructive covers the git commands that lose work or remote history.
func gitDestructive(args []word) string {
	sub, rest, _ := gitSubcommand(args)
	if check, ok := gitDestructiveSubs[sub]; ok {
		return check(parseGitArgs(sub, rest))
	}
	return ""
}

// dockerDestructive covers removing containers, images, volumes and
// networks, and pruning.
func dockerDestructive(base string, args []word) string {
	global := optSpec{shortArg: "Hcl", longArg: []string{"--host", "--context", "--config", "--log-level"}}
	i, _ := eachOpt(args, global.shortArg, "", global.longArg, nil)
	ops, _ := optSpec{shortArg: "f"}.scan(args[min(i, len(args)):], nil)
	if len(ops) == 0 {
		return ""
	}
	first, second := ops[0].lit, ""
	if len(ops) > 1 {
		second = ops[1].lit
	}
	switch first {
	case "rm", "rmi", "kill":
		return base + " " + first + " removes containers or images"
	case "system", "container", "image", "volume", "network", "builder", "buildx":
		switch second {
		case "rm", "remove", "prune", "kill":
			return base + " " + first + " " + second + " deletes " + first + " data"
		}
	case "compose":
		if second == "rm" || (second == "down" && (hasShort(args, 'v') || hasLong(args, "--volumes"))) {
			return base + " compose " + second + " deletes containers or volumes"
		}
	}
	return ""
}

// gitSubcommand skips git's global options. safe is false when one of
// them can run programs or rewrite configuration (-c, --exec-path, ...).
func gitSubcommand(args []word) (sub string, rest []word, safe bool) {
	safe = true
	i, ok := eachOpt(args, "Cc", "", []string{"--git-dir", "--work-tree", "--namespace", "--config-env",
		"--super-prefix", "--attr-source"}, func(name string, _ word) {
		switch name {
		case "-C", "--no-pager", "-P", "--paginate", "-p", "--git-dir", "--work-tree", "--namespace",
			"--bare", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
			"--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-lazy-fetch",
			"--version", "--help", "-v", "-h":
		default:
			safe = false
		}
	})
	if !ok || i >= len(args) || args[i].dyn {
		return "", nil, false
	}
	return args[i].lit, args[i+1:], safe
}

// gitOpts gives, for the subcommands we inspect, the options that take a
// value, so a value is not misread as options or operands. Read only.
var gitOpts = map[string]optSpec{
	"push":     {shortArg: "o", longArg: []string{"--repo", "--receive-pack", "--exec", "--push-option"}},
	"checkout": gitSwitchOpts, "switch": gitSwitchOpts,
	"restore": {shortArg: "s", longArg: []string{"--source", "--pathspec-from-file", "--conflict"}},
	"branch": {shortArg: "tu", longArg: []string{"--set-upstream-to", "--contains", "--no-contains",
		"--merged", "--no-merged", "--points-at", "--sort", "--format", "--abbrev"}},
	"tag": {shortArg: "mFun", longArg: []string{"--message", "--file", "--local-user",
		"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format", "--cleanup"}},
	"stash": {shortArg: "m", longArg: []string{"--message", "--pathspec-from-file"}},
	"clean": {shortArg: "e", longArg: []string{"--exclude"}},
	"reset": {longArg: []string{"--pathspec-from-file"}},
	"log":   gitLogOpts, "show": gitLogOpts, "diff": gitLogOpts, "shortlog": gitLogOpts, "whatchanged": gitLogOpts,
	"grep": {shortArg: "efABCm", shortOpt: "O", longArg: []string{"--max-count", "--context",
		"--after-context", "--before-context", "--threads", "--max-depth"}},
	"config": {shortArg: "f", longArg: []string{"--file", "--blob", "--type", "--default", "--comment"}},
}

var (
	gitSwitchOpts = optSpec{shortArg: "bBc", longArg: []string{"--orphan", "--conflict", "--pathspec-from-file"}}
	gitLogOpts    = optSpec{shortArg: "nSGL", longArg: []string{"--max-count", "--skip", "--since", "--until",
		"--after", "--before", "--author", "--committer", "--grep", "--format", "--pretty", "--output"}}
)

// hasShort reports a literal short-option cluster containing c.
func hasShort(args []word, c byte) bool {
	for _, a := range args {
		if isOpt(a) && !strings.HasPrefix(a.lit, "--") && strings.IndexByte(a.lit[1:], c) >= 0 {
			return true
		}
	}
	return false
}

// hasLong reports a literal long option named name (with or without =value).
func hasLong(args []word, name string) bool {
	for _, a := range args {
		if !a.dyn && (a.lit == name || strings.HasPrefix(a.lit, name+"=")) {
			return true
		}
	}
	return false
}

func hasWord(args []word, lit string) bool {
	for _, a := range args {
		if !a.dyn && a.lit == lit {
			return true
		}
	}
	return false
}

func firstOperand(args []word, spec optSpec) string {
	ops, _ := spec.scan(args, nil)
	if len(ops) == 0 || ops[0].dyn {
		return ""
	}
	return ops[0].lit
}

// scanWindow is how many following tokens scan treats as arguments.
const scanWindow = 32

// scan looks for destructive commands in text that could not be parsed
// (or was nested too deep): every token is tried as a program name with
// the tokens after it as arguments. It errs towards "destructive".
func (a *analyzer) scan(src string) {
	toks := strings.FieldsFunc(src, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || strings.ContainsRune(";&|()<>`\"'${}\\", r)
	})
	ws := make([]word, len(toks))
	for i, t := range toks {
		ws[i] = word{lit: t}
	}
	for i, w := range ws {
		base, _ := progName(w.lit)
		// A bounded window keeps a long run of "git git git ..." linear.
		if r := destructive(base, ws[i+1:min(len(ws), i+1+scanWindow)]); r != "" {
			a.destroy(r)
		}
	}
}

// scanWords scans the literal words of a command we cannot follow.
func (a *analyzer) scanWords(ws []word) {
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		parts = append(parts, w.lit)
	}
	a.scan(strings.Join(parts, " "))
}
