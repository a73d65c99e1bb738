package ops

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// gitConfigTimeout bounds the `git config` query of one lookup: a git
// stuck on a slow file system leaves the global excludes at the default.
const gitConfigTimeout = 2 * time.Second

// excludesFilePath is the file git reads as the global excludes for the
// repository whose work tree is top and whose git directory is gitDir (""
// outside a repository: top is then the folder root); "" means none.
//
// git itself is asked (`git config --path --get core.excludesFile`), so the
// value is exactly git's: every config file it reads, [include] and
// [includeIf], GIT_CONFIG_* and "~" expansion. Without git, or when git
// refuses its config, the default ($XDG_CONFIG_HOME/git/ignore) is taken:
// such a config applies no excludes file of its own.
func excludesFilePath(top, gitDir string) string {
	value, set := gitExcludesFile(top, gitDir)
	switch {
	case !set:
		return xdgGitIgnore()
	case value == "":
		return ""
	case !filepath.IsAbs(value):
		// git reads it from the work tree's top, where it runs.
		return filepath.Join(top, value)
	}
	return value
}

// gitExcludesFile is git's core.excludesFile for top and gitDir, and
// whether git printed one (it exits 1 when the key is unset).
func gitExcludesFile(top, gitDir string) (string, bool) {
	args := []string{"config", "-z", "--path", "--get", "core.excludesFile"}
	if gitDir != "" {
		args = append([]string{"--git-dir=" + gitDir}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitConfigTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = top
	cmd.Env = gitQueryEnv()
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		return "", false
	}
	return strings.TrimSuffix(string(out), "\x00"), true
}

// gitQueryEnv is agentls's environment without the variables that would
// point git at another repository than the one the folder is in.
func gitQueryEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// xdgGitIgnore is git's default excludes file: $XDG_CONFIG_HOME/git/ignore,
// or $HOME/.config/git/ignore when XDG_CONFIG_HOME is unset or empty; ""
// when neither is known.
func xdgGitIgnore() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", "ignore")
	}
	if h := os.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "git", "ignore")
	}
	return ""
}
