package shell

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// PlaceError reports a mark standing where a single-quoted value would not
// stay one plain word.
type PlaceError struct {
	Mark int    // index into the marks given to WordPlaces
	Why  string // "inside double quotes", "inside a heredoc", ...
}

func (e *PlaceError) Error() string { return fmt.Sprintf("mark %d is %s", e.Mark, e.Why) }

// WordPlaces parses src as bash, as Analyze does, and counts for each mark
// (a plain run of letters and digits standing for a value to be quoted)
// how often it occurs where a single-quoted word keeps its meaning: as a
// word or part of one, outside quotes, arithmetic and heredocs (inside $(…)
// and <(…) too, which start a command of their own). A mark anywhere else
// is a *PlaceError; a line that does not parse returns the parser's error.
// A mark in a comment is not counted.
func WordPlaces(src string, marks []string) ([]int, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, err
	}
	found := make([]int, len(marks))
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
		for i, m := range marks {
			if c := strings.Count(text, m); c > 0 {
				if why := placement(stack); why != "" {
					bad = &PlaceError{Mark: i, Why: why}
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
	return found, nil
}

// placement says why the node on top of stack (a Lit or SglQuoted holding a
// mark) is no place for a quoted value, or "" when it is fine.
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
