// Package secrets owns the secret masker every tool result passes through
// before it leaves the server (content, and details that carry file or
// command text). It is pure: no I/O, no package-level mutable state (the
// compiled rule set is loaded once per process, each rule's regexps on its
// first keyword hit, and never changes after); a
// [Masker] is immutable after [New] and safe for concurrent use.
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
//     (4096, 0x00C0), placeholders and values of less than
//     MinAssignmentEntropy bits per byte (one repeated byte) are kept.
//     Names saying the token is not a credential (nextPageToken,
//     csrf_token, publicToken) are not secret names. Quoted values that read as a
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
//   - pgpass-password: the password of a .pgpass line
//     (host:port:database:user:password, the host holding a letter, the
//     port digits or *, the password to the end of the line).
//   - gitleaks' rules: the default rule set of gitleaks v8.30.1
//     (gitleaks/gitleaks.toml, MIT, see gitleaks/LICENSE), embedded as
//     data, and extra-rules.toml, agentls' own rules in the same format for
//     kinds gitleaks lacks (Discord webhooks, Azure SAS signatures, Groq,
//     Replicate, PuTTY keys, .netrc, docker config.json auths, mysql -p).
//     The kind is the rule id ([REDACTED:huggingface-access-token]); only
//     the secret group is replaced. Left out: generic-api-key and
//     hashicorp-tf-password (env-assignment is this package's version of
//     them) and the path-only pkcs12-file rule. Paths and commits in
//     allowlists are ignored; regexes (on the secret, the match or the
//     line), stop words, AND conditions and entropy thresholds are applied
//     as gitleaks applies them, and its global allowlist too.
//     TestMaskRecallOnGitleaksRules runs every true positive of gitleaks'
//     own rule tests (testdata/gitleaks-cases.json, made by
//     gitleaks_cases_gen.go) through the whole masker.
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
// an openai-key): this package's token formats, then gitleaks' rules, then
// auth-header, pgpass-password, url-credentials, env-assignment, gitleaks'
// rules keyed by a word such as "password" or "secret", env-value.
//
// Placeholders are never masked: empty, changeme, xxx…, ***…, your-api-key,
// <…>, ${VAR}, $VAR, {{ … }}, %(name)s, values containing "example", type
// names (string, bool), null/none/true/false, and "[REDACTED:…]" itself;
// a token whose body holds xxxx or a run of 8 equal bytes (ghp_xxxx…,
// AIzaaaaa…) is a placeholder too.
//
// # Why a hand-written scanner, and gitleaks' rules as data
//
// Mask runs on every tool result, so it makes one pass over the text with a
// byte-class table: it splits the text into words of [A-Za-z0-9_.-] and
// looks only at each word's first byte (token prefixes, PEM headers) and at
// the byte after it ("://", "=", ":"), running a rule only for a candidate.
// Glued prefixes are searched for with strings.Index, and only in long words
// that hold the prefix's bytes (the scanner ORs the classes it looks up).
// Environment values are found with strings.Index.
//
// gitleaks' ~220 rules are Go regexps; run one by one over the text they
// are 50-100 times slower than the scanner, and its own keyword prefilter
// (does the keyword occur anywhere in the text?) barely helps, since
// keywords such as "key", "ey" and "s." occur in almost any source file.
// Importing its detector would also pull in its dependency tree. So its
// rule set is loaded as data (rules.go) and run differently (gitleaks.go):
// one pass of a keyword prefilter (keywords.go: a hashed bit set of the
// three bytes every keyword starts with, then the keywords sharing the
// first two) finds where a keyword occurs, in any case; a rule runs only
// there. A rule whose every match starts with one
// of its keywords (most token formats) runs anchored at that keyword; the
// others run on the keyword's line (and a neighbour when an operator ends
// a line), cut to the regexp's greatest width around the keyword, and only
// when the window holds the literals every match needs (literals.go);
// rules that match across lines get the lines around. The leading
// [\w.-]{0,50}? of gitleaks' semi-generic rules, which only moves where a
// match starts, is dropped: it made each of them several times slower.
// TestRuleWindowsFindWhatWholeTextSearchFinds checks that this finds what
// a whole-text search finds. BenchmarkMask measures the masker with and
// without gitleaks' rules and the one-regexp-per-rule reference in one run.
// Clean text in which no rule finds a candidate allocates nothing and
// comes back as the same string.
package secrets
