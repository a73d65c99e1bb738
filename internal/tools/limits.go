package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agentls/agentls/internal/finder"
	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/search"
)

// Limits are the numbers the built-in tools enforce and their descriptions
// state. docs/tools.md's numbers are the defaults (DefaultLimits); a client may
// change them (initializationOptions.limits), for example to keep results
// small for a model with a short context. The tools built with a Limits
// value both enforce and describe it, so a description never states a
// number the code does not apply.
type Limits struct {
	ReadLines      int // lines of a read result, header and notices included (and the most limit asks)
	ReadBytes      int // bytes of a read result, header and notices included
	ReadLineChars  int // characters shown of one line before it is cut
	LsEntries      int // entries ls lists when no limit is given
	GrepMatches    int // matching lines grep shows when no limit is given
	GrepLineChars  int // characters shown of one grep output line
	GrepBytes      int // bytes of the whole grep output
	FindPaths      int // paths find lists when no limit is given
	BashTimeout    int // seconds a command may run when no timeout is given
	BashMaxTimeout int // the largest timeout a call may ask for, in seconds
	BashLines      int // lines of a bash result, notices included (the output's tail)
	BashBytes      int // bytes of a bash result, notices included (the output's tail)

	// ResultBytes and ResultLines bound every tool's whole result, for a
	// host that cuts results itself (HostCap); 0: only the tool's own
	// budget. Not settings: Within sets them.
	ResultBytes, ResultLines int
}

// HostCap is the most of one tool result a host passes to its model
// before it cuts the result itself: Bytes of text, and Lines (0: no cap).
type HostCap struct {
	Bytes, Lines int
}

// Within returns l lowered to what a host takes: every byte budget at
// most c.Bytes, every line budget at most c.Lines, and every tool's whole
// result within both (ResultBytes, ResultLines), so that what the
// descriptions state is what reaches the model.
func (l Limits) Within(c HostCap) Limits {
	l = l.WithDefaults()
	if c.Bytes > 0 {
		l.ReadBytes = min(l.ReadBytes, c.Bytes)
		l.GrepBytes = min(l.GrepBytes, c.Bytes)
		l.BashBytes = min(l.BashBytes, c.Bytes)
		l.ResultBytes = c.Bytes
	}
	if c.Lines > 0 {
		l.ReadLines = max(min(l.ReadLines, c.Lines), ReadMinLines)
		l.BashLines = max(min(l.BashLines, c.Lines), BashMinLines)
		l.ResultLines = c.Lines
	}
	return l
}

// ResultSize states the whole-result budget of a tool whose own budget is
// own bytes, as its description gives it.
func (l Limits) ResultSize(own int) string {
	s := fmt.Sprintf("%d bytes", l.resultBytes(own))
	if l.ResultLines > 0 {
		s = fmt.Sprintf("%d lines and %s", l.ResultLines, s)
	}
	return s
}

// resultBytes is the budget of a whole result of a tool whose own budget
// is own bytes.
func (l Limits) resultBytes(own int) int {
	if l.ResultBytes > 0 {
		return min(own, l.ResultBytes)
	}
	return own
}

// The defaults of Limits, docs/tools.md's numbers; where an engine has a
// default of its own (finder, search, proc), it is that one.
const (
	ReadMaxLines       = 2000
	ReadMaxBytes       = 50 * 1024 // 51,200 bytes of file text per call
	ReadMaxLineChars   = 2000
	LsDefaultLimit     = finder.DefaultListLimit
	GrepDefaultLimit   = search.DefaultLimit
	GrepLineChars      = search.MaxLineChars
	GrepMaxBytes       = search.MaxOutputBytes
	FindDefaultLimit   = finder.DefaultFindLimit
	BashDefaultTimeout = int(proc.DefaultTimeout / time.Second) // 120 s
	BashMaxTimeout     = int(proc.MaxTimeout / time.Second)     // 600 s
	BashTailLines      = proc.TailLines
	BashTailBytes      = proc.TailBytes
)

// DefaultLimits returns docs/tools.md's numbers.
func DefaultLimits() Limits {
	return Limits{
		ReadLines: ReadMaxLines, ReadBytes: ReadMaxBytes, ReadLineChars: ReadMaxLineChars,
		LsEntries:   LsDefaultLimit,
		GrepMatches: GrepDefaultLimit, GrepLineChars: GrepLineChars, GrepBytes: GrepMaxBytes,
		FindPaths:   FindDefaultLimit,
		BashTimeout: BashDefaultTimeout, BashMaxTimeout: BashMaxTimeout, BashLines: BashTailLines, BashBytes: BashTailBytes,
	}
}

// Bounds of a configured limit: below the minimum a notice or a header no
// longer fits; above the maximum one result could exhaust memory.
const (
	LimitMaxCount   = 100_000          // lines, entries, matches, paths, characters
	LimitMinBytes   = 4 * 1024         // a byte budget
	LimitMaxBytes   = 16 * 1024 * 1024 // a byte budget
	LimitMaxSeconds = 24 * 60 * 60     // a bash timeout
	ReadMinLines    = 4                // read's header, a line, and two notices
	BashMinLines    = 3                // bash's cut notice, a line, and the exit line
)

// limitField names one configurable limit: its setting name, where it
// lives, and its bounds.
type limitField struct {
	name     string
	field    func(*Limits) *int
	min, max int
	unit     string
}

// limitFields lists the settings in the order docs/protocol.md gives them.
func limitFields() []limitField {
	count := func(name string, f func(*Limits) *int) limitField {
		return limitField{name, f, 1, LimitMaxCount, ""}
	}
	// A result's lines hold its notices: read's a header, a line and two
	// notices; bash's a notice, a line and the exit line.
	lines := func(name string, least int, f func(*Limits) *int) limitField {
		return limitField{name, f, least, LimitMaxCount, ""}
	}
	bytes := func(name string, f func(*Limits) *int) limitField {
		return limitField{name, f, LimitMinBytes, LimitMaxBytes, " bytes"}
	}
	seconds := func(name string, f func(*Limits) *int) limitField {
		return limitField{name, f, 1, LimitMaxSeconds, " s"}
	}
	return []limitField{
		lines("readLines", ReadMinLines, func(l *Limits) *int { return &l.ReadLines }),
		bytes("readBytes", func(l *Limits) *int { return &l.ReadBytes }),
		count("readLineChars", func(l *Limits) *int { return &l.ReadLineChars }),
		count("lsEntries", func(l *Limits) *int { return &l.LsEntries }),
		count("grepMatches", func(l *Limits) *int { return &l.GrepMatches }),
		count("grepLineChars", func(l *Limits) *int { return &l.GrepLineChars }),
		bytes("grepBytes", func(l *Limits) *int { return &l.GrepBytes }),
		count("findPaths", func(l *Limits) *int { return &l.FindPaths }),
		seconds("bashTimeout", func(l *Limits) *int { return &l.BashTimeout }),
		seconds("bashMaxTimeout", func(l *Limits) *int { return &l.BashMaxTimeout }),
		lines("bashLines", BashMinLines, func(l *Limits) *int { return &l.BashLines }),
		bytes("bashBytes", func(l *Limits) *int { return &l.BashBytes }),
	}
}

// LimitNames returns the setting names Limits.With accepts.
func LimitNames() []string {
	var names []string
	for _, f := range limitFields() {
		names = append(names, f.name)
	}
	return names
}

// Settings returns l as a limits setting: setting name → value.
func (l Limits) Settings() map[string]int {
	l = l.WithDefaults()
	out := map[string]int{}
	for _, f := range limitFields() {
		out[f.name] = *f.field(&l)
	}
	return out
}

// With returns l changed by settings, a map from setting name (LimitNames)
// to value. Unknown names are warnings; a value that is not a whole number
// within its bounds, or a bash timeout above a maximum timeout set with it,
// is an error naming the setting and what to send.
func (l Limits) With(settings map[string]float64) (Limits, []string, error) {
	fields := limitFields()
	var warnings []string
	for _, name := range slices.Sorted(maps.Keys(settings)) {
		v := settings[name]
		i := slices.IndexFunc(fields, func(f limitField) bool { return f.name == name })
		if i < 0 && v < 0 {
			return l, nil, fmt.Errorf("limits.%s must be a non-negative number, got %v (and it is not a limit: use %s)", name, v, strings.Join(LimitNames(), ", "))
		}
		if i < 0 {
			warnings = append(warnings, fmt.Sprintf("limits.%s is not a limit (use %s); ignored", name, strings.Join(LimitNames(), ", ")))
			continue
		}
		f := fields[i]
		if v != math.Trunc(v) || v < float64(f.min) || v > float64(f.max) {
			return l, nil, fmt.Errorf("limits.%s must be a whole number from %d to %d%s, got %v", name, f.min, f.max, f.unit, v)
		}
		*f.field(&l) = int(v)
	}
	if l.BashTimeout > l.BashMaxTimeout {
		// The one set here wins: a maximum lowered below the default timeout
		// lowers the default with it, a default raised above the maximum
		// raises the maximum. Both set and at odds is a mistake to report.
		_, setTimeout := settings["bashTimeout"]
		_, setMax := settings["bashMaxTimeout"]
		switch {
		case setTimeout && setMax:
			return l, nil, fmt.Errorf("limits.bashTimeout (%d s) must not exceed limits.bashMaxTimeout (%d s)", l.BashTimeout, l.BashMaxTimeout)
		case setTimeout:
			l.BashMaxTimeout = l.BashTimeout
		default:
			l.BashTimeout = l.BashMaxTimeout
		}
	}
	return l, warnings, nil
}

// Apply returns l changed by a limits setting as decoded from JSON: an
// object of setting names, flat or grouped by tool (see flatten). Errors
// and warnings are With's.
func (l Limits) Apply(v any) (Limits, []string, error) {
	flat, err := flatten(v)
	if err != nil {
		return l, nil, err
	}
	return l.With(flat)
}

// flatten reads limits as {"readLines": 500} or, grouped by tool,
// {"read": {"lines": 500}}: both name the setting readLines.
func flatten(v any) (map[string]float64, error) {
	if arr, ok := v.([]any); ok && len(arr) == 0 {
		return nil, nil // [] is {} (Lua)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("limits must be an object like {\"readLines\": 500}, got %s", showJSON(v))
	}
	flat := map[string]float64{}
	for k, x := range m {
		switch x := x.(type) {
		case float64:
			flat[k] = x
		case map[string]any:
			for ik, iv := range x {
				f, ok := iv.(float64)
				if !ok || ik == "" {
					return nil, fmt.Errorf("limits.%s.%s must be a number, got %s", k, ik, showJSON(iv))
				}
				flat[k+strings.ToUpper(ik[:1])+ik[1:]] = f
			}
		default:
			return nil, fmt.Errorf("limits.%s must be a number, got %s", k, showJSON(x))
		}
	}
	return flat, nil
}

func showJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// WithDefaults fills zero fields with DefaultLimits, so a zero Limits (an
// Env built by a test or an embedder) means the defaults.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	for _, f := range limitFields() {
		if p := f.field(&l); *p <= 0 {
			*p = *f.field(&d)
		}
	}
	return l
}
