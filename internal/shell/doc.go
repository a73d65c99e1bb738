// Package shell classifies bash command lines for the bash tool and the
// permission engine. It parses with mvdan.cc/sh/v3 and is pure: no I/O
// except the optional Options.Exists callback.
//
// WordPlaces parses an extension command template with the same parser
// and says where its placeholders stand.
//
// Analyze lists every simple command of a line (inside pipes, lists,
// subshells, groups, $(...), backquotes, process substitutions, loops,
// conditionals and function bodies) and decides two labels.
//
// # ReadOnly
//
// True only when the line parses and every command is a known read-only
// program with safe arguments, and no redirection writes anywhere but
// /dev/null, /dev/stdout or /dev/stderr (descriptor duplication such as
// 2>&1 is fine). Never read-only: dynamic command names ($CMD, $(...) or a
// glob as the name), wrappers (below), unknown programs, ./local programs,
// parse errors, and assignments to variables that change what runs or what
// configuration is read (PATH, LD_*, GIT_*, PAGER, EDITOR, HOME, IFS, ...).
// Leading assignments of other variables (FOO=1 ls) are fine; so are
// export/local/declare, [[ ]], (( )), and calls of functions defined in
// the same line (their bodies are analyzed where defined).
//
// Programs read-only with any arguments, even expanded ones: ls cat head
// tail wc grep egrep fgrep pwd echo printf true false test [ which type stat
// du df uname whoami id printenv env (without a command) cut tr nl diff cmp
// comm jq basename dirname realpath readlink md5sum sha*sum b2sum cksum
// hexdump od strings column seq sleep nproc, and the builtins cd pushd popd
// dirs : read exit return break continue shift set, command -v/-V, exec with
// redirections only, trap -p/-l.
//
// Programs read-only with checked arguments. Any argument that may become
// an option at run time (an unquoted $x, a leading glob or "$x") makes them
// not read-only, because an option is what would make them write:
//   - rg without --pre/--hostname-bin; ag without --pager; fd/fdfind without -x/-X
//   - find without -delete, -exec, -execdir, -ok, -okdir, -fprint*, -fls
//     (a quoted expansion is fine as the value of a test: -name "$pat")
//   - tree without -o/-R; file without -C/--compile
//   - sort without -o/--output/--compress-program (GNU abbreviations too)
//   - uniq and xxd with at most one file operand (the second is written)
//   - date without -s/--set and with no operand other than +FORMAT
//   - sed without -i/--in-place/-f, with a literal script that has no w, W
//     or e command and no w/e flag on s (any command it does not know
//     makes the script unsafe), or any script under --sandbox
//   - awk/gawk/mawk/nawk with a literal program containing no "system",
//     ">", "|" or "@load" (comparisons are rejected too), no -f/-i/-l, or
//     any program under --sandbox
//   - yq without -i/--inplace/-s/--split-exp
//   - git without -c/--config-env/--exec-path before the subcommand, with
//     status diff log show blame rev-parse ls-files grep describe shortlog
//     cat-file rev-list ls-tree merge-base show-ref for-each-ref name-rev
//     check-ignore check-attr count-objects whatchanged version diff-tree
//     diff-files diff-index annotate cherry var; branch (listing only),
//     tag (listing only), remote (no args, -v, show, get-url), stash
//     list/show, worktree list, reflog (show), config reads (--get*,
//     --list, get, list, a single name); never with --output, --ext-diff,
//     -O/--open-files-in-pager
//   - go version/env/list/vet/doc/help without -toolexec, -exec, -vettool,
//     -overlay, -modfile, -mod=mod, and go env without -w/-u
//   - node/npm --version or -v; python/python3/cargo/rustc --version or -V
//
// Not read-only on purpose: less and more (interactive, can run commands),
// tee, and every program not listed.
//
// # Wrappers
//
// A wrapper runs another command line: bash/sh/zsh/dash/ksh -c, a shell
// reading standard input or running a script file, source and ., eval,
// xargs, env with a command (or -S), exec, nohup, time, timeout, nice,
// ionice, stdbuf, setsid, chroot, sudo, doas, su -c, runuser, command,
// builtin, busybox, watch, trap, find -exec/-execdir/-ok/-okdir, fd -x/-X,
// flock (FILE CMD… or FILE -c LINE), unshare, setpriv, nsenter, taskset
// MASK, chrt PRIORITY, prlimit --RESOURCE=N, script -c, strace, unbuffer,
// firejail; their options are parsed by data tables (wrappers.go), so the
// wrapped command is found after them. Parallel, ltrace, systemd-run and sg
// are not followed: their words are scanned for destructive names and
// each literal word that is not an option is listed as a possible start of
// the command. A wrapper is never read-only and a prefix rule must not
// allow it, but what it runs is analyzed where it is literal: the wrapped
// words as a command (sudo rm x), or a string parsed as a line (bash -c
// 'rm x', . /dev/stdin <<< 'rm x'), up to MaxDepth levels. Those commands
// go in Command.Inner and can make the line destructive. What a wrapper
// runs that is computed at run time (bash -c "$(…)", eval "$x", source
// <(…), bash "$f", a shell reading a pipe) makes the command Opaque. The
// bash keyword form `time ls` is not a wrapper: the parser sees ls itself.
//
// # Destructive
//
// A line is destructive when a command (or a wrapped one) is: rm, rmdir,
// unlink, shred, dd, mkfs*, fdisk/sfdisk/cfdisk/gdisk/sgdisk/parted/wipefs,
// truncate, chmod/chown/chgrp -R, kill/pkill/killall,
// shutdown/reboot/halt/poweroff, systemctl poweroff/reboot/halt, find
// -delete, rsync --delete*/--remove-source-files, crontab -r, git push
// (--force, -f, --force-with-lease, --force-if-includes, --mirror, --prune,
// --delete, -d, +ref, :ref), git reset --hard, git clean -f, git checkout
// -f/--/. (path checkout), git restore (unless only --staged), git switch
// -f/--discard-changes, git branch -D (or -d -f), git stash drop/clear,
// git tag -d, git rm -f, docker/podman rm/rmi/kill and
// {system,container,image,volume,network,builder} rm/prune, compose rm or
// down -v, kubectl/oc delete or drain, helm uninstall, npm/pnpm/yarn
// unpublish, terraform/tofu destroy; or when a truncating redirection (>,
// >|, &>, >&file) targets a file that Options.Exists reports as existing
// (or a target that is not a literal, or any target when Exists is nil);
// tee without -a counts as > for each of its files.
// >> and <> write but do not destroy. mv and cp are not destructive (they
// are not read-only either): whether they overwrite depends on the target
// being a file or a directory, which a pure analysis cannot know; sed -i
// edits but is not destructive. When a line does not parse, or nesting
// exceeds MaxDepth, its raw tokens are scanned for the names above,
// erring towards destructive.
package shell
