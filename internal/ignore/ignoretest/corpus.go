// Package ignoretest loads the ignore-rule conformance corpus
// (internal/ignore/testdata/conformance/*.txtar) and asks real git what it
// ignores, so the ignore engine and the tools built on it (find, ls, both
// grep backends) can be checked against git at test time.
//
// A corpus file is txtar: a comment, then "-- name --" headers each
// followed by the file's content. Rule files (.gitignore at any depth,
// .git/info/exclude) keep their content; a header may add "[crlf]" (lines
// end in CRLF) or "[bom]" (a UTF-8 BOM first). Every other file holds
// Mark; a name ending in "/" is an empty directory. Each corpus file is
// one case directory, its own git repository.
package ignoretest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Mark is the content of every file that is not a rule file.
const Mark = "corpusmark\n"

// Case is one corpus file.
type Case struct {
	Name  string            // the file name without .txtar
	Files map[string]string // slash path → content; "d/" is an empty directory
}

// Load reads every *.txtar in dir, sorted by name.
func Load(dir string) ([]Case, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", dir, err)
	}
	slices.Sort(names)
	var out []Case
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		c, err := parse(strings.TrimSuffix(filepath.Base(n), ".txtar"), string(data))
		if err != nil {
			return nil, fmt.Errorf("corpus %s: %w", n, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func parse(name, data string) (Case, error) {
	c := Case{Name: name, Files: map[string]string{}}
	cur, crlf, bom := "", false, false
	var body strings.Builder
	flush := func() {
		if cur == "" {
			return
		}
		content := body.String()
		if isRuleFile(cur) {
			if crlf {
				content = strings.ReplaceAll(content, "\n", "\r\n")
			}
			if bom {
				content = "\ufeff" + content
			}
		} else if !strings.HasSuffix(cur, "/") {
			content = Mark
		}
		c.Files[cur] = content
	}
	for _, line := range strings.SplitAfter(data, "\n") {
		t := strings.TrimRight(line, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") {
			flush()
			// The name is taken exactly (it may hold spaces); flags follow it.
			cur = strings.TrimSuffix(strings.TrimPrefix(t, "-- "), " --")
			crlf, bom = false, false
			for {
				if n, ok := strings.CutSuffix(cur, " [crlf]"); ok {
					cur, crlf = n, true
				} else if n, ok := strings.CutSuffix(cur, " [bom]"); ok {
					cur, bom = n, true
				} else {
					break
				}
			}
			if cur == "" {
				return Case{}, fmt.Errorf("empty file name in %q", t)
			}
			body.Reset()
			continue
		}
		if cur != "" {
			body.WriteString(line)
		}
	}
	flush()
	if len(c.Files) == 0 {
		return Case{}, fmt.Errorf("no files")
	}
	return c, nil
}

func isRuleFile(name string) bool {
	return name == ".git/info/exclude" || filepath.Base(name) == ".gitignore"
}

// Write creates the case in dir (which must exist) as a git repository.
func (c Case) Write(dir string) error {
	if out, err := Git(dir, nil, "init", "-q"); err != nil {
		return fmt.Errorf("git init %s: %w\n%s", dir, err, out)
	}
	for name, content := range c.Files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Git runs git in dir with the user's and system's configuration (global
// excludes included) kept out; exit status 1 (check-ignore: nothing
// ignored) is not an error.
func Git(dir string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	home := filepath.Join(os.TempDir(), "ignoretest-no-home")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+home, "XDG_CONFIG_HOME="+home)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		err = nil
	}
	if err != nil {
		return out, fmt.Errorf("git %v: %w: %s", args, err, stderr.String())
	}
	return out, nil
}

// Verdict is what git decides for one case directory.
type Verdict struct {
	// Visible: the files git ls-files --others --exclude-standard lists.
	Visible []string
	// Ignored: every path below dir (files and directories, .git left
	// out) that git check-ignore --no-index calls ignored.
	Ignored map[string]bool
	// Paths: every path below dir, files and directories, sorted.
	Paths []string
}

// Ask asks git about every path below dir.
func Ask(dir string) (Verdict, error) {
	var v Verdict
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			v.Paths = append(v.Paths, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return v, err
	}
	slices.Sort(v.Paths)
	out, err := Git(dir, nil, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return v, err
	}
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			v.Visible = append(v.Visible, f)
		}
	}
	slices.Sort(v.Visible)
	out, err = Git(dir, []byte(strings.Join(v.Paths, "\x00")), "check-ignore", "--no-index", "-z", "--stdin")
	if err != nil {
		return v, err
	}
	v.Ignored = map[string]bool{}
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			v.Ignored[strings.TrimSuffix(f, "/")] = true
		}
	}
	return v, nil
}

// VisibleFiles is Visible less the rule files: the files a search for Mark
// finds.
func (v Verdict) VisibleFiles() []string {
	var out []string
	for _, f := range v.Visible {
		if !isRuleFile(f) {
			out = append(out, f)
		}
	}
	return out
}
