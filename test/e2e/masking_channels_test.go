package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Every channel a secret of a documented kind could leave the server by
// masks it: read, grep, bash, the removed lines of an edit's diff, the
// failure lines bash picks out of the spilled part of its output, the
// tools/confirm question (its reason included), and the audit log; and
// grep's redaction count says nothing of files the deny rules hide.
func TestSecretsAreMaskedInEveryOutputChannel(t *testing.T) {
	t.Parallel()
	toks := a13sTokens()
	secrets := a13sSecretFile(toks)
	t.Run("read grep bash", func(t *testing.T) {
		ctx := a13sCtx(t)
		ws := a13sWS(t, map[string]string{"s.txt": secrets})
		c := a13sStart(t, ctx, ws, a13sOpts{mode: "bypass"})
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"read", map[string]any{"path": "s.txt"}},
			{"grep", map[string]any{"pattern": ".", "context": 2}},
			{"bash", map[string]any{"command": "cat s.txt"}},
		} {
			r := c.CallTool(ctx, call.tool, call.args)
			if r.IsError || !strings.Contains(r.Text(), "[REDACTED:") {
				t.Errorf("%s: want masked text, got %.300s", call.tool, r.Text())
			}
			a13sNoLeak(t, call.tool, a13sJSON(r), toks)
		}
	})
	t.Run("edit diff removed lines", func(t *testing.T) {
		ctx := a13sCtx(t)
		ws := a13sWS(t, map[string]string{"s.txt": secrets})
		c := a13sStart(t, ctx, ws, a13sOpts{mode: "bypass"})
		c.CallTool(ctx, "read", map[string]any{"path": "s.txt"})
		for _, tk := range toks {
			if tk.kind == "pem" {
				continue // several lines; removed as a block below
			}
			r := c.CallTool(ctx, "edit", map[string]any{"path": "s.txt", "edits": []any{map[string]any{"oldText": tk.line + "\n", "newText": "removed " + tk.kind + "\n"}}})
			if r.IsError {
				t.Fatalf("edit removing %s: %s", tk.kind, r.Text())
			}
			a13sNoLeak(t, "edit removing "+tk.kind, a13sJSON(r), toks)
		}
		r := c.CallTool(ctx, "write", map[string]any{"path": "s.txt", "content": "all gone\n"})
		if r.IsError {
			t.Fatalf("write over the key: %s", r.Text())
		}
		a13sNoLeak(t, "write removing the private key", a13sJSON(r), toks)
	})
	t.Run("failure lines from the spilled output", func(t *testing.T) {
		ctx := a13sCtx(t)
		var body strings.Builder
		for i := range 4000 {
			fmt.Fprintf(&body, "progress line %d of a long build log, nothing to see here\n", i)
			if i == 1000 {
				for _, tk := range toks {
					if tk.kind != "pem" {
						body.WriteString("FAIL: request with " + tk.line + " was rejected\n")
						body.WriteString("error: " + tk.line + "\n")
					}
				}
			}
		}
		ws := a13sWS(t, map[string]string{"build.log": body.String()})
		c := a13sStart(t, ctx, ws, a13sOpts{mode: "bypass"})
		r := c.CallTool(ctx, "bash", map[string]any{"command": "cat build.log; exit 1"})
		if !strings.Contains(r.Text(), "FAIL: request with") {
			t.Fatalf("the failure lines were not picked out of the spill: %.2000s", r.Text())
		}
		a13sNoLeak(t, "bash failure lines", a13sJSON(r), toks)
	})
	t.Run("confirm reason", func(t *testing.T) {
		ctx := a13sCtx(t)
		gh := a13sTok1(toks, "github")
		name := gh.value + ".txt"
		ws := a13sWS(t, map[string]string{name: "x\n"})
		c := a13sStart(t, ctx, ws, a13sOpts{mode: "default", confirm: true})
		var mu sync.Mutex
		var asked []string
		c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			mu.Lock()
			asked = append(asked, string(params))
			mu.Unlock()
			return map[string]any{"decision": "rejectOnce"}, nil
		}
		for _, cmd := range []string{"rm " + name, "rm -rf ./" + name, "curl -H 'Authorization: Bearer " + a13sTok1(toks, "authorization").value + "' https://example.invalid"} {
			r := c.CallTool(ctx, "bash", map[string]any{"command": cmd})
			a13sNoLeak(t, "refusal of "+cmd[:5], a13sJSON(r), toks)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(asked) == 0 {
			t.Fatal("no tools/confirm question was asked")
		}
		for _, q := range asked {
			var p struct{ Reason string }
			json.Unmarshal([]byte(q), &p)
			if p.Reason == "" {
				t.Errorf("a question without a reason: %s", q)
			}
			a13sNoLeak(t, "tools/confirm", q, toks)
		}
		if _, err := os.Stat(filepath.Join(ws, name)); err != nil {
			t.Errorf("a rejected rm removed the file")
		}
	})
	t.Run("audit log", func(t *testing.T) {
		ctx := a13sCtx(t)
		dir := t.TempDir()
		ws := a13sWS(t, map[string]string{"s.txt": secrets})
		c := a13sStart(t, ctx, ws, a13sOpts{mode: "bypass", env: []string{"AGENTLS_AUDIT_DIR=" + dir}})
		c.CallTool(ctx, "read", map[string]any{"path": "s.txt"})
		c.CallTool(ctx, "bash", map[string]any{"command": "echo " + a13sTok1(toks, "slack").value + "; exit 3"})
		c.CallTool(ctx, "edit", map[string]any{"path": "s.txt", "edits": []any{map[string]any{"oldText": a13sTok1(toks, "stripe").line, "newText": "gone"}}})
		c.Shutdown(ctx)
		var all strings.Builder
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				b, _ := os.ReadFile(p)
				all.Write(b)
			}
			return nil
		})
		if all.Len() == 0 {
			t.Fatal("no audit log written")
		}
		a13sNoLeak(t, "audit log", all.String(), toks)
	})
	t.Run("grep redaction count of denied files", func(t *testing.T) {
		ctx := a13sCtx(t)
		one := a13sTok1(toks, "github")
		files := map[string]string{"open.txt": one.line + "\n", "hidden/s.txt": secrets,
			".agentls/settings.json": `{"permissions": {"deny": ["Read(hidden/**)"]}}`}
		ws := a13sWS(t, files)
		c := a13sStart(t, ctx, ws, a13sOpts{mode: "bypass", env: []string{"XDG_CONFIG_HOME=" + t.TempDir()}})
		for _, args := range []map[string]any{{"pattern": "."}, {"pattern": "token|key|pass|BEGIN|jwt"}, {"pattern": ".", "output": "count"}, {"pattern": ".", "output": "files"}} {
			r := c.CallTool(ctx, "grep", args)
			a13sNoLeak(t, fmt.Sprint("grep ", args), a13sJSON(r), toks)
			red := a13sJSON(r.Details["redactions"])
			if strings.Contains(red, "pem") || strings.Contains(red, "private-key") || strings.Contains(red, "aws") || strings.Contains(red, "jwt") || strings.Contains(red, "slack") {
				t.Errorf("grep %v: redactions %s count secrets of the denied hidden/s.txt (only open.txt's github token is visible)", args, red)
			}
			if args["output"] == nil && !strings.Contains(red, "github") {
				t.Errorf("grep %v: redactions %s lack open.txt's github token", args, red)
			}
			if strings.Contains(r.Text(), "hidden/s.txt") {
				t.Errorf("grep %v names the denied file: %s", args, r.Text())
			}
		}
	})
}
