package secrets

import (
	"maps"
	"strings"
	"sync"
	"testing"
)

func TestMaskPositives(t *testing.T) {
	m := New(testEnv())
	tests := []struct {
		name    string
		in      string
		secrets []string       // must not survive
		keep    []string       // must survive (the key names, the context)
		kinds   map[string]int // exact counts
	}{
		{"openai project key in .env", "OPENAI_API_KEY=" + openAIKey,
			[]string{openAIKey}, []string{"OPENAI_API_KEY="}, map[string]int{KindOpenAIKey: 1}},
		{"openai legacy key in prose", "use " + openAILegacy + " for now",
			[]string{openAILegacy}, []string{"use ", " for now"}, map[string]int{KindOpenAIKey: 1}},
		{"anthropic key quoted", `client = Anthropic(api_key="` + anthropicKey + `")`,
			[]string{anthropicKey}, []string{"api_key="}, map[string]int{KindAnthropicKey: 1}},
		{"db password", "DB_PASSWORD=hunter2hunter2",
			[]string{"hunter2hunter2"}, []string{"DB_PASSWORD="}, map[string]int{KindEnvAssignment: 1}},
		{"export quoted", `export STRIPE_SECRET="s3cr3t-Value_99"`,
			[]string{"s3cr3t-Value_99"}, []string{"export STRIPE_SECRET="}, map[string]int{KindEnvAssignment: 1}},
		{"yaml password", "db:\n  password: Tr0ub4dor&3\n",
			[]string{"Tr0ub4dor&3"}, []string{"password: "}, map[string]int{KindEnvAssignment: 1}},
		{"json password", `{"user":"bob","password":"c0rrect-h0rse"}`,
			[]string{"c0rrect-h0rse"}, []string{`"password":"`}, map[string]int{KindEnvAssignment: 1}},
		{"ini spaced", "[client]\npassword = hunter2hunter2\n",
			[]string{"hunter2hunter2"}, []string{"password = "}, map[string]int{KindEnvAssignment: 1}},
		{"php array arrow", `'password' => 'hunter2hunter2',`,
			[]string{"hunter2hunter2"}, []string{`'password' => '`}, map[string]int{KindEnvAssignment: 1}},
		{"basic auth header", "Authorization: Basic dXNlcjpodW50ZXIy",
			[]string{"dXNlcjpodW50ZXIy"}, []string{"Authorization: Basic "}, map[string]int{KindAuthHeader: 1}},
		{"make conditional assignment", `DEPLOY_TOKEN ?= "Zf3D0LXCM3EIMbgJpUNn"`,
			[]string{"Zf3D0LXCM3EIMbgJpUNn"}, []string{"DEPLOY_TOKEN ?= "}, map[string]int{KindEnvAssignment: 1}},
		{"make shell assignment", `DEPLOY_TOKEN ::= "Zf3D0LXCM3EIMbgJpUNn"`,
			[]string{"Zf3D0LXCM3EIMbgJpUNn"}, []string{"DEPLOY_TOKEN ::= "}, map[string]int{KindEnvAssignment: 1}},
		{"php concatenating assignment", `$apiToken .= "Zf3D0LXCM3EIMbgJpUNn";`,
			[]string{"Zf3D0LXCM3EIMbgJpUNn"}, []string{"$apiToken .= "}, map[string]int{KindEnvAssignment: 1}},
		{"cli flag", "mysql --user=root --password=Sup3rS3cret db",
			[]string{"Sup3rS3cret"}, []string{"--password="}, map[string]int{KindEnvAssignment: 1}},
		{"go comment github token", "// token: " + ghpToken + "\nfunc f() {}",
			[]string{ghpToken}, []string{"// token: "}, map[string]int{KindGitHubToken: 1}},
		{"github fine-grained", "GH=" + ghFineToken,
			[]string{ghFineToken}, nil, map[string]int{KindGitHubToken: 1}},
		{"gitlab in remote url", "https://oauth2:" + glToken + "@gitlab.com/g/p.git",
			[]string{glToken}, []string{"https://oauth2:", "@gitlab.com/g/p.git"}, map[string]int{"gitlab-pat": 1}},
		{"slack", "SLACK_BOT=" + slackToken,
			[]string{slackToken}, nil, map[string]int{KindSlackToken: 1}},
		{"google", `const firebase = {apiKey: "` + googleKey + `"};`,
			[]string{googleKey}, nil, map[string]int{KindGoogleAPIKey: 1}},
		{"stripe", "charge with " + stripeKey + ".",
			[]string{stripeKey}, []string{"charge with ", "."}, map[string]int{KindStripeKey: 1}},
		{"aws credentials file", "[default]\naws_access_key_id = " + awsKeyID + "\naws_secret_access_key = " + awsSecret + "\n",
			[]string{awsKeyID, awsSecret}, []string{"aws_secret_access_key = "}, map[string]int{KindAWSAccessKey: 1, KindAWSSecret: 1}},
		{"aws cli json", `{"AccessKeyId": "` + awsKeyID + `", "SecretAccessKey": "` + awsSecret + `"}`,
			[]string{awsKeyID, awsSecret}, nil, map[string]int{KindAWSAccessKey: 1, KindAWSSecret: 1}},
		{"jwt in curl", "curl -H 'Authorization: Bearer " + jwtToken + "' https://api",
			[]string{jwtToken}, []string{"Authorization: Bearer "}, map[string]int{KindJWT: 1}},
		{"opaque bearer", "Authorization: Bearer 8f1d2c3b4a5e6f708192a3b4",
			[]string{"8f1d2c3b4a5e6f708192a3b4"}, []string{"Authorization: Bearer "}, map[string]int{KindAuthHeader: 1}},
		{"pem rsa block", "key:\n" + rsaPEM + "done\n",
			[]string{"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun", "BEGIN RSA PRIVATE KEY"}, []string{"key:\n", "done\n"}, map[string]int{KindPrivateKey: 1}},
		{"pem openssh", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + pemBody + "-----END OPENSSH PRIVATE KEY-----",
			[]string{"LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW"}, nil, map[string]int{KindPrivateKey: 1}},
		{"pem pgp with armor headers", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2.0.22 (GNU/Linux)\n\n" + pemBody + "=AbCd\n-----END PGP PRIVATE KEY BLOCK-----\n",
			[]string{"LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW", "GnuPG"}, nil, map[string]int{KindPrivateKey: 1}},
		{"pem in json string", `{"key": "-----BEGIN EC PRIVATE KEY-----\n` + strings.ReplaceAll(pemBody, "\n", `\n`) + `-----END EC PRIVATE KEY-----\n"}`,
			[]string{"LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW"}, []string{`{"key": "`}, map[string]int{KindPrivateKey: 1}},
		{"pem after escaped newline", `{"out": "key:\n-----BEGIN PRIVATE KEY-----\n` + strings.ReplaceAll(pemBody, "\n", `\n`) + `-----END PRIVATE KEY-----"}`,
			[]string{"LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW"}, []string{`{"out": "key:\n`}, map[string]int{KindPrivateKey: 1}},
		{"pem cut short by truncation", "-----BEGIN PRIVATE KEY-----\n" + pemBody + "\n[output truncated]",
			[]string{"LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW"}, []string{"[output truncated]"}, map[string]int{KindPrivateKey: 1}},
		{"database url password", "DATABASE_URL=postgres://app:n0tS0Secret@db:5432/app",
			[]string{"n0tS0Secret"}, []string{"DATABASE_URL=postgres://app:", "@db:5432/app"}, map[string]int{KindURLCredentials: 1}},
		{"redis url no user", "redis://:pa55word!@cache:6379/0",
			[]string{"pa55word!"}, nil, map[string]int{KindURLCredentials: 1}},
		{"env value in arbitrary text", "deploying with key " + envSecret + " to prod",
			[]string{envSecret}, []string{"deploying with key ", " to prod"}, map[string]int{KindEnvValue: 1}},
		{"env value twice", envSecret + "," + envSecret,
			[]string{envSecret}, []string{","}, map[string]int{KindEnvValue: 2}},
		{"env value assigned keeps specific kind", envSecretName + "=" + envSecret,
			[]string{envSecret}, []string{envSecretName + "="}, map[string]int{KindEnvAssignment: 1}},
		{"query parameter", "GET /cb?access_token=a1b2c3d4e5f6&state=x",
			[]string{"a1b2c3d4e5f6"}, []string{"&state=x"}, map[string]int{KindEnvAssignment: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, kinds := m.Mask(tt.in)
			for _, s := range tt.secrets {
				if strings.Contains(out, s) {
					t.Errorf("secret %q survived:\n%s", s, out)
				}
			}
			for _, s := range tt.keep {
				if !strings.Contains(out, s) {
					t.Errorf("context %q lost:\n%s", s, out)
				}
			}
			if !maps.Equal(kinds, tt.kinds) {
				t.Errorf("kinds = %v, want %v\n%s", kinds, tt.kinds, out)
			}
		})
	}
}

func TestMaskExactOutput(t *testing.T) {
	m := New(nil)
	tests := []struct{ name, in, want string }{
		{"keeps key, masks value", "OPENAI_API_KEY=" + openAIKey + "\nDEBUG=1\n",
			"OPENAI_API_KEY=[REDACTED:openai-key]\nDEBUG=1\n"},
		{"keeps quotes", `password: "hunter2hunter2"`, `password: "[REDACTED:env-assignment]"`},
		{"masks only the url password", "mongodb://admin:Zx9Qw8Er7@mongo/db?authSource=admin",
			"mongodb://admin:[REDACTED:url-credentials]@mongo/db?authSource=admin"},
		{"two secrets on a line", "a=" + awsKeyID + " b=" + ghpToken,
			"a=[REDACTED:aws-access-key] b=[REDACTED:github-token]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := m.Mask(tt.in); got != tt.want {
				t.Errorf("Mask(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestMaskNegatives(t *testing.T) {
	m := New(testEnv())
	tests := []struct{ name, in string }{
		{"sha256", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
		{"git commit", "commit 3b18e512dba79e4c8300dd08aeb37f8e728b8dad\nAuthor: A <a@b.c>"},
		{"uuid", "id=123e4567-e89b-12d3-a456-426614174000"},
		{"png data url", pngDataURL(4096)},
		{"go source", goSource},
		{"ts source", tsSource},
		{"config placeholders", configText},
		{"env values of non-secret variables", "cd /work/projects/something && vim /home/me/.ssh/id_ed25519 abc123 false"},
		{"aws documentation key", "AKIAIOSFODNN7EXAMPLE"},
		{"dash words after sk", "class=\"sk-spinner-fading-circle-loader\" task-sk-runner-abcdefghijklmnopqrstuvwxyz"},
		{"pem markers in code", `if strings.HasPrefix(s, "-----BEGIN RSA PRIVATE KEY-----") { return parse(s, "-----END RSA PRIVATE KEY-----") }`},
		{"pem marker then prose", "-----BEGIN PRIVATE KEY----- blocks are parsed by the loader because we need them and then more words follow here"},
		{"public certificate", "-----BEGIN CERTIFICATE-----\n" + pemBody + "-----END CERTIFICATE-----"},
		{"url without password", "see https://user@example.com/path and ssh://git@github.com:22/x"},
		{"url password placeholder", "postgres://user:${DB_PASS}@db/app and http://u:password@h"},
		{"already masked", "TOKEN=[REDACTED:github-token] postgres://u:[REDACTED:url-credentials]@h"},
		{"python code", "password = getpass.getpass()\nself.token = token\napi_key = api_key\ntoken = None\n"},
		{"comparisons", `if token == "abcdef123456" || secret != "abcdef123456" {}`},
		{"bearer template", "Authorization: Bearer ${TOKEN}"},
		{"prose", "The token: a short-lived credential. Password: must be at least 8 characters."},
		// Found by running the masker over GOROOT/src, /usr/share/doc and /etc.
		{"hex constants", "const (\n\tIMAGE_REL_ARM64_TOKEN = 0x000C\n\tSIOCGLIFTOKEN = -0x3f879678\n)"},
		{"struct fields with references", "\tPrivateKey:  testRSA2048PrivateKey,\n\ttoken.ADD: allNumeric,\n\tf.pass = &emptyPass\n"},
		{"quoted names", "const fakeConnectionToken = \"X-Fake-Connection-Token\"\nSourceKey = \"source\"\n\"encryptionKey\": \"encryptionKey1024\",\ntestKey := \"__GO_TEST_UNSETENV\""},
		{"makefile rule", "git-credential-osxkeychain: git-credential-osxkeychain.o\n"},
		{"escapes and versions", "\"secret\": \"\\u3299\\ufe0f\",\n\"path-key\": \"^3.1.0\",\nSCHILY.xattr.key=null\\x00\\n"},
		{"comment grammar", "//\ttoken          = 1*tchar\n#jdk.security.credential=always-impersonate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, kinds := m.Mask(tt.in)
			if out != tt.in || kinds != nil {
				t.Errorf("changed (%v):\n in %q\nout %q", kinds, tt.in, out)
			}
		})
	}
}

func TestMaskIdempotent(t *testing.T) {
	m := New(testEnv())
	inputs := []string{mixedCorpus(20 << 10), configText, rsaPEM,
		"OPENAI_API_KEY=" + openAIKey, "DB_PASSWORD=hunter2hunter2", "password: 'hunter2hunter2'",
		"https://u:p4ss@h", "Authorization: Bearer 8f1d2c3b4a5e6f708192a3b4", envSecret,
		"aws_secret_access_key=" + awsSecret, "x " + jwtToken}
	for _, in := range inputs {
		once, _ := m.Mask(in)
		twice, kinds := m.Mask(once)
		if twice != once || kinds != nil {
			t.Errorf("not idempotent (%v):\nonce  %q\ntwice %q", kinds, once, twice)
		}
	}
}

func TestMaskMixedCorpus(t *testing.T) {
	m := New(testEnv())
	in := mixedCorpus(50 << 10)
	out, kinds := m.Mask(in)
	want := map[string]int{KindOpenAIKey: 1, KindGitHubToken: 1, KindPrivateKey: 1, KindEnvAssignment: 1, KindEnvValue: 1}
	if !maps.Equal(kinds, want) {
		t.Errorf("kinds = %v, want %v", kinds, want)
	}
	for _, s := range []string{openAIKey, ghpToken, "hunter2hunter2", envSecret, "MIIEowIBAAKCAQEAu1SU1Lf"} {
		if strings.Contains(out, s) {
			t.Errorf("secret %q survived", s)
		}
	}
	clean := cleanCorpus(50 << 10)
	if out, kinds := m.Mask(clean); out != clean {
		t.Errorf("clean corpus changed: %v", kinds)
	}
}

// TestMaskNoAllocWhenClean: text in which no rule finds a candidate
// costs no allocation. (A candidate a rule then rejects, like AWS's
// documentation key in configText, costs the regexp's result.)
func TestMaskNoAllocWhenClean(t *testing.T) {
	m := New(testEnv())
	var b strings.Builder
	for i := 0; b.Len() < 20<<10; i++ {
		b.WriteString(goSource)
		b.WriteString(tsSource)
		b.WriteString(pngDataURL(1024))
		for j := 0; j < 10; j++ {
			b.WriteString(logLine(i*10 + j))
		}
	}
	clean := b.String()
	if n := testing.AllocsPerRun(10, func() { m.Mask(clean) }); n != 0 {
		t.Errorf("Mask of clean text allocated %v times, want 0", n)
	}
}

func TestNewEnvSelection(t *testing.T) {
	tests := []struct {
		kv     string
		masked bool
	}{
		{"OPENAI_API_KEY=abcd1234efgh", true},
		{"APIKEY=abcd1234efgh", true},
		{"API_KEY_PROD=abcd1234efgh", true},
		{"VAULT_TOKEN=abcd1234efgh", true},
		{"MY_SECRET_THING=abcd1234efgh", true},
		{"DB_PASSWORD=abcd1234efgh", true},
		{"SMTP_PASSWD=abcd1234efgh", true},
		{"AZURE_CREDENTIALS=abcd1234efgh", true},
		{"GITHUB_PAT=abcd1234efgh", true},
		{"FTP_PASS=abcd1234efgh", true},
		{"PWD=abcd1234efgh", false},
		{"OLDPWD=abcd1234efgh", false},
		{"HOME=abcd1234efgh", false},
		{"KEYBOARD_LAYOUT=abcd1234efgh", false},
		{"DB_PASSWORD=abc1234", false}, // shorter than MinEnvValueLen
		{"DB_PASSWORD=changeme", false},
		{"DB_PASSWORD=12345678901", false},
		{"SSH_KEY=/home/me/.ssh/id_rsa", false},
		{"TOKEN_ENDPOINT=https://auth.local/token", false},
		{"A_TOKEN=REDACTED", false},
	}
	for _, tt := range tests {
		t.Run(tt.kv, func(t *testing.T) {
			_, v, _ := strings.Cut(tt.kv, "=")
			m := New([]string{tt.kv})
			out, _ := m.Mask("x " + v + " y")
			if got := !strings.Contains(out, v); got != tt.masked {
				t.Errorf("masked = %v, want %v (out %q)", got, tt.masked, out)
			}
		})
	}
}

func TestEnvValueLongestFirst(t *testing.T) {
	m := New([]string{"A_TOKEN=abcdefgh12", "B_TOKEN=abcdefgh12345678"})
	out, kinds := m.Mask("abcdefgh12345678")
	if out != "[REDACTED:env-value]" || kinds[KindEnvValue] != 1 {
		t.Errorf("got %q %v", out, kinds)
	}
}

func TestClassifyKey(t *testing.T) {
	tests := []struct {
		key  string
		want keyClass
	}{
		{"OPENAI_API_KEY", keySecret},
		{"apiKey", keySecret},
		{"APIKey", keySecret},
		{"x-api-key", keySecret},
		{"DBPASSWORD", keySecret},
		{"db_pass", keySecret},
		{"GITHUB_PAT", keySecret},
		{"spring.datasource.password", keySecret},
		{"--password", keySecret},
		{"client_secret", keySecret},
		{"access_token", keySecret},
		{"aws_secret_access_key", keyAWSSecret},
		{"SecretAccessKey", keyAWSSecret},
		{"Authorization", keyAuthorization},
		{"key", keyPlain},
		{"pass", keyPlain},
		{"PWD", keyPlain},
		{"PAT", keyPlain},
		{"primary_key", keyPlain},
		{"cacheKey", keyPlain},
		{"public_key", keyPlain},
		{"max_tokens", keyPlain},
		{"tokenizer", keyPlain},
		{"TOKEN_URL", keyPlain},
		{"PASSWORD_MIN_LENGTH", keyPlain},
		{"AWS_ACCESS_KEY_ID", keyPlain},
		{"secret_sauce", keyPlain},
		{"monkey", keyPlain},
		{"pattern", keyPlain},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := classifyKey(tt.key); got != tt.want {
				t.Errorf("classifyKey(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

func TestMaskValue(t *testing.T) {
	m := New(nil)
	in := map[string]any{
		"command": "export TOKEN=" + ghpToken,
		"exit":    0,
		"lines":   []any{"plain", "DB_PASSWORD=hunter2hunter2", map[string]any{"k": openAIKey}},
		"env":     map[string]string{"A": "B", "C": "x " + stripeKey},
		"args":    []string{"--password=Sup3rS3cret"},
		"clean":   map[string]any{"a": "b"},
	}
	out, kinds := m.MaskValue(in)
	want := map[string]int{KindGitHubToken: 1, KindEnvAssignment: 2, KindOpenAIKey: 1, KindStripeKey: 1}
	if !maps.Equal(kinds, want) {
		t.Errorf("kinds = %v, want %v", kinds, want)
	}
	got := out.(map[string]any)
	if got["command"] != "export TOKEN=[REDACTED:github-token]" ||
		got["lines"].([]any)[1] != "DB_PASSWORD=[REDACTED:env-assignment]" ||
		got["lines"].([]any)[2].(map[string]any)["k"] != "[REDACTED:openai-key]" ||
		got["env"].(map[string]string)["C"] != "x [REDACTED:stripe-key]" ||
		got["args"].([]string)[0] != "--password=[REDACTED:env-assignment]" ||
		got["exit"] != 0 {
		t.Errorf("masked value wrong: %#v", got)
	}
	// The input is untouched.
	if in["command"] != "export TOKEN="+ghpToken || in["lines"].([]any)[1] != "DB_PASSWORD=hunter2hunter2" ||
		in["env"].(map[string]string)["C"] != "x "+stripeKey || in["args"].([]string)[0] != "--password=Sup3rS3cret" {
		t.Errorf("input modified: %#v", in)
	}
	clean := map[string]any{"a": []any{"b", 1}}
	if out, kinds := m.MaskValue(clean); kinds != nil || out.(map[string]any)["a"].([]any)[0] != "b" {
		t.Errorf("clean value changed: %v %v", out, kinds)
	}
}

func TestMaskConcurrent(t *testing.T) {
	m := New(testEnv())
	in := mixedCorpus(8 << 10)
	want, _ := m.Mask(in)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if got, _ := m.Mask(in); got != want {
					t.Error("concurrent Mask gave a different result")
					return
				}
			}
		})
	}
	wg.Wait()
}

// A random quoted value is a secret even when, by chance, it has a
// camel-case hump and a secret fragment ("Pw"); a camelCase name with one
// run of digits stays a name.
func TestMaskRandomValueWithCamelHump(t *testing.T) {
	m := New(nil)
	const v = "a8Kd93Lq0ZxPw7Vb2Nm4"
	for _, in := range []string{`token = "` + v + `"`, `"password": "` + v + `"`, `secret: '` + v + `'`} {
		if out, _ := m.Mask(in); strings.Contains(out, v) {
			t.Errorf("Mask(%q) = %q: the value leaked", in, out)
		}
	}
	for _, in := range []string{`key = "encryptionKey1024"`, `token: "refreshToken2024"`, `"secret": "clientSecretV2"`} {
		if out, c := m.Mask(in); out != in {
			t.Errorf("Mask(%q) = %q %v: a name was masked", in, out, c)
		}
	}
}
