package shell

import (
	"fmt"
	"strings"
)

// destructive returns why running base with args may destroy data, stop
// processes or the machine, or "" when it does not.
func destructive(base string, args []word) string {
	if strings.HasPrefix(base, "mkfs") {
		return base + " formats a filesystem"
	}
	switch base {
	case "rm":
		return "rm deletes files"
	case "rmdir":
		return "rmdir deletes directories"
	case "unlink":
		return "unlink deletes a file"
	case "shred":
		return "shred destroys file contents"
	case "dd":
		return "dd writes raw data"
	case "truncate":
		return "truncate cuts files"
	case "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "wipefs":
		return base + " rewrites disk partitions"
	case "chmod", "chown", "chgrp":
		if hasShort(args, 'R') || hasLong(args, "--recursive") {
			return base + " -R changes a whole tree"
		}
	case "kill", "pkill", "killall":
		return base + " kills processes"
	case "shutdown", "reboot", "halt", "poweroff":
		return base + " stops the machine"
	case "systemctl":
		if op := firstOperand(args, optSpec{}); op == "poweroff" || op == "reboot" || op == "halt" {
			return "systemctl " + op + " stops the machine"
		}
	case "find":
		if hasWord(args, "-delete") {
			return "find -delete deletes files"
		}
	case "rsync":
		for _, a := range args {
			if strings.HasPrefix(a.lit, "--delete") || a.lit == "--remove-source-files" {
				return "rsync " + a.lit + " deletes files"
			}
		}
	case "crontab":
		if hasShort(args, 'r') {
			return "crontab -r deletes the crontab"
		}
	case "git":
		return gitDestructive(args)
	case "docker", "podman":
		return dockerDestructive(base, args)
	case "kubectl", "oc":
		if hasWord(args, "delete") || hasWord(args, "drain") {
			return base + " deletes cluster resources"
		}
	case "helm":
		if op := firstOperand(args, optSpec{}); op == "uninstall" || op == "delete" {
			return "helm " + op + " removes a release"
		}
	case "npm", "pnpm", "yarn":
		if hasWord(args, "unpublish") {
			return base + " unpublish removes a published package"
		}
	case "terraform", "tofu":
		if hasWord(args, "destroy") || hasWord(args, "-destroy") {
			return base + " destroy deletes infrastructure"
		}
	}
	return ""
}

// gitDestructive covers the git commands that lose work or remote history.
func gitDestructive(args []word) string {
	sub, rest, _ := gitSubcommand(args)
	var names []string
	operands, _ := gitOpts(sub).scan(rest, func(name string, _ word) { names = append(names, name) })
	has := func(opts ...string) bool {
		for _, o := range opts {
			for _, n := range names {
				if n == o {
					return true
				}
			}
		}
		return false
	}
	switch sub {
	case "push":
		if has("-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror", "--prune") {
			return "git push --force rewrites remote history"
		}
		if has("-d", "--delete") {
			return "git push --delete deletes remote refs"
		}
		for _, o := range operands {
			if strings.HasPrefix(o.lit, "+") {
				return fmt.Sprintf("git push %s force-pushes", o.lit)
			}
			if strings.HasPrefix(o.lit, ":") {
				return fmt.Sprintf("git push %s deletes a remote ref", o.lit)
			}
		}
	case "reset":
		if has("--hard") {
			return "git reset --hard discards uncommitted changes"
		}
	case "clean":
		if has("-f", "--force") {
			return "git clean -f deletes untracked files"
		}
	case "checkout":
		if has("-f", "--force") || hasWord(rest, "--") || hasWord(operands, ".") {
			return "git checkout of paths discards uncommitted changes"
		}
	case "restore":
		if !has("-S", "--staged") || has("-W", "--worktree") {
			return "git restore discards uncommitted changes"
		}
	case "switch":
		if has("-f", "--force", "--discard-changes") {
			return "git switch --discard-changes discards uncommitted changes"
		}
	case "branch":
		if has("-D") || (has("-d", "--delete") && has("-f", "--force")) {
			return "git branch -D deletes an unmerged branch"
		}
	case "stash":
		if len(operands) > 0 && (operands[0].lit == "drop" || operands[0].lit == "clear") {
			return "git stash " + operands[0].lit + " deletes stashed changes"
		}
	case "tag":
		if has("-d", "--delete") {
			return "git tag -d deletes tags"
		}
	case "rm":
		if has("-f", "--force") {
			return "git rm -f deletes modified files"
		}
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

// gitOpts gives, for the subcommands we inspect, the short options that
// take a value, so a value is not misread as options or operands.
func gitOpts(sub string) optSpec {
	switch sub {
	case "push":
		return optSpec{shortArg: "o", longArg: []string{"--repo", "--receive-pack", "--exec", "--push-option"}}
	case "checkout", "switch":
		return optSpec{shortArg: "bBc", longArg: []string{"--orphan", "--conflict", "--pathspec-from-file"}}
	case "restore":
		return optSpec{shortArg: "s", longArg: []string{"--source", "--pathspec-from-file", "--conflict"}}
	case "branch":
		return optSpec{shortArg: "tu", longArg: []string{"--set-upstream-to", "--contains", "--no-contains",
			"--merged", "--no-merged", "--points-at", "--sort", "--format", "--abbrev"}}
	case "tag":
		return optSpec{shortArg: "mFun", longArg: []string{"--message", "--file", "--local-user",
			"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format", "--cleanup"}}
	case "stash":
		return optSpec{shortArg: "m", longArg: []string{"--message", "--pathspec-from-file"}}
	case "clean":
		return optSpec{shortArg: "e", longArg: []string{"--exclude"}}
	case "reset":
		return optSpec{longArg: []string{"--pathspec-from-file"}}
	case "log", "show", "diff", "shortlog", "whatchanged":
		return optSpec{shortArg: "nSGL", longArg: []string{"--max-count", "--skip", "--since", "--until",
			"--after", "--before", "--author", "--committer", "--grep", "--format", "--pretty", "--output"}}
	case "grep":
		return optSpec{shortArg: "efABCm", shortOpt: "O", longArg: []string{"--max-count", "--context",
			"--after-context", "--before-context", "--threads", "--max-depth"}}
	case "config":
		return optSpec{shortArg: "f", longArg: []string{"--file", "--blob", "--type", "--default", "--comment"}}
	}
	return optSpec{}
}

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
