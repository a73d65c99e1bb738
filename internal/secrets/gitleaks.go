package secrets

import "strings"

// Window sizes around a keyword for a rule not run anchored. It runs on
// the keyword's line, with the next when that line ends in an operator or
// a tag and the previous when that one does (an XML element or a YAML
// block value continues on the next line); a wide rule, one that can
// match across lines (a Kubernetes Secret's kind: and data:), on
// wideLinesBefore lines before and wideLinesAfter after, at most
// wideBytes each way.
const (
	wideLinesBefore = 6
	wideLinesAfter  = 24
	wideBytes       = 2048
)

// find appends the spans of the secrets gitleaks' rules find in s. One
// pass of the keyword matcher finds where keywords occur; a rule runs only
// there: anchored at the keyword when its matches start with one, else on
// a window around it (see the constants above, narrow, required
// literals). Entropy thresholds and allowlists (the global one too) are
// honoured as gitleaks does, and only the secret group is masked. Spans
// come out in no particular order.
func (rs *ruleSet) find(s string, out []span) []span {
	if rs == nil {
		return out
	}
	var done [maxRules]int // per rule: where its last window ended
	ls, le := 0, -1        // the line last asked for, [ls, le]
	for p, b := rs.kw.next(s, 0); p >= 0; p, b = rs.kw.next(s, p+1) {
		for wi := range b.words {
			w := &b.words[wi]
			if !hasPrefixFold(s[p:], w.word) {
				continue
			}
			ks, ke := p, p+len(w.word)
			if ke-1 < ls || ke-1 > le {
				ls, le = lineBounds(s, ke-1)
			}
			for _, id := range w.rules {
				out = rs.findAt(id, s, ks, ke, ls, le, &done, out)
			}
		}
	}
	return out
}

// findAt runs rule id for its keyword at s[ks:ke], on the line s[ls:le],
// unless an earlier window of the rule covered it (done).
func (rs *ruleSet) findAt(id uint16, s string, ks, ke, ls, le int, done *[maxRules]int, out []span) []span {
	if ke <= done[id] {
		return out
	}
	r := rs.rules[id].get()
	if r.anchored != nil {
		// Every match starts with a keyword: try where this one starts.
		// An anchored regexp stops where its match can go no further,
		// so it may be given the rest of the text: a bounded one its
		// width and a byte (so that its $ cannot match at the cut), a
		// wide one everything, others the line (and the next when an
		// operator ends the line).
		if ks < done[id] {
			return out
		}
		end := le
		switch {
		case r.width > 0:
			end = min(len(s), ks+r.width+1)
		case r.wide:
			end = len(s)
		case le < len(s) && continuesOnNextLine(s, ls, le):
			_, end = lineBounds(s, le+1)
		}
		var e int
		if out, e = rs.matchAt(r, kRuleBase+kind(id), s, ks, end, out); e > ks {
			done[id] = e
		}
		return out
	}
	ws, we := ls, le
	if r.wide {
		ws, we = widen(s, ws, we)
	} else {
		if continuesOnNextLine(s, ws, we) && we < len(s) {
			_, we = lineBounds(s, we+1)
		}
		if ws > 0 {
			if ps, pe := lineBounds(s, ws-1); continuesOnNextLine(s, ps, pe) {
				ws = ps
			}
		}
	}
	if r.width > 0 && !r.wide {
		ws, we = narrow(s, ws, we, ks, ke, r.width)
	}
	ws = max(ws, done[id])
	done[id] = we
	if !hasAllFold(s[ws:we], r.required) {
		return out
	}
	return rs.match(r, kRuleBase+kind(id), s, ws, we, out)
}

// match runs r on s[ws:we] and appends the secrets it accepts.
func (rs *ruleSet) match(r *rule, k kind, s string, ws, we int, out []span) []span {
	for _, loc := range r.re.FindAllStringSubmatchIndex(s[ws:we], -1) {
		out = rs.accept(r, k, s, ws, loc, out)
	}
	return out
}

// matchAt runs r's anchored regexp at s[ks:], where one of its keywords
// starts (every match of r starts with one), up to we. It returns the end
// of the match, or ks when there is none.
func (rs *ruleSet) matchAt(r *rule, k kind, s string, ks, we int, out []span) ([]span, int) {
	if r.wordStart && ks > 0 && isWordByte(s[ks-1]) {
		return out, ks // the regexp's leading \b fails here
	}
	loc := r.anchored.FindStringSubmatchIndex(s[ks:we])
	if loc == nil {
		return out, ks
	}
	return rs.accept(r, k, s, ks, loc, out), ks + loc[1]
}

// accept appends the secret of the match loc (offsets into s[ws:]) unless
// its entropy is too low, an allowlist lets it through, or it is text
// masked before.
func (rs *ruleSet) accept(r *rule, k kind, s string, ws int, loc []int, out []span) []span {
	w := s[ws:]
	// The secret group: the one configured, or the first non-empty
	// (gitleaks' choice), or the whole match when the groups are named
	// parts of it (jwt-base64's header fields).
	gs, ge := loc[0], loc[1]
	if g := r.secretGroup; g > 0 {
		if 2*g+1 >= len(loc) || loc[2*g] < 0 {
			return out
		}
		gs, ge = loc[2*g], loc[2*g+1]
	} else if !r.namedGroups {
		for g := 1; 2*g+1 < len(loc); g++ {
			if loc[2*g] >= 0 && loc[2*g+1] > loc[2*g] {
				gs, ge = loc[2*g], loc[2*g+1]
				break
			}
		}
	}
	// gitleaks trims line breaks off a match (a group ending in \s).
	for ge > gs && (w[ge-1] == '\n' || w[ge-1] == '\r') {
		ge--
	}
	for gs < ge && (w[gs] == '\n' || w[gs] == '\r') {
		gs++
	}
	secret := w[gs:ge]
	if secret == "" || r.entropy != 0 && shannonEntropy(secret) <= r.entropy {
		return out
	}
	match := strings.Trim(w[loc[0]:loc[1]], "\n")
	ls, _ := lineBounds(s, ws+loc[0])
	_, le := lineBounds(s, ws+max(loc[0], loc[1]-1))
	line := s[ls:le]
	// A match holding a marker is text masked before: masking twice
	// must change nothing.
	// The rule's own allowlist first: it is short and names the common
	// placeholders (AWS's EXAMPLE keys); the global one has many regexps.
	if allowed(r.allow, secret, match, line) || rs.global.allows(secret, match, line) ||
		strings.Contains(match, "[REDACTED:") || insideMarker(s, ws+gs, ws+ge) {
		return out
	}
	// A quoted secret group ("…" in hashicorp-tf-password) keeps its
	// quotes, as this package's own rules do.
	if ge-gs >= 2 && (w[gs] == '"' || w[gs] == '\'') && w[ge-1] == w[gs] {
		gs, ge = gs+1, ge-1
	}
	return append(out, span{ws + gs, ws + ge, k})
}

func isWordByte(c byte) bool { return isLower(c) || isUpper(c) || isDigit(c) || c == '_' }

func allowed(lists []allowlist, secret, match, line string) bool {
	for i := range lists {
		if lists[i].allows(secret, match, line) {
			return true
		}
	}
	return false
}

// insideMarker reports whether s[a:b] lies inside a "[REDACTED:<kind>]"
// marker, so that masking twice changes nothing.
func insideMarker(s string, a, b int) bool {
	i := strings.LastIndex(s[max(0, a-maxMarkerLen):a+1], "[REDACTED:")
	if i < 0 {
		return false
	}
	i += max(0, a-maxMarkerLen)
	j := strings.IndexByte(s[i:], ']')
	return j >= 0 && i+j >= b-1
}

// maxMarkerLen bounds the length of a "[REDACTED:<kind>]" marker.
const maxMarkerLen = 80

// lineBounds returns the start and end (before the newline) of the line
// holding s[i].
func lineBounds(s string, i int) (int, int) {
	a := strings.LastIndexByte(s[:i], '\n') + 1
	e := strings.IndexByte(s[i:], '\n')
	if e < 0 {
		return a, len(s)
	}
	return a, i + e
}

// widen extends the line s[a:b] by wideLinesBefore lines before and
// wideLinesAfter after, within wideBytes each way.
func widen(s string, a, b int) (int, int) {
	lo := max(0, a-wideBytes)
	for n := 0; n < wideLinesBefore && a > lo; n++ {
		a = strings.LastIndexByte(s[lo:a-1], '\n') + 1 + lo
		if a == lo {
			break
		}
	}
	hi := min(len(s), b+wideBytes)
	for n := 0; n < wideLinesAfter && b < hi; n++ {
		e := strings.IndexByte(s[b+1:hi], '\n')
		if e < 0 {
			b = hi
			break
		}
		b += 1 + e
	}
	return a, b
}

// narrow cuts the window s[ws:we] down to width bytes either side of
// the keyword s[ks:ke], widened to the blanks around, so that the cut
// never falls inside a word: the regexp's \b, ^ and $ see what they
// would see in the whole line.
func narrow(s string, ws, we, ks, ke, width int) (int, int) {
	a, b := max(ws, ks-width), min(we, ke+width)
	for a > ws && s[a-1] != ' ' && s[a-1] != '\t' {
		a--
	}
	for b < we && s[b] != ' ' && s[b] != '\t' {
		b++
	}
	return a, b
}

// continuesOnNextLine reports whether the line s[a:b] ends in an operator
// or an opening tag, so its value may be on the next line.
func continuesOnNextLine(s string, a, b int) bool {
	for b > a && (s[b-1] == ' ' || s[b-1] == '\t' || s[b-1] == '\r') {
		b--
	}
	return b > a && strings.IndexByte(">=:|", s[b-1]) >= 0
}
