// Package policy is the permission engine: it decides whether a tool call
// runs, asks the user, or is denied, from rules in Claude Code's syntax, a
// mode and a few built-in rules. It does no I/O except Load, which reads
// the settings files, Gate, which asks through a Confirmer, and Evaluate,
// which resolves the symlinks of bash commands' path arguments.
//
// # Rules
//
// A rule is `Tool` (every call of the tool) or `Tool(specifier)`, in one
// of three lists: deny, ask, allow. Tool names are case-insensitive.
// `Read(...)` rules cover read, grep, find and ls; `Edit(...)` rules cover
// edit and write. `mcp__<server>` matches every tool of an MCP server
// (registered as `<server>__<tool>` with Source "mcp:<server>"),
// `mcp__<server>__<tool>` one tool, `mcp__<server>__*` all of them. A
// specifier on any other tool never matches.
//
// Bash specifiers are exact (`Bash(npm run build)`) or prefix
// (`Bash(npm run test:*)`, also `Bash(npm run test *)`): the prefix's words
// must be the first words of a command, so `Bash(ls:*)` matches `ls -la`
// but not `lsof`. They are matched against every simple command of the
// parsed line (package shell):
//   - deny and ask: the line matches when ANY command matches, including
//     commands inside wrappers' literal arguments (`sudo rm`, `bash -c
//     'rm x'`), commands in $(...), and commands that are not all literal
//     (matched on their text); an unparsable line is searched as text.
//     They err towards matching: a program named by its path matches by
//     its base name (/bin/rm), the here-document a shell reads and an
//     alias's text count as wrapped commands, and an opaque command (a
//     computed name, a computed line or file for a shell or eval, a shell
//     reading a pipe) matches every command rule; a deny rule matched only
//     that way denies with a reason saying so.
//   - allow: the line is allowed when the whole line equals an exact rule,
//     or when EVERY command matches an allow rule or is read-only on its
//     own (`cd sub && npm test` needs a rule for npm test only). Wrappers
//     (`bash -c`, `env X=1 cmd`, `xargs`, `eval`, `sudo`, ...) and dynamic
//     commands match only an exact rule written for their whole text. A
//     redirection into a file (`> f`, `>> f`), an assignment that changes
//     what runs (`PATH=/tmp npm test`, LD_*, GIT_*, ...) or a parse error
//     defeats every allow rule except an exact rule for the whole line.
//
// Path specifiers are gitignore-style patterns (doublestar syntax) matched
// against the real path (symlinks resolved by the caller): `./x` and `/x`
// are anchored at the workspace folder root, as is any pattern with a slash
// before its end; a pattern without a slash matches at any depth; `//abs`
// is an absolute path; `~/x` is under the home directory; `../x` is
// relative to the first folder. A pattern matching a directory covers
// everything below it. Read deny and ask rules also apply to literal path
// arguments of bash commands (`cat .env`), as written and with symlinks
// resolved (`cat envlink`), best effort.
//
// # Evaluation
//
// In order, the first step that decides wins:
//  1. builtin:git-dir — edit, write (and any non-read-only tool with
//     paths) inside a .git directory: deny, in every mode.
//  2. deny rules (session rejectAlways rules first).
//  3. readOnly mode: every call that is not read-only is denied.
//  4. bypass mode: allow.
//  5. ask rules.
//  6. allow rules from trusted sources: the editor, the user settings and
//     the session (allowAlways).
//  7. built-in asks: destructive bash (shell.Analysis.Destructive) or a
//     destructive extension/MCP tool (builtin:destructive); reading a
//     likely secret — .env* except .env.example/.env.sample, *.pem, *.key,
//     SSH private keys id_<type> without .pub — by a read tool or as a bash
//     argument (builtin:secret-file); an edit or write under the workspace's
//     .agentls/ directory, which configures agentls (builtin:agentls-config).
//  8. allow rules from workspace files, which therefore cannot lift 7.
//  9. the mode: default allows read-only calls and asks for the rest;
//     acceptEdits also allows edit and write inside the workspace;
//     readOnly allows what reached it (read-only calls).
//
// # Sources and precedence
//
// Load merges, highest first: the editor's initializationOptions,
// .agentls/settings.local.json and .agentls/settings.json of each
// workspace folder in order (a folder's path rules hold for its own files,
// anchored at its root), and the user settings (settings.UserConfigDir's
// agentls/settings.json). internal/settings finds and reads the files; the
// rule lists are unioned (as in
// Claude Code: a deny anywhere denies, because deny is evaluated before
// allow whatever its source), while the mode comes from the highest source
// that sets one. Workspace files may not select bypass (a cloned repository
// must not turn checks off); that mode is dropped with a Problem. A bad
// rule or an unknown mode is skipped alone, with a Problem naming the
// file, the rule and the column; the source's other rules apply. A file
// that is not valid JSON keeps its last good rules on Reload, and with
// none lets only read-only calls through (fail closed); loading never
// fails.
//
// # Questions
//
// Render is the one wording of an approval question (a title and Markdown
// with the path and the diff bounded to MaxQuestionDiffLines changed
// lines, or the command, its cwd and why it is not read-only), for every
// client. A call that needed approval and did not get it is refused with
// what happened and HowToAllow: the allow rule for this very call
// (AllowRule) in the settings file that can lift the ask, or the ask rule
// the user would remove.
//
// # Session rules
//
// allowAlways and rejectAlways add rules as narrow as the request:
// `Bash(<the exact command line>)` — not a prefix, since `npm run build`
// must not grant `npm run build && rm -rf ~` — `Read(//<real path>)` for a
// reading tool, `Edit(//<real path>)` for edit and write, and the bare tool
// name otherwise. Session allow rules are trusted (they lift built-in asks
// for exactly what the user approved).
//
// # Listings
//
// ReadAllowed filters content results (grep matches): it hides files a Read
// rule denies or asks for, and likely secrets outside bypass mode unless a
// trusted allow rule names them. ListAllowed filters names (ls, find): it
// hides only what a Read deny rule covers.
package policy
