// Package secrets owns the secret masker every tool result passes through
// before it leaves the server (content, and details that carry file or
// command text). It is pure: no I/O, no package-level state; a [Masker] is
// immutable after [New] and safe for concurrent use.
//
// Each secret is replaced by "[REDACTED:<kind>]"; for assignments and URLs
// only the value is replaced, so the model still sees which variable or
// which URL exists. Mask(Mask(x)) == Mask(x).
//
// # Kinds
//
//   - aws-access-key: AKIA… or ASIA… plus 16 upper-case letters or digits
//     (keys containing "EXAMPLE", like AWS's documentation key, are kept).
//   - aws-secret: 40 base64 bytes as the value of aws_secret_access_key
//     (any case, also SecretAccessKey as the AWS CLI prints it).
//   - github-token: ghp_, gho_, ghu_, ghs_, ghr_ and github_pat_ tokens.
//   - gitlab-token: glpat-…; slack-token: xoxa-, xoxb-, xoxp-, xoxr-, xoxs-.
//   - openai-key: sk-… and sk-proj-… whose body mixes letter cases or
//     digits (so "sk-spinner-fading-circle" is kept); anthropic-key: sk-ant-….
//   - google-api-key: AIza plus 35 bytes; stripe-key: sk_live_, rk_live_,
//     pk_live_, sk_test_.
//   - jwt: three base64url segments, header and payload starting "ey".
//   - private-key: a whole "-----BEGIN … PRIVATE KEY-----" …
//     "-----END … PRIVATE KEY-----" block (RSA, EC, DSA, OPENSSH, PGP,
//     encrypted, PKCS#8), also inside JSON strings with \n escapes; a block
//     cut short by truncation is masked to its last base64 byte. The body
//     must contain a base64 line, so code that only mentions the markers
//     is kept; certificates and public keys are not secrets.
//   - env-assignment: the value of `KEY=value`, `KEY: value`,
//     `export KEY="value"`, `"key": "value"`, `key := "value"`,
//     `'key' => 'value'`, `--password=value`, `?token=value&` when the name
//     looks secret: split into words (_ - . camelCase), it contains token,
//     secret, password, passwd, passphrase, credential(s), creds, or ends in
//     apikey/secretkey/accesskey/privatekey, or has KEY, PASS, PWD, PW after
//     another word (`*_KEY`, `*_PASS`; PWD alone is the working directory),
//     or ends in _PAT. Not when the last word says the value is about a
//     secret (TOKEN_URL, PASSWORD_MIN_LENGTH, SECRET_NAME, AWS_ACCESS_KEY_ID,
//     MAX_TOKENS) or KEY is a lookup key (PRIMARY_KEY, cacheKey, public_key).
//     Values shorter than MinAssignmentValueLen, with blanks, numbers
//     (4096, 0x00C0) and placeholders are kept. Quoted values that read as a
//     word or a name ("source", "X-Auth-Token", "GO_TEST_VAR") are kept.
//     Unquoted values must not read as code: a call (getToken()), an index,
//     a dotted reference (cfg.Token), &x, a trailing comma, a name without
//     a digit (input_password); `x: y` and `x = y` count only on a line of
//     their own (.env, YAML, INI), and only `KEY=value` may be followed by
//     more text (a shell command, a query string).
//   - url-credentials: the password of scheme://user:password@host
//     (DATABASE_URL and git remotes included).
//   - auth-header: the credential after Authorization: Bearer|Basic|Token|Bot
//     (at least MinAuthHeaderValueLen bytes).
//   - env-value: exact values of the server's environment variables whose
//     names look secret (*KEY, *_PAT, API_KEY*, *TOKEN*, *SECRET*,
//     *PASSWORD*, *PASSWD*, *CREDENTIAL*, *_PASS, *_PWD) and that are at
//     least MinEnvValueLen bytes long, wherever they appear; numbers, paths,
//     URLs and placeholders among them are not masked.
//
// The distinctive token prefixes (gh[pousr]_, github_pat_, glpat-,
// xox[abprs]-, AIza) are found anywhere in a word, so a token glued to a
// name, a digit or "_" is masked from its prefix on: id_ghp_… becomes
// id_[REDACTED:github-token]. The others (sk-, sk_live_…, AKIA, eyJ, PEM)
// must start a word, where "sk" ending "task-" or "ASIA" inside an
// upper-case run cannot mislead them; after a URL escape ("%3DAKIA…") they
// count as starting one.
//
// When an assignment's value is itself a recognised token, or matches
// overlap, the most specific kind is reported (OPENAI_API_KEY=sk-proj-… is
// an openai-key).
//
// Placeholders are never masked: empty, changeme, xxx…, ***…, your-api-key,
// <…>, ${VAR}, $VAR, {{ … }}, %(name)s, values containing "example", type
// names (string, bool), null/none/true/false, and "[REDACTED:…]" itself.
//
// # Why a hand-written scanner and not gitleaks
//
// Mask runs on every tool result, so it makes one pass over the text with a
// byte-class table: it splits the text into words of [A-Za-z0-9_.-] and
// looks only at each word's first byte (token prefixes, PEM headers) and at
// the byte after it ("://", "=", ":"), running a rule only for a candidate.
// Glued prefixes are searched for with strings.Index, and only in long words
// that hold the prefix's bytes (the scanner ORs the classes it looks up).
// Environment values are found with strings.Index. Clean text allocates
// nothing and comes back as the same string.
//
// gitleaks' ~200 rules are Go regexps behind a keyword prefilter; importing
// it pulls in a large dependency tree, and most of its rules target
// providers a coding agent rarely prints. The same rule set written as one
// regexp per rule runs 50-100 times slower on realistic text, and a
// gitleaks-style keyword prefilter barely helps because keywords such as
// "KEY", "://" and "sk-" occur in almost any source file; BenchmarkMask
// measures all three in one run. The rules here are a curated subset: the tokens that
// show up in workspaces and shells (cloud, VCS, chat, LLM and payment keys,
// JWTs, private keys, credentials in URLs, .env files and headers).
package secrets
