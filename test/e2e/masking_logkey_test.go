package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// A private key printed in prefixed log lines (docker compose's
// "web-1  | ") is masked through bash and grep, as it is through read.
func TestKeyInPrefixedLogLinesIsMaskedThroughBashAndGrep(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	const p = "web-1  | "
	const bodyLine = "MIIEowIBAAKCAQEA7vT8yK2mW9xR4pL7nB1cZ6aD0fH5jE2gU8iO3sXQ3vT8yK2m"
	log := p + "starting\n" + p + "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat(p+bodyLine+"\n", 4) +
		p + "W9xR4pL7nB1c==\n" + p + "-----END RSA PRIVATE KEY-----\n" + p + "listening on :8080\n"
	writeFiles(t, ws, map[string]string{"compose.log": log})
	c := harness.Start(t, harness.Options{Root: ws})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"bash", map[string]any{"command": "cat compose.log"}},
		{"grep", map[string]any{"pattern": "web-1"}},
		{"grep", map[string]any{"pattern": "MII|W9xR"}},
		{"read", map[string]any{"path": "compose.log"}},
	} {
		r := c.CallTool(ctx, call.tool, call.args)
		if strings.Contains(r.Text(), bodyLine[8:40]) || strings.Contains(r.Text(), "W9xR4pL7nB1c==") || !strings.Contains(r.Text(), "[REDACTED:private-key]") {
			t.Errorf("%s %v showed the key or masked nothing:\n%s", call.tool, call.args, r.Text())
		}
		if !strings.Contains(r.Text(), "listening on :8080") && call.args["pattern"] != "MII|W9xR" {
			t.Errorf("%s %v masked too much:\n%s", call.tool, call.args, r.Text())
		}
	}
}
