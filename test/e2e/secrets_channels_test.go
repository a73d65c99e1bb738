package e2e

// Contract tests of secret masking on every channel that leaves the
// server (docs/tools.md "Secret masking", docs/tools.md "Secrets"). Every token
// is assembled at run time from parts, so no literal secret is in the source.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

const (
	channelsAlnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	channelsUpper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	channelsDigits = "0123456789"
	channelsHex    = "0123456789abcdef"
	channelsB64    = channelsAlnum + "+/"
)

var channelsPlaceholder = regexp.MustCompile(`\[REDACTED:[a-z0-9-]+\]`)

// channelsRand is a deterministic pseudo-random string (mixed characters, so no
// low-entropy filter can excuse a miss).
func channelsRand(seed string, n int, alphabet string) string {
	h := fnv.New64a()
	h.Write([]byte(seed))
	x := h.Sum64()
	b := make([]byte, n)
	for i := range b {
		x = x*6364136223846793005 + 1442695040888963407
		b[i] = alphabet[(x>>33)%uint64(len(alphabet))]
	}
	return string(b)
}

// channelsTok is one planted secret: the line that plants it and the fragments
// that must never leave the server.
type channelsTok struct {
	kind  string
	value string
	line  string
	frags []string
}

func channelsSingle(kind, prefix, body, linePrefix string) channelsTok {
	v := prefix + body
	return channelsTok{kind: kind, value: v, line: linePrefix + v, frags: []string{body[:16], body[len(body)-16:]}}
}

// channelsTokens builds one token of each kind docs/tools.md lists.
func channelsTokens() []channelsTok {
	b64url := base64.RawURLEncoding
	jwtHead := b64url.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	jwtBody := b64url.EncodeToString([]byte(`{"sub":"a13s-` + channelsRand("jwtsub", 20, channelsAlnum) + `","iat":1700000000}`))
	jwtSig := channelsRand("jwtsig", 43, channelsAlnum+"-_")
	jwt := jwtHead + "." + jwtBody + "." + jwtSig

	var pem strings.Builder
	pem.WriteString("-----BEGIN " + "RSA PRIVATE" + " KEY-----\n")
	var pemFrags []string
	for i := 0; i < 5; i++ {
		l := channelsRand(fmt.Sprint("pem", i), 64, channelsB64)
		pemFrags = append(pemFrags, l[:24])
		pem.WriteString(l + "\n")
	}
	last := channelsRand("pemlast", 28, channelsB64) + "=="
	pemFrags = append(pemFrags, last[:20])
	pem.WriteString(last + "\n")
	pem.WriteString("-----END " + "RSA PRIVATE" + " KEY-----")

	openai := channelsRand("openai", 48, channelsAlnum)
	dbpw := channelsRand("dbpw", 20, channelsAlnum)
	apikey := channelsRand("apikey", 32, channelsAlnum)
	bearer := channelsRand("bearer", 40, channelsAlnum)
	urlpw := channelsRand("urlpw", 18, channelsAlnum)
	glued := channelsRand("ghglued", 36, channelsAlnum)
	escaped := channelsRand("ghescaped", 36, channelsAlnum)

	return []channelsTok{
		channelsSingle("aws", "AK"+"IA", channelsRand("aws", 16, channelsUpper), "aws_access = "),
		channelsSingle("github", "gh"+"p_", channelsRand("ghp", 36, channelsAlnum), "github token "),
		channelsSingle("github-pat", "github"+"_pat_", channelsRand("pat1", 22, channelsAlnum)+"_"+channelsRand("pat2", 59, channelsAlnum), "pat "),
		channelsSingle("gitlab", "gl"+"pat-", channelsRand("glpat", 20, channelsAlnum), "gitlab "),
		channelsSingle("slack", "xo"+"xb-", channelsRand("sl1", 12, channelsDigits)+"-"+channelsRand("sl2", 13, channelsDigits)+"-"+channelsRand("sl3", 24, channelsAlnum), "slack "),
		channelsSingle("google", "AI"+"za", channelsRand("google", 35, channelsAlnum), "google_key = "),
		channelsSingle("stripe", "sk"+"_live_", channelsRand("stripe", 24, channelsAlnum), "stripe "),
		{kind: "jwt", value: jwt, line: "jwt " + jwt, frags: []string{jwtBody[8:28], jwtSig[:16], jwtSig[len(jwtSig)-16:]}},
		{kind: "openai-env", value: "sk-" + "proj-" + openai, line: "OPENAI_API_KEY=" + "sk-" + "proj-" + openai, frags: []string{openai[:16], openai[32:]}},
		{kind: "password-assign", value: dbpw, line: "DB_PASSWORD=" + dbpw, frags: []string{dbpw}},
		{kind: "api_key-assign", value: apikey, line: "api_key=" + apikey, frags: []string{apikey[:16], apikey[16:]}},
		{kind: "authorization", value: bearer, line: "Authorization: Bearer " + bearer, frags: []string{bearer[:16], bearer[24:]}},
		{kind: "url-password", value: urlpw, line: "remote https://a13s:" + urlpw + "@git.example.com/repo.git", frags: []string{urlpw}},
		{kind: "github-glued", value: "gh" + "p_" + glued, line: "id_" + "gh" + "p_" + glued, frags: []string{glued[:16], glued[20:]}},
		{kind: "github-escaped", value: "gh" + "p_" + escaped, line: "https://x.example/?token%3D" + "gh" + "p_" + escaped, frags: []string{escaped[:16], escaped[20:]}},
		{kind: "pem", value: pem.String(), line: pem.String(), frags: pemFrags},
	}
}

func channelsTok1(toks []channelsTok, kind string) channelsTok {
	for _, tk := range toks {
		if tk.kind == kind {
			return tk
		}
	}
	panic("a13s: no token kind " + kind)
}

// channelsSecretFile is one line per token (the PEM block spans several).
func channelsSecretFile(toks []channelsTok) string {
	var b strings.Builder
	b.WriteString("# a13s fixture\n")
	for _, tk := range toks {
		b.WriteString(tk.line + "\n")
	}
	b.WriteString("end of fixture\n")
	return b.String()
}

// channelsNoLeak fails for every fragment of every token found in s.
func channelsNoLeak(t *testing.T, where, s string, toks []channelsTok) {
	t.Helper()
	for _, tk := range toks {
		for _, f := range tk.frags {
			if i := strings.Index(s, f); i >= 0 {
				lo, hi := max(0, i-60), min(len(s), i+len(f)+20)
				t.Errorf("%s: %s secret leaked unmasked: …%s…", where, tk.kind, s[lo:hi])
				break
			}
		}
	}
}

func channelsJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// channelsNotes is every notification received so far, as one string.
func channelsNotes(c *harness.Client, method string) string {
	var b strings.Builder
	for _, n := range c.Notes(method) {
		b.WriteString(n.Method + " " + string(n.Params) + "\n")
	}
	return b.String()
}

func channelsWS(t *testing.T, files map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	for name, body := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

type channelsOpts struct {
	mode    string
	confirm bool
	env     []string
	args    []string
	extra   map[string]any // extra initializationOptions
}

func channelsStart(t *testing.T, ctx context.Context, ws string, o channelsOpts) *harness.Client {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: ws, Env: o.env, Args: o.args})
	io := map[string]any{}
	if o.mode != "" {
		io["mode"] = o.mode
	}
	for k, v := range o.extra {
		io[k] = v
	}
	params := map[string]any{"initializationOptions": io}
	if o.confirm {
		params["capabilities"] = map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}}
	}
	c.Initialize(ctx, params)
	return c
}

func channelsCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestSecretsReadMasksEveryKind: read shows every listed kind as the
// documented placeholder, keeps the key of an assignment, finds glued and
// URL-escaped GitHub tokens, and counts redactions.
func TestSecretsReadMasksEveryKind(t *testing.T) {
	t.Parallel()
	ctx := channelsCtx(t)
	toks := channelsTokens()
	ws := channelsWS(t, map[string]string{"secrets.txt": channelsSecretFile(toks)})
	c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass"})
	r := c.CallTool(ctx, "read", map[string]any{"path": "secrets.txt"})
	if r.IsError {
		t.Fatalf("read failed: %s", r.Text())
	}
	text := r.Text()
	channelsNoLeak(t, "read content", text, toks)
	channelsNoLeak(t, "read details", channelsJSON(r.Details), toks)
	channelsNoLeak(t, "notifications", channelsNotes(c, ""), toks)
	for _, want := range []string{
		"github token [REDACTED:github-token]",
		"OPENAI_API_KEY=[REDACTED:openai-key]",
		"id_[REDACTED:github-token]",
		"token%3D[REDACTED:github-token]",
		"[REDACTED:private-key]",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("read output lacks %q:\n%s", want, text)
		}
	}
	// Each planted line still exists (the key before the value stays) and
	// carries a placeholder.
	for _, tk := range toks {
		if tk.kind == "pem" {
			continue
		}
		key := strings.SplitN(tk.line, tk.value, 2)[0]
		found := false
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, "→"+key) && channelsPlaceholder.MatchString(l) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no read line %q followed by a [REDACTED:kind] placeholder:\n%s", tk.kind, key, text)
		}
	}
	if n, _ := r.Details["redactions"].(float64); n < float64(len(toks)) {
		// redactions may be a number or a per-kind object; accept either if it counts enough.
		total := 0.0
		if m, ok := r.Details["redactions"].(map[string]any); ok {
			for _, v := range m {
				f, _ := v.(float64)
				total += f
			}
		}
		if n < float64(len(toks)) && total < float64(len(toks)) {
			t.Errorf("details.redactions = %v, want at least %d (one per planted secret)", r.Details["redactions"], len(toks))
		}
	}
}

// TestSecretsGrepMatchAndContext: match lines, context lines and PEM
// body lines are masked by both grep backends.
func TestSecretsGrepMatchAndContext(t *testing.T) {
	t.Parallel()
	toks := channelsTokens()
	gh, aws, slack := channelsTok1(toks, "github"), channelsTok1(toks, "aws"), channelsTok1(toks, "slack")
	body := "before " + aws.line + "\nneedle here " + gh.line + "\nafter " + slack.line + "\n\n" + channelsTok1(toks, "pem").line + "\n"
	for _, backend := range []string{"rg", "go"} {
		t.Run(backend, func(t *testing.T) {
			ctx := channelsCtx(t)
			ws := channelsWS(t, map[string]string{"g.txt": body, "all.txt": channelsSecretFile(toks)})
			var env []string
			if backend == "go" {
				env = []string{"AGENTLS_GREP_BACKEND=go"}
			}
			c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass", env: env})
			r := c.CallTool(ctx, "grep", map[string]any{"pattern": "needle", "path": "g.txt", "context": 1})
			if !strings.Contains(r.Text(), "needle here github token [REDACTED:github-token]") {
				t.Errorf("match line not masked as documented:\n%s", r.Text())
			}
			if strings.Count(r.Text(), "[REDACTED:") < 3 {
				t.Errorf("context lines should carry placeholders too:\n%s", r.Text())
			}
			channelsNoLeak(t, "grep context", channelsJSON(r), toks)
			// Body lines of a PEM key, matched alone.
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": "^[A-Za-z0-9+/]{40,}", "path": "g.txt"})
			if !strings.Contains(r.Text(), "[REDACTED:private-key]") {
				t.Errorf("PEM body match lines not shown as [REDACTED:private-key]:\n%s", r.Text())
			}
			channelsNoLeak(t, "grep pem body", channelsJSON(r), toks)
			// Every kind, whole workspace.
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": ".", "limit": 1000})
			channelsNoLeak(t, "grep all", channelsJSON(r), toks)
			channelsNoLeak(t, "notifications", channelsNotes(c, ""), toks)
		})
	}
}

// TestSecretsListingNames: a file named like a token, and a symlink
// pointing at it, leave ls and find masked.
func TestSecretsListingNames(t *testing.T) {
	t.Parallel()
	ctx := channelsCtx(t)
	toks := channelsTokens()
	gh := channelsTok1(toks, "github")
	ws := channelsWS(t, map[string]string{"d/" + gh.value + ".txt": "x\n"})
	if err := os.Symlink(gh.value+".txt", filepath.Join(ws, "d", "link")); err != nil {
		t.Fatal(err)
	}
	c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass"})
	ls := c.CallTool(ctx, "ls", map[string]any{"path": "d"})
	if !strings.Contains(ls.Text(), "link@ -> ") {
		t.Errorf("ls lacks the symlink entry:\n%s", ls.Text())
	}
	channelsNoLeak(t, "ls", channelsJSON(ls), toks)
	find := c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt"})
	channelsNoLeak(t, "find", channelsJSON(find), toks)
	if !strings.Contains(find.Text(), "[REDACTED:github-token]") {
		t.Errorf("find should list the file with its token part masked:\n%s", find.Text())
	}
}

// TestSecretsEditChannels: the edit result, tools/details (diff,
// TextEdits), the fuzzy snippet, dryRun, the not-found region and the
// several-matches error are masked; the disk holds the real bytes.
func TestSecretsEditChannels(t *testing.T) {
	t.Parallel()
	ctx := channelsCtx(t)
	toks := channelsTokens()
	gh, aws, slack, google, gl := channelsTok1(toks, "github"), channelsTok1(toks, "aws"), channelsTok1(toks, "slack"), channelsTok1(toks, "google"), channelsTok1(toks, "gitlab")
	orig := "start\nkey = \"old\"\nalpha   \n" + aws.line + "\nbefore google\n" + google.line + "\nafter google\ndup marker " + gl.value + "\ndup marker " + gl.value + "\nend\n"
	ws := channelsWS(t, map[string]string{"code.txt": orig})
	c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass"})
	reread := func() {
		t.Helper()
		if r := c.CallTool(ctx, "read", map[string]any{"path": "code.txt"}); r.IsError {
			t.Fatalf("read: %s", r.Text())
		}
	}
	disk := func() string {
		b, err := os.ReadFile(filepath.Join(ws, "code.txt"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	reread()

	t.Run("exact", func(t *testing.T) {
		r := c.CallTool(ctx, "edit", map[string]any{"path": "code.txt", "edits": []any{map[string]any{"oldText": `key = "old"`, "newText": `key = "` + gh.value + `"`}}})
		if r.IsError {
			t.Fatalf("edit failed: %s", r.Text())
		}
		channelsNoLeak(t, "edit result", channelsJSON(r), toks)
		d, _ := r.Details["unifiedDiff"].(string)
		if !strings.Contains(d, "+key = \"[REDACTED:github-token]\"") {
			t.Errorf("details.unifiedDiff should show the masked new line:\n%s", d)
		}
		if !strings.Contains(channelsJSON(r.Details["edits"]), "[REDACTED:github-token]") {
			t.Errorf("details.edits newText should carry the placeholder: %s", channelsJSON(r.Details["edits"]))
		}
		if !strings.Contains(disk(), `key = "`+gh.value+`"`) {
			t.Errorf("disk must hold the real token, got:\n%s", disk())
		}
	})
	t.Run("fuzzy snippet", func(t *testing.T) {
		reread()
		// Matches only with trailing whitespace ignored, so a snippet is shown.
		r := c.CallTool(ctx, "edit", map[string]any{"path": "code.txt", "edits": []any{map[string]any{"oldText": "alpha\n" + aws.line, "newText": "beta\n" + aws.line + " # kept"}}})
		if r.IsError {
			t.Fatalf("edit failed: %s", r.Text())
		}
		if !strings.Contains(r.Text(), "[REDACTED:") {
			t.Errorf("fuzzy snippet should show the changed token line masked:\n%s", r.Text())
		}
		channelsNoLeak(t, "fuzzy edit result", channelsJSON(r), toks)
		if !strings.Contains(disk(), "beta\n"+aws.line+" # kept\n") {
			t.Errorf("disk lacks the real edit:\n%s", disk())
		}
	})
	t.Run("dryRun", func(t *testing.T) {
		reread()
		before := disk()
		r := c.CallTool(ctx, "edit", map[string]any{"path": "code.txt", "dryRun": true, "edits": []any{map[string]any{"oldText": "start", "newText": "start " + slack.value}}})
		if r.IsError {
			t.Fatalf("dryRun failed: %s", r.Text())
		}
		if !strings.Contains(r.Text()+channelsJSON(r.Details), "[REDACTED:") {
			t.Errorf("dryRun diff should carry a placeholder: %s", channelsJSON(r))
		}
		channelsNoLeak(t, "dryRun", channelsJSON(r), toks)
		if disk() != before {
			t.Errorf("dryRun changed the file")
		}
	})
	t.Run("not found region", func(t *testing.T) {
		reread()
		// A near miss of the lines around the google key, so the closest
		// region quotes the key's line.
		near := "before googlx\ngoogle_key = AIza\nafter googlx"
		r := c.CallTool(ctx, "edit", map[string]any{"path": "code.txt", "edits": []any{map[string]any{"oldText": near, "newText": "x"}}})
		if !r.IsError {
			t.Fatalf("want not-found error, got %s", r.Text())
		}
		if !strings.Contains(r.Text(), "google_key") || !strings.Contains(r.Text(), "[REDACTED:") {
			t.Errorf("closest region should quote the google line masked:\n%s", r.Text())
		}
		channelsNoLeak(t, "edit not found", channelsJSON(r), toks)
	})
	t.Run("several matches", func(t *testing.T) {
		reread()
		r := c.CallTool(ctx, "edit", map[string]any{"path": "code.txt", "edits": []any{map[string]any{"oldText": "dup marker", "newText": "x"}}})
		if !r.IsError || !strings.Contains(r.Text(), "add context or set replaceAll") {
			t.Fatalf("want several-matches error, got %s", r.Text())
		}
		channelsNoLeak(t, "edit several matches", channelsJSON(r), toks)
	})
	t.Run("diff context inside a key", func(t *testing.T) {
		// The hunk's context lines are body lines of a PEM key whose BEGIN
		// line is outside the hunk.
		pemFile := channelsTok1(toks, "pem").line + "\ntail\n"
		if err := os.WriteFile(filepath.Join(ws, "key.txt"), []byte(pemFile), 0o644); err != nil {
			t.Fatal(err)
		}
		c.CallTool(ctx, "read", map[string]any{"path": "key.txt"})
		r := c.CallTool(ctx, "edit", map[string]any{"path": "key.txt", "edits": []any{map[string]any{"oldText": "tail", "newText": "tail2"}}})
		if r.IsError {
			t.Fatalf("edit: %s", r.Text())
		}
		channelsNoLeak(t, "edit diff context", channelsJSON(r), toks)
	})
	channelsNoLeak(t, "edit notifications", channelsNotes(c, ""), toks)
	if n := len(c.Notes("tools/details")); n == 0 {
		t.Errorf("no tools/details notification was sent")
	}
}

// TestSecretsWrite: create and overwrite results and diffs are masked,
// the bytes on disk are exactly the content sent.
func TestSecretsWrite(t *testing.T) {
	t.Parallel()
	ctx := channelsCtx(t)
	toks := channelsTokens()
	content := channelsSecretFile(toks)
	ws := channelsWS(t, nil)
	c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass"})
	r := c.CallTool(ctx, "write", map[string]any{"path": "sub/new.txt", "content": content})
	if r.IsError {
		t.Fatalf("write: %s", r.Text())
	}
	channelsNoLeak(t, "write create", channelsJSON(r), toks)
	if d, _ := r.Details["unifiedDiff"].(string); !strings.Contains(d, "+github token [REDACTED:github-token]") {
		t.Errorf("create diff should show masked lines:\n%s", d)
	}
	got, err := os.ReadFile(filepath.Join(ws, "sub", "new.txt"))
	if err != nil || string(got) != content {
		t.Fatalf("disk bytes differ from content (err %v)", err)
	}
	c.CallTool(ctx, "read", map[string]any{"path": "sub/new.txt"})
	content2 := strings.Replace(content, "end of fixture", "end "+channelsTok1(toks, "stripe").value, 1)
	r = c.CallTool(ctx, "write", map[string]any{"path": "sub/new.txt", "content": content2})
	if r.IsError {
		t.Fatalf("overwrite: %s", r.Text())
	}
	channelsNoLeak(t, "write overwrite", channelsJSON(r), toks)
	got, _ = os.ReadFile(filepath.Join(ws, "sub", "new.txt"))
	if string(got) != content2 {
		t.Errorf("overwrite: disk bytes differ from content")
	}
	channelsNoLeak(t, "write notifications", channelsNotes(c, ""), toks)
}

// TestSecretsBash: final output, progress, failure lines from the cut
// part, and a read of the spill file are masked; so is a secret-looking
// variable of the server's own environment.
func TestSecretsBash(t *testing.T) {
	slow(t)
	t.Parallel()
	ctx := channelsCtx(t)
	toks := channelsTokens()
	envVal := channelsRand("envsecret", 30, channelsAlnum)
	envTok := channelsTok{kind: "env-value", value: envVal, frags: []string{envVal}}
	all := append(append([]channelsTok{}, toks...), envTok)
	gh := channelsTok1(toks, "github")
	ws := channelsWS(t, map[string]string{
		"secrets.txt": channelsSecretFile(toks),
		"failing.txt": "FAIL: deploy with " + gh.value + "\n",
	})
	c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass", env: []string{"A13S_SERVICE_SECRET=" + envVal}})

	t.Run("final and progress", func(t *testing.T) {
		r := c.CallTool(ctx, "bash", map[string]any{"command": "for i in 1 2 3 4; do cat secrets.txt; sleep 0.15; done; printf 'env %s\\n' \"$A13S_SERVICE_SECRET\""})
		if r.IsError {
			t.Fatalf("bash: %s", r.Text())
		}
		if !strings.Contains(r.Text(), "github token [REDACTED:github-token]") {
			t.Errorf("bash output lacks the placeholder:\n%s", r.Text())
		}
		if !regexp.MustCompile(`env \[REDACTED:[a-z0-9-]+\]`).MatchString(r.Text()) {
			t.Errorf("the env secret's value should be a placeholder:\n%s", r.Text())
		}
		channelsNoLeak(t, "bash result", channelsJSON(r), all)
		prog := c.Notes("tools/progress")
		if len(prog) == 0 {
			t.Fatalf("no tools/progress for a 0.6 s command")
		}
		sawOutput := false
		for _, n := range prog {
			if strings.Contains(string(n.Params), "[REDACTED:") {
				sawOutput = true
			}
		}
		if !sawOutput {
			t.Errorf("no progress output carried the masked secrets: %s", channelsNotes(c, "tools/progress"))
		}
		channelsNoLeak(t, "bash progress", channelsNotes(c, "tools/progress"), all)
	})
	t.Run("spill and failure lines", func(t *testing.T) {
		r := c.CallTool(ctx, "bash", map[string]any{"command": "cat failing.txt; cat secrets.txt; seq 1 3000"})
		if r.IsError {
			t.Fatalf("bash: %s", r.Text())
		}
		channelsNoLeak(t, "bash cut result", channelsJSON(r), all)
		if !strings.Contains(r.Text(), "FAIL: deploy with [REDACTED:github-token]") {
			t.Errorf("the failure line from the cut part should be listed, masked:\n%.3000s", r.Text())
		}
		m := regexp.MustCompile(`"path":\s*"([^"]+)"`).FindStringSubmatch(r.Text())
		if m == nil {
			t.Fatalf("no read {\"path\": …} call in the notice:\n%.2000s", r.Text())
		}
		raw, err := os.ReadFile(m[1])
		if err != nil || !strings.Contains(string(raw), gh.value) {
			t.Errorf("spill file should hold the raw output (err %v)", err)
		}
		sr := c.CallTool(ctx, "read", map[string]any{"path": m[1], "limit": 40})
		if sr.IsError {
			t.Fatalf("read spill: %s", sr.Text())
		}
		if !strings.Contains(sr.Text(), "[REDACTED:github-token]") {
			t.Errorf("read of the spill file should show placeholders:\n%s", sr.Text())
		}
		channelsNoLeak(t, "read spill", channelsJSON(sr), all)
	})
	channelsNoLeak(t, "bash notifications", channelsNotes(c, ""), all)
}

// TestSecretsConfirm: the arguments and preview of tools/confirm are
// masked (bash command, edit diff, write content), and the denial too.
func TestSecretsConfirm(t *testing.T) {
	t.Parallel()
	ctx := channelsCtx(t)
	toks := channelsTokens()
	gh, slack, aws := channelsTok1(toks, "github"), channelsTok1(toks, "slack"), channelsTok1(toks, "aws")
	ws := channelsWS(t, map[string]string{"a.txt": "one\ntwo\n"})
	c := channelsStart(t, ctx, ws, channelsOpts{mode: "default", confirm: true})
	var mu sync.Mutex
	var asked []string
	c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		mu.Lock()
		asked = append(asked, method+" "+string(params))
		mu.Unlock()
		return map[string]any{"decision": "rejectOnce", "message": "no"}, nil
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
		t.Fatalf("read: %s", r.Text())
	}
	calls := []struct {
		name string
		args map[string]any
	}{
		{"bash", map[string]any{"command": "printf '%s\\n' " + gh.value + " > out.txt"}},
		{"edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "two", "newText": "two " + slack.value}}}},
		{"write", map[string]any{"path": "b.txt", "content": aws.line + "\n"}},
	}
	for _, cl := range calls {
		r := c.CallTool(ctx, cl.name, cl.args)
		if !r.IsError || !strings.Contains(r.Text(), "denied by the user") {
			t.Errorf("%s: want a denial, got %s", cl.name, r.Text())
		}
		channelsNoLeak(t, cl.name+" denial", channelsJSON(r), toks)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != len(calls) {
		t.Fatalf("want %d tools/confirm questions, got %d: %v", len(calls), len(asked), asked)
	}
	for i, q := range asked {
		if !strings.HasPrefix(q, "tools/confirm ") {
			t.Errorf("unexpected request %.80s", q)
		}
		channelsNoLeak(t, "tools/confirm "+calls[i].name, q, toks)
		var p struct {
			Arguments map[string]any `json:"arguments"`
			Preview   map[string]any `json:"preview"`
		}
		json.Unmarshal([]byte(strings.TrimPrefix(q, "tools/confirm ")), &p)
		if !strings.Contains(channelsJSON(p.Arguments), "[REDACTED:") {
			t.Errorf("%s: confirm arguments should carry a placeholder: %s", calls[i].name, channelsJSON(p.Arguments))
		}
		if !strings.Contains(channelsJSON(p.Preview), "[REDACTED:") {
			t.Errorf("%s: confirm preview should carry a placeholder: %s", calls[i].name, channelsJSON(p.Preview))
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err == nil {
		t.Errorf("rejected write created b.txt")
	}
	channelsNoLeak(t, "confirm notifications", channelsNotes(c, ""), toks)
}

// TestSecretsAuditLog: no line of the audit log (nor `agentls audit`)
// holds a secret from the arguments.
func TestSecretsAuditLog(t *testing.T) {
	t.Parallel()
	ctx := channelsCtx(t)
	toks := channelsTokens()
	gh, gl := channelsTok1(toks, "github"), channelsTok1(toks, "gitlab")
	dir := t.TempDir()
	ws := channelsWS(t, map[string]string{"s.txt": channelsSecretFile(toks)})
	c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass", env: []string{"AGENTLS_AUDIT_DIR=" + dir}})
	c.CallTool(ctx, "write", map[string]any{"path": "w.txt", "content": channelsSecretFile(toks)})
	c.CallTool(ctx, "bash", map[string]any{"command": "echo " + gh.value})
	c.CallTool(ctx, "grep", map[string]any{"pattern": gl.value})
	c.CallTool(ctx, "read", map[string]any{"path": "s.txt", "offset": gh.value}) // invalid
	var r harness.Result
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "s.txt"}, "callId": "id-" + gh.value}, &r); err != nil {
		t.Fatal(err)
	}
	// The callId is the client's own identifier, echoed back as sent; only
	// content and details must be masked.
	channelsNoLeak(t, "result of a call whose callId holds a token", channelsJSON(map[string]any{"content": r.Content, "details": r.Details}), toks)
	if code := c.Shutdown(ctx); code != 0 {
		t.Errorf("exit code %d", code)
	}
	var all strings.Builder
	lines := 0
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, _ := os.ReadFile(p)
			all.Write(b)
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if l == "" {
					continue
				}
				lines++
				if !json.Valid([]byte(l)) {
					t.Errorf("audit line is not JSON: %.200s", l)
				}
			}
		}
		return nil
	})
	if lines < 5 {
		t.Fatalf("want ≥ 5 audit lines, got %d:\n%s", lines, all.String())
	}
	if !strings.Contains(all.String(), "[REDACTED:") {
		t.Errorf("audit log should show placeholders for the secrets in arguments:\n%.2000s", all.String())
	}
	channelsNoLeak(t, "audit log", all.String(), toks)
	cmd := harness.Command(t, []string{"audit", "--tail", "10"}, "AGENTLS_AUDIT_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("agentls audit: %v\n%s", err, out)
	}
	channelsNoLeak(t, "agentls audit --tail", string(out), toks)
}

// TestSecretsLogs: settings problems and unknown-option warnings sent as
// window/logMessage, and the log file at debug level, hold no secret.
func TestSecretsLogs(t *testing.T) {
	t.Parallel()
	ctx := channelsCtx(t)
	toks := channelsTokens()
	gh, slack := channelsTok1(toks, "github"), channelsTok1(toks, "slack")
	settings := `{"permissions": {"allow": ["Bash(echo ` + gh.value + `"]}}`
	ws := channelsWS(t, map[string]string{".agentls/settings.json": settings, "s.txt": channelsSecretFile(toks)})
	logFile := filepath.Join(t.TempDir(), "agentls.log")
	c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass", args: []string{"--log-file", logFile, "--log-level", "debug"},
		extra: map[string]any{"chan_" + slack.value: true}})
	if _, ok := c.WaitNote(10*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "settings.json")
	}); !ok {
		t.Errorf("no window/logMessage for the invalid settings rule; got %s", channelsNotes(c, "window/logMessage"))
	}
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "chan_")
	}); !ok {
		t.Errorf("no window/logMessage warning for the unknown initializationOptions key; got %s", channelsNotes(c, "window/logMessage"))
	}
	c.CallTool(ctx, "read", map[string]any{"path": "s.txt"})
	c.CallTool(ctx, "bash", map[string]any{"command": "cat s.txt; exit 3"})
	c.CallTool(ctx, "nosuchtool_"+gh.value, map[string]any{})
	channelsNoLeak(t, "window/logMessage", channelsNotes(c, "window/logMessage"), toks)
	if !strings.Contains(channelsNotes(c, "window/logMessage"), "[REDACTED:") {
		t.Errorf("logMessage should show placeholders where it quotes the token: %s", channelsNotes(c, "window/logMessage"))
	}
	c.Shutdown(ctx)
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatalf("log file: %v", err)
	}
	channelsNoLeak(t, "--log-file (debug)", string(b), toks)
}

// TestSecretsErrorEcho: errors that quote the caller's arguments (bad
// values, invalid patterns, missing paths, unknown tools) mask them.
func TestSecretsErrorEcho(t *testing.T) {
	t.Parallel()
	ctx := channelsCtx(t)
	toks := channelsTokens()
	gh, gl, google, aws := channelsTok1(toks, "github"), channelsTok1(toks, "gitlab"), channelsTok1(toks, "google"), channelsTok1(toks, "aws")
	ws := channelsWS(t, map[string]string{"s.txt": "x\n"})
	c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass"})
	cases := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"read offset", "read", map[string]any{"path": "s.txt", "offset": gh.value}},
		{"read missing path", "read", map[string]any{"path": "dir/" + gl.value + ".txt"}},
		{"grep invalid regex", "grep", map[string]any{"pattern": "(" + google.value}},
		{"grep bad context", "grep", map[string]any{"pattern": "x", "context": aws.value}},
		{"find invalid glob", "find", map[string]any{"pattern": "[" + gh.value}},
		{"ls missing", "ls", map[string]any{"path": gh.value}},
		{"bash bad cwd", "bash", map[string]any{"command": "true", "cwd": gl.value}},
		{"bash bad timeout", "bash", map[string]any{"command": "true", "timeout": google.value}},
		{"unknown tool", "x_" + gh.value, map[string]any{}},
		{"edit missing file", "edit", map[string]any{"path": aws.value + ".go", "edits": []any{map[string]any{"oldText": "a", "newText": "b"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.TryCallTool(ctx, tc.tool, tc.args)
			if err != nil {
				channelsNoLeak(t, "protocol error", err.Error(), toks)
				t.Fatalf("protocol error instead of an isError result: %v", err)
			}
			if !r.IsError {
				t.Errorf("want isError, got %s", r.Text())
			}
			channelsNoLeak(t, tc.name, channelsJSON(r), toks)
		})
	}
	channelsNoLeak(t, "error notifications", channelsNotes(c, ""), toks)
}

// TestSecretsNoCorruption: ordinary look-alikes stay byte-exact and an
// image's base64 is untouched.
func TestSecretsNoCorruption(t *testing.T) {
	t.Parallel()
	ctx := channelsCtx(t)
	lines := []string{
		"commit " + channelsRand("sha", 40, channelsHex),
		"id " + channelsRand("u1", 8, channelsHex) + "-" + channelsRand("u2", 4, channelsHex) + "-4" + channelsRand("u3", 3, channelsHex) + "-a" + channelsRand("u4", 3, channelsHex) + "-" + channelsRand("u5", 12, channelsHex),
		"see https://example.com/search?q=agentls+masking&page=2&lang=en&sort=desc#results",
		"integrity sha512-" + channelsRand("integ", 86, channelsB64) + "==",
		"the password reset page explains how to rotate an api key",
		"ghp_ is the prefix of GitHub tokens; AKIA starts AWS key ids",
	}
	body := strings.Join(lines, "\n") + "\n"
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range 64 {
		img.Set(i%8, i/8, color.RGBA{uint8(i * 4), uint8(255 - i*3), uint8(i * 7), 255})
	}
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, img); err != nil {
		t.Fatal(err)
	}
	ws := channelsWS(t, map[string]string{"plain.txt": body, "pic.png": pngBuf.String()})
	c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass"})
	r := c.CallTool(ctx, "read", map[string]any{"path": "plain.txt"})
	for i, l := range lines {
		if want := fmt.Sprintf("%6d→%s", i+1, l); !strings.Contains(r.Text(), want) {
			t.Errorf("line %d altered; want %q in:\n%s", i+1, want, r.Text())
		}
	}
	if strings.Contains(r.Text(), "[REDACTED") {
		t.Errorf("ordinary text was masked:\n%s", r.Text())
	}
	g := c.CallTool(ctx, "grep", map[string]any{"pattern": "commit|integrity|example.com", "path": "plain.txt"})
	for _, i := range []int{0, 2, 3} {
		if !strings.Contains(g.Text(), fmt.Sprintf("plain.txt:%d: %s", i+1, lines[i])) {
			t.Errorf("grep altered line %d:\n%s", i+1, g.Text())
		}
	}
	b := c.CallTool(ctx, "bash", map[string]any{"command": "cat plain.txt"})
	if !strings.Contains(b.Text(), body[:len(body)-1]) {
		t.Errorf("bash altered ordinary text:\n%s", b.Text())
	}
	im := c.CallTool(ctx, "read", map[string]any{"path": "pic.png"})
	found := false
	for _, part := range im.Content {
		if part["type"] == "image" {
			found = true
			if part["data"] != base64.StdEncoding.EncodeToString(pngBuf.Bytes()) {
				t.Errorf("image data altered")
			}
			if part["mimeType"] != "image/png" {
				t.Errorf("mimeType %v", part["mimeType"])
			}
		}
	}
	if !found {
		t.Errorf("no image part: %s", channelsJSON(im))
	}
}

// TestSecretsCutNeverHalf: a token straddling read's and grep's line
// cut never shows a piece of itself.
func TestSecretsCutNeverHalf(t *testing.T) {
	t.Parallel()
	ctx := channelsCtx(t)
	toks := channelsTokens()
	gh := channelsTok1(toks, "github")
	body := gh.value[4:]
	half := channelsTok{kind: "github-half", frags: []string{gh.value[:4] + body[:6], body[len(body)-6:]}}
	readLine := strings.Repeat("r", 1990) + " " + gh.value + " tail"
	grepLine := "needle " + strings.Repeat("g", 485) + " " + gh.value + " tail"
	ws := channelsWS(t, map[string]string{"long.txt": readLine + "\n" + grepLine + "\n"})
	c := channelsStart(t, ctx, ws, channelsOpts{mode: "bypass"})
	r := c.CallTool(ctx, "read", map[string]any{"path": "long.txt"})
	if !strings.Contains(r.Text(), "line cut") {
		t.Errorf("read should cut the long line:\n%.300s", r.Text())
	}
	channelsNoLeak(t, "read line cut", r.Text(), []channelsTok{half})
	g := c.CallTool(ctx, "grep", map[string]any{"pattern": "needle", "path": "long.txt"})
	channelsNoLeak(t, "grep line cut", g.Text(), []channelsTok{half})
}

// TestSecretsCLI: `agentls call` prints masked text and masked JSON,
// and its stderr holds no secret.
func TestSecretsCLI(t *testing.T) {
	t.Parallel()
	toks := channelsTokens()
	gh := channelsTok1(toks, "github")
	ws := channelsWS(t, map[string]string{"s.txt": channelsSecretFile(toks)})
	for _, extra := range [][]string{nil, {"--json"}} {
		args := append([]string{"call", "read", `{"path":"s.txt"}`, "bash", `{"command":"cat s.txt; echo ` + gh.value + ` >&2"}`, "--root", ws, "--mode", "bypass", "--log-level", "debug"}, extra...)
		cmd := harness.Command(t, args)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("agentls call %v: %v\n%s", extra, err, stderr.String())
		}
		if !strings.Contains(stdout.String(), "[REDACTED:github-token]") {
			t.Errorf("agentls call %v stdout lacks placeholders:\n%.1000s", extra, stdout.String())
		}
		channelsNoLeak(t, fmt.Sprintf("agentls call %v stdout", extra), stdout.String(), toks)
		channelsNoLeak(t, fmt.Sprintf("agentls call %v stderr", extra), stderr.String(), toks)
	}
}
