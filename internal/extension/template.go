package extension

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// placeholderRE matches {{name}}, with optional spaces inside the braces.
// Compiled on first use, so a process that loads no extension pays nothing.
var placeholderRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\{\{\s*([a-zA-Z0-9_-]+)\s*\}\}`)
})

// Template is a parsed command template.
type Template struct {
	src   string
	spans [][]int // placeholder matches: full start, end, name start, end
}

// Names lists the placeholder names in order of appearance (with repeats).
func (t *Template) Names() []string {
	out := make([]string, len(t.spans))
	for i, s := range t.spans {
		out[i] = t.src[s[2]:s[3]]
	}
	return out
}

// sentinel stands in for placeholder i when the template is parsed. It is
// one plain shell word made of letters and digits.
func sentinel(i int) string { return "AGENTLSPH" + strconv.Itoa(i) + "X" }

// ParseTemplate parses a command template and checks that every placeholder
// stands where a single-quoted word keeps its meaning.
func ParseTemplate(src string) (*Template, error) {
	if strings.Contains(src, "AGENTLSPH") {
		return nil, fmt.Errorf("command must not contain the reserved word AGENTLSPH")
	}
	t := &Template{src: src, spans: placeholderRE().FindAllStringSubmatchIndex(src, -1)}
	var b strings.Builder
	last := 0
	for i, s := range t.spans {
		b.WriteString(src[last:s[0]])
		b.WriteString(sentinel(i))
		last = s[1]
	}
	b.WriteString(src[last:])
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(b.String()), "")
	if err != nil {
		return nil, fmt.Errorf("command does not parse as bash: %v", err)
	}
	// Count, per placeholder, the occurrences found in an allowed position;
	// any occurrence elsewhere (or swallowed by a comment) is refused.
	found := make([]int, len(t.spans))
	var stack []syntax.Node
	var bad error
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		if bad != nil {
			return false
		}
		var text string
		switch x := n.(type) {
		case *syntax.Lit:
			text = x.Value
		case *syntax.SglQuoted:
			text = x.Value
		default:
			return true
		}
		for i := range t.spans {
			if c := strings.Count(text, sentinel(i)); c > 0 {
				if why := placement(stack); why != "" {
					bad = fmt.Errorf("placeholder %s is %s; write it as a bare word (values are quoted for you)", src[t.spans[i][0]:t.spans[i][1]], why)
					return false
				}
				found[i] += c
			}
		}
		return true
	})
	if bad != nil {
		return nil, bad
	}
	for i := range t.spans {
		if found[i] != 1 {
			return nil, fmt.Errorf("placeholder %s is in a comment or another place where a quoted value would not stay one word", src[t.spans[i][0]:t.spans[i][1]])
		}
	}
	return t, nil
}

// placement says why the node on top of stack (a Lit or SglQuoted holding a
// sentinel) is no place for a quoted value, or "" when it is fine.
func placement(stack []syntax.Node) string {
	top := stack[len(stack)-1]
	if _, ok := top.(*syntax.SglQuoted); ok {
		return "inside single quotes"
	}
	// $( … ) and <( … ) start a command of their own: double quotes or
	// arithmetic around one (as in "$(cmd {{x}})") do not reach the words
	// inside. Backquotes and heredocs further out still do (they rewrite
	// backslashes in what they hold).
	inSubst := false
	for i := len(stack) - 2; i >= 0; i-- {
		switch x := stack[i].(type) {
		case *syntax.DblQuoted:
			if !inSubst {
				return "inside double quotes"
			}
		case *syntax.CmdSubst:
			if x.Backquotes {
				return "inside backquotes"
			}
			inSubst = true
		case *syntax.ProcSubst:
			inSubst = true
		case *syntax.ArithmExp, *syntax.ArithmCmd:
			if !inSubst {
				return "inside arithmetic"
			}
		case *syntax.Redirect:
			if x.Hdoc != nil {
				return "inside a heredoc"
			}
		}
	}
	if len(stack) < 2 {
		return "not part of a shell word"
	}
	if _, ok := stack[len(stack)-2].(*syntax.Word); !ok {
		return "part of a name (as in $VAR{{x}})"
	}
	return ""
}

// Render substitutes the arguments. Every value is shell-quoted: strings as
// they are, numbers and booleans as their JSON text, arrays as one quoted
// word per element, objects as quoted JSON. A missing (or null) argument
// substitutes nothing, and a double space it leaves collapses to one.
func (t *Template) Render(args map[string]any) string {
	var b strings.Builder
	last := 0
	for _, s := range t.spans {
		b.WriteString(t.src[last:s[0]])
		last = s[1]
		v, ok := args[t.src[s[2]:s[3]]]
		if ok && v != nil {
			if q := quoteValue(v); q != "" {
				b.WriteString(q)
				continue
			}
		}
		// Nothing substituted: drop one of the spaces around the gap.
		if strings.HasSuffix(b.String(), " ") && strings.HasPrefix(t.src[last:], " ") {
			last++
		}
	}
	b.WriteString(t.src[last:])
	return b.String()
}

func quoteValue(v any) string {
	switch x := v.(type) {
	case string:
		return Quote(x)
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				parts = append(parts, Quote(s))
			} else {
				parts = append(parts, Quote(jsonText(e)))
			}
		}
		return strings.Join(parts, " ")
	default:
		return Quote(jsonText(x))
	}
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Quote returns s as one single-quoted shell word: every ' becomes '\”.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
