package ops

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// systemGitConfig is git's system config file when GIT_CONFIG_SYSTEM is
// unset (distribution builds; a source build may use $(prefix)/etc).
const systemGitConfig = "/etc/gitconfig"

// gitEnv is what git's choice of core.excludesFile depends on in the
// environment, read once per lookup (gitEnvFromOS) so tests can supply
// their own.
type gitEnv struct {
	home, xdgConfigHome string
	// noSystem: GIT_CONFIG_NOSYSTEM is true.
	noSystem bool
	// system: GIT_CONFIG_SYSTEM, or systemGitConfig.
	system string
	// global, when globalSet: GIT_CONFIG_GLOBAL, which replaces both
	// per-user files ("" reads none).
	global    string
	globalSet bool
}

func gitEnvFromOS() gitEnv {
	e := gitEnv{
		home:          os.Getenv("HOME"),
		xdgConfigHome: os.Getenv("XDG_CONFIG_HOME"),
		noSystem:      gitBool(os.Getenv("GIT_CONFIG_NOSYSTEM")),
		system:        systemGitConfig,
	}
	if v, ok := os.LookupEnv("GIT_CONFIG_SYSTEM"); ok {
		e.system = v
	}
	e.global, e.globalSet = os.LookupEnv("GIT_CONFIG_GLOBAL")
	return e
}

// gitBool is git's reading of a boolean environment variable.
func gitBool(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// xdgGitFile is $XDG_CONFIG_HOME/git/name, or $HOME/.config/git/name when
// XDG_CONFIG_HOME is unset or empty; "" when neither is known.
func (e gitEnv) xdgGitFile(name string) string {
	switch {
	case e.xdgConfigHome != "":
		return filepath.Join(e.xdgConfigHome, "git", name)
	case e.home != "":
		return filepath.Join(e.home, ".config", "git", name)
	}
	return ""
}

// configFiles are the config files git reads, in its order (a later value
// wins): system, XDG, ~/.gitconfig (or GIT_CONFIG_GLOBAL instead of both),
// then the repository's own (commonDir/config; "" outside a repository).
func (e gitEnv) configFiles(commonDir string) []string {
	var files []string
	if !e.noSystem && e.system != "" {
		files = append(files, e.system)
	}
	switch {
	case e.globalSet:
		if e.global != "" {
			files = append(files, e.global)
		}
	default:
		if x := e.xdgGitFile("config"); x != "" {
			files = append(files, x)
		}
		if e.home != "" {
			files = append(files, filepath.Join(e.home, ".gitconfig"))
		}
	}
	if commonDir != "" {
		files = append(files, filepath.Join(commonDir, "config"))
	}
	return files
}

// excludesFilePath is the file git reads as the global excludes for the
// repository whose work tree is top and whose common git directory is
// commonDir ("" outside a repository: top is then the folder root). An
// unreadable or malformed config file contributes nothing; "" means none.
func (e gitEnv) excludesFilePath(top, commonDir string) string {
	value, set := "", false
	for _, f := range e.configFiles(commonDir) {
		data, ok := readRuleFile(f)
		if !ok {
			continue
		}
		if v, ok, err := parseExcludesFile(data); err == nil && ok {
			value, set = v, true
		}
	}
	if !set {
		return e.xdgGitFile("ignore")
	}
	p, err := e.expandUser(value)
	if err != nil || p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		// git reads it from the work tree's top, where it runs.
		p = filepath.Join(top, p)
	}
	return p
}

// expandUser expands a leading "~" or "~user" as git's interpolate_path.
func (e gitEnv) expandUser(p string) (string, error) {
	if !strings.HasPrefix(p, "~") {
		return p, nil
	}
	name, rest, _ := strings.Cut(p[1:], "/")
	home := e.home
	if name != "" {
		u, err := user.Lookup(name)
		if err != nil {
			return "", fmt.Errorf("expand %q: %w", p, err)
		}
		home = u.HomeDir
	}
	if home == "" {
		return "", fmt.Errorf("expand %q: no home directory", p)
	}
	return filepath.Join(home, rest), nil
}

// commonGitDir is the directory holding the repository config of git
// directory gitDir: the target of its "commondir" file (worktrees), else
// gitDir itself.
func commonGitDir(gitDir string) string {
	data, ok := readRuleFile(filepath.Join(gitDir, "commondir"))
	if !ok {
		return gitDir
	}
	c := strings.TrimSpace(string(data))
	if c == "" {
		return gitDir
	}
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return c
}

// errBadConfig is a config file git itself would refuse ("bad config line").
var errBadConfig = errors.New("bad git config line")

// parseExcludesFile returns the last value of core.excludesFile in one git
// config file, parsed as git's config.c does: sections and keys are
// case-insensitive, `[core "sub"]` and `[core.sub]` are other sections, a
// value may be quoted and hold \" \\ \n \t \b escapes, '#' or ';' outside
// quotes starts a comment, a trailing backslash continues the line, and
// unquoted whitespace is trimmed at the ends (each inner whitespace byte
// becomes a space). A key with no '=' (a boolean) sets nothing: git would
// refuse it for a path. [include] and [includeIf] are not followed.
func parseExcludesFile(data []byte) (value string, set bool, err error) {
	text, _ := strings.CutPrefix(string(data), "\xef\xbb\xbf")
	p := configParser{data: text, line: 1}
	section := "" // "" before any header: keys there belong to no section
	comment := false
	for {
		c := p.next()
		switch {
		case c == '\n':
			if p.eof {
				return value, set, nil
			}
			comment = false
		case comment, isSpace(c):
		case c == '#' || c == ';':
			comment = true
		case c == '[':
			s, ok := p.sectionName()
			if !ok || s == "" {
				return "", false, fmt.Errorf("%w %d", errBadConfig, p.line)
			}
			section = s
		case isAlpha(c):
			key, v, hasValue, ok := p.keyValue(c)
			if !ok {
				return "", false, fmt.Errorf("%w %d", errBadConfig, p.line)
			}
			if section == "core" && key == "excludesfile" && hasValue {
				value, set = v, true
			}
		default:
			return "", false, fmt.Errorf("%w %d", errBadConfig, p.line)
		}
	}
}

// configParser reads a config file byte by byte as git's get_next_char:
// "\r\n" reads as '\n', and the end of the data as a final '\n'.
type configParser struct {
	data string
	pos  int
	eof  bool
	line int
}

func (p *configParser) next() byte {
	if p.pos >= len(p.data) {
		p.eof = true
		return '\n'
	}
	c := p.data[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		p.pos++
		c = '\n'
	}
	if c == '\n' {
		p.line++
	}
	return c
}

// sectionName reads a header after '[': "core" for [Core]; a subsection
// (`[core "x"]`) or a dotted name ([core.x]) yields a name other than
// "core".
func (p *configParser) sectionName() (string, bool) {
	var name strings.Builder
	for {
		c := p.next()
		switch {
		case p.eof:
			return "", false
		case c == ']':
			return name.String(), true
		case isSpace(c):
			return p.subsection(name.String(), c)
		case !isKeyChar(c) && c != '.':
			return "", false
		}
		name.WriteByte(lower(c))
	}
}

// subsection reads the rest of `[name "sub"]` after the whitespace c.
func (p *configParser) subsection(name string, c byte) (string, bool) {
	for isSpace(c) {
		if c == '\n' {
			return "", false
		}
		c = p.next()
	}
	if c != '"' {
		return "", false
	}
	var sub strings.Builder
	for {
		c = p.next()
		if c == '\n' {
			return "", false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = p.next(); c == '\n' {
				return "", false
			}
		}
		sub.WriteByte(c)
	}
	if p.next() != ']' {
		return "", false
	}
	return name + "." + sub.String(), true
}

// keyValue reads a key starting with first and its value, if any.
func (p *configParser) keyValue(first byte) (key, value string, hasValue, ok bool) {
	var k strings.Builder
	k.WriteByte(lower(first))
	var c byte
	for {
		c = p.next()
		if p.eof || !isKeyChar(c) {
			break
		}
		k.WriteByte(lower(c))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	if c == '\n' {
		return k.String(), "", false, true
	}
	if c != '=' {
		return "", "", false, false
	}
	value, ok = p.value()
	return k.String(), value, true, ok
}

// value reads a value after '=' up to the end of its (continued) line.
func (p *configParser) value() (string, bool) {
	var v strings.Builder
	quote, comment, space := false, false, 0
	for {
		c := p.next()
		switch {
		case c == '\n':
			return v.String(), !quote
		case comment:
			continue
		case isSpace(c) && !quote:
			if v.Len() > 0 {
				space++
			}
			continue
		case !quote && (c == ';' || c == '#'):
			comment = true
			continue
		}
		for ; space > 0; space-- {
			v.WriteByte(' ')
		}
		switch c {
		case '\\':
			switch c = p.next(); c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
			v.WriteByte(c)
		case '"':
			quote = !quote
		default:
			v.WriteByte(c)
		}
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isKeyChar(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
