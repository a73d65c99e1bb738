package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// keyBodyLine is one 64-character line of a PEM body, as JSON escapes it.
const keyBodyLine = "MIIJQwIBADANBgkqhkiG9w0BAQEFAASCCS0wggkpAgEAAoICAQDa7vT8yK2mW9xR"

// A service-account key is one JSON line longer than the 2,000-character
// line limit of read and bash: it is masked whole before the line is cut,
// so neither the head nor the tail shown keeps part of the key.
func TestOneLineJSONKeyIsMaskedBeforeTheLineIsCut(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	body := strings.Repeat(keyBodyLine+`\n`, 50) // a 4096-bit key: over 3,000 characters
	key := `{"type": "service_account", "project_id": "demo", "private_key": "-----BEGIN PRIVATE KEY-----\n` + body +
		`-----END PRIVATE KEY-----\n", "client_email": "svc@demo.iam.gserviceaccount.com", "note": "` + strings.Repeat("x", 2500) + `"}` + "\n"
	// The same key after the cut: in the tail bash keeps of a long line.
	late := `{"note": "` + strings.Repeat("x", 2500) + `", "private_key": "-----BEGIN PRIVATE KEY-----\n` + body + `-----END PRIVATE KEY-----\n"}` + "\n"
	writeFiles(t, ws, map[string]string{"sa.json": key, "late.json": late})
	c := harness.Start(t, harness.Options{Root: ws})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"read", map[string]any{"path": "sa.json"}},
		{"grep", map[string]any{"pattern": "service_account"}},
		{"bash", map[string]any{"command": "cat sa.json"}},
		{"read", map[string]any{"path": "late.json"}},
		{"grep", map[string]any{"pattern": "note", "path": "late.json"}},
		{"bash", map[string]any{"command": "cat late.json"}},
	} {
		r := c.CallTool(ctx, call.tool, call.args)
		if strings.Contains(r.Text(), keyBodyLine[20:44]) {
			t.Errorf("%s %v showed part of the key:\n%s", call.tool, call.args, r.Text()[max(0, len(r.Text())-2500):])
		}
		if !strings.Contains(fmt.Sprint(call.args), "late") && !strings.Contains(r.Text(), "[REDACTED:private-key]") {
			t.Errorf("%s %v masked nothing:\n%.3000s", call.tool, call.args, r.Text())
		}
	}
}
