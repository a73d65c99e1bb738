package secrets

import (
	"slices"
	"strings"
)

// span is one secret found in the text: s[start:end] is replaced.
type span struct {
	start, end int
	kind       kind
}

// Token formats. Lengths are those of the issued formats (with some slack
// where providers have changed them), not tunables.
const (
	awsKeyLen        = 20 // AKIA + 16
	awsSecretLen     = 40
	ghClassicMinBody = 30 // ghp_ + 36 today
	ghFineMinBody    = 22 // github_pat_ + 22 + _ + 59 today
	glpatMinBody     = 20
	slackMinBody     = 10
	skMinBody        = 20
	stripeMinBody    = 16
	googleBody       = 35 // AIza + 35
	jwtMinSegment    = 10
	pemMinRun        = 40 // a PEM body has lines of 64 (70 for OpenSSH) base64 chars
	pemMaxLabel      = 64
)

// minGluedToken is the shortest token glued searches for: "xoxb-" and a
// Slack body.
const minGluedToken = len("xoxb-") + slackMinBody

// cSigAny gates glued: every glued prefix holds one of these bytes.
const cSigAny = cSigG | cSigX | cSigI

// gluedPrefix is a token prefix searched for inside a word: needle is found
// with strings.Index once the word holds every byte of sig.
type gluedPrefix struct {
	needle string
	sig    uint16
}

// glued finds tokens that start inside the word s[a:b] rather than at its
// first byte: "id_ghp_…", "token%3Dghp_…", "deploy_nope_xoxb-…". Only prefixes
// whose own shape makes them unambiguous are searched for, so that masking
// them mid-word cannot hit ordinary identifiers:
//
//   - gh[pousr]_ and github_pat_, glpat-, xox[abprs]-: an odd letter
//     sequence fused to "_" or "-" followed by a long random body; no word
//     or identifier segment reads that way.
//   - AIza: mixed case no word has, and a body of exactly googleBody bytes.
//
// Left to word starts (matchToken), because there the boundary is what
// tells a token from ordinary text:
//
//   - sk-, sk-ant-, and sk_/rk_/pk_ (Stripe): "sk" ends common words (task,
//     disk, risk, mask), so kebab and snake names like "task-ant-…" or
//     "disk_test_…" would be masked.
//   - AKIA/ASIA: upper-case letters inside an upper-case run (a base32
//     secret, a constant, "FANTASIA…") say nothing; a key ends a word.
//   - eyJ (JWT): three base64 bytes that any base64 blob may hold.
//   - -----BEGIN: a PEM header starts a line.
//
// The tokens left to word starts are still found after a URL escape
// ("%3DAKIA…", see scan). Found spans are appended in order of position.
func (m *Masker) glued(s string, a, b int, seen uint16, out []span) []span {
	first := len(out)
	for _, g := range [...]gluedPrefix{
		{"gh", cSigG | cSigH | cSigUS},
		{"github_pat_", cSigG | cSigH | cSigUS},
		{"glpat-", cSigG | cSigDash},
		{"xox", cSigX | cSigDash},
		{"AIza", cSigI | cSigZ},
	} {
		if seen&g.sig != g.sig {
			continue
		}
		for i := a; i < b; {
			j := strings.Index(s[i:b], g.needle)
			if j < 0 {
				break
			}
			i += j
			// matchToken tries every rule of the prefix's first byte; each
			// needle starts only the glued kinds.
			if sp, ok := m.matchToken(s, i, b); ok {
				out = append(out, sp)
				i = sp.end
			} else {
				i++
			}
		}
	}
	if len(out)-first > 1 {
		slices.SortFunc(out[first:], func(x, y span) int { return x.start - y.start })
	}
	return out
}

// matchToken recognises a provider token that starts at s[a], the first byte
// of a scanner word s[a:b]. The match may end before b (a sentence's final
// period) or, for a PEM block, far after it. A token whose body is a
// placeholder (ghp_xxxx…, AIzaaaaa…, AKIAXXXX…) is not one.
func (m *Masker) matchToken(s string, a, b int) (span, bool) {
	sp, ok := m.matchTokenShape(s, a, b)
	if ok && sp.kind != kPrivateKey && sp.kind != kJWT && placeholderToken(s[sp.start:sp.end]) {
		return span{}, false
	}
	return sp, ok
}

// placeholderRun is the shortest run of one repeated byte that makes a
// token a placeholder; a random body of 40 bytes has a run of 3 at most
// but once in about 4000.
const placeholderRun = 8

// placeholderToken reports token-shaped text holding xxxx or a long run of
// one byte.
func placeholderToken(tok string) bool {
	if hasFold(tok, "xxxx") {
		return true
	}
	run := 1
	for i := 1; i < len(tok); i++ {
		if tok[i] == tok[i-1] {
			if run++; run >= placeholderRun {
				return true
			}
		} else {
			run = 1
		}
	}
	return false
}

// matchTokenShape is matchToken without the placeholder check.
func (m *Masker) matchTokenShape(s string, a, b int) (span, bool) {
	if b-a == 8 && s[a:b] == "-----END" {
		return m.pemTail(s, a)
	}
	if b-a < 10 {
		return span{}, false
	}
	w := s[a:b]
	switch w[0] {
	case 'A':
		if strings.HasPrefix(w, "AKIA") || strings.HasPrefix(w, "ASIA") {
			e := a + 4
			for e < b && e-a < awsKeyLen && (isUpper(s[e]) || isDigit(s[e])) {
				e++
			}
			if e-a == awsKeyLen && (e == len(s) || m.cls[s[e]]&cAlnum == 0) && !strings.Contains(s[a:e], "EXAMPLE") {
				return span{a, e, kAWSAccessKey}, true
			}
		}
		if strings.HasPrefix(w, "AIza") {
			e := m.run(s, a+4, b, cB64URL)
			if e-a-4 == googleBody {
				return span{a, e, kGoogleAPIKey}, true
			}
		}
	case 'g':
		if len(w) > 4 && w[0] == 'g' && w[1] == 'h' && w[3] == '_' && strings.IndexByte("pousr", w[2]) >= 0 {
			e := m.run(s, a+4, b, cAlnum)
			if e-a-4 >= ghClassicMinBody {
				return span{a, e, kGitHubToken}, true
			}
		}
		if strings.HasPrefix(w, "github_pat_") {
			e := m.run(s, a+11, b, cWord)
			if e-a-11 >= ghFineMinBody {
				return span{a, e, kGitHubToken}, true
			}
		}
		if strings.HasPrefix(w, "glpat-") {
			e := m.run(s, a+6, b, cB64URL)
			if e-a-6 >= glpatMinBody {
				return span{a, e, kGitLabToken}, true
			}
		}
	case 'x':
		if len(w) > 5 && strings.HasPrefix(w, "xox") && strings.IndexByte("abprs", w[3]) >= 0 && w[4] == '-' {
			e := a + 5
			for e < b && (m.cls[s[e]]&cAlnum != 0 || s[e] == '-') {
				e++
			}
			if e-a-5 >= slackMinBody {
				return span{a, e, kSlackToken}, true
			}
		}
	case 's':
		if strings.HasPrefix(w, "sk-ant-") {
			e := m.run(s, a+7, b, cB64URL)
			if e-a-7 >= skMinBody {
				return span{a, e, kAnthropicKey}, true
			}
		} else if strings.HasPrefix(w, "sk-") {
			e := m.run(s, a+3, b, cB64URL)
			if e-a-3 >= skMinBody && randomish(s[a+3:e]) {
				return span{a, e, kOpenAIKey}, true
			}
		}
		if strings.HasPrefix(w, "sk_live_") || strings.HasPrefix(w, "sk_test_") {
			return m.stripe(s, a, b)
		}
	case 'r', 'p':
		if strings.HasPrefix(w[1:], "k_live_") {
			return m.stripe(s, a, b)
		}
	case 'e':
		if strings.HasPrefix(w, "eyJ") {
			return m.jwt(s, a, b)
		}
	case '-':
		if strings.HasPrefix(w, "-----BEGIN") {
			return m.pem(s, a)
		}
	}
	return span{}, false
}

// run returns the end of the longest prefix of s[i:b] whose bytes are all in
// class mask.
func (m *Masker) run(s string, i, b int, mask uint16) int {
	for i < b && m.cls[s[i]]&mask != 0 {
		i++
	}
	return i
}

func (m *Masker) stripe(s string, a, b int) (span, bool) {
	e := m.run(s, a+8, b, cAlnum)
	if e-a-8 >= stripeMinBody {
		return span{a, e, kStripeKey}, true
	}
	return span{}, false
}

// jwt matches header.payload.signature, base64url, header and payload being
// JSON objects (so "eyJ" / "ey"). The signature may be empty (alg "none").
func (m *Masker) jwt(s string, a, b int) (span, bool) {
	e1 := m.run(s, a, b, cB64URL)
	if e1-a < jwtMinSegment || e1 >= b || s[e1] != '.' {
		return span{}, false
	}
	p := e1 + 1
	if !strings.HasPrefix(s[p:b], "ey") {
		return span{}, false
	}
	e2 := m.run(s, p, b, cB64URL)
	if e2-p < jwtMinSegment || e2 >= b || s[e2] != '.' {
		return span{}, false
	}
	return span{a, m.run(s, e2+1, b, cB64URL), kJWT}, true
}

// pem matches a private key block from "-----BEGIN <label>-----" to its
// "-----END <label>-----" line. The body must look like base64 (a run of at
// least pemMinRun base64 bytes) so that code that merely mentions the
// markers is left alone. Without an END line (output cut short) the block is
// masked up to the last base64-looking byte.
func (m *Masker) pem(s string, a int) (span, bool) {
	body, ok := pemLabelEnd(s, a+len("-----BEGIN"))
	if !ok {
		return span{}, false
	}
	// Log lines carry a prefix ("web-1  | "): the body's lines carry the
	// BEGIN line's too, and it is skipped where a line starts with it.
	prefix := s[strings.LastIndexByte(s[:a], '\n')+1 : a]
	if len(prefix) > pemMaxLabel || strings.Trim(prefix, " \t") == "" {
		prefix = ""
	}
	k, longest, cur := body, 0, 0
	for k < len(s) {
		c := s[k]
		if c == '-' && strings.HasPrefix(s[k:], "-----END") {
			break
		}
		if c == '\n' && prefix != "" && strings.HasPrefix(s[k+1:], prefix) {
			k += 1 + len(prefix)
			cur = 0
			continue
		}
		if m.cls[c]&cPEM == 0 {
			break
		}
		if m.cls[c]&cB64 != 0 {
			cur++
			longest = max(longest, cur)
		} else {
			cur = 0
		}
		k++
	}
	if longest < pemMinRun {
		return span{}, false
	}
	if strings.HasPrefix(s[k:], "-----END") {
		lim := min(len(s), k+8+pemMaxLabel)
		if e := strings.Index(s[k+8:lim], "-----"); e >= 0 {
			return span{a, k + 8 + e + 5, kPrivateKey}, true
		}
		return span{a, lim, kPrivateKey}, true
	}
	// Cut short: stop after the last base64 byte.
	for k > body && m.cls[s[k-1]]&cB64 == 0 {
		k--
	}
	return span{a, k, kPrivateKey}, true
}

// pemLabelEnd reads the " <label>-----" of a BEGIN or END marker whose
// dashes and word end at p, and returns where the marker ends; only
// private key labels count.
func pemLabelEnd(s string, p int) (int, bool) {
	if p >= len(s) || s[p] != ' ' {
		return 0, false
	}
	lim := min(len(s), p+pemMaxLabel)
	close := strings.Index(s[p:lim], "-----")
	if close < 0 || !strings.Contains(s[p:p+close], "PRIVATE KEY") {
		return 0, false
	}
	return p + close + 5, true
}

// pemTail matches the end of a private key block whose BEGIN line is not
// in s (a line cut in its middle keeps only its tail; a tail of output
// starts inside the key): the base64 lines before "-----END <label>-----",
// real or JSON-escaped ("\n"), back to the first byte that is neither. A
// block with its BEGIN line is pem's: the scan is past its END by then.
func (m *Masker) pemTail(s string, a int) (span, bool) {
	end, ok := pemLabelEnd(s, a+len("-----END"))
	if !ok {
		return span{}, false
	}
	start, total, j := a, 0, a
loop:
	for first := true; ; first = false {
		switch { // the line break before s[j]; the key's last line may have none
		case j >= 2 && s[j-2] == '\\' && (s[j-1] == 'n' || s[j-1] == 'r'):
			j -= 2
			if j >= 2 && s[j-2] == '\\' && s[j-1] == 'r' {
				j -= 2
			}
		case j >= 1 && s[j-1] == '\n':
			j--
			if j >= 1 && s[j-1] == '\r' {
				j--
			}
		case !first:
			break loop
		}
		k := j
		for k > 0 && m.cls[s[k-1]]&cB64 != 0 {
			k--
		}
		broken := k > 0 && (s[k-1] == '\n' || s[k-1] == '\r') // a line break before the line
		if k >= 1 && k < j && s[k-1] == '\\' && (s[k] == 'n' || s[k] == 'r') {
			k++ // in "\nMII…" the n is the escape's
			broken = true
		}
		if k == j {
			break
		}
		// A line of its own before the last must be as long as a key's;
		// the piece a cut left (after another byte) may be shorter.
		if !first && (broken || k == 0) && j-k < pemMinRun {
			break
		}
		start, total = k, total+j-k
		if !broken {
			break
		}
		j = k
	}
	if total < pemMinRun {
		return span{}, false
	}
	return span{start, end, kPrivateKey}, true
}

// randomish reports whether a token body mixes at least two of lower case,
// upper case and digits, as generated keys do and words-with-dashes
// ("sk-spinner-fading-circle") do not.
func randomish(s string) bool {
	var lo, up, di bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z':
			lo = true
		case 'A' <= c && c <= 'Z':
			up = true
		case '0' <= c && c <= '9':
			di = true
		}
	}
	n := 0
	for _, ok := range [...]bool{lo, up, di} {
		if ok {
			n++
		}
	}
	return n >= 2
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
