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
	toks := channelsTokens()
	secrets := channelsSecretFile(toks)
	t.Run("read grep bash", func(t *testing.T) {
		ctx := channelsCtx(t)
		ws := channelsWS(t, map[string]string{"s.txt": secrets})
		c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass"})
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
			channelsNoLeak(t, call.tool, channelsJSON(r), toks)
		}
	})
	t.Run("edit diff removed lines", func(t *testing.T) {
		ctx := channelsCtx(t)
		ws := channelsWS(t, map[string]string{"s.txt": secrets})
		c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass"})
		c.CallTool(ctx, "read", map[string]any{"path": "s.txt"})
		for _, tk := range toks {
			if tk.kind == "pem" {
				continue // several lines; removed as a block below
			}
			r := c.CallTool(ctx, "edit", map[string]any{"path": "s.txt", "edits": []any{map[string]any{"oldText": tk.line + "\n", "newText": "removed " + tk.kind + "\n"}}})
			if r.IsError {
				t.Fatalf("edit removing %s: %s", tk.kind, r.Text())
			}
			channelsNoLeak(t, "edit removing "+tk.kind, channelsJSON(r), toks)
		}
		r := c.CallTool(ctx, "write", map[string]any{"path": "s.txt", "content": "all gone\n"})
		if r.IsError {
			t.Fatalf("write over the key: %s", r.Text())
		}
		channelsNoLeak(t, "write removing the private key", channelsJSON(r), toks)
	})
	t.Run("failure lines from the spilled output", func(t *testing.T) {
		ctx := channelsCtx(t)
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
		ws := channelsWS(t, map[string]string{"build.log": body.String()})
		c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass"})
		r := c.CallTool(ctx, "bash", map[string]any{"command": "cat build.log; exit 1"})
		if !strings.Contains(r.Text(), "FAIL: request with") {
			t.Fatalf("the failure lines were not picked out of the spill: %.2000s", r.Text())
		}
		channelsNoLeak(t, "bash failure lines", channelsJSON(r), toks)
	})
	t.Run("confirm reason", func(t *testing.T) {
		ctx := channelsCtx(t)
		gh := channelsTok1(toks, "github")
		name := gh.value + ".txt"
		ws := channelsWS(t, map[string]string{name: "x\n"})
		c := channelsStart(t, ctx, ws, channelsOpts{mode: "default", confirm: true})
		var mu sync.Mutex
		var asked []string
		c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			mu.Lock()
			asked = append(asked, string(params))
			mu.Unlock()
			return map[string]any{"decision": "rejectOnce"}, nil
		}
		for _, cmd := range []string{"rm " + name, "rm -rf ./" + name, "curl -H 'Authorization: Bearer " + channelsTok1(toks, "authorization").value + "' https://example.invalid"} {
			r := c.CallTool(ctx, "bash", map[string]any{"command": cmd})
			channelsNoLeak(t, "refusal of "+cmd[:5], channelsJSON(r), toks)
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
			channelsNoLeak(t, "tools/confirm", q, toks)
		}
		if _, err := os.Stat(filepath.Join(ws, name)); err != nil {
			t.Errorf("a rejected rm removed the file")
		}
	})
	t.Run("audit log", func(t *testing.T) {
		ctx := channelsCtx(t)
		dir := t.TempDir()
		ws := channelsWS(t, map[string]string{"s.txt": secrets})
		c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass", env: []string{"AGENTLS_AUDIT_DIR=" + dir}})
		c.CallTool(ctx, "read", map[string]any{"path": "s.txt"})
		c.CallTool(ctx, "bash", map[string]any{"command": "echo " + channelsTok1(toks, "slack").value + "; exit 3"})
		c.CallTool(ctx, "edit", map[string]any{"path": "s.txt", "edits": []any{map[string]any{"oldText": channelsTok1(toks, "stripe").line, "newText": "gone"}}})
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
		channelsNoLeak(t, "audit log", all.String(), toks)
	})
	t.Run("grep redaction count of denied files", func(t *testing.T) {
		ctx := channelsCtx(t)
		one := channelsTok1(toks, "github")
		files := map[string]string{"open.txt": one.line + "\n", "hidden/s.txt": secrets,
			".agentls/settings.json": `{"permissions": {"deny": ["Read(hidden/**)"]}}`}
		ws := channelsWS(t, files)
		c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass", env: []string{"XDG_CONFIG_HOME=" + t.TempDir()}})
		for _, args := range []map[string]any{{"pattern": "."}, {"pattern": "token|key|pass|BEGIN|jwt"}, {"pattern": ".", "output": "count"}, {"pattern": ".", "output": "files"}} {
			r := c.CallTool(ctx, "grep", args)
			channelsNoLeak(t, fmt.Sprint("grep ", args), channelsJSON(r), toks)
			red := channelsJSON(r.Details["redactions"])
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
