package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

const (
	openAIKey   = "sk-proj-Q3vT8yK2mW9xR4pL7nB1cZ6aD0fH5jE2gU8iO3sX"
	dbPassword  = "hunter2-correct-horse-battery"
	githubToken = "ghp_R8mK2pQ7vX4nL9wT3yB6cF1zJ5hD0sA2gE7u"
	envToken    = "tok-9f8e7d6c5b4a3210fedcba98"
	pemBody     = "MIIEowIBAAKCAQEA7vT8yK2mW9xR4pL7nB1cZ6aD0fH5jE2gU8iO3sXQ3vT8yK2mW9xR"
)

// No secret value of the fixture reaches the model through read, grep or
// bash; ordinary high-entropy text is left alone.
func TestSecretsNeverReachTheModel(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		".env":        "OPENAI_API_KEY=" + openAIKey + "\nDB_PASSWORD=" + dbPassword + "\nDEBUG=true\n",
		"deploy.pem":  "-----BEGIN RSA PRIVATE KEY-----\n" + pemBody + "\n-----END RSA PRIVATE KEY-----\n",
		"src/main.go": "package main\n\n// token: " + githubToken + "\nfunc main() {}\n",
		"ok.txt": "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n" +
			"uuid: 123e4567-e89b-12d3-a456-426614174000\n" +
			"img: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==\n",
	})
	c := harness.Start(t, harness.Options{Root: ws, Env: []string{"MY_SERVICE_TOKEN=" + envToken}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	secretsList := []string{openAIKey, dbPassword, githubToken, envToken, pemBody}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"read", map[string]any{"path": ".env"}},
		{"read", map[string]any{"path": "deploy.pem"}},
		{"read", map[string]any{"path": "src/main.go"}},
		{"grep", map[string]any{"pattern": "KEY|PASSWORD|token|PRIVATE|MII"}},
		{"bash", map[string]any{"command": "cat .env deploy.pem src/main.go"}},
		{"bash", map[string]any{"command": "env"}},
		{"bash", map[string]any{"command": "printenv MY_SERVICE_TOKEN"}},
	}
	for _, call := range calls {
		r := c.CallTool(ctx, call.tool, call.args)
		for _, s := range secretsList {
			if strings.Contains(r.Text(), s) {
				t.Errorf("%s %v leaked %q:\n%s", call.tool, call.args, s, r.Text())
			}
		}
		if !strings.Contains(r.Text(), "[REDACTED:") {
			t.Errorf("%s %v: nothing was masked:\n%.300s", call.tool, call.args, r.Text())
		}
		if r.Details["redactions"] == nil {
			t.Errorf("%s: details.redactions missing", call.tool)
		}
	}
	r := c.CallTool(ctx, "read", map[string]any{"path": "ok.txt"})
	for _, keep := range []string{"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "123e4567-e89b-12d3-a456-426614174000", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"} {
		if !strings.Contains(r.Text(), keep) {
			t.Errorf("false positive: %q was masked:\n%s", keep, r.Text())
		}
	}
	// The key names stay visible so the model knows the variables exist.
	if r := c.CallTool(ctx, "read", map[string]any{"path": ".env"}); !strings.Contains(r.Text(), "OPENAI_API_KEY=[REDACTED:") || !strings.Contains(r.Text(), "DEBUG=true") {
		t.Errorf(".env masked too much: %s", r.Text())
	}
}
