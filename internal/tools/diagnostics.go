package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/textedit"
)

// Diagnostic is one problem an editor's language server reports for a file
// (an LSP Diagnostic).
type Diagnostic struct {
	Range    textedit.Range  `json:"range"`
	Severity int             `json:"severity,omitempty"`
	Code     json.RawMessage `json:"code,omitempty"`
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
}

// DiagnosticsSource asks the editor what its language servers report for
// files (tools/diagnostics). With wait > 0 the files have just changed and
// the editor waits, at most wait, for its diagnostics to catch up. The
// result is keyed by the URIs asked for.
type DiagnosticsSource interface {
	Diagnostics(ctx context.Context, callID, tool string, uris []string, wait time.Duration) (map[string][]Diagnostic, error)
}

const (
	// DiagnosticsWait is how long the editor may wait after a change for
	// its language servers to report on it.
	DiagnosticsWait = 1500 * time.Millisecond
	// diagnosticsSlack is how long an answer may take beyond the editor's
	// wait (all of it, for the baseline) before the call goes on without.
	diagnosticsSlack = time.Second
	// MaxDiagnostics is how many new problems the model is shown per file.
	MaxDiagnostics = 10
)

// diagBaseline is what the editor reported for a file before the call
// changed it: problems already there are not news.
type diagBaseline struct {
	uri, display string
	before       []Diagnostic
}

// PathURI is the file URI of OS path p, as edit and write details and the
// diagnostics requests name a file.
func PathURI(p string) string {
	return "file://" + strings.ReplaceAll(p, " ", "%20")
}

// DiagnosticsBefore asks the editor, when it can tell, what it reports for
// p now; call it just before the change is made. A file that does not exist
// yet has nothing to report. Without an answer the call reports nothing:
// every old problem would look new.
func (c *Call) DiagnosticsBefore(ctx context.Context, p ops.Path, exists bool) {
	src := c.Env.Diagnostics
	if src == nil {
		return
	}
	b := &diagBaseline{uri: PathURI(p.OS()), display: p.Display()}
	if exists {
		ctx, cancel := context.WithTimeout(ctx, diagnosticsSlack)
		defer cancel()
		got, err := src.Diagnostics(ctx, c.ID, c.Tool, []string{b.uri}, 0)
		if err != nil {
			c.logDiagnostics(err)
			return
		}
		b.before = got[b.uri]
	}
	c.diag = b
}

// WithDiagnostics runs a file-changing tool, then adds to a successful
// result what the editor reports that was not there before the change. It
// waits outside the tool's file lock.
func WithDiagnostics[In any](run func(context.Context, *Call, In) (Result, error)) func(context.Context, *Call, In) (Result, error) {
	return func(ctx context.Context, c *Call, in In) (Result, error) {
		r, err := run(ctx, c, in)
		if err != nil || r.IsError || c.diag == nil || ctx.Err() != nil {
			return r, err
		}
		b := c.diag
		wctx, cancel := context.WithTimeout(ctx, DiagnosticsWait+diagnosticsSlack)
		defer cancel()
		got, derr := c.Env.Diagnostics.Diagnostics(wctx, c.ID, c.Tool, []string{b.uri}, DiagnosticsWait)
		if derr != nil {
			c.logDiagnostics(derr)
			return r, nil
		}
		after := got[b.uri]
		fresh := newProblems(b.before, after)
		r.SetDetail("diagnostics", map[string]any{"uri": b.uri, "new": fresh, "total": len(after)})
		if text := problemsText(b.display, fresh); text != "" && len(r.Content) > 0 {
			r.Content[0].Text += "\n" + text
		}
		return r, nil
	}
}

func (c *Call) logDiagnostics(err error) {
	if c.Env.Log != nil {
		c.Env.Log.Debug("no diagnostics from the editor", "tool", c.Tool, "err", err)
	}
}

// severity is d's LSP severity; an omitted one counts as an error, as
// most editors show it.
func (d Diagnostic) severity() int {
	if d.Severity == 0 {
		return 1
	}
	return d.Severity
}

// key identifies a problem across a change: lines move, so not by range.
func (d Diagnostic) key() string {
	return fmt.Sprintf("%d\x00%s\x00%s\x00%s", d.severity(), d.Source, bytes.TrimSpace(d.Code), d.Message)
}

// newProblems returns the errors and warnings in after that before did not
// have (as many of each kind as are new), in file order.
func newProblems(before, after []Diagnostic) []Diagnostic {
	seen := map[string]int{}
	for _, d := range before {
		seen[d.key()]++
	}
	out := []Diagnostic{}
	for _, d := range after {
		if d.severity() > 2 {
			continue
		}
		if k := d.key(); seen[k] > 0 {
			seen[k]--
			continue
		}
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Range.Start, out[j].Range.Start
		return a.Line < b.Line || a.Line == b.Line && a.Character < b.Character
	})
	return out
}

// problemsText is what the model reads of new problems: at most
// MaxDiagnostics lines, "" when there are none.
func problemsText(display string, ds []Diagnostic) string {
	if len(ds) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The editor reports new problems in %s:", display)
	for i, d := range ds {
		if i == MaxDiagnostics {
			fmt.Fprintf(&b, "\n  … and %d more", len(ds)-MaxDiagnostics)
			break
		}
		kind := "error"
		if d.severity() == 2 {
			kind = "warning"
		}
		msg := strings.Join(strings.Fields(d.Message), " ")
		fmt.Fprintf(&b, "\n  L%d:%d %s: %s", d.Range.Start.Line+1, d.Range.Start.Character+1, kind, msg)
		if d.Source != "" {
			fmt.Fprintf(&b, " (%s)", d.Source)
		}
	}
	return b.String()
}
