package secrets

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Test secrets. They have the shape of real ones and are not real.
const (
	ghpToken      = "ghp_R4nd0mLooking1Token2ForTests3abcdEFGH"
	ghFineToken   = "github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghij"
	glToken       = "glpat-Xy7zAb3dEf9hIj1kLm5n"
	slackToken    = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx"
	openAIKey     = "sk-proj-Ab3dEf9hIj1kLm5nOp7qRs2tUv4wXy6z_Q8r-S0tUv"
	openAILegacy  = "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"
	anthropicKey  = "sk-ant-api03-Ab3dEf9hIj1kLm5nOp7qRs2tUv4wXy6zQ8rS0tUvAbCd-EfGhIjKlMnAA"
	googleKey     = "AIzaSyAb3dEf9hIj1kLm5nOp7qRs2tUv4wXy6zQ"
	stripeKey     = "sk_live_51Hb3dEf9hIj1kLm5nOp7qRs2"
	awsKeyID      = "AKIAZ7QRSTUVWXY23456"
	awsSecret     = "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"
	jwtToken      = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pemBody       = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\nLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo\n"
	rsaPEM        = "-----BEGIN RSA PRIVATE KEY-----\n" + pemBody + "-----END RSA PRIVATE KEY-----\n"
	envSecretName = "ACME_DEPLOY_TOKEN"
	envSecret     = "acme-9f8e7d6c5b4a"
)

// goSource is ordinary Go with names that look secret but hold no secret.
const goSource = `package auth

import (
	"errors"
	"os"
)

// Config holds connection settings.
type Config struct {
	Password string ` + "`json:\"password\"`" + `
	APIKey   string ` + "`json:\"api_key,omitempty\"`" + `
	TokenURL string
}

var errNoToken = errors.New("no token configured")

func load() (*Config, error) {
	key := "name"
	token := getToken()
	secret_sauce := mix(key, token)
	password := os.Getenv("DB_PASSWORD")
	if password == "" {
		return nil, errNoToken
	}
	cfg := &Config{Password: password, APIKey: cfg.APIKey, TokenURL: "https://auth.local/token"}
	m := map[string]string{"password": "", "token": token}
	_ = secret_sauce
	_ = m
	return cfg, nil
}
`

// tsSource is ordinary TypeScript in the same spirit.
const tsSource = `interface Credentials {
  username: string;
  password: string
  token?: string | null;
}

export async function login(password: string, apiKey = process.env.OPENAI_API_KEY!) {
  const token = localStorage.getItem("token");
  const headers = { Authorization: ` + "`Bearer ${token}`" + ` };
  const secretSauce = computeSauce(password);
  return fetch("/api/login", { method: "POST", headers, body: JSON.stringify({ password, apiKey }) });
}
`

// configText is .env / YAML / INI text full of placeholders and non-secrets.
const configText = `# settings
PASSWORD=
KEY=changeme
API_KEY=your-api-key
API_TOKEN=<your token here>
GITHUB_TOKEN=${GITHUB_TOKEN}
NPM_TOKEN=$NPM_TOKEN
SECRET_KEY=xxxxxxxxxxxxxxxx
TOKEN_URL=https://auth.example.org/oauth/token
MAX_TOKENS=4096
PASSWORD_MIN_LENGTH=12
DATABASE_URL=postgres://app@db.internal:5432/app
PRIMARY_KEY=user_id
db:
  password: ""
  password_file: /run/secrets/db
  sort_key: created_at
  public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHk3b2x0 user@host
Password: must be at least 8 characters long
x-api-key: {{ .Values.apiKey }}
connect(password=password, token=self.token)
AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE
`

// logLines are ordinary log lines: hashes, ids, URLs without credentials.
func logLine(i int) string {
	return fmt.Sprintf("2025-06-%02dT10:%02d:%02dZ level=info msg=\"request done\" req_id=%08x-%04x-4%03x-a%03x-%012x "+
		"commit=%040x sha256=%064x url=https://api.service.local/v1/items/%d token_count=%d duration=%dms\n",
		i%28+1, i%60, (i*7)%60, i*2654435761, i%65536, i%4096, (i*3)%4096, i*97, i*31, i*131, i, i*3, i%500)
}

// pngDataURL is a base64 PNG-like blob of n random bytes.
func pngDataURL(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	copy(b, "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for i := 16; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b)
}

// cleanCorpus is about size bytes of realistic text with no secret in it.
func cleanCorpus(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		switch i % 6 {
		case 0:
			b.WriteString(goSource)
		case 1:
			b.WriteString(tsSource)
		case 2:
			b.WriteString(configText)
		case 3:
			b.WriteString(pngDataURL(1024))
			b.WriteByte('\n')
		default:
			for j := 0; j < 10; j++ {
				b.WriteString(logLine(i*10 + j))
			}
		}
	}
	return b.String()
}

// mixedCorpus is cleanCorpus with a few secrets spread through it.
func mixedCorpus(size int) string {
	c := cleanCorpus(size)
	secrets := []string{
		"\nOPENAI_API_KEY=" + openAIKey + "\n",
		"\n// token: " + ghpToken + "\n",
		"\n" + rsaPEM,
		"\nDB_PASSWORD=hunter2hunter2\n",
		"\nlog: deploy with " + envSecret + " ok\n",
	}
	var b strings.Builder
	step := len(c) / (len(secrets) + 1)
	prev := 0
	for i, s := range secrets {
		at := (i + 1) * step
		at += strings.IndexByte(c[at:], '\n')
		b.WriteString(c[prev:at])
		b.WriteString(s)
		prev = at
	}
	b.WriteString(c[prev:])
	return b.String()
}

// testEnv is a server environment with one secret and several non-secrets.
func testEnv() []string {
	return []string{
		envSecretName + "=" + envSecret,
		"HOME=/root",
		"PWD=/work/projects/something",
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"SSH_KEY=/home/me/.ssh/id_ed25519",
		"SHORT_TOKEN=abc123",
		"TOKENIZERS_PARALLELISM=false",
		"API_KEY_PLACEHOLDER=changeme",
		"GOOGLE_APPLICATION_CREDENTIALS=/etc/gcp/creds.json",
		"EDITOR=vim",
	}
}
