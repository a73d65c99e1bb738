package e2e

// Contract tests of secret masking, end to end (docs/tools.md "Secrets": every
// content string passes the masker before it leaves the server, details too
// where they carry file or command text; docs/tools.md "Secret masking").
// Secrets are built at run time so this file holds no literal token.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// maskingSecrets are distinctive secrets of shapes docs/tools.md says are masked.
type maskingSecrets struct {
	GH, GH2   string   // GitHub tokens: ghp_ + 36 alphanumerics
	AWS       string   // AWS access key id: AKIA + 16
	Bearer    string   // opaque value of an Authorization header
	EnvValue  string   // value of DB_PASSWORD= in .env text
	PEMBody   []string // body lines of a PEM private key
	EnvVarVal string   // value of a secret-looking variable in the server's environment
}

func maskingAlnum(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func maskingNewSecrets() maskingSecrets {
	r := rand.New(rand.NewPCG(5, 5))
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	const b64 = alnum + "+/"
	s := maskingSecrets{
		GH:        "ghp" + "_" + maskingAlnum(r, alnum, 36),
		GH2:       "ghp" + "_" + maskingAlnum(r, alnum, 36),
		AWS:       "AK" + "IA" + maskingAlnum(r, upper, 16),
		Bearer:    maskingAlnum(r, alnum, 40),
		EnvValue:  "pw" + maskingAlnum(r, alnum, 22),
		EnvVarVal: "v" + maskingAlnum(r, alnum, 31),
	}
	for range 4 {
		s.PEMBody = append(s.PEMBody, maskingAlnum(r, b64, 64))
	}
	return s
}

// PEM is a whole private key block.
func (s maskingSecrets) PEM() string {
	return "-----BEGIN " + "RSA PRIVATE KEY-----\n" + strings.Join(s.PEMBody, "\n") + "\n-----END " + "RSA PRIVATE KEY-----\n"
}

// fingerprints are substrings that must never reach the client: enough of
// each secret that a half-masked secret is caught too.
func (s maskingSecrets) fingerprints() map[string]string {
	fp := map[string]string{
		"github token":   s.GH[4:24],
		"github token 2": s.GH2[4:24],
		"aws key":        s.AWS[4:],
		"bearer":         s.Bearer[:20],
		".env value":     s.EnvValue,
		"env var value":  s.EnvVarVal,
	}
	for i, l := range s.PEMBody {
		fp[fmt.Sprintf("pem line %d", i+1)] = l[:24]
	}
	return fp
}

// maskingLeaks names the secrets whose fingerprint occurs in payload.
func maskingLeaks(s maskingSecrets, payload string) []string {
	var out []string
	for name, fp := range s.fingerprints() {
		if strings.Contains(payload, fp) {
			out = append(out, name)
		}
	}
	return out
}

func maskingNoLeak(t *testing.T, s maskingSecrets, channel string, payload any) {
	t.Helper()
	var text string
	switch p := payload.(type) {
	case string:
		text = p
	case []byte:
		text = string(p)
	case json.RawMessage:
		text = string(p)
	default:
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal %s: %v", channel, err)
		}
		text = string(b)
	}
	if leaks := maskingLeaks(s, text); len(leaks) > 0 {
		t.Errorf("LEAK via %s: %v in payload:\n%s", channel, leaks, maskingShort(text))
	}
}

func maskingShort(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "…"
	}
	return s
}

// maskingResult checks a tool result's content and details for leaks.
func maskingResult(t *testing.T, s maskingSecrets, what string, r harness.Result) {
	t.Helper()
	maskingNoLeak(t, s, what+" content", r.Text())
	maskingNoLeak(t, s, what+" details", r.Details)
}

// maskingNotesClean checks every notification received so far.
func maskingNotesClean(t *testing.T, s maskingSecrets, c *harness.Client) {
	t.Helper()
	for _, n := range c.Notes("") {
		maskingNoLeak(t, s, "notification "+n.Method, n.Params)
	}
}

type maskingOpts struct {
	mode        string // "" = bypass
	confirm     bool
	applyEdit   bool
	diagnostics bool
	env         []string
	files       map[string]string
	onRequest   func(ctx context.Context, method string, params json.RawMessage) (any, error)
}

type maskingSession struct {
	c   *harness.Client
	ws  string
	ctx context.Context
}

func maskingStart(t *testing.T, o maskingOpts) maskingSession {
	t.Helper()
	ws := t.TempDir()
	for name, body := range o.files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append([]string{"XDG_CACHE_HOME=" + t.TempDir()}, o.env...)
	c := harness.Start(t, harness.Options{Root: ws, Env: env})
	c.OnRequest = o.onRequest
	ctx := testCtx(t, 30*time.Second)
	mode := o.mode
	if mode == "" {
		mode = "bypass"
	}
	c.Initialize(ctx, map[string]any{
		"initializationOptions": map[string]any{"mode": mode},
		"capabilities": map[string]any{"experimental": map[string]any{"agentls": map[string]any{
			"confirm": o.confirm, "applyEdit": o.applyEdit, "diagnostics": o.diagnostics,
		}}},
	})
	return maskingSession{c: c, ws: ws, ctx: ctx}
}

func (x maskingSession) call(t *testing.T, tool string, args map[string]any) harness.Result {
	t.Helper()
	return x.c.CallTool(x.ctx, tool, args)
}

func maskingWant(t *testing.T, what, text string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(text, sub) {
			t.Errorf("%s: want %q in:\n%s", what, sub, maskingShort(text))
		}
	}
}

// maskingGoFile is a small source file with a GitHub token on line 3.
func maskingGoFile(s maskingSecrets) string {
	return "package main\n\nconst token = \"" + s.GH + "\"\nconst region = \"eu-west-1\"\n\nfunc main() {}\n"
}

func TestSecretsMaskedRead(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	x := maskingStart(t, maskingOpts{files: map[string]string{
		"a.txt":   "first\ntoken = " + s.GH + "\naws=" + s.AWS + "\nlast\n",
		"id.txt":  s.PEM(),
		"h.txt":   "curl \\\n  -H 'Authorization: Bearer " + s.Bearer + "' \\\n  https://example.com\n",
		".env":    "OPENAI_API_KEY=sk-proj-" + s.Bearer + "\nDB_PASSWORD=" + s.EnvValue + "\nPLAIN=hello\n",
		"long.go": strings.Repeat("x", 1990) + s.GH + "\n",
	}})
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"tokens", map[string]any{"path": "a.txt"}, []string{
			"a.txt, lines 1-4 of 4", "     1→first", "     2→token = [REDACTED:github-token]", "     3→aws=[REDACTED:aws-access-key]", "     4→last"}},
		{"pem", map[string]any{"path": "id.txt"}, []string{"[REDACTED:private-key]"}},
		// The BEGIN line is not in the window: the body must still be masked.
		{"pem body window", map[string]any{"path": "id.txt", "offset": 3, "limit": 2}, []string{"id.txt, lines 3-4 of 6"}},
		{"auth header", map[string]any{"path": "h.txt"}, []string{"Authorization: Bearer [REDACTED"}},
		{"env keeps key", map[string]any{"path": ".env"}, []string{"OPENAI_API_KEY=[REDACTED:openai-key]", "DB_PASSWORD=[REDACTED", "PLAIN=hello"}},
		// Masking before the 2000-character line cut: no half token shown.
		{"line cut", map[string]any{"path": "long.go"}, []string{"line cut"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := x.call(t, "read", tc.args)
			if r.IsError {
				t.Fatalf("isError: %s", r.Text())
			}
			maskingWant(t, "read", r.Text(), tc.want...)
			maskingResult(t, s, "read", r)
		})
	}
	t.Run("redaction counts", func(t *testing.T) {
		r := x.call(t, "read", map[string]any{"path": "a.txt"})
		red, _ := r.Details["redactions"].(map[string]any)
		if red["github-token"] != float64(1) || red["aws-access-key"] != float64(1) {
			t.Errorf("details.redactions = %v, want github-token:1 aws-access-key:1", r.Details["redactions"])
		}
	})
	t.Run("callBatch", func(t *testing.T) {
		var res struct {
			Results []harness.Result `json:"results"`
		}
		calls := []map[string]any{
			{"name": "read", "arguments": map[string]any{"path": "a.txt"}},
			{"name": "grep", "arguments": map[string]any{"pattern": "token"}},
		}
		if err := x.c.Call(x.ctx, "tools/callBatch", map[string]any{"calls": calls}, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Results) != 2 {
			t.Fatalf("got %d results", len(res.Results))
		}
		for i, r := range res.Results {
			maskingResult(t, s, fmt.Sprintf("callBatch[%d]", i), r)
		}
		maskingWant(t, "batch read", res.Results[0].Text(), "[REDACTED:github-token]")
	})
	maskingNotesClean(t, s, x.c)
}

func TestSecretsMaskedGrep(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	files := map[string]string{
		"a.txt":  "alpha\ntoken = " + s.GH + "\nneedle here\nbeta\n",
		"id.txt": s.PEM(),
		"w.txt":  strings.Repeat("y", 490) + " needle2 " + s.GH2 + "\n",
	}
	for _, backend := range []string{"rg", "go"} {
		t.Run(backend, func(t *testing.T) {
			var env []string
			if backend == "go" {
				env = []string{"AGENTLS_GREP_BACKEND=go"}
			}
			x := maskingStart(t, maskingOpts{files: files, env: env})
			tests := []struct {
				name string
				args map[string]any
				want []string
			}{
				{"match line", map[string]any{"pattern": "token ="}, []string{"a.txt:2: token = [REDACTED:github-token]"}},
				{"context line", map[string]any{"pattern": "needle here", "context": 1}, []string{"a.txt-2- token = [REDACTED:github-token]", "a.txt:3: needle here"}},
				{"pem body line", map[string]any{"pattern": s.PEMBody[1][:10], "literal": true}, []string{"id.txt:3: [REDACTED:private-key]"}},
				// The 500-character grep line cut falls inside the token.
				{"line cut", map[string]any{"pattern": "needle2"}, []string{"w.txt:1:"}},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					r := x.call(t, "grep", tc.args)
					if r.IsError {
						t.Fatalf("isError: %s", r.Text())
					}
					maskingWant(t, "grep", r.Text(), tc.want...)
					maskingResult(t, s, "grep", r)
				})
			}
		})
	}
}

// A secret in a file name. docs/tools.md: "Every text part ... passes the
// secret masker". The same name printed by bash (`ls`) is masked, so the
// listing tools' text must be too.
func TestSecretsMaskedFileNames(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	name := s.GH + ".txt"
	x := maskingStart(t, maskingOpts{files: map[string]string{name: "hello needle\n"}})
	rb := x.call(t, "bash", map[string]any{"command": "ls"})
	maskingWant(t, "bash ls", rb.Text(), "[REDACTED:github-token].txt")
	maskingResult(t, s, "bash ls", rb)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"ls", map[string]any{}},
		{"find", map[string]any{"pattern": "*.txt"}},
		{"grep", map[string]any{"pattern": "needle"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			r := x.call(t, tc.tool, tc.args)
			t.Logf("%s: %s", tc.tool, r.Text())
			if r.IsError {
				t.Fatalf("isError: %s", r.Text())
			}
			maskingResult(t, s, tc.tool, r)
		})
	}
}

func TestSecretsMaskedBash(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	// The command line never holds the whole token: the shell assembles it.
	half := len(s.GH) / 2
	asm := fmt.Sprintf("t1=%s; t2=%s; ", s.GH[:half], s.GH[half:])
	x := maskingStart(t, maskingOpts{
		files: map[string]string{"id.txt": s.PEM(), ".env": "DB_PASSWORD=" + s.EnvValue + "\n"},
		env:   []string{"A5X_SERVICE_API_KEY=" + s.EnvVarVal},
	})
	tests := []struct {
		name    string
		command string
		isError bool
		want    []string
	}{
		{"stdout", asm + `echo "out ${t1}${t2}"`, false, []string{"out [REDACTED:github-token]"}},
		{"stderr", asm + `echo "err ${t1}${t2}" >&2`, false, []string{"err [REDACTED:github-token]"}},
		{"failing command", asm + `echo "fatal: bad credentials ${t1}${t2}"; exit 3`, true, []string{"[REDACTED:github-token]", "3"}},
		{"cat pem", "cat id.txt", false, []string{"[REDACTED:private-key]"}},
		{"cat env", "cat .env", false, []string{"DB_PASSWORD=[REDACTED"}},
		{"server env variable", `echo "k=$A5X_SERVICE_API_KEY"`, false, []string{"k=[REDACTED"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := x.call(t, "bash", map[string]any{"command": tc.command})
			if r.IsError != tc.isError {
				t.Errorf("isError = %v, want %v: %s", r.IsError, tc.isError, r.Text())
			}
			maskingWant(t, "bash", r.Text(), tc.want...)
			maskingResult(t, s, "bash", r)
		})
	}
	maskingNotesClean(t, s, x.c)
}

var maskingSpillRe = regexp.MustCompile(`read \{"path": "([^"]+)"`)

func TestSecretsMaskedBashSpill(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	half := len(s.GH) / 2
	cmd := fmt.Sprintf(`t1=%s; t2=%s; echo "error: auth failed ${t1}${t2}"; seq 1 3000; echo "tail ${t1}${t2}"`, s.GH[:half], s.GH[half:])
	x := maskingStart(t, maskingOpts{})
	r := x.call(t, "bash", map[string]any{"command": cmd})
	maskingResult(t, s, "bash spill result", r)
	maskingWant(t, "bash spill", r.Text(), "error: auth failed [REDACTED:github-token]", "tail [REDACTED:github-token]", "showing lines 1006-3002 of 3002")
	m := maskingSpillRe.FindStringSubmatch(r.Text())
	if m == nil {
		t.Fatalf("no spill read call in:\n%s", maskingShort(r.Text()))
	}
	rr := x.call(t, "read", map[string]any{"path": m[1], "limit": 3})
	if rr.IsError {
		t.Fatalf("read spill: %s", rr.Text())
	}
	maskingWant(t, "read spill", rr.Text(), "     1→error: auth failed [REDACTED:github-token]")
	maskingResult(t, s, "read spill", rr)
	rg := x.call(t, "grep", map[string]any{"pattern": "auth failed", "path": m[1]})
	maskingResult(t, s, "grep spill", rg)
	maskingNotesClean(t, s, x.c)
}

func TestSecretsMaskedBashProgress(t *testing.T) {
	slow(t)
	t.Parallel()
	s := maskingNewSecrets()
	half := len(s.GH) / 2
	cmd := fmt.Sprintf(`t1=%s; t2=%s; echo "live ${t1}${t2}"; echo "live2 $A5X_SERVICE_API_KEY"; sleep 1; echo done`, s.GH[:half], s.GH[half:])
	x := maskingStart(t, maskingOpts{env: []string{"A5X_SERVICE_API_KEY=" + s.EnvVarVal}})
	r := x.call(t, "bash", map[string]any{"command": cmd})
	maskingResult(t, s, "bash", r)
	maskingWant(t, "bash", r.Text(), "live [REDACTED:github-token]")
	progress := x.c.Notes("tools/progress")
	sawLive := false
	for _, n := range progress {
		if strings.Contains(string(n.Params), "live") {
			sawLive = true
		}
		maskingNoLeak(t, s, "tools/progress", n.Params)
	}
	if !sawLive {
		t.Errorf("no tools/progress carried the output (got %d notes)", len(progress))
	}
	maskingNotesClean(t, s, x.c)
}

// maskingDetailsNotes returns the tools/details params of one call.
func maskingDetailsNotes(c *harness.Client, callID string) []json.RawMessage {
	var out []json.RawMessage
	for _, n := range c.Notes("tools/details") {
		var p struct {
			CallID string `json:"callId"`
		}
		if json.Unmarshal(n.Params, &p) == nil && p.CallID == callID {
			out = append(out, n.Params)
		}
	}
	return out
}

func TestSecretsMaskedEdit(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	src := maskingGoFile(s)
	tests := []struct {
		name    string
		file    string
		edits   []map[string]any
		dryRun  bool
		isError bool
		want    []string
		disk    []string // substrings the file must hold afterwards
	}{
		{
			name:  "diff context holds the secret",
			file:  src,
			edits: []map[string]any{{"oldText": `const region = "eu-west-1"`, "newText": `const region = "us-east-1"`}},
			want:  []string{"Edited a.go"},
			disk:  []string{s.GH, `"us-east-1"`},
		},
		{
			name:  "new text holds a secret",
			file:  src,
			edits: []map[string]any{{"oldText": `const region = "eu-west-1"`, "newText": `const region = "eu-west-1"` + "\nconst token2 = \"" + s.GH2 + "\""}},
			want:  []string{"Edited a.go"},
			disk:  []string{s.GH, s.GH2},
		},
		{
			name:   "dry run",
			file:   src,
			edits:  []map[string]any{{"oldText": `const region = "eu-west-1"`, "newText": "const token2 = \"" + s.GH2 + "\""}},
			dryRun: true,
			disk:   []string{s.GH, "eu-west-1"},
		},
		{
			// Trailing whitespace differs: a fuzzy match whose snippet shows the changed lines.
			name:  "fuzzy snippet",
			file:  "package main\n\nconst token = \"" + s.GH + "\"   \nconst region = \"eu-west-1\"   \n",
			edits: []map[string]any{{"oldText": "const region = \"eu-west-1\"\n", "newText": "const region = \"eu-west-1\" // " + s.GH2 + "\n"}},
			want:  []string{"Edited a.go", "[REDACTED:github-token]"},
			disk:  []string{s.GH, s.GH2},
		},
		{
			// oldText copied from the masked read: it cannot match, and the
			// message says why instead of quoting the region.
			name:    "oldText with a copied mask says why it cannot match",
			file:    src,
			edits:   []map[string]any{{"oldText": "const token = \"[REDACTED:github-token]\"\nconst region = \"eu-west-1\"", "newText": "x"}},
			isError: true,
			want:    []string{"oldText of edit 1 contains [REDACTED:github-token]", "masked in what you read", "end before the masked part"},
			disk:    []string{s.GH},
		},
		{
			name:    "not found near an Authorization header",
			file:    "curl \\\n  -H 'Authorization: Bearer " + s.Bearer + "' \\\n  https://example.com\n",
			edits:   []map[string]any{{"oldText": "curl \\\n  -H 'Authorization: Bearer abc' \\\n  https://example.org", "newText": "x"}},
			isError: true,
			want:    []string{"closest region"},
		},
		{
			name:    "not found inside a PEM body",
			file:    s.PEM(),
			edits:   []map[string]any{{"oldText": s.PEMBody[1][:60] + "!!!!\n" + s.PEMBody[2], "newText": "x"}},
			isError: true,
		},
		{
			name:    "ambiguous",
			file:    "a = \"" + s.GH + "\"\nb = 1\na = \"" + s.GH + "\"\nb = 1\n",
			edits:   []map[string]any{{"oldText": "b = 1", "newText": "b = 2"}},
			isError: true,
			want:    []string{"add context or set replaceAll"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := maskingStart(t, maskingOpts{files: map[string]string{"a.go": tc.file}})
			rr := x.call(t, "read", map[string]any{"path": "a.go"})
			maskingResult(t, s, "read", rr)
			args := map[string]any{"path": "a.go", "edits": tc.edits}
			if tc.dryRun {
				args["dryRun"] = true
			}
			r := x.call(t, "edit", args)
			t.Logf("edit result: %s", r.Text())
			if r.IsError != tc.isError {
				t.Fatalf("isError = %v, want %v: %s", r.IsError, tc.isError, r.Text())
			}
			maskingWant(t, "edit", r.Text(), tc.want...)
			maskingResult(t, s, "edit", r)
			if !tc.isError {
				if d, _ := r.Details["unifiedDiff"].(string); d == "" {
					t.Errorf("details.unifiedDiff empty: %v", r.Details)
				}
				if !tc.dryRun && len(maskingDetailsNotes(x.c, r.CallID)) == 0 {
					t.Errorf("no tools/details for %s", r.CallID)
				}
			}
			maskingWant(t, "disk", readFile(t, filepath.Join(x.ws, "a.go")), tc.disk...)
			if strings.Contains(readFile(t, filepath.Join(x.ws, "a.go")), "REDACTED") {
				t.Errorf("the mask was written into the file")
			}
			maskingNotesClean(t, s, x.c)
		})
	}
}

func TestSecretsMaskedWrite(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	tests := []struct {
		name    string
		exists  bool
		content string
		kind    string
	}{
		{"overwrite drops a secret", true, "package main\n\nconst region = \"us-east-1\"\n", "write"},
		{"overwrite adds a secret", true, maskingGoFile(s) + "const k2 = \"" + s.GH2 + "\"\n", "write"},
		{"create with secrets", false, "AWS=" + s.AWS + "\n" + s.PEM(), "create"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			if tc.exists {
				files["a.go"] = maskingGoFile(s)
			}
			x := maskingStart(t, maskingOpts{files: files})
			if tc.exists {
				x.call(t, "read", map[string]any{"path": "a.go"})
			}
			r := x.call(t, "write", map[string]any{"path": "a.go", "content": tc.content})
			if r.IsError {
				t.Fatalf("write: %s", r.Text())
			}
			if r.Details["kind"] != tc.kind {
				t.Errorf("details.kind = %v, want %s", r.Details["kind"], tc.kind)
			}
			if d, _ := r.Details["unifiedDiff"].(string); d == "" {
				t.Errorf("details.unifiedDiff empty")
			}
			maskingResult(t, s, "write", r)
			if len(maskingDetailsNotes(x.c, r.CallID)) == 0 {
				t.Errorf("no tools/details")
			}
			if got := readFile(t, filepath.Join(x.ws, "a.go")); got != tc.content {
				t.Errorf("disk = %q, want the real content", got)
			}
			maskingNotesClean(t, s, x.c)
		})
	}
}

var maskingPlaceholderRe = regexp.MustCompile(`\[REDACTED:[a-z0-9-]+\]`)

// Round trip: the model only ever sees the placeholder.
func TestSecretsMaskedRoundTrip(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	src := maskingGoFile(s)
	t.Run("edit a nearby line", func(t *testing.T) {
		x := maskingStart(t, maskingOpts{files: map[string]string{"a.go": src}})
		x.call(t, "read", map[string]any{"path": "a.go"})
		r := x.call(t, "edit", map[string]any{"path": "a.go", "edits": []map[string]any{{"oldText": "const region = \"eu-west-1\"\n\nfunc main() {}", "newText": "const region = \"us-east-1\"\n\nfunc main() {}"}}})
		if r.IsError {
			t.Fatalf("edit: %s", r.Text())
		}
		if got, want := readFile(t, filepath.Join(x.ws, "a.go")), strings.Replace(src, "eu-west-1", "us-east-1", 1); got != want {
			t.Errorf("disk = %q, want %q", got, want)
		}
	})
	t.Run("oldText copied with the placeholder", func(t *testing.T) {
		x := maskingStart(t, maskingOpts{files: map[string]string{"a.go": src}})
		rr := x.call(t, "read", map[string]any{"path": "a.go"})
		maskingWant(t, "read", rr.Text(), `const token = "[REDACTED:github-token]"`)
		// What the model copies from the read: the masked token line plus the next.
		old := "const token = \"[REDACTED:github-token]\"\nconst region = \"eu-west-1\""
		r := x.call(t, "edit", map[string]any{"path": "a.go", "edits": []map[string]any{{"oldText": old, "newText": "const token = \"[REDACTED:github-token]\"\nconst region = \"us-east-1\""}}})
		t.Logf("edit with placeholder: isError=%v %s", r.IsError, r.Text())
		maskingResult(t, s, "edit", r)
		got := readFile(t, filepath.Join(x.ws, "a.go"))
		if strings.Contains(got, "REDACTED") || !strings.Contains(got, s.GH) {
			t.Fatalf("the secret was replaced by the mask on disk:\n%s", got)
		}
		if r.IsError {
			// Failing is acceptable only with a message that explains it: the
			// model cannot "copy oldText exactly" from a read that shows the mask.
			explain := maskingPlaceholderRe.ReplaceAllString(r.Text(), "")
			if !regexp.MustCompile(`(?i)redact|mask|secret|placeholder`).MatchString(explain) {
				t.Errorf("edit failed without naming the masked secret as the cause: %s", r.Text())
			}
		} else if want := strings.Replace(src, "eu-west-1", "us-east-1", 1); got != want {
			t.Errorf("disk = %q, want %q", got, want)
		}
	})
	t.Run("write content copied with the placeholder", func(t *testing.T) {
		x := maskingStart(t, maskingOpts{files: map[string]string{"a.go": src}})
		x.call(t, "read", map[string]any{"path": "a.go"})
		content := strings.Replace(strings.Replace(src, s.GH, "[REDACTED:github-token]", 1), "eu-west-1", "us-east-1", 1)
		r := x.call(t, "write", map[string]any{"path": "a.go", "content": content})
		t.Logf("write with placeholder: isError=%v %s", r.IsError, r.Text())
		got := readFile(t, filepath.Join(x.ws, "a.go"))
		if strings.Contains(got, "[REDACTED:github-token]") && !r.IsError &&
			!regexp.MustCompile(`(?i)redact|mask|secret|placeholder`).MatchString(maskingPlaceholderRe.ReplaceAllString(r.Text(), "")) {
			t.Errorf("write silently replaced the real secret with the placeholder; result: %s\ndisk:\n%s", r.Text(), got)
		}
	})
}

// maskingConfirmLog records server→client requests and answers them.
type maskingConfirmLog struct {
	mu   sync.Mutex
	reqs map[string][]json.RawMessage
}

func (l *maskingConfirmLog) handler(answer func(method string, p json.RawMessage) (any, error)) func(context.Context, string, json.RawMessage) (any, error) {
	return func(_ context.Context, method string, p json.RawMessage) (any, error) {
		l.mu.Lock()
		if l.reqs == nil {
			l.reqs = map[string][]json.RawMessage{}
		}
		l.reqs[method] = append(l.reqs[method], p)
		l.mu.Unlock()
		return answer(method, p)
	}
}

func (l *maskingConfirmLog) get(method string) []json.RawMessage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]json.RawMessage(nil), l.reqs[method]...)
}

func TestSecretsMaskedConfirm(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	allow := func(method string, _ json.RawMessage) (any, error) {
		return map[string]any{"decision": "allowOnce"}, nil
	}
	t.Run("write preview", func(t *testing.T) {
		var log maskingConfirmLog
		x := maskingStart(t, maskingOpts{mode: "default", confirm: true, onRequest: log.handler(allow),
			files: map[string]string{"a.go": maskingGoFile(s)}})
		x.call(t, "read", map[string]any{"path": "a.go"})
		r := x.call(t, "write", map[string]any{"path": "a.go", "content": maskingGoFile(s) + "const k2 = \"" + s.GH2 + "\"\n"})
		if r.IsError {
			t.Fatalf("write: %s", r.Text())
		}
		maskingResult(t, s, "write", r)
		reqs := log.get("tools/confirm")
		if len(reqs) != 1 {
			t.Fatalf("%d tools/confirm requests, want 1", len(reqs))
		}
		var p struct {
			Arguments json.RawMessage `json:"arguments"`
			Preview   json.RawMessage `json:"preview"`
		}
		if err := json.Unmarshal(reqs[0], &p); err != nil {
			t.Fatal(err)
		}
		t.Logf("tools/confirm arguments leak: %v; preview leak: %v", maskingLeaks(s, string(p.Arguments)), maskingLeaks(s, string(p.Preview)))
		if len(p.Preview) == 0 || !strings.Contains(string(p.Preview), "unifiedDiff") {
			t.Errorf("no preview diff: %s", reqs[0])
		}
		// preview is details (docs/protocol.md: preview?: details) carrying file text.
		maskingNoLeak(t, s, "tools/confirm preview", p.Preview)
	})
	t.Run("bash command line", func(t *testing.T) {
		var log maskingConfirmLog
		x := maskingStart(t, maskingOpts{mode: "default", confirm: true, onRequest: log.handler(allow)})
		r := x.call(t, "bash", map[string]any{"command": "curl -s -H 'Authorization: token " + s.GH + "' http://127.0.0.1:9/ > out.txt; echo sent"})
		maskingResult(t, s, "bash", r)
		reqs := log.get("tools/confirm")
		if len(reqs) != 1 {
			t.Fatalf("%d tools/confirm requests, want 1", len(reqs))
		}
		var p struct {
			Arguments json.RawMessage `json:"arguments"`
			Preview   json.RawMessage `json:"preview"`
		}
		if err := json.Unmarshal(reqs[0], &p); err != nil {
			t.Fatal(err)
		}
		t.Logf("tools/confirm bash: arguments leak %v; preview %s", maskingLeaks(s, string(p.Arguments)), maskingShort(string(p.Preview)))
		// preview carries command text, so the masker applies (docs/tools.md "Secrets").
		maskingNoLeak(t, s, "tools/confirm preview (bash)", p.Preview)
	})
}

func TestSecretsMaskedDiagnostics(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	var log maskingConfirmLog
	answer := func(method string, p json.RawMessage) (any, error) {
		var q struct {
			URIs   []string `json:"uris"`
			WaitMs float64  `json:"waitMs"`
		}
		if err := json.Unmarshal(p, &q); err != nil {
			return nil, err
		}
		var items []map[string]any
		for _, u := range q.URIs {
			diags := []map[string]any{}
			if q.WaitMs > 0 {
				diags = append(diags, map[string]any{
					"range":    map[string]any{"start": map[string]any{"line": 2, "character": 0}, "end": map[string]any{"line": 2, "character": 5}},
					"severity": 1, "source": "a5x",
					"message": "hardcoded credential " + s.GH2,
				})
			}
			items = append(items, map[string]any{"uri": u, "diagnostics": diags})
		}
		return map[string]any{"items": items}, nil
	}
	x := maskingStart(t, maskingOpts{diagnostics: true, onRequest: log.handler(answer), files: map[string]string{"a.go": maskingGoFile(s)}})
	x.call(t, "read", map[string]any{"path": "a.go"})
	r := x.call(t, "edit", map[string]any{"path": "a.go", "edits": []map[string]any{{"oldText": "eu-west-1", "newText": "us-east-1"}}})
	if r.IsError {
		t.Fatalf("edit: %s", r.Text())
	}
	if len(log.get("tools/diagnostics")) == 0 {
		t.Fatal("no tools/diagnostics request")
	}
	for _, p := range log.get("tools/diagnostics") {
		maskingNoLeak(t, s, "tools/diagnostics params", p)
	}
	maskingWant(t, "edit", r.Text(), "The editor reports new problems in a.go:", "hardcoded credential [REDACTED:github-token]")
	maskingResult(t, s, "edit with diagnostics", r)
	maskingNotesClean(t, s, x.c)
}

// maskingApply applies LSP TextEdits (ASCII text) to text.
func maskingApply(t *testing.T, text string, edits []struct {
	Range struct {
		Start, End struct{ Line, Character int }
	}
	NewText string
}) string {
	t.Helper()
	lines := strings.SplitAfter(text, "\n")
	off := func(l, c int) int {
		n := 0
		for i := 0; i < l && i < len(lines); i++ {
			n += len(lines[i])
		}
		return n + c
	}
	out := text
	for i := len(edits) - 1; i >= 0; i-- { // LSP edits do not overlap; apply from the end
		e := edits[i]
		a, b := off(e.Range.Start.Line, e.Range.Start.Character), off(e.Range.End.Line, e.Range.End.Character)
		out = out[:a] + e.NewText + out[b:]
	}
	return out
}

func TestSecretsMaskedApplyEdit(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	src := maskingGoFile(s)
	var log maskingConfirmLog
	var docMu sync.Mutex
	doc := src
	var x maskingSession
	answer := func(method string, p json.RawMessage) (any, error) {
		if method != "workspace/applyEdit" {
			return nil, fmt.Errorf("unexpected %s", method)
		}
		var q struct {
			Edit struct {
				DocumentChanges []struct {
					TextDocument struct {
						URI     string `json:"uri"`
						Version int    `json:"version"`
					} `json:"textDocument"`
					Edits []struct {
						Range struct {
							Start, End struct{ Line, Character int }
						}
						NewText string
					} `json:"edits"`
				} `json:"documentChanges"`
			} `json:"edit"`
		}
		if err := json.Unmarshal(p, &q); err != nil || len(q.Edit.DocumentChanges) != 1 {
			return map[string]any{"applied": false, "failureReason": "a5x: bad params"}, nil
		}
		dc := q.Edit.DocumentChanges[0]
		docMu.Lock()
		doc = maskingApply(t, doc, dc.Edits)
		text := doc
		docMu.Unlock()
		go x.c.Conn.Notify(context.Background(), "textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": dc.TextDocument.URI, "version": dc.TextDocument.Version + 1},
			"contentChanges": []map[string]any{{"text": text}},
		})
		return map[string]any{"applied": true}, nil
	}
	x = maskingStart(t, maskingOpts{applyEdit: true, onRequest: log.handler(answer), files: map[string]string{"a.go": src}})
	uri := "file://" + filepath.Join(x.ws, "a.go")
	if err := x.c.Conn.Notify(x.ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "go", "version": 1, "text": src}}); err != nil {
		t.Fatal(err)
	}
	rr := x.call(t, "read", map[string]any{"path": "a.go"})
	maskingWant(t, "read", rr.Text(), "[REDACTED:github-token]")
	maskingResult(t, s, "read open doc", rr)
	r := x.call(t, "edit", map[string]any{"path": "a.go", "edits": []map[string]any{{"oldText": `const region = "eu-west-1"`, "newText": "const region = \"eu-west-1\"\nconst k2 = \"" + s.GH2 + "\""}}})
	if r.IsError {
		t.Fatalf("edit: %s", r.Text())
	}
	maskingWant(t, "edit", r.Text(), "in the editor")
	maskingResult(t, s, "edit of open doc", r)
	if len(log.get("workspace/applyEdit")) != 1 {
		t.Fatalf("%d workspace/applyEdit requests, want 1", len(log.get("workspace/applyEdit")))
	}
	// The editor applies what it is sent: it needs the real text, not the mask.
	docMu.Lock()
	got := doc
	docMu.Unlock()
	if want := strings.Replace(src, `const region = "eu-west-1"`, "const region = \"eu-west-1\"\nconst k2 = \""+s.GH2+"\"", 1); got != want {
		t.Errorf("document after workspace/applyEdit = %q, want %q", got, want)
	}
	maskingNotesClean(t, s, x.c)
}

func TestSecretsMaskedExternalChange(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	x := maskingStart(t, maskingOpts{files: map[string]string{"a.go": maskingGoFile(s)}})
	x.call(t, "read", map[string]any{"path": "a.go"})
	if err := os.WriteFile(filepath.Join(x.ws, "a.go"), []byte(maskingGoFile(s)+"// "+s.GH2+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := x.c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "workspace/externalChange" }); !ok {
		t.Fatal("no workspace/externalChange")
	}
	r := x.call(t, "bash", map[string]any{"command": "cat a.go"})
	maskingResult(t, s, "bash cat", r)
	maskingNotesClean(t, s, x.c)
}

func TestSecretsMaskedLogMessage(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	settings := `{"permissions": {"allow": ["Bash(curl -H 'Authorization: token ` + s.GH + `'"]}}`
	ext := `{"name": "a5x bad name", "description": "uses ` + s.GH2 + `", "inputSchema": {"type": "object"}, "command": "echo ` + s.GH2 + `"}`
	x := maskingStart(t, maskingOpts{files: map[string]string{
		".agentls/settings.json":  settings,
		".agentls/tools/bad.json": ext,
	}})
	if _, ok := x.c.WaitNote(5*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "bad.json")
	}); !ok {
		t.Logf("no window/logMessage naming bad.json; got %d log messages", len(x.c.Notes("window/logMessage")))
	}
	x.call(t, "read", map[string]any{"path": ".agentls/settings.json"}) // a round trip, so earlier notes are in
	for _, n := range x.c.Notes("window/logMessage") {
		t.Logf("logMessage: %s", maskingShort(string(n.Params)))
		maskingNoLeak(t, s, "window/logMessage", n.Params)
	}
}

func TestSecretsMaskedExtensionTool(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	def := map[string]any{
		"name": "mask_show", "description": "Print a value and the secret file.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"value": map[string]any{"type": "string"}}},
		"command":     "printf 'value=%s\\n' {{value}}; cat id.txt",
		"readOnly":    true, "deferred": false,
	}
	b, _ := json.Marshal(def)
	x := maskingStart(t, maskingOpts{files: map[string]string{".agentls/tools/mask_show.json": string(b), "id.txt": s.PEM()}})
	r := x.call(t, "mask_show", map[string]any{"value": s.GH})
	if r.IsError {
		t.Fatalf("mask_show: %s", r.Text())
	}
	maskingWant(t, "mask_show", r.Text(), "value=[REDACTED:github-token]", "[REDACTED:private-key]")
	maskingResult(t, s, "extension tool", r)
	maskingNotesClean(t, s, x.c)
}

func TestSecretsMaskedAuditLog(t *testing.T) {
	t.Parallel()
	s := maskingNewSecrets()
	dir := t.TempDir()
	x := maskingStart(t, maskingOpts{env: []string{"AGENTLS_AUDIT_DIR=" + dir}, files: map[string]string{"a.go": maskingGoFile(s)}})
	x.call(t, "read", map[string]any{"path": "a.go"})
	x.call(t, "bash", map[string]any{"command": "echo " + s.GH2 + " > /dev/null; echo AWS=" + s.AWS})
	x.call(t, "write", map[string]any{"path": "b.txt", "content": "DB_PASSWORD=" + s.EnvValue + "\n" + s.PEM()})
	x.call(t, "edit", map[string]any{"path": "a.go", "edits": []map[string]any{{"oldText": "eu-west-1", "newText": "eu-west-1 // Authorization: Bearer " + s.Bearer}}})
	x.call(t, "grep", map[string]any{"pattern": s.GH2})
	if code := x.c.Shutdown(x.ctx); code != 0 {
		t.Errorf("exit code %d", code)
	}
	var all strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		all.WriteString(readFile(t, p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(all.String(), "\n") < 5 {
		t.Fatalf("audit log has fewer than 5 lines:\n%s", all.String())
	}
	maskingWant(t, "audit log", all.String(), `"tool":"bash"`)
	maskingNoLeak(t, s, "audit log file", all.String())
	cmd := harness.Command(t, []string{"audit", "--tail", "20"}, "AGENTLS_AUDIT_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agentls audit: %v\n%s", err, out)
	}
	maskingNoLeak(t, s, "agentls audit --tail", string(out))
}
