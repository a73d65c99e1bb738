package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// govern applies the rules every result obeys, in one place: secrets are
// masked in content and details, then text over the tool's byte budget is cut
// (masking first, so a cut never splits a secret into an unmaskable half),
// with the cut announced and the full text spilled when a Spiller is set.
func (x *Executor) govern(t *Tool, r Result) Result {
	// The common result has nothing to mask: the counts map and copies of
	// the details are made only when something was masked.
	var redactions map[string]int
	if prior, ok := r.Details["redactions"].(map[string]int); ok {
		redactions = AddCountsTo(redactions, prior) // masked by the tool itself (key lines)
	}
	for i, c := range r.Content {
		if c.Type == "text" {
			s, counts := x.mask(c.Text)
			r.Content[i].Text = s
			redactions = AddCountsTo(redactions, counts)
		}
	}
	if r.Details != nil && x.Masker != nil {
		md, changed := x.maskTree(r.Details, &redactions)
		if changed {
			r.Details = md.(map[string]any)
		}
	}
	if len(redactions) > 0 {
		r.SetDetail("redactions", redactions)
	}
	if t != nil {
		x.budget(t, &r)
	}
	if r.Content == nil {
		r.Content = []Content{}
	}
	return r
}

// AddCountsTo adds src to dst, making dst when it is nil and src is not
// empty, and returns dst.
func AddCountsTo(dst, src map[string]int) map[string]int {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = make(map[string]int, len(src))
	}
	addCounts(dst, src)
	return dst
}

// maskTree is maskValue copying only what masking changed: a map or slice
// is copied (whole, as maskValue would) only when something inside it was
// masked, so a result without secrets costs no allocation. A nil map or
// slice comes back empty, as maskValue returns it (it marshals to {} or [],
// not null). counts is
// made when a secret is found.
func (x *Executor) maskTree(v any, counts *map[string]int) (any, bool) {
	switch t := v.(type) {
	case string:
		s, c := x.Masker.Mask(t)
		if len(c) == 0 && s == t {
			return t, false
		}
		*counts = AddCountsTo(*counts, c)
		return s, true
	case map[string]any:
		var out map[string]any
		for k, e := range t {
			me, changed := x.maskTree(e, counts)
			if !changed {
				continue
			}
			if out == nil {
				out = make(map[string]any, len(t))
				for k2, e2 := range t {
					out[k2] = e2
				}
			}
			out[k] = me
		}
		if out == nil {
			if t == nil {
				return map[string]any{}, true
			}
			return t, false
		}
		return out, true
	case []any:
		return maskSlice(x, t, counts)
	case []string:
		return maskSlice(x, t, counts)
	}
	if g, ok := asJSONTree(v); ok {
		// A typed value (LSP TextEdits, diagnostics): masked in its JSON
		// form, which is what leaves the server.
		before := total(*counts)
		if mg, changed := x.maskTree(g, counts); changed && total(*counts) != before {
			return mg, true
		}
	}
	return v, false
}

// asJSONTree returns a struct, typed slice or typed map as the maps,
// slices and strings json.Unmarshal makes of it; ok is false for the
// values the maskers walk already and for scalars.
func asJSONTree(v any) (any, bool) {
	switch reflect.ValueOf(v).Kind() {
	case reflect.Struct, reflect.Slice, reflect.Array, reflect.Map, reflect.Pointer:
	default:
		return nil, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	var g any
	if json.Unmarshal(b, &g) != nil {
		return nil, false
	}
	return g, true
}

// maskSlice is maskTree for a slice: copied only when an element changed,
// and a nil slice comes back empty (see maskTree).
func maskSlice[E any](x *Executor, t []E, counts *map[string]int) (any, bool) {
	var out []E
	for i, e := range t {
		me, changed := x.maskTree(e, counts)
		if !changed {
			continue
		}
		if out == nil {
			out = append([]E(nil), t...)
		}
		out[i] = me.(E)
	}
	if out == nil {
		if t == nil {
			return []E{}, true
		}
		return t, false
	}
	return out, true
}

func total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

func addCounts(dst, src map[string]int) {
	for k, v := range src {
		dst[k] += v
	}
}

// MaskText is s with its secrets masked, for text that leaves the server
// outside a result (log messages).
func (x *Executor) MaskText(s string) string {
	m, _ := x.mask(s)
	return m
}

// MaskValue is v (maps, slices and strings, as decoded from JSON) with its
// secrets masked, for payloads that leave the server outside a result
// (a tools/confirm request's arguments and preview).
func (x *Executor) MaskValue(v any) any {
	m, _ := x.maskValue(v)
	return m
}

func (x *Executor) mask(s string) (string, map[string]int) {
	if x.Masker == nil || s == "" {
		return s, nil
	}
	return x.Masker.Mask(s)
}

func (x *Executor) maskValue(v any) (any, map[string]int) {
	if x.Masker == nil {
		return v, nil
	}
	counts := map[string]int{}
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case string:
			s, c := x.Masker.Mask(t)
			addCounts(counts, c)
			return s
		case map[string]any:
			out := make(map[string]any, len(t))
			for k, e := range t {
				out[k] = walk(e)
			}
			return out
		case []any:
			out := make([]any, len(t))
			for i, e := range t {
				out[i] = walk(e)
			}
			return out
		case []string:
			out := make([]string, len(t))
			for i, e := range t {
				out[i] = walk(e).(string)
			}
			return out
		}
		if g, ok := asJSONTree(v); ok {
			before := total(counts)
			if mg := walk(g); total(counts) != before {
				return mg
			}
		}
		return v
	}
	return walk(v), counts
}

// budget cuts the text content to the tool's MaxResultBytes (and to the
// host's ResultBytes and ResultLines) at a line boundary, keeping the head
// (or the tail for KeepTail tools). The notice is inside the budget: the
// result the model reads, notice included, is never over it.
func (x *Executor) budget(t *Tool, r *Result) {
	limit, maxLines := t.budget(), 0
	if x.Env != nil {
		l := x.Env.Limits()
		limit, maxLines = l.resultBytes(limit), l.ResultLines
	}
	total, lines, parts := 0, 0, 0
	for _, c := range r.Content {
		if c.Type == "text" {
			total += len(c.Text)
			lines += LineCount(c.Text)
			parts++
		}
	}
	// Parts are joined with a newline (TextOf, and hosts).
	if total+max(parts-1, 0) <= limit && (maxLines == 0 || lines <= maxLines) {
		return
	}
	// The text parts joined, each starting on a line of its own; nothing
	// added at the end, so the counts and the spill file are the tool's
	// text byte for byte (a single part).
	var full strings.Builder
	for _, c := range r.Content {
		if c.Type != "text" {
			continue
		}
		if full.Len() > 0 && !strings.HasSuffix(full.String(), "\n") {
			full.WriteByte('\n')
		}
		full.WriteString(c.Text)
	}
	text := full.String()
	totalLines := LineCount(text)
	spilled := ""
	if x.Spill != nil {
		if p, err := x.Spill.Save(t.Name, []byte(text)); err == nil {
			spilled = p
			r.SetDetail("spillPath", p)
		}
	}
	names := x.names()
	notice := func(from, to, shown int) string {
		n := fmt.Sprintf("[output cut to the %d-byte result budget of %s: showing lines %d-%d of %d (%d of %d bytes).", limit, names.Of(t.Name), from, to, totalLines, shown, len(text))
		if maxLines > 0 {
			n = fmt.Sprintf("[output cut to the result budget of %s (%d bytes, %d lines): showing lines %d-%d of %d (%d of %d bytes).", names.Of(t.Name), limit, maxLines, from, to, totalLines, shown, len(text))
		}
		if spilled != "" {
			// The call that gets what was cut: the lines after the head,
			// or the start for a kept tail.
			next := to + 1
			if t.KeepTail {
				next = 1
			}
			n += names.Sprintf(" Full output saved to %s; continue with {{read}} {\"path\": %q, \"offset\": %d}.", spilled, spilled, next)
		}
		return n + "]"
	}
	// Room for the longest notice these numbers can make, and its line.
	room := max(limit-len(notice(totalLines, totalLines, len(text)))-1, 0)
	lineRoom := maxLines - 1
	var shown string
	var from, to int
	if t.KeepTail {
		cut := len(text) - room
		for cut < len(text) && (cut > 0 && text[cut-1] != '\n') {
			cut++
		}
		if maxLines > 0 {
			// At most lineRoom lines: start after the lineRoom-th newline
			// from the end (a final newline ends the last line).
			nl, end := 0, len(text)
			if strings.HasSuffix(text, "\n") {
				end--
			}
			for i := end - 1; i >= cut; i-- {
				if text[i] == '\n' {
					if nl++; nl == lineRoom {
						cut = i + 1
						break
					}
				}
			}
		}
		shown = text[cut:]
		from = strings.Count(text[:cut], "\n") + 1
		to = totalLines
	} else {
		cut := min(room, len(text))
		for cut > 0 && text[cut-1] != '\n' {
			cut--
		}
		if cut == 0 { // one enormous line: cut inside it, on a rune boundary
			cut = room
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
		}
		if maxLines > 0 {
			nl := 0
			for i := 0; i < cut; i++ {
				if text[i] == '\n' {
					if nl++; nl == lineRoom {
						cut = i + 1
						break
					}
				}
			}
		}
		shown = text[:cut]
		from, to = 1, max(strings.Count(shown, "\n"), 1)
	}
	var parts2 []Content
	if t.KeepTail {
		parts2 = append(parts2, Content{Type: "text", Text: notice(from, to, len(shown)) + "\n" + strings.TrimRight(shown, "\n")})
	} else {
		parts2 = append(parts2, Content{Type: "text", Text: shown + notice(from, to, len(shown))})
	}
	for _, c := range r.Content {
		if c.Type != "text" {
			parts2 = append(parts2, c)
		}
	}
	r.Content = parts2
	r.SetDetail("truncated", map[string]any{"budget": limit, "totalBytes": len(text), "shownBytes": len(shown)})
}

// LineCount is the number of lines of s: its newlines, and an unterminated
// last line.
func LineCount[T string | []byte](s T) int {
	n := 0
	for i := range len(s) {
		if s[i] == '\n' {
			n++
		}
	}
	if len(s) > 0 && s[len(s)-1] != '\n' {
		n++
	}
	return n
}
