package secrets

// Kind names, as they appear in "[REDACTED:<kind>]" and as keys of the
// count maps returned by Mask and MaskValue.
const (
	KindAWSAccessKey   = "aws-access-key"
	KindAWSSecret      = "aws-secret"
	KindGitHubToken    = "github-token"
	KindGitLabToken    = "gitlab-token"
	KindSlackToken     = "slack-token"
	KindOpenAIKey      = "openai-key"
	KindAnthropicKey   = "anthropic-key"
	KindGoogleAPIKey   = "google-api-key"
	KindStripeKey      = "stripe-key"
	KindJWT            = "jwt"
	KindPrivateKey     = "private-key"
	KindEnvAssignment  = "env-assignment"
	KindURLCredentials = "url-credentials"
	KindPgpass         = "pgpass-password"
	KindAuthHeader     = "auth-header"
	KindEnvValue       = "env-value"
)

// Thresholds the rules enforce (doc.go states them).
const (
	// MinEnvValueLen is the shortest value of a secret-looking server
	// environment variable that is masked wherever it appears; shorter
	// values would match ordinary text.
	MinEnvValueLen = 8
	// MinAssignmentValueLen is the shortest value masked by the
	// env-assignment rule (`DB_PASSWORD=...`).
	MinAssignmentValueLen = 6
	// MinAssignmentEntropy is the least Shannon entropy (bits per byte)
	// of a value the env-assignment rule masks: below it the value is
	// mostly one repeated byte, a placeholder ("glc_1111…1=").
	MinAssignmentEntropy = 1.5
	// MinAuthHeaderValueLen is the shortest credential masked after
	// `Authorization: Bearer|Basic|Token`.
	MinAuthHeaderValueLen = 8
)

// kind is the internal id of a rule's kind. When two matches overlap the
// merged span takes the higher kind, so the order runs from the most generic
// (an exact environment value) to the most specific (a token format).
type kind uint16

const (
	kNone kind = iota
	kEnvValue
	kEnvAssignment
	kURLCredentials
	kPgpass
	kAuthHeader
	kJWT
	kAWSSecret
	kAWSAccessKey
	kGitHubToken
	kGitLabToken
	kSlackToken
	kOpenAIKey
	kAnthropicKey
	kGoogleAPIKey
	kStripeKey
	kPrivateKey

	// kRuleBase+i is gitleaks' rule i (rules.go). Its rank puts it above
	// the generic kinds and below this package's token formats.
	kRuleBase kind = 64
)

// rank orders kinds for merging overlapping matches: the higher rank is
// the more specific.
func (k kind) rank() int {
	if k >= kRuleBase {
		if rs := gitleaksRules(); int(k-kRuleBase) < len(rs.rules) && rs.rules[k-kRuleBase].generic {
			return 2*int(kEnvValue) + 1
		}
		return 2*int(kAuthHeader) + 1
	}
	return 2 * int(k)
}

func (k kind) String() string {
	if k >= kRuleBase {
		if rs := gitleaksRules(); int(k-kRuleBase) < len(rs.rules) {
			return rs.rules[k-kRuleBase].id
		}
		return "unknown"
	}
	switch k {
	case kEnvValue:
		return KindEnvValue
	case kEnvAssignment:
		return KindEnvAssignment
	case kURLCredentials:
		return KindURLCredentials
	case kPgpass:
		return KindPgpass
	case kAuthHeader:
		return KindAuthHeader
	case kJWT:
		return KindJWT
	case kAWSSecret:
		return KindAWSSecret
	case kAWSAccessKey:
		return KindAWSAccessKey
	case kGitHubToken:
		return KindGitHubToken
	case kGitLabToken:
		return KindGitLabToken
	case kSlackToken:
		return KindSlackToken
	case kOpenAIKey:
		return KindOpenAIKey
	case kAnthropicKey:
		return KindAnthropicKey
	case kGoogleAPIKey:
		return KindGoogleAPIKey
	case kStripeKey:
		return KindStripeKey
	case kPrivateKey:
		return KindPrivateKey
	}
	return "unknown"
}

// marker is the replacement text of a kind.
func (k kind) marker() string { return "[REDACTED:" + k.String() + "]" }

// Character classes, one bit each, looked up in Masker.cls.
const (
	cRun    = 1 << iota // [A-Za-z0-9_.-]: what the scanner treats as one word
	cAlnum              // [A-Za-z0-9]
	cB64                // [A-Za-z0-9+/=]
	cB64URL             // [A-Za-z0-9_-]
	cIdent              // [A-Za-z0-9_$.]: a code identifier or dotted path
	cStop               // ends an unquoted value: whitespace and ;,(){}[]"'`&<>|
	cPEM                // may appear inside a PEM body (base64, space, headers, escapes)
	cBlank              // whitespace
	cWord               // [A-Za-z0-9_]

	// Signature bytes of the token prefixes searched for inside a word
	// (see glued): the scanner ORs the classes of a word's bytes, so a word
	// lacking one of a prefix's bytes is ruled out without a search.
	cSigG    // g
	cSigH    // h
	cSigUS   // _
	cSigDash // -
	cSigX    // x
	cSigI    // I
	cSigZ    // z
)

type classes [256]uint16

func newClasses() *classes {
	var c classes
	set := func(chars string, bit uint16) {
		for i := 0; i < len(chars); i++ {
			c[chars[i]] |= bit
		}
	}
	const (
		lower  = "abcdefghijklmnopqrstuvwxyz"
		upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		digits = "0123456789"
		alnum  = lower + upper + digits
	)
	set(alnum+"_.-", cRun)
	set(alnum, cAlnum)
	set(alnum+"+/=", cB64)
	set(alnum+"_-", cB64URL)
	set(alnum+"_$.", cIdent)
	set(" \t\r\n\f\v;,(){}[]\"'`&<>|", cStop)
	set(alnum+"+/= \t\r\n\\\"':,.()-", cPEM)
	set(" \t\r\n\f\v", cBlank)
	set(alnum+"_", cWord)
	set("g", cSigG)
	set("h", cSigH)
	set("_", cSigUS)
	set("-", cSigDash)
	set("x", cSigX)
	set("I", cSigI)
	set("z", cSigZ)
	return &c
}
