package policy

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentls/agentls/internal/settings"
)

// MaxQuestionDiffLines bounds the changed lines of a diff a question
// shows; the rest is counted ("N more changed lines").
const MaxQuestionDiffLines = 60

// Render is the one wording of an approval question, for tools/confirm,
// tools/prepare and MCP elicitation: a short title ("Edit main.go") and a
// Markdown message showing what is approved — the path and the diff of an
// edit or write, the command, its cwd and why it is not read-only — and
// why agentls asks. It reads cr's Tool, Arguments, Preview and Reason,
// which the caller has masked.
func Render(cr ConfirmRequest) (title, message string) {
	var b strings.Builder
	kind, _ := cr.Preview["kind"].(string)
	path, _ := cr.Preview["path"].(string)
	switch {
	case kind == "edit" || kind == "write" || kind == "create":
		verb := map[string]string{"edit": "Edit", "write": "Replace", "create": "Create"}[kind]
		title = verb + " " + path
		fmt.Fprintf(&b, "**%s** %s\n\n", verb, code(path))
		diff, _ := cr.Preview["unifiedDiff"].(string)
		shown, more := boundDiff(diff, MaxQuestionDiffLines)
		b.WriteString(fenced("diff", shown))
		if more > 0 {
			fmt.Fprintf(&b, "\n%d more changed %s not shown.\n", more, pluralWord(more, "line"))
		}
	case kind == "command":
		command, _ := cr.Preview["command"].(string)
		title = "Run " + oneLine(command, 60)
		b.WriteString("**Run**\n\n")
		b.WriteString(fenced("sh", command))
		if cwd, _ := cr.Preview["cwd"].(string); cwd != "" {
			fmt.Fprintf(&b, "\nin %s\n", code(cwd))
		}
		if reasons := stringList(cr.Preview["reasons"]); len(reasons) > 0 {
			fmt.Fprintf(&b, "\nNot read-only: %s.\n", strings.Join(reasons, "; "))
		}
	default:
		title = "Run " + cr.Tool
		fmt.Fprintf(&b, "**%s**\n", cr.Tool)
		if p, _ := cr.Arguments["path"].(string); p != "" {
			fmt.Fprintf(&b, "\non %s\n", code(p))
		} else if len(cr.Arguments) > 0 {
			args, _ := json.Marshal(cr.Arguments)
			b.WriteString("\n" + fenced("json", oneLine(string(args), 2000)))
		}
	}
	if cr.Reason != "" {
		fmt.Fprintf(&b, "\nagentls asks because %s.\n", strings.TrimSuffix(strings.TrimSuffix(cr.Reason, "; the user must approve it"), "."))
	}
	return "agentls: " + title, strings.TrimSpace(b.String())
}

// boundDiff keeps a unified diff up to its max-th changed line (a line of
// a hunk starting with + or -) and counts the changed lines left out.
func boundDiff(diff string, max int) (shown string, more int) {
	lines := strings.SplitAfter(diff, "\n")
	changed, cut := 0, -1
	inHunk := false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "@@"):
			inHunk = true
		case inHunk && (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")):
			changed++
			if changed == max+1 && cut < 0 {
				cut = i
			}
		}
	}
	if cut < 0 {
		return strings.TrimRight(diff, "\n"), 0
	}
	return strings.TrimRight(strings.Join(lines[:cut], ""), "\n"), changed - max
}

// fenced is text in a Markdown code block whose fence no line of text
// can close.
func fenced(lang, text string) string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + fence + "\n"
}

// code is s as inline Markdown code.
func code(s string) string {
	tick := "`"
	for strings.Contains(s, tick) {
		tick += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return tick + " " + s + " " + tick
	}
	return tick + s + tick
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

func stringList(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		var out []string
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func pluralWord(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// AllowRule is the narrowest rule a user can write that allows req: the
// path relative to its workspace folder for path tools (Edit(/main.go)),
// the exact command line for bash, the tool's name otherwise.
func AllowRule(req Request) string {
	tool := strings.ToLower(req.Tool)
	fam := ""
	if req.Source == "" || req.Source == "core" {
		fam = family(tool)
	}
	switch {
	case fam == "bash":
		return "Bash(" + normalize(req.Command) + ")"
	case (fam == "edit" || fam == "read") && len(req.Paths) == 1:
		name := "Read"
		if fam == "edit" {
			name = "Edit"
		}
		p := req.Paths[0]
		if p.Rel != "" && p.Rel != "." {
			return name + "(/" + escapeGlob(p.Rel) + ")"
		}
		if p.Abs != "" {
			return name + "(/" + escapeGlob(slash(p.Abs)) + ")"
		}
	}
	if server, ok := strings.CutPrefix(req.Source, "mcp:"); ok {
		return "mcp__" + server + "__" + strings.TrimPrefix(req.Tool, server+"__")
	}
	return req.Tool
}

// Hints are a client's ways to allow a call: ModeHint is how its user
// changes the mode ("" for none), UserSettings the path of the user
// settings file ("" names it generically).
type Hints struct {
	ModeHint, UserSettings string
}

// HowToAllow tells the model what the user can do so that a call like req,
// which v asked about, runs without a question: remove the ask rule that
// asked, or add the allow rule for this very call to the settings file
// that can lift the ask — with the exact snippet.
func HowToAllow(req Request, v Verdict, h Hints) string {
	rule := AllowRule(req)
	snippet, _ := json.Marshal(map[string]any{"permissions": map[string]any{"allow": []string{rule}}})
	switch {
	case strings.HasPrefix(v.Rule, "mode:"):
		s := fmt.Sprintf("To let it run, the user can add this to .agentls/settings.local.json in the workspace: %s", snippet)
		if h.ModeHint != "" {
			s += ", or " + h.ModeHint
		}
		return s + "."
	case strings.HasPrefix(v.Rule, "builtin:"):
		// Only trusted sources lift a built-in ask.
		file := h.UserSettings
		if file == "" {
			file = filepath.Join("$XDG_CONFIG_HOME", filepath.FromSlash(settings.UserFile))
		}
		return fmt.Sprintf("To let it run, the user can add this to their user settings (%s): %s.", file, snippet)
	case v.Rule == "" || v.Rule == "user":
		return ""
	}
	return fmt.Sprintf("The user's rule %s asks before such calls (an allow rule does not override an ask rule); to let them run without a question, the user can remove it.", v.Rule)
}
