package secrets

import "strings"

// keyClass is what a variable or field name says about its value.
type keyClass uint8

const (
	keyPlain     keyClass = iota
	keySecret             // *_KEY, *TOKEN*, *SECRET*, *PASSWORD*, *_PASS, ...
	keyAWSSecret          // aws_secret_access_key, SecretAccessKey
	keyAuthorization
)

// maxKeyLen bounds the names classified; longer words are not variable names.
const maxKeyLen = 64

// classifyKey splits a name into words (separators _ - . and camelCase) and
// decides whether it names a secret. The last word wins over the rest:
// TOKEN_URL, PASSWORD_MIN_LENGTH and SECRET_NAME are not secrets.
func classifyKey(key string) keyClass {
	for len(key) > 0 && (key[0] == '-' || key[0] == '.') {
		key = key[1:]
	}
	if len(key) == 0 || len(key) > maxKeyLen || !hasSecretFragment(key) && !hasFold(key, "authorization") {
		return keyPlain
	}
	var (
		n          int
		prev, last string
		hit, aws   bool
		awsState   int // words matched of secret, access, key
	)
	for i := 0; i < len(key); {
		var w string
		w, i = nextWord(key, i)
		if w == "" {
			continue
		}
		switch {
		case hasSuffixFold(w, "token") && tokenQualifierNotSecret(prev, w):
			// nextPageToken, csrf_token, publicToken: not credentials.
		case hasFold(w, "password"), hasFold(w, "passwd"), hasFold(w, "passphrase"),
			hasFold(w, "secret"), hasFold(w, "credential"), eqFold(w, "creds"),
			hasSuffixFold(w, "token"), hasSuffixFold(w, "apikey"), hasSuffixFold(w, "secretkey"),
			hasSuffixFold(w, "accesskey"), hasSuffixFold(w, "privatekey"):
			hit = true
		case eqFold(w, "key"):
			if n > 0 && !keyQualifierNotSecret(prev) {
				hit = true
			}
		case eqFold(w, "pass"), eqFold(w, "pwd"), eqFold(w, "pw"):
			hit = hit || n > 0
		}
		switch {
		case eqFold(w, "secret"):
			awsState = 1
		case awsState == 1 && eqFold(w, "access"):
			awsState = 2
		case awsState == 2 && eqFold(w, "key"):
			aws = true
			awsState = 0
		default:
			awsState = 0
		}
		prev, last = w, w
		n++
	}
	switch {
	case eqFold(last, "authorization"):
		return keyAuthorization
	case eqFold(last, "pat") && n > 1:
		return keySecret
	case !hit || lastWordNotSecret(last):
		return keyPlain
	case aws:
		return keyAWSSecret
	}
	return keySecret
}

// hasSecretFragment is the cheap test run before splitting a name into
// words: does s contain pass, pw(d), pat, secret, token, key or cred, in any
// case? One pass, dispatching on the byte that starts each fragment.
func hasSecretFragment(s string) bool {
	for i := 0; i < len(s); i++ {
		r := s[i:]
		switch s[i] | 0x20 { // ASCII lower case; other bytes never match below
		case 'p':
			if hasPrefixFold(r, "pw") || hasPrefixFold(r, "pass") || hasPrefixFold(r, "pat") {
				return true
			}
		case 's':
			if hasPrefixFold(r, "secret") {
				return true
			}
		case 't':
			if hasPrefixFold(r, "token") {
				return true
			}
		case 'k':
			if hasPrefixFold(r, "key") {
				return true
			}
		case 'c':
			if hasPrefixFold(r, "cred") {
				return true
			}
		}
	}
	return false
}

// keyQualifierNotSecret reports words before KEY that make it a lookup key,
// not a secret key (PRIMARY_KEY, cacheKey).
func keyQualifierNotSecret(w string) bool {
	var buf [32]byte
	lw, ok := lowerInto(&buf, w)
	if !ok {
		return false
	}
	switch string(lw) {
	case "primary", "foreign", "sort", "partition", "cache", "idempotency", "hot", "map",
		"public", "pub", "lookup", "unique", "composite", "dedup", "dedupe", "row", "hash",
		"shard", "object", "s3", "bucket", "cursor", "group", "routing", "message", "i18n",
		"translation", "registry", "field", "index", "column", "table", "sequence", "join",
		"dict", "json", "yaml", "config", "setting", "settings", "metric", "label", "tag",
		"search", "query", "string", "sign", "storage", "redis", "react", "list", "item",
		"node", "entry", "element", "state", "store", "local", "session", "cookie", "event",
		"schema":
		return true
	}
	return false
}

// tokenQualifierNotSecret reports a token word w (after the word prev)
// that names something other than a credential: a page or resume cursor,
// an anti-forgery token, a public token.
func tokenQualifierNotSecret(prev, w string) bool {
	for _, q := range [...]string{"page", "csrf", "xsrf", "public", "continuation", "resume", "sync", "cancel", "cancellation"} {
		if eqFold(prev, q) || len(w) > len(q)+5 && hasPrefixFold(w, q) {
			return true
		}
	}
	return false
}

// lastWordNotSecret reports last words saying the value is about a secret,
// not the secret itself (TOKEN_URL, PASSWORD_MIN_LENGTH).
func lastWordNotSecret(w string) bool {
	var buf [32]byte
	lw, ok := lowerInto(&buf, w)
	if !ok {
		return false
	}
	switch string(lw) {
	case "url", "uri", "urls", "endpoint", "host", "hostname", "port", "path", "file",
		"filename", "dir", "directory", "type", "name", "id", "ids", "len", "length", "size",
		"count", "ttl", "timeout", "expiry", "expires", "expiration", "header", "prefix",
		"suffix", "enabled", "disabled", "required", "format", "algorithm", "alg", "mode",
		"region", "version", "limit", "limits", "identifier", "max", "min", "policy", "provider", "env", "var",
		"field", "param", "manager", "store", "service", "rotation", "interval", "lifetime",
		"days", "seconds", "secs", "ms", "location", "source", "kind", "label", "regex",
		"pattern", "hint", "strength", "validator", "input", "placeholder", "schema", "method",
		"scope", "scopes", "audience", "issuer", "reset", "usage", "budget", "index", "ref",
		"arn", "hash", "digest", "fingerprint", "sauce", "chars", "characters", "charset",
		"alphabet", "alias", "board", "frame", "pair", "press", "pressed", "ring", "selector",
		"stone", "storetype", "meshing", "up", "down", "left", "right":
		return true
	}
	return false
}

// nextWord returns the word of key starting at or after i and the index to
// continue from. Words are split at _ - . and at camelCase boundaries
// (APIKey -> API, Key; dbPassword -> db, Password).
func nextWord(key string, i int) (string, int) {
	for i < len(key) && isSep(key[i]) {
		i++
	}
	start := i
	for i < len(key) && !isSep(key[i]) {
		if i > start && isUpper(key[i]) {
			p := key[i-1]
			if isLower(p) || isDigit(p) || isUpper(p) && i+1 < len(key) && isLower(key[i+1]) {
				break
			}
		}
		i++
	}
	return key[start:i], i
}

func isSep(c byte) bool { return c == '_' || c == '-' || c == '.' || c == ' ' }

func lowerByte(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}

// eqFold reports whether s equals lower ignoring ASCII case (lower must be
// lower case).
func eqFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lowerByte(s[i]) != lower[i] {
			return false
		}
	}
	return true
}

func hasFold(s, lower string) bool {
	for i := 0; i+len(lower) <= len(s); i++ {
		if eqFold(s[i:i+len(lower)], lower) {
			return true
		}
	}
	return false
}

func hasPrefixFold(s, lower string) bool {
	return len(s) >= len(lower) && eqFold(s[:len(lower)], lower)
}

func hasSuffixFold(s, lower string) bool {
	return len(s) >= len(lower) && eqFold(s[len(s)-len(lower):], lower)
}

// placeholderValue reports whole values that are placeholders, keywords or
// type names, not secrets.
func placeholderValue(w string) bool {
	var buf [32]byte
	lw, ok := lowerInto(&buf, w)
	if !ok {
		return false
	}
	switch string(lw) {
	case "changeme", "changeit", "password", "passwd", "secret", "token", "example",
		"sample", "dummy", "fake", "test", "testing", "null", "nil", "none", "undefined",
		"true", "false", "yes", "no", "todo", "tbd", "placeholder", "redacted", "hidden",
		"masked", "default", "required", "optional", "empty", "unset", "notset", "string",
		"str", "number", "int", "int64", "bool", "boolean", "bytes", "any", "object",
		"unknown", "secretstr", "secretstring", "mypassword", "mysecret", "yourpassword",
		"foobar":
		return true
	}
	return false
}

// isPlaceholder reports values that stand for a secret without being one:
// empty, `changeme`, `xxx`, `your-api-key`, `<token>`, `${VAR}`, `$VAR`,
// `%(pw)s`, `{{ .Values.pw }}`, a mask already applied ("[REDACTED:...]").
func isPlaceholder(v string) bool {
	if v == "" {
		return true
	}
	switch v[0] {
	case '$', '<', '[', '{':
		return true
	case '%':
		if len(v) <= 2 || v[1] == '(' {
			return true
		}
	}
	if hasPrefixFold(v, "your") || hasPrefixFold(v, "my-") || hasPrefixFold(v, "my_") || placeholderValue(v) {
		return true
	}
	for _, f := range [...]string{ // anywhere in the value
		"example", "changeme", "change_me", "change-me", "placeholder", "xxxx", "****",
		"...", "${", "{{", "%(", "<", ">", "dummy", "redacted", "replace_me", "replace-me",
		"insert_", "insert-",
	} {
		if hasFold(v, f) {
			return true
		}
	}
	// xxxxxxxx, ********, ----, 0000...
	same := true
	for i := 1; i < len(v); i++ {
		if v[i] != v[0] {
			same = false
			break
		}
	}
	return same
}

// envNameIsSecret decides which server environment variables hold secrets
// whose values are masked verbatim: *KEY, *_PAT, API_KEY*, *TOKEN*,
// *SECRET*, *PASSWORD*, *PASSWD*, *CREDENTIAL*, *_PASS, *_PWD (not PWD,
// the working directory).
func envNameIsSecret(name string) bool {
	u := strings.ToUpper(name)
	for _, f := range [...]string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"} {
		if strings.Contains(u, f) {
			return true
		}
	}
	for _, f := range [...]string{"KEY", "_PAT", "_PASS", "_PWD"} {
		if strings.HasSuffix(u, f) {
			return true
		}
	}
	return strings.HasPrefix(u, "API_KEY")
}

// lowerInto lowercases a short ASCII word into buf without allocating; ok is
// false for words longer than buf (none of the word lists has one).
func lowerInto(buf *[32]byte, w string) ([]byte, bool) {
	if len(w) > len(buf) {
		return nil, false
	}
	for i := 0; i < len(w); i++ {
		buf[i] = lowerByte(w[i])
	}
	return buf[:len(w)], true
}
