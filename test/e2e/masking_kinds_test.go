package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// kvSecret is the value of `key: value` / `key = value` lines: a secret
// at the start of a line, whatever prefix read or grep puts before it.
const kvSecret = "Xk2p9Lq7vR4mZt"

func TestKeyValueSecretsAreMaskedThroughReadAndGrep(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	files := map[string]string{
		"docker-compose.yml": "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: " + kvSecret + "\n",
		"config.yaml":        "db:\n  password: " + kvSecret + "\n",
		"app.ini":            "[db]\npassword = " + kvSecret + "\n",
	}
	writeFiles(t, ws, files)
	c := harness.Start(t, harness.Options{Root: ws})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	type call struct {
		tool string
		args map[string]any
	}
	var calls []call
	for name := range files {
		calls = append(calls, call{"read", map[string]any{"path": name}})
		calls = append(calls, call{"grep", map[string]any{"pattern": "PASSWORD|password", "path": name}})
	}
	calls = append(calls, call{"grep", map[string]any{"pattern": "(?i)password"}})
	for _, cl := range calls {
		r := c.CallTool(ctx, cl.tool, cl.args)
		if strings.Contains(r.Text(), kvSecret) || !strings.Contains(r.Text(), "[REDACTED:") {
			t.Errorf("%s %v leaked the value or masked nothing:\n%s", cl.tool, cl.args, r.Text())
		}
		// Counted once, though read and grep mask before governance does.
		if red, _ := r.Details["redactions"].(map[string]any); cl.args["path"] != nil && fmt.Sprint(red) != "map[env-assignment:1]" {
			t.Errorf("%s %v: details.redactions = %v, want env-assignment: 1", cl.tool, cl.args, r.Details["redactions"])
		}
	}
}
