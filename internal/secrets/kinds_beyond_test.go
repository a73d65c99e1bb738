package secrets

import (
	"strings"
	"testing"
)

// TestMaskCommonKindsBeyondOwnRules: one secret of each kind issue #23
// listed as leaking (beyond this package's own token formats) is masked,
// its context kept. The values have the issued formats and are not real.
func TestMaskCommonKindsBeyondOwnRules(t *testing.T) {
	m := New(nil)
	tests := []struct {
		name, text, secret, keep string
	}{
		{"hugging face", "HF=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", "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", "HF="},
		{"pypi", "password = pypi-AgEIcHlwaS5vcmcCJDY2NWYxZDM0LTVkNWYtNGQ2Ni05ZjJlLWE3YjE0ZTk1YjBiMAACKlszLCJm", "pypi-AgEIcHlwaS5vcmcCJDY2NWYxZDM0LTVkNWYtNGQ2Ni05ZjJlLWE3YjE0ZTk1YjBiMAACKlszLCJm", "password = "},
		{"npm", "//registry.npmjs.org/:_authToken=npm_Xk3tQ9vLmA2bR7cD4eF8gH1iJ5kL0mN6oP2q", "npm_Xk3tQ9vLmA2bR7cD4eF8gH1iJ5kL0mN6oP2q", "//registry.npmjs.org/:_authToken="},
		{"sendgrid", `sg.send(SendGridAPIClient("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"))`, "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", "SendGridAPIClient"},
		{"slack webhook", "curl -X POST https://hooks.slack.com/services/T024BE7LD/B01ABCDEF23/aB3dE5gH7jK9mN1pQ3sT5vX7", "T024BE7LD/B01ABCDEF23/aB3dE5gH7jK9mN1pQ3sT5vX7", "curl -X POST "},
		{"discord webhook", "WEBHOOK=https://discord.com/api/webhooks/1187654321098765432/Xa9-bC8dE7fG6hI5jK4lM3nO2pQ1rS0tU9vW8xY7zA6bC5dE4fG3hI2jK1lM0nO9pQ8r", "Xa9-bC8dE7fG6hI5jK4lM3nO2pQ1rS0tU9vW8xY7zA6bC5dE4fG3hI2jK1lM0nO9pQ8r", "discord.com/api/webhooks/"},
		{"digitalocean", "doctl auth init -t dop_v1_3f9a1c7e5b2d8f4a6c0e9b7d5f3a1c8e6b4d2f0a9c7e5b3d1f8a6c4e2b0d9f7a", "dop_v1_3f9a1c7e5b2d8f4a6c0e9b7d5f3a1c8e6b4d2f0a9c7e5b3d1f8a6c4e2b0d9f7a", "doctl auth init -t "},
		{"databricks", "host = https://x.cloud.databricks.com\ntoken = dapi3f9a1c7e5b2d8f4a6c0e9b7d5f3a1c8e", "dapi3f9a1c7e5b2d8f4a6c0e9b7d5f3a1c8e", "token = "},
		{"shopify", `X-Shopify-Access-Token: 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`, "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", "X-Shopify-Access-Token: "},
		{"atlassian", "JIRA_API_TOKEN=ATATT3xFfGF0T7dUe2Lk9Qm4Rz8Vb1Nc6Xs3Hg5Jy0Pw7Ka2Ld9Fq4Ej1Ti8Uo6Iy3Mh5Gn0Bv2Cx7Za4Sd9Wf1Qe6Rt3Yu8Op5Kl2Jh0Gf7Ds4Az9Xc1Vb6Nm3Mq8Lw5Ke2Jr0Hi7Gu4Fy9Dt1Cs6Bp3Ao8Zn5Ym2Xl0Wk7Vj4Ui9Th1=A1B2C3D4", "ATATT3xFfGF0T7dUe2Lk9Qm4Rz8Vb1Nc6Xs3Hg5", "JIRA_API_TOKEN="},
		{"azure sas", "https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z&sig=q8Rb3dEf9hIj1kLm5nOp7qRs2tUv4wXy6zQ8rS0tUv%3D", "q8Rb3dEf9hIj1kLm5nOp7qRs2tUv4wXy6zQ8rS0tUv", "&sig="},
		{"grafana", "GF_TOKEN: glsa_pX7qR2sT9uV4wX6yZ1aB3cD5eF8gH0iJ_4c1e9a7b", "glsa_pX7qR2sT9uV4wX6yZ1aB3cD5eF8gH0iJ_4c1e9a7b", "GF_TOKEN: "},
		{"notion", `notion = Client(auth="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")`, "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", "Client(auth="},
		{"linear", "LINEAR=lin_api_a9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Xy7Za6", "lin_api_a9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Xy7Za6", "LINEAR="},
		{"doppler", "doppler run --token dp.pt.a9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Xy7Za6Bc5D -- make", "dp.pt.a9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Xy7Za6Bc5D", "doppler run --token "},
		{"postman", "POSTMAN=PMAK-5f3a1c7e5b2d8f4a6c0e9b7d-5f3a1c7e5b2d8f4a6c0e9b7d5f3a1c8e6b", "PMAK-5f3a1c7e5b2d8f4a6c0e9b7d-5f3a1c7e5b2d8f4a6c0e9b7d5f3a1c8e6b", "POSTMAN="},
		{"groq", `client = Groq(api_key="gsk_a9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Xy7Za6Bc5De4Fg3H")`, "gsk_a9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Xy7Za6Bc5De4Fg3H", "Groq(api_key="},
		{"replicate", "export REPLICATE=r8_a9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Xy", "r8_a9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Xy", "export REPLICATE="},
		{"age key", "# created: 2026-01-01\nAGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS\n", "AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS", "# created: "},
		{"putty key", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: me\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIHk3b2x0\nAAAA\nPrivate-Lines: 1\nAAAAIQCk9Xs3Hg5Jy0Pw7Ka2Ld9Fq4Ej1Ti8Uo6Iy3Mh5Gn0Bv2C\nPrivate-MAC: 5f3a1c7e5b2d8f4a6c0e9b7d5f3a1c7e5b2d8f4a6c0e9b7d5f3a1c7e5b2d8f4a\n", "AAAAIQCk9Xs3Hg5Jy0Pw7Ka2Ld9Fq4Ej1Ti8Uo6Iy3Mh5Gn0Bv2C", "Private-Lines: 1\n"},
		{"netrc", "machine api.heroku.com\n  login me@host.org\n  password 4f3a9c1e-7b2d-4e8f-a6c0-e9b7d5f3a1c8\n", "4f3a9c1e-7b2d-4e8f-a6c0-e9b7d5f3a1c8", "machine api.heroku.com"},
		{"netrc one line", "machine github.com login bob password Zq8Rb3dEf9hIj1kLm5\n", "Zq8Rb3dEf9hIj1kLm5", "machine github.com login bob password "},
		{"pgpass", "db.internal:5432:app:app_user:Zq8Rb3dEf9hIj1kLm5\n", "Zq8Rb3dEf9hIj1kLm5", "db.internal:5432:app:app_user:"},
		{"docker config auths", `{"auths": {"https://index.docker.io/v1/": {"auth": "Ym9iOlpxOFJiM2RFZjloSWoxa0xtNQ=="}}}`, "Ym9iOlpxOFJiM2RFZjloSWoxa0xtNQ==", `"auth": "`},
		{"curl -u", "curl -u bob:Zq8Rb3dEf9hIj1kLm5 https://api.service.local/v1/items", "Zq8Rb3dEf9hIj1kLm5", "curl -u "},
		{"mysql -p", "mysql -h db -u root -pZq8Rb3dEf9hIj1kLm5 app < dump.sql", "Zq8Rb3dEf9hIj1kLm5", "mysql -h db -u root -p"},
		{"kubernetes secret data", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  password: WnE4UmIzZEVmOWhJajFrTG01\n", "WnE4UmIzZEVmOWhJajFrTG01", "kind: Secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, kinds := m.Mask(tt.text)
			if strings.Contains(out, tt.secret) {
				t.Errorf("secret survived: %q (%v)", out, kinds)
			}
			if !strings.Contains(out, tt.keep) {
				t.Errorf("context %q lost: %q", tt.keep, out)
			}
			if twice, _ := m.Mask(out); twice != out {
				t.Errorf("masking twice changed %q to %q", out, twice)
			}
		})
	}
}

// TestMaskKeepsLookalikesOfKindsBeyondOwnRules: text shaped like the
// kinds above but holding no secret is kept.
func TestMaskKeepsLookalikesOfKindsBeyondOwnRules(t *testing.T) {
	m := New(nil)
	for _, text := range []string{
		"aa:bb:cc:dd:ee:ff",                               // a MAC address, not .pgpass
		"12:34:56:78:90123456",                            // no host
		"web:8080:GET:/api:handler_func",                  // a name, not a password
		"main.go:12:5: undefined: x",                      // compiler output
		"localhost:5432:*:*:*",                            // a .pgpass placeholder
		"the machine login password prompt",               // prose, not .netrc
		"machine example.org login me password $NETRC_PW", // a variable
		"mysql -h db -u root -p app",                      // -p prompts for the password
		`{"auth": "basic"}`,                               // not base64 credentials
		"PuTTY-User-Key-File-3 is the format's first line",
		"https://hooks.slack.com/services/", // no token
	} {
		if out, kinds := m.Mask(text); out != text {
			t.Errorf("Mask(%q) = %q (%v), want it kept", text, out, kinds)
		}
	}
}

// TestMaskKeepsGitleaksCodeLikeFalsePositives: false positive examples of
// gitleaks' rules (testdata/gitleaks-cases.json) that are code or
// placeholders are kept whole by every rule, not only by their own.
func TestMaskKeepsGitleaksCodeLikeFalsePositives(t *testing.T) {
	m := New(nil)
	codeLike := []string{
		"ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"github_pat_xxxxxxxxxxxxxxxxxxxxxx_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"xoxb-xxxxxxxxx-xxxxxxxxxx-xxxxxxxxxxxx",
		"glpat-XXXXXXXXXXX-XXXXXXXX",
		`apiKey: "AIzaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"`,
		"key = AKIAXXXXXXXXXXXXXXXX",
		`   API_KEY="glc_111111111111111111111111111111111111111111="`,
		"oktaKey = 00000000000000000000000000000000000TUVWXYZ",
		"schemaKey = 'DOC_Vector_5_32'",
		`const validKeyChars = "0123456789abcdefghijklmnopqrstuvwxyz_-."`,
		`pub const SN_id_Gost28147_89_None_KeyMeshing = "id-Gost28147-89-None-KeyMeshing"`,
		`publicToken = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"`,
		"csrf-token=Mj2qykJO5rELyHgezQ69nzUX0i3OH67V7+V4eUrLfpuyOuxmiW9rhROG/Whikle15syazJOkrjJa3U2AbhIvUw==",
		`nextPageToken = "CAoQAA3k9fJ2mQ8sLp4x"`,
	}
	cases := loadGitleaksCases(t)
	all := map[string]bool{}
	for _, r := range cases.Rules {
		for _, fp := range r.FalsePositives {
			all[fp] = true
		}
	}
	for _, fp := range codeLike {
		if !all[fp] && !strings.Contains(fp, "nextPageToken") {
			t.Errorf("%q is not one of gitleaks' false positives", fp)
		}
		if out, kinds := m.Mask(fp); out != fp {
			t.Errorf("Mask(%q) = %q (%v), want it kept", fp, out, kinds)
		}
	}
}
