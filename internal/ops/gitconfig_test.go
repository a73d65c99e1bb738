package ops

import (
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

// configCases are tricky git config files and the core.excludesFile each
// sets; every one is also checked against `git config --get`.
var configCases = []struct {
	name  string
	file  string
	value string
	set   bool
	bad   bool // git refuses the file
	// gitDiffers: git config --get prints something we deliberately do
	// not take (a key with no value sets no path).
	gitDiffers bool
}{
	{name: "plain", file: "[core]\n\texcludesFile = ~/x\n", value: "~/x", set: true},
	{name: "section and key case-insensitive", file: "[CORE]\n  ExcludesFILE=a\n", value: "a", set: true},
	{name: "subsection is another section", file: "[core \"x\"]\nexcludesfile = a\n"},
	{name: "dotted section is another section", file: "[core.x]\nexcludesfile = a\n"},
	{name: "other section", file: "[user]\nexcludesfile = a\n"},
	{name: "similar key", file: "[core]\nexcludesfile2 = a\nexcludes = b\n"},
	{name: "last one wins", file: "[core]\nexcludesfile = a\n[user]\nname = x\n[core]\nexcludesfile = b\n", value: "b", set: true},
	{name: "subsection then core", file: "[core \"x\"]\nexcludesfile = a\n[core]\nexcludesfile = b\n", value: "b", set: true},
	{name: "quoted with escapes", file: "[core]\nexcludesfile = \"a \\\"b\\\" \\\\ c\"\n", value: `a "b" \ c`, set: true},
	{name: "escapes outside quotes", file: "[core]\nexcludesfile = a\\tb\\nc\n", value: "a\tb\nc", set: true},
	{name: "quotes keep spaces", file: "[core]\nexcludesfile = \"  a  \"  \n", value: "  a  ", set: true},
	{name: "partly quoted", file: "[core]\nexcludesfile = x\" y \"z\n", value: "x y z", set: true},
	{name: "hash comment", file: "[core]\nexcludesfile = a # comment\n", value: "a", set: true},
	{name: "semicolon comment", file: "[core]\nexcludesfile = a;b\n", value: "a", set: true},
	{name: "hash inside quotes", file: "[core]\nexcludesfile = \"a # b\"\n", value: "a # b", set: true},
	{name: "continuation", file: "[core]\nexcludesfile = a\\\n  b\n", value: "a  b", set: true},
	{name: "inner whitespace becomes spaces, ends trimmed", file: "[core]\nexcludesfile =   a\t b  \n", value: "a  b", set: true},
	{name: "key on the header line", file: "[core]excludesfile=x\n", value: "x", set: true},
	{name: "CRLF", file: "[core]\r\nexcludesfile = a\r\n", value: "a", set: true},
	{name: "comment lines", file: "# [core]\n; excludesfile = a\n[core] ; c\n  # excludesfile = b\nexcludesfile = c\n", value: "c", set: true},
	{name: "byte order mark", file: "\xef\xbb\xbf[core]\nexcludesfile = a\n", value: "a", set: true},
	{name: "empty value", file: "[core]\nexcludesfile =\n", value: "", set: true},
	{name: "no final newline", file: "[core]\nexcludesfile = a", value: "a", set: true},
	{name: "space before equals", file: "[core]\nexcludesfile\t = a\n", value: "a", set: true},
	{name: "include is not followed", file: "[include]\npath = other\n[core]\nbare = true\n"},
	{name: "key with no value sets nothing", file: "[core]\nexcludesfile = a\nexcludesfile\n", value: "a", set: true, gitDiffers: true},
	{name: "unknown escape", file: "[core]\nexcludesfile = a\\qb\n", bad: true},
	{name: "unterminated quote", file: "[core]\nexcludesfile = \"a\n", bad: true},
	{name: "space inside the brackets", file: "[ core]\nexcludesfile = a\n", bad: true},
	{name: "key before any section", file: "excludesfile = a\n"},
	{name: "key with a comment but no value", file: "[core]\nexcludesfile # c\n", bad: true},
	{name: "unterminated header", file: "[core\nexcludesfile = a\n", bad: true},
}

func TestParseExcludesFile(t *testing.T) {
	for _, c := range configCases {
		t.Run(c.name, func(t *testing.T) {
			value, set, err := parseExcludesFile([]byte(c.file))
			if c.bad {
				if !errors.Is(err, errBadConfig) {
					t.Fatalf("got %q, %v, %v; want errBadConfig", value, set, err)
				}
				return
			}
			if err != nil || value != c.value || set != c.set {
				t.Fatalf("got %q, set=%v, err=%v; want %q, set=%v", value, set, err, c.value, c.set)
			}
		})
	}
}

// The parser agrees with git's own on every case (except the one it
// departs from on purpose).
func TestParseExcludesFileAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	dir := t.TempDir()
	for _, c := range configCases {
		if c.gitDiffers {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			if err := os.WriteFile(f, []byte(c.file), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("git", "config", "--file", f, "--get", "core.excludesFile")
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "XDG_CONFIG_HOME="+dir)
			out, err := cmd.Output()
			var gitValue string
			var gitSet, gitBad bool
			var ee *exec.ExitError
			switch {
			case err == nil:
				gitValue, gitSet = strings.TrimSuffix(string(out), "\n"), true
			case errors.As(err, &ee) && ee.ExitCode() == 1:
			case errors.As(err, &ee):
				gitBad = true
			default:
				t.Fatal(err)
			}
			value, set, perr := parseExcludesFile([]byte(c.file))
			if gitBad != (perr != nil) || value != gitValue || set != gitSet {
				t.Fatalf("parser: %q set=%v err=%v; git: %q set=%v refused=%v", value, set, perr, gitValue, gitSet, gitBad)
			}
		})
	}
}

// Which file git's lookup picks, given the environment and the config
// files present.
func TestExcludesFilePath(t *testing.T) {
	home, top := t.TempDir(), t.TempDir()
	common := filepath.Join(top, ".git")
	cfg := func(v string) string { return "[core]\n\texcludesFile = " + v + "\n" }
	cases := []struct {
		name  string
		env   gitEnv
		files map[string]string // absolute path → content
		want  string
	}{
		{name: "unset: XDG default under HOME", env: gitEnv{home: home},
			want: filepath.Join(home, ".config/git/ignore")},
		{name: "unset: XDG_CONFIG_HOME", env: gitEnv{home: home, xdgConfigHome: "/xdg"},
			want: "/xdg/git/ignore"},
		{name: "unset, no HOME, no XDG: none", env: gitEnv{}, want: ""},
		{name: "~/.gitconfig, ~ expanded", env: gitEnv{home: home},
			files: map[string]string{filepath.Join(home, ".gitconfig"): cfg("~/g")},
			want:  filepath.Join(home, "g")},
		{name: "XDG config, read from XDG_CONFIG_HOME", env: gitEnv{home: home, xdgConfigHome: filepath.Join(home, "x")},
			files: map[string]string{filepath.Join(home, "x/git/config"): cfg("/from-xdg")},
			want:  "/from-xdg"},
		{name: "empty XDG_CONFIG_HOME means HOME/.config", env: gitEnv{home: home, xdgConfigHome: ""},
			files: map[string]string{filepath.Join(home, ".config/git/config"): cfg("/from-xdg")},
			want:  "/from-xdg"},
		{name: "~/.gitconfig overrides the XDG config", env: gitEnv{home: home},
			files: map[string]string{filepath.Join(home, ".config/git/config"): cfg("/from-xdg"), filepath.Join(home, ".gitconfig"): cfg("/from-home")},
			want:  "/from-home"},
		{name: "repository config overrides global", env: gitEnv{home: home},
			files: map[string]string{filepath.Join(home, ".gitconfig"): cfg("/from-home"), filepath.Join(common, "config"): cfg("/from-repo")},
			want:  "/from-repo"},
		{name: "relative value is relative to the top", env: gitEnv{home: home},
			files: map[string]string{filepath.Join(common, "config"): cfg("rel/ign")},
			want:  filepath.Join(top, "rel/ign")},
		{name: "system config, lowest", env: gitEnv{home: home, system: filepath.Join(home, "sys")},
			files: map[string]string{filepath.Join(home, "sys"): cfg("/from-system")},
			want:  "/from-system"},
		{name: "GIT_CONFIG_NOSYSTEM", env: gitEnv{home: home, system: filepath.Join(home, "sys"), noSystem: true},
			files: map[string]string{filepath.Join(home, "sys"): cfg("/from-system")},
			want:  filepath.Join(home, ".config/git/ignore")},
		{name: "GIT_CONFIG_GLOBAL replaces ~/.gitconfig", env: gitEnv{home: home, global: filepath.Join(home, "g.cfg"), globalSet: true},
			files: map[string]string{filepath.Join(home, ".gitconfig"): cfg("/from-home"), filepath.Join(home, "g.cfg"): cfg("/from-global-env")},
			want:  "/from-global-env"},
		{name: "malformed global config contributes nothing", env: gitEnv{home: home},
			files: map[string]string{filepath.Join(home, ".gitconfig"): "[core\n" + cfg("/bad")},
			want:  filepath.Join(home, ".config/git/ignore")},
		{name: "empty value: no file, no XDG default", env: gitEnv{home: home},
			files: map[string]string{filepath.Join(home, ".gitconfig"): cfg("")},
			want:  ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for p, content := range c.files {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(p)
			}
			if got := c.env.excludesFilePath(top, common); got != c.want {
				t.Fatalf("excludesFilePath = %q, want %q", got, c.want)
			}
		})
	}
}

func TestGitBool(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "true": true, "YES": true, "on": true, "": false, "0": false, "false": false, "off": false} {
		if got := gitBool(v); got != want {
			t.Errorf("gitBool(%q) = %v, want %v", v, got, want)
		}
	}
}

// isolateGit points git's environment at home for the rest of the test.
func isolateGit(t *testing.T, home string) {
	t.Helper()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "") // registers the restore of the unset below
	os.Unsetenv("GIT_CONFIG_GLOBAL")
}

// OuterIgnore supplies the global excludes file for a repository root, a
// subdirectory, worktrees and submodules (.git files) and folders outside
// any repository, from the config git would read for each.
func TestOuterIgnoreGlobalExcludes(t *testing.T) {
	top, home := t.TempDir(), t.TempDir()
	isolateGit(t, home)
	writeTree(t, top, map[string]string{
		"repo/.git/HEAD":                   "",
		"repo/.git/config":                 "[core]\n\texcludesFile = repo-ignore\n",
		"repo/repo-ignore":                 "from-repo-config",
		"repo/sub/x.go":                    "",
		"repo/.git/worktrees/wt/HEAD":      "",
		"repo/.git/worktrees/wt/commondir": "../..\n",
		"wt/.git":                          "gitdir: ../repo/.git/worktrees/wt\n",
		"wt/repo-ignore":                   "worktree-relative",
		"repo/.git/modules/m/config":       "[core]\n\texcludesFile = ~/module-ignore\n",
		"repo/m/.git":                      "gitdir: ../.git/modules/m\n",
		"plain/dir/z.go":                   "",
		"bare/.git/HEAD":                   "",
		"unreadable/.git/config":           "[core]\n\texcludesFile = ~/a-directory\n",
	})
	writeTree(t, home, map[string]string{
		".config/git/ignore": "xdg-default",
		"module-ignore":      "from-module-config",
	})
	if err := os.MkdirAll(filepath.Join(home, "a-directory"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, folder, want string
	}{
		{"repository root, its config, relative to its top", "repo", " :core.excludesFile=from-repo-config"},
		{"subdirectory, relative to the repository top", "repo/sub", "sub :core.excludesFile=from-repo-config"},
		{"worktree reads the common dir's config, relative to its own top", "wt", " :core.excludesFile=worktree-relative"},
		{"submodule reads its gitdir's config", "repo/m", " :core.excludesFile=from-module-config"},
		{"outside any repository: XDG default", "plain/dir", " :core.excludesFile=xdg-default"},
		{"repository without the key: XDG default", "bare", " :core.excludesFile=xdg-default"},
		{"unreadable file: no rules", "unreadable", " "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			real, err := filepath.EvalSymlinks(filepath.Join(top, c.folder))
			if err != nil {
				t.Fatal(err)
			}
			if got := describeOuter(outerOf(t, real)); got != c.want {
				t.Fatalf("OuterIgnore = %q, want %q", got, c.want)
			}
		})
	}
}

func TestExpandUser(t *testing.T) {
	env := gitEnv{home: "/h"}
	type expandCase struct {
		name, in, want string
		env            gitEnv
		fails          bool
	}
	cases := []expandCase{
		{name: "tilde alone", in: "~", want: "/h", env: env},
		{name: "tilde slash", in: "~/a/b", want: "/h/a/b", env: env},
		{name: "no tilde", in: "a/~/b", want: "a/~/b", env: env},
		{name: "tilde without HOME", in: "~/a", env: gitEnv{}, fails: true},
		{name: "unknown user", in: "~no-such-user-agentls/a", env: env, fails: true},
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		cases = append(cases, expandCase{name: "named user", in: "~" + u.Username + "/a", want: filepath.Join(u.HomeDir, "a"), env: env})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.env.expandUser(c.in)
			if (err != nil) != c.fails || got != c.want {
				t.Fatalf("expandUser(%q) = %q, %v; want %q, fails=%v", c.in, got, err, c.want, c.fails)
			}
		})
	}
}
