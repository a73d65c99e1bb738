package ops

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
}

// gitRepo makes dir a repository git accepts, for --git-dir.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

// gitDirTree is what makes prefix (a path in a writeTree map) a git
// directory git accepts: HEAD, objects/ and refs/.
func gitDirTree(prefix string) map[string]string {
	return map[string]string{
		prefix + "/HEAD":          "ref: refs/heads/main\n",
		prefix + "/objects/.keep": "",
		prefix + "/refs/.keep":    "",
	}
}

// Which file git's lookup picks, given the environment and the config
// files present. $HOME and $TOP in a case stand for its home directory and
// its repository's work tree.
func TestExcludesFilePath(t *testing.T) {
	needGit(t)
	cfg := func(v string) string { return "[core]\n\texcludesFile = " + v + "\n" }
	cases := []struct {
		name  string
		env   map[string]string // "-" unsets; HOME is $HOME unless given
		files map[string]string // path → content
		want  string
		// outside: $TOP is a folder outside any repository.
		outside bool
	}{
		{name: "unset: XDG default under HOME", want: "$HOME/.config/git/ignore"},
		{name: "unset: XDG_CONFIG_HOME", env: map[string]string{"XDG_CONFIG_HOME": "/xdg"}, want: "/xdg/git/ignore"},
		{name: "unset, no HOME, no XDG: none", env: map[string]string{"HOME": "-"}, want: ""},
		{name: "~/.gitconfig, ~ expanded",
			files: map[string]string{"$HOME/.gitconfig": cfg("~/g")}, want: "$HOME/g"},
		{name: "XDG config, read from XDG_CONFIG_HOME", env: map[string]string{"XDG_CONFIG_HOME": "$HOME/x"},
			files: map[string]string{"$HOME/x/git/config": cfg("/from-xdg")}, want: "/from-xdg"},
		{name: "empty XDG_CONFIG_HOME means HOME/.config", env: map[string]string{"XDG_CONFIG_HOME": ""},
			files: map[string]string{"$HOME/.config/git/config": cfg("/from-xdg")}, want: "/from-xdg"},
		{name: "~/.gitconfig overrides the XDG config",
			files: map[string]string{"$HOME/.config/git/config": cfg("/from-xdg"), "$HOME/.gitconfig": cfg("/from-home")}, want: "/from-home"},
		{name: "repository config overrides global",
			files: map[string]string{"$HOME/.gitconfig": cfg("/from-home"), "$TOP/.git/config": cfg("/from-repo")}, want: "/from-repo"},
		{name: "relative value is relative to the top",
			files: map[string]string{"$TOP/.git/config": cfg("rel/ign")}, want: "$TOP/rel/ign"},
		{name: "system config, lowest", env: map[string]string{"GIT_CONFIG_NOSYSTEM": "-", "GIT_CONFIG_SYSTEM": "$HOME/sys"},
			files: map[string]string{"$HOME/sys": cfg("/from-system")}, want: "/from-system"},
		{name: "GIT_CONFIG_NOSYSTEM", env: map[string]string{"GIT_CONFIG_SYSTEM": "$HOME/sys"},
			files: map[string]string{"$HOME/sys": cfg("/from-system")}, want: "$HOME/.config/git/ignore"},
		{name: "GIT_CONFIG_GLOBAL replaces ~/.gitconfig", env: map[string]string{"GIT_CONFIG_GLOBAL": "$HOME/g.cfg"},
			files: map[string]string{"$HOME/.gitconfig": cfg("/from-home"), "$HOME/g.cfg": cfg("/from-global-env")}, want: "/from-global-env"},
		{name: "[include] is followed",
			files: map[string]string{"$HOME/.gitconfig": "[include]\n\tpath = more.cfg\n", "$HOME/more.cfg": cfg("/included")}, want: "/included"},
		{name: "quoted value with escapes, newline kept",
			files: map[string]string{"$HOME/.gitconfig": "[core]\nexcludesfile = \"a \\\"b\\\"\\nc\"\n"}, want: "$TOP/a \"b\"\nc"},
		{name: "malformed global config: the XDG default",
			files: map[string]string{"$HOME/.gitconfig": "[core\n" + cfg("/bad")}, want: "$HOME/.config/git/ignore"},
		{name: "key with no value (git refuses it): the XDG default",
			files: map[string]string{"$HOME/.gitconfig": "[core]\nexcludesfile\n"}, want: "$HOME/.config/git/ignore"},
		{name: "empty value: no file, no XDG default",
			files: map[string]string{"$HOME/.gitconfig": cfg("")}, want: ""},
		{name: "GIT_DIR of another repository is not the folder's", env: map[string]string{"GIT_DIR": "$HOME/other/.git"},
			files: map[string]string{"$HOME/other/.git/config": cfg("/from-other")}, want: "$HOME/.config/git/ignore", outside: true},
		{name: "outside a repository: the global config", outside: true,
			files: map[string]string{"$HOME/.gitconfig": cfg("/from-home")}, want: "/from-home"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home, top, gitDir := t.TempDir(), t.TempDir(), ""
			if !c.outside {
				gitRepo(t, top)
				gitDir = filepath.Join(top, ".git")
			}
			gitRepo(t, filepath.Join(home, "other"))
			expand := strings.NewReplacer("$HOME", home, "$TOP", top).Replace
			isolateGit(t, home)
			for k, v := range c.env {
				if v == "-" {
					t.Setenv(k, "")
					os.Unsetenv(k)
				} else {
					t.Setenv(k, expand(v))
				}
			}
			for p, content := range c.files {
				p = expand(p)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := excludesFilePath(top, gitDir), expand(c.want); got != want {
				t.Fatalf("excludesFilePath = %q, want %q", got, want)
			}
		})
	}
}

// Without git on PATH, the excludes file is git's default whatever the
// config files say: nothing can read them as git would.
func TestExcludesFilePathWithoutGit(t *testing.T) {
	home, top := t.TempDir(), t.TempDir()
	isolateGit(t, home)
	writeTree(t, home, map[string]string{".gitconfig": "[core]\n\texcludesFile = /configured\n"})
	t.Setenv("PATH", t.TempDir())
	if got, want := excludesFilePath(top, ""), filepath.Join(home, ".config/git/ignore"); got != want {
		t.Fatalf("excludesFilePath = %q, want %q", got, want)
	}
}

// isolateGit points git's environment at home for the rest of the test.
func isolateGit(t *testing.T, home string) {
	t.Helper()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_DIR"} {
		t.Setenv(k, "") // registers the restore of the unset below
		os.Unsetenv(k)
	}
}

// OuterIgnore supplies the global excludes file for a repository root, a
// subdirectory, worktrees and submodules (.git files) and folders outside
// any repository, from the config git would read for each.
func TestOuterIgnoreGlobalExcludes(t *testing.T) {
	needGit(t)
	top, home := t.TempDir(), t.TempDir()
	isolateGit(t, home)
	tree := map[string]string{
		"repo/.git/config":                 "[core]\n\texcludesFile = repo-ignore\n",
		"repo/repo-ignore":                 "from-repo-config",
		"repo/sub/x.go":                    "",
		"repo/.git/worktrees/wt/commondir": "../..\n",
		"wt/.git":                          "gitdir: ../repo/.git/worktrees/wt\n",
		"wt/repo-ignore":                   "worktree-relative",
		"repo/.git/modules/m/config":       "[core]\n\texcludesFile = ~/module-ignore\n",
		"repo/m/.git":                      "gitdir: ../.git/modules/m\n",
		"plain/dir/z.go":                   "",
		"unreadable/.git/config":           "[core]\n\texcludesFile = ~/a-directory\n",
	}
	for _, d := range []string{"repo/.git", "repo/.git/worktrees/wt", "repo/.git/modules/m", "bare/.git", "unreadable/.git"} {
		for k, v := range gitDirTree(d) {
			tree[k] = v
		}
	}
	writeTree(t, top, tree)
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
