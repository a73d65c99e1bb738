package extension

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/agentls/agentls/internal/shell"
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
	marks := make([]string, len(t.spans))
	for i := range t.spans {
		marks[i] = sentinel(i)
	}
	found, err := shell.WordPlaces(b.String(), marks)
	var pe *shell.PlaceError
	switch {
	case errors.As(err, &pe):
		s := t.spans[pe.Mark]
		return nil, fmt.Errorf("placeholder %s is %s; write it as a bare word (values are quoted for you)", src[s[0]:s[1]], pe.Why)
	case err != nil:
		return nil, fmt.Errorf("command does not parse as bash: %v", err)
	}
	for i := range t.spans {
		if found[i] != 1 {
			return nil, fmt.Errorf("placeholder %s is in a comment or another place where a quoted value would not stay one word", src[t.spans[i][0]:t.spans[i][1]])
		}
	}
	return t, nil
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
