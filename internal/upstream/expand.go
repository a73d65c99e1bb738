package upstream

import (
	"fmt"
	"strings"
)

// expander replaces the variable references of one server's configuration:
// ${workspaceFolder} and ${userHome}; ${env:NAME} (VS Code); ${NAME} and
// ${NAME:-default} (Claude Code). A variable that is not set expands to ""
// and a reference agentls does not know stays as written; both are
// recorded in problems, so the user learns why a header or an argument is
// empty.
type expander struct {
	server          string
	workspace, home string
	lookup          func(string) (string, bool)
	problems        []error
}

// expand returns s with its references replaced; where names the field for
// problem messages (`url`, `header "Authorization"`).
func (e *expander) expand(s, where string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			break // unterminated: literal text
		}
		b.WriteString(s[:i])
		ref := s[i+2 : i+2+j]
		b.WriteString(e.resolve(ref, where))
		s = s[i+2+j+1:]
	}
	b.WriteString(s)
	return b.String()
}

// resolve is the value of the reference ${ref}.
func (e *expander) resolve(ref, where string) string {
	switch ref {
	case "workspaceFolder":
		return e.workspace
	case "userHome":
		return e.home
	}
	name, def, hasDef := strings.Cut(strings.TrimPrefix(ref, "env:"), ":-")
	if !validVarName(name) {
		e.problems = append(e.problems, fmt.Errorf("server %q: %s: ${%s} is not supported and was left as written (use ${env:NAME}, ${NAME}, ${NAME:-default}, ${workspaceFolder} or ${userHome})", e.server, where, ref))
		return "${" + ref + "}"
	}
	v, ok := e.lookup(name)
	switch {
	case hasDef && v == "":
		return def // shell semantics: unset or empty takes the default
	case !ok:
		e.problems = append(e.problems, fmt.Errorf("server %q: %s: environment variable %s is not set, so ${%s} expands to \"\"", e.server, where, name, ref))
	}
	return v
}

// validVarName reports whether name is an environment variable name:
// [A-Za-z_][A-Za-z0-9_]*.
func validVarName(name string) bool {
	if name == "" || '0' <= name[0] && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
