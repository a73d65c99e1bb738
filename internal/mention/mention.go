package mention

import (
	"context"
	"fmt"
	"strings"
)

// Prefix is what the client's model sees in front of each tool name (VS
// Code: "agentls_"); the zero value names the tools bare, as MCP hosts and
// the CLI list them.
type Prefix string

// MaxPrefix bounds a prefix (initializationOptions.toolNamePrefix): tool
// names must stay short for every model API (64 characters at most for
// several).
const MaxPrefix = 32

// Valid reports whether p can prefix a tool name in every host: letters,
// digits, "_" and "-", at most MaxPrefix bytes.
func (p Prefix) Valid() bool {
	if len(p) > MaxPrefix {
		return false
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// Of is the name the model knows the tool by.
func (p Prefix) Of(tool string) string { return string(p) + tool }

// Render replaces each {{name}} in text with the prefixed name. Text
// without marks is returned as is; a mark that is not a tool name
// (letters a-z, digits, "_") stays.
func (p Prefix) Render(text string) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 8*len(p))
	for {
		i := strings.Index(text, "{{")
		if i < 0 {
			break
		}
		j := strings.Index(text[i+2:], "}}")
		if j < 0 || !isToolName(text[i+2:i+2+j]) {
			b.WriteString(text[:i+2])
			text = text[i+2:]
			continue
		}
		b.WriteString(text[:i])
		b.WriteString(string(p))
		b.WriteString(text[i+2 : i+2+j])
		text = text[i+2+j+2:]
	}
	b.WriteString(text)
	return b.String()
}

// Sprintf renders the marks in format, then formats args into it: the
// arguments (paths, patterns, commands) are data and keep any "{{…}}" they
// hold. Without args the format is not formatted (a literal "%" stays), as
// tools.Errorf does.
func (p Prefix) Sprintf(format string, args ...any) string {
	format = p.Render(format)
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}

// Errorf is Sprintf as an error; %w wraps as fmt.Errorf does.
func (p Prefix) Errorf(format string, args ...any) error {
	return fmt.Errorf(p.Render(format), args...)
}

func isToolName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

type prefixKey struct{}

// WithPrefix returns ctx carrying p for the code a call runs.
func WithPrefix(ctx context.Context, p Prefix) context.Context {
	if p == "" {
		return ctx
	}
	return context.WithValue(ctx, prefixKey{}, p)
}

// FromContext is the prefix ctx carries; "" when none.
func FromContext(ctx context.Context) Prefix {
	p, _ := ctx.Value(prefixKey{}).(Prefix)
	return p
}
