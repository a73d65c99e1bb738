package builtin

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/secrets"
	"github.com/agentls/agentls/internal/tools"
)

// keyValueSecrets are `key: value` / `key = value` lines whose value is a
// secret only at the start of a line: after read's "N→" or grep's
// "path:N: " the masker would take them for prose.
var keyValueSecrets = map[string]string{
	"docker-compose.yml": "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: Xk2p9Lq7vR4mZt\n",
	"config.yaml":        "db:\n  password: Xk2p9Lq7vR4mZt\n",
	"app.ini":            "[db]\npassword = Xk2p9Lq7vR4mZt\n",
}

const keyValueSecret = "Xk2p9Lq7vR4mZt"

func TestReadMasksKeyValueSecretsBeforeNumbering(t *testing.T) {
	m := secrets.New(nil)
	for name, content := range keyValueSecrets {
		res := readWhole(name, []byte(content), readInput{}, tools.DefaultLimits(), m, "")
		if txt := res.Content[0].Text; strings.Contains(txt, keyValueSecret) || !strings.Contains(txt, "[REDACTED:") {
			t.Errorf("read %s leaked the value:\n%s", name, txt)
		}
		if res.Details["redactions"] == nil {
			t.Errorf("read %s: no redactions detail", name)
		}
		big, _, err := streamLines(context.Background(), name, bytes.NewReader([]byte(content)), int64(len(content)), readInput{}, tools.DefaultLimits(), m)
		if err != nil || strings.Contains(big.Content[0].Text, keyValueSecret) {
			t.Errorf("streamed read %s leaked the value (%v):\n%s", name, err, big.Content[0].Text)
		}
	}
}
