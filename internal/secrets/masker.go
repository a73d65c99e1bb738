package secrets

import (
	"slices"
	"strings"
)

// Masker finds and replaces secrets in text. It is immutable after New and
// safe for concurrent use.
type Masker struct {
	cls   *classes
	rules *ruleSet // gitleaks' rules, shared by every Masker
	// envValues are the server's secret environment values, longest first
	// so that a value containing another is masked whole.
	envValues []string
}

// New builds a Masker. env is the server's environment in os.Environ form
// ("K=V"); the value of every variable whose name looks secret (see
// envNameIsSecret) and that is at least MinEnvValueLen bytes long, not a
// placeholder, a number, a path or a URL, is masked wherever it appears.
func New(env []string) *Masker {
	m := &Masker{cls: newClasses(), rules: gitleaksRules()}
	seen := map[string]bool{}
	for _, kv := range env {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || !envNameIsSecret(name) || !envValueMaskable(v) || seen[v] {
			continue
		}
		seen[v] = true
		m.envValues = append(m.envValues, v)
	}
	slices.SortFunc(m.envValues, func(a, b string) int { return len(b) - len(a) })
	return m
}

// envValueMaskable rejects environment values that would mask ordinary
// text: short ones, placeholders, numbers, booleans, file paths, URLs, and
// anything that occurs inside our own "[REDACTED:<kind>]" markers.
func envValueMaskable(v string) bool {
	if len(v) < MinEnvValueLen || isPlaceholder(v) || numberLiteral(v) || strings.Contains(v, "://") {
		return false
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "./") {
		path := true
		for i := 0; i < len(v) && path; i++ {
			c := v[i]
			path = isLower(c) || isUpper(c) || isDigit(c) || strings.IndexByte("._/-~", c) >= 0
		}
		if path {
			return false
		}
	}
	for k := kEnvValue; k <= kPrivateKey; k++ {
		if strings.Contains(k.marker(), v) {
			return false
		}
	}
	for _, r := range gitleaksRules().rules {
		if strings.Contains(r.id, v) {
			return false
		}
	}
	return true
}

// Mask returns s with every secret replaced by "[REDACTED:<kind>]" and the
// number of secrets per kind. When nothing matched it returns s itself and
// a nil map, without allocating.
func (m *Masker) Mask(s string) (string, map[string]int) {
	var buf [16]span
	spans := m.scan(s, buf[:0])
	n := len(spans)
	spans = m.rules.find(s, spans)
	for _, v := range m.envValues {
		for i := 0; ; {
			j := strings.Index(s[i:], v)
			if j < 0 {
				break
			}
			spans = append(spans, span{i + j, i + j + len(v), kEnvValue})
			i += j + len(v)
		}
	}
	if len(spans) == 0 {
		return s, nil
	}
	// scan's spans are in order, but for a key's tail (pemTail), which
	// starts before the words scan has passed.
	if len(spans) > n || !slices.IsSortedFunc(spans, func(x, y span) int { return x.start - y.start }) {
		slices.SortFunc(spans, func(x, y span) int {
			if x.start != y.start {
				return x.start - y.start
			}
			return y.end - x.end
		})
	}
	// Merge overlaps; the merged span keeps the most specific kind.
	w := 0
	for _, sp := range spans {
		if w > 0 && sp.start < spans[w-1].end {
			last := &spans[w-1]
			last.end = max(last.end, sp.end)
			if sp.kind.rank() > last.kind.rank() {
				last.kind = sp.kind
			}
			continue
		}
		spans[w] = sp
		w++
	}
	spans = spans[:w]

	counts := make(map[string]int, 2)
	var b strings.Builder
	b.Grow(len(s) + 24*len(spans))
	prev := 0
	for _, sp := range spans {
		b.WriteString(s[prev:sp.start])
		b.WriteString("[REDACTED:")
		b.WriteString(sp.kind.String())
		b.WriteByte(']')
		counts[sp.kind.String()]++
		prev = sp.end
	}
	b.WriteString(s[prev:])
	return b.String(), counts
}

// scan is the single pass over s. It splits s into words of [A-Za-z0-9_.-]
// and looks at each word's first byte (token prefixes, PEM headers), at what
// follows it ("://" for URL credentials, "=" or ":" for assignments), and
// only then runs a rule, so text without candidates costs one table lookup
// per byte. The distinctive token prefixes are also searched for inside a
// word (glued), but only in a word long enough to hold one and holding its
// bytes (the ORed classes tell). Spans come out sorted by start; a glued
// token inside another token's body overlaps it, and Mask merges them.
func (m *Masker) scan(s string, out []span) []span {
	cls := m.cls
	n := len(s)
	for i := 0; i < n; {
		if cls[s[i]]&cRun == 0 {
			i++
			continue
		}
		a := i
		var seen uint16 // the classes of the word's bytes, ORed
		for i < n {
			c := cls[s[i]]
			if c&cRun == 0 {
				break
			}
			seen |= c
			i++
		}
		// Inside JSON-encoded text a word may follow an escape: "\n-----BEGIN".
		if a > 0 && s[a-1] == '\\' && i-a > 1 && (s[a] == 'n' || s[a] == 'r' || s[a] == 't') {
			a++
		}
		sp, ok := m.matchToken(s, a, i)
		// In URL-encoded text a word may follow an escape: "token%3DAKIA…".
		if !ok && a > 0 && s[a-1] == '%' && i-a > 2 && isHex(s[a]) && isHex(s[a+1]) {
			sp, ok = m.matchToken(s, a+2, i)
		}
		if ok {
			out = append(out, sp)
		}
		if seen&cSigAny != 0 {
			from := a + 1
			if ok {
				from = sp.end
			}
			if i-from >= minGluedToken {
				out = m.glued(s, from, i, seen, out)
			}
		}
		if ok {
			i = max(i, sp.end)
			continue
		}
		if i == n {
			break
		}
		switch s[i] {
		case ':':
			if i+2 < n && s[i+1] == '/' && s[i+2] == '/' {
				if sp, ok := m.matchURL(s, a, i); ok {
					out = append(out, sp)
					i = sp.end
				}
				continue
			}
			if sp, ok := m.matchPgpass(s, a, i); ok {
				out = append(out, sp)
				i = sp.end
				continue
			}
		case '=', '"', '\'', ' ', '\t':
		default:
			continue
		}
		if sp, ok := m.matchAssignment(s, a, i); ok {
			out = append(out, sp)
			i = max(i, sp.end)
		}
	}
	return out
}

// matchURL masks the password of scheme://user:password@host; s[a:b] is the
// scheme and s[b:] starts with "://".
func (m *Masker) matchURL(s string, a, b int) (span, bool) {
	if !isLower(lowerByte(s[a])) || strings.IndexByte(s[a:b], '_') >= 0 {
		return span{}, false
	}
	colon, at := -1, -1
	k := b + 3
	for ; k < len(s); k++ {
		c := s[k]
		if c <= ' ' || strings.IndexByte("/?#\"'`<>\\", c) >= 0 {
			break
		}
		if c == ':' && colon < 0 {
			colon = k
		}
		if c == '@' {
			at = k
		}
	}
	if colon < 0 || at < colon || at+1 >= k {
		return span{}, false
	}
	pw := s[colon+1 : at]
	if strings.Contains(s[b+3:at], "[REDACTED:") {
		return span{}, false // masked already
	}
	if isPlaceholder(pw) || eqFold(pw, "pass") || eqFold(pw, "pwd") {
		return span{}, false
	}
	return span{colon + 1, at, kURLCredentials}, true
}

// matchPgpass masks the password of a .pgpass line,
// host:port:database:user:password, where s[a:b] is the host, a word
// with a letter at the start of its line, and s[b] is ':'. The port is
// digits or *, the database and user fields are not empty and hold no
// blank, and the password runs to the end of the line without a blank.
func (m *Masker) matchPgpass(s string, a, b int) (span, bool) {
	if a > 0 && s[a-1] != '\n' || !strings.ContainsFunc(s[a:b], func(r rune) bool { return isLower(lowerByte(byte(r))) }) {
		return span{}, false
	}
	p := b + 1
	q := p
	for q < len(s) && isDigit(s[q]) {
		q++
	}
	if q == p && q < len(s) && s[q] == '*' {
		q++
	}
	if q == p || q >= len(s) || s[q] != ':' {
		return span{}, false
	}
	for field := 0; field < 2; field++ { // database, user
		p = q + 1
		q = p
		for q < len(s) && s[q] != ':' && m.cls[s[q]]&cBlank == 0 {
			q++
		}
		if q == p || q >= len(s) || s[q] != ':' {
			return span{}, false
		}
	}
	p = q + 1
	e := p
	for e < len(s) && m.cls[s[e]]&cBlank == 0 {
		e++
	}
	if e < len(s) && s[e] != '\n' && s[e] != '\r' {
		return span{}, false // more on the line: not a .pgpass entry
	}
	pw := s[p:e]
	if len(pw) < MinAssignmentValueLen || isPlaceholder(pw) || nameLike(pw) && !hasDigit(pw) {
		return span{}, false // a name, as in "web:8080:GET:/api:handler"
	}
	return span{p, e, kPgpass}, true
}

// Assignment operators.
const (
	opEq      = iota + 1 // =
	opColon              // :
	opColonEq            // :=
	opArrow              // =>
)

// matchAssignment handles `KEY=value`, `KEY: value`, `export KEY="value"`,
// `"key": "value"`, `key := "value"` (also Make's ?=, ::=, :::= and PHP's
// .=) where s[a:b] is KEY. Only the value is
// masked. Quoted values are literal; unquoted ones must not look like code
// (a call, an index, a dotted reference, an identifier in a code-like line).
func (m *Masker) matchAssignment(s string, a, b int) (span, bool) {
	n := len(s)
	j := b
	if j < n && (s[j] == '"' || s[j] == '\'') {
		j++ // closing quote of a quoted key
	}
	k := skipBlanks(s, j)
	spacedBefore := k > j
	if k >= n {
		return span{}, false
	}
	var op int
	switch s[k] {
	case '=':
		switch {
		case k+1 < n && s[k+1] == '>':
			op, k = opArrow, k+2
		case k+1 < n && (s[k+1] == '=' || s[k+1] == '~'):
			return span{}, false
		default:
			op, k = opEq, k+1
		}
	case ':':
		switch {
		case k+1 < n && s[k+1] == '=':
			op, k = opColonEq, k+2
		case strings.HasPrefix(s[k:], "::="):
			op, k = opColonEq, k+3 // Make's ::=
		case strings.HasPrefix(s[k:], ":::="):
			op, k = opColonEq, k+4 // and :::=
		case k+1 < n && s[k+1] == ':':
			return span{}, false
		default:
			op, k = opColon, k+1
		}
	case '?', '.':
		if k+1 >= n || s[k+1] != '=' {
			return span{}, false
		}
		op, k = opColonEq, k+2 // Make's ?=, PHP's .=
	default:
		return span{}, false
	}
	class := classifyKey(s[a:b])
	if class == keyPlain {
		return span{}, false
	}
	v := skipBlanks(s, k)
	if v >= n {
		return span{}, false
	}
	if class == keyAuthorization {
		return m.matchAuthValue(s, v)
	}

	envLine := lineStart(s, a)
	var vs, ve, next int // value span, and where the value's syntax ends
	quoted := false
	switch q := s[v]; q {
	case '"', '\'', '`':
		e := v + 1
		for e < n && s[e] != q && s[e] != '\n' {
			if s[e] == '\\' {
				e++
			}
			e++
		}
		if e >= n || s[e] != q {
			return span{}, false
		}
		vs, ve, next, quoted = v+1, e, e+1, true
	default:
		if op == opArrow {
			return span{}, false
		}
		// On a line of its own (.env, YAML, INI) the value runs to the next
		// blank; inline it also stops at punctuation that ends an argument.
		stop := uint16(cStop)
		if envLine {
			stop = cBlank
		}
		e := v
		for e < n && m.cls[s[e]]&stop == 0 {
			e++
		}
		if i := strings.IndexAny(s[v:min(e+1, n)], "([{"); i >= 0 {
			return span{}, false // a call, an index, a composite literal
		}
		vs, ve, next = v, e, e
	}
	val := s[vs:ve]

	if class == keyAWSSecret {
		if e := m.run(s, vs, ve, cB64); e-vs == awsSecretLen && e == ve {
			return span{vs, ve, kAWSSecret}, true
		}
	}
	if len(val) < MinAssignmentValueLen || isPlaceholder(val) || numberLiteral(val) ||
		strings.Contains(val, "://") || strings.ContainsAny(val, " \t") ||
		shannonEntropy(val) < MinAssignmentEntropy {
		return span{}, false
	}
	if quoted {
		// A literal that reads as a word or a name, not as a secret:
		// "source", "encryptionKey1024", "X-Auth-Token", "GO_TEST_ENV",
		// "^3.1.0", "\u3299".
		if allLetters(val) || nameLike(val) && (constName(val) ||
			hasSecretFragment(val) && (!hasDigit(val) || len(val) <= maxKeyLen/2 && hasCamel(val) && fewRuns(val))) ||
			val[0] == '\\' || (val[0] == '^' || val[0] == '~') && len(val) > 1 && isDigit(val[1]) {
			return span{}, false
		}
	} else {
		bareEq := op == opEq && !spacedBefore
		switch {
		case !envLine && !bareEq:
			// `x: y` or `x = y` inside a line is code or prose; only
			// `--password=...` and `?token=...&` count there.
			return span{}, false
		case !bareEq && !restIsComment(s, next):
			// Only `KEY=value` may be followed by more (a command).
			return span{}, false
		case strings.ContainsAny(val, "\\") || strings.IndexByte("&*!", val[0]) >= 0 ||
			val[len(val)-1] == ',' || val[len(val)-1] == ';':
			return span{}, false // escapes, &x, *p, !ok, a trailing comma: code
		}
		if nameLike(val) && !hasDigit(val) && (!envLine || hasSecretFragment(val)) {
			// A name, not a generated secret: `--mode=always-on`,
			// `git-credential-x: git-credential-x.o`.
			return span{}, false
		}
		if m.identLike(val) {
			if codeRef(val) {
				return span{}, false
			}
			if !(envLine && bareEq || envLine && op == opColon) && !hasDigit(val) {
				return span{}, false
			}
		}
	}
	k2 := kEnvAssignment
	if sp, ok := m.matchToken(s, vs, ve); ok && sp.start == vs {
		k2 = sp.kind
	}
	return span{vs, ve, k2}, true
}

// matchAuthValue masks the credential of `Authorization: Bearer <cred>`
// (also Basic, Token, Bot); s[v:] is the header value, maybe quoted.
func (m *Masker) matchAuthValue(s string, v int) (span, bool) {
	if s[v] == '"' || s[v] == '\'' {
		v++
	}
	e := v
	for e < len(s) && (isLower(s[e]) || isUpper(s[e])) {
		e++
	}
	scheme := s[v:e]
	if !eqFold(scheme, "bearer") && !eqFold(scheme, "basic") && !eqFold(scheme, "token") && !eqFold(scheme, "bot") {
		return span{}, false
	}
	cs := skipBlanks(s, e)
	if cs == e {
		return span{}, false
	}
	ce := cs
	for ce < len(s) && (m.cls[s[ce]]&(cB64|cRun) != 0 || s[ce] == '~') {
		ce++
	}
	if ce-cs < MinAuthHeaderValueLen || isPlaceholder(s[cs:ce]) {
		return span{}, false
	}
	k := kAuthHeader
	if sp, ok := m.matchToken(s, cs, ce); ok && sp.start == cs {
		k = sp.kind
	}
	return span{cs, ce, k}, true
}

// identLike reports values made only of identifier characters and dots.
func (m *Masker) identLike(v string) bool {
	for i := 0; i < len(v); i++ {
		if m.cls[v[i]]&cIdent == 0 {
			return false
		}
	}
	return true
}

// codeRef reports identifier-like values that read as references in code
// rather than literal secrets: dotted paths (cfg.Token, process.env.KEY),
// and, unless they hold a digit as generated secrets nearly always do,
// camelCase names (accessToken) and names with a secret word (db_pass).
func codeRef(v string) bool {
	if strings.IndexByte(v, '.') >= 0 && !isDigit(v[0]) {
		return true
	}
	if hasDigit(v) {
		return false
	}
	return hasCamel(v) || hasSecretFragment(v)
}

// hasCamel reports a lower-to-upper case boundary (accessToken).
func hasCamel(v string) bool {
	for i := 1; i < len(v); i++ {
		if isLower(v[i-1]) && isUpper(v[i]) {
			return true
		}
	}
	return false
}

// fewRuns reports a camelCase name with digits (encryptionKey1024,
// oauth2Token) rather than a random mix: one run of digits at most and
// few humps. A generated "a8Kd93Lq0ZxPw7Vb2Nm4" has many of both, and
// a secret fragment ("Pw") is there by chance.
func fewRuns(v string) bool {
	digitRuns, humps := 0, 0
	for i := 0; i < len(v); i++ {
		if isDigit(v[i]) && (i == 0 || !isDigit(v[i-1])) {
			digitRuns++
		}
		if i > 0 && isLower(v[i-1]) && isUpper(v[i]) {
			humps++
		}
	}
	return digitRuns <= 1 && humps <= 3
}

// lineStart reports whether only blanks, "export " or a YAML "- " precede
// s[a] on its line (the key may be quoted).
func lineStart(s string, a int) bool {
	i := a
	if i > 0 && (s[i-1] == '"' || s[i-1] == '\'') {
		i--
	}
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	if i >= 6 && s[i-6:i] == "export" {
		i -= 6
		for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
			i--
		}
	} else if i > 0 && s[i-1] == '-' {
		i--
		for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
			i--
		}
	}
	return i == 0 || s[i-1] == '\n'
}

// restIsComment reports whether s[i:] up to the end of line is blank or a
// comment.
func restIsComment(s string, i int) bool {
	i = skipBlanks(s, i)
	return i >= len(s) || s[i] == '\n' || s[i] == '\r' || s[i] == '#'
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// numberLiteral reports decimal, hex, octal and binary literals (12_000,
// -0x3f87, 1.5e9): constants, not secrets.
func numberLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	digits := "0123456789._eE"
	if len(s) > 2 && s[0] == '0' && strings.IndexByte("xXoObB", s[1]) >= 0 {
		s, digits = s[2:], "0123456789abcdefABCDEF_"
	} else if s == "" || !isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(digits, s[i]) < 0 {
			return false
		}
	}
	return true
}

// nameLike reports values made of name characters: letters, digits and
// _ . : -.
func nameLike(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isLower(c) && !isUpper(c) && !isDigit(c) && strings.IndexByte("_.:-", c) < 0 {
			return false
		}
	}
	return true
}

// constName reports UPPER_SNAKE names (an environment variable's name).
func constName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isUpper(s[i]) && !isDigit(s[i]) && s[i] != '_' {
			return false
		}
	}
	return strings.IndexByte(s, '_') >= 0
}

// allLetters reports values made only of letters: a word or a name.
func allLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLower(s[i]) && !isUpper(s[i]) {
			return false
		}
	}
	return true
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return true
		}
	}
	return false
}
