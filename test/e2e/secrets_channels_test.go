package e2e

// Secret masking on every channel that leaves the server (docs/tools.md
// "Secret masking"). Every token is assembled at run time from parts, so no
// literal secret is in the source.

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
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
	channelsB64    = channelsAlnum + "+/"
)

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
	kind, value, line string
	frags             []string
}

func channelsSingle(kind, prefix, body, linePrefix string) channelsTok {
	v := prefix + body
	return channelsTok{kind: kind, value: v, line: linePrefix + v, frags: []string{body[:16], body[len(body)-16:]}}
}

// channelsTokens builds one token of each kind docs/tools.md lists.
func channelsTokens() []channelsTok {
	b64url := base64.RawURLEncoding
	jwtHead := b64url.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	jwtBody := b64url.EncodeToString([]byte(`{"sub":"chan-` + channelsRand("jwtsub", 20, channelsAlnum) + `","iat":1700000000}`))
	jwtSig := channelsRand("jwtsig", 43, channelsAlnum+"-_")
	jwt := jwtHead + "." + jwtBody + "." + jwtSig

	pem, pemFrags := "-----BEGIN "+"RSA PRIVATE"+" KEY-----\n", []string{}
	for i := range 6 {
		l := channelsRand(fmt.Sprint("pem", i), 64, channelsB64)
		if i == 5 {
			l = channelsRand("pemlast", 28, channelsB64) + "=="
		}
		pemFrags, pem = append(pemFrags, l[:20]), pem+l+"\n"
	}
	pem += "-----END " + "RSA PRIVATE" + " KEY-----"

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
		{kind: "url-password", value: urlpw, line: "remote https://chan:" + urlpw + "@git.example.com/repo.git", frags: []string{urlpw}},
		{kind: "github-glued", value: "gh" + "p_" + glued, line: "id_" + "gh" + "p_" + glued, frags: []string{glued[:16], glued[20:]}},
		{kind: "github-escaped", value: "gh" + "p_" + escaped, line: "https://x.example/?token%3D" + "gh" + "p_" + escaped, frags: []string{escaped[:16], escaped[20:]}},
		{kind: "pem", value: pem, line: pem, frags: pemFrags},
	}
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

// channelsNotes is every notification received so far, as one string.
func channelsNotes(c *harness.Client, method string) string {
	var b strings.Builder
	for _, n := range c.Notes(method) {
		b.WriteString(n.Method + " " + string(n.Params) + "\n")
	}
	return b.String()
}

type channelsOpts struct {
	mode                            string
	confirm, applyEdit, diagnostics bool // client capabilities
	env, args                       []string
	extra                           map[string]any // extra initializationOptions
}

// chanSession is one agentls session over a workspace holding secrets; call
// fails the test when any planted secret is in the result it returns.
type chanSession struct {
	t    *testing.T
	c    *harness.Client
	ctx  context.Context
	ws   string
	toks []channelsTok

	mu       sync.Mutex
	requests []string // server→client requests, method and params
}

func (s *chanSession) call(tool string, args map[string]any) harness.Result {
	s.t.Helper()
	r, err := s.c.TryCallTool(s.ctx, tool, args)
	if err != nil {
		channelsNoLeak(s.t, "protocol error of "+tool, err.Error(), s.toks)
		s.t.Fatalf("%s: protocol error instead of a result: %v", tool, err)
	}
	channelsNoLeak(s.t, tool+" "+compactJSON(args)[:min(60, len(compactJSON(args)))], compactJSON(r), s.toks)
	return r
}

func (s *chanSession) asked() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.requests, "\n")
}

func (s *chanSession) disk(name string) string { return readFile(s.t, filepath.Join(s.ws, name)) }

// Every channel a secret could leave the server by masks it, for every kind
// docs/tools.md lists: tool results and their details, tools/details,
// tools/progress, tools/confirm, window/logMessage, the log file, errors
// that echo arguments; the disk and the editor get the real bytes. Each row
// also checks every notification of its session. The audit log is
// internal/audit's TestRecordMasksEveryString and TestHookMasksUnknownToolName;
// grep's context lines, file names and key bodies, lines cut after masking,
// `agentls call` and write are scripts' (grep/secrets_masked_in_context_and_names,
// grep/private_key_body_masked, governance/masking_one_line_json_key_before_line_cut,
// governance/masking_call_echo, write/secret_content_written_masked_in_result).
func TestSecretsAreMaskedInEveryOutputChannel(t *testing.T) {
	t.Parallel()
	toks := channelsTokens()
	secrets, kind := "# chan fixture\n", map[string]channelsTok{} // one line per token (the PEM block spans several)
	for _, tk := range toks {
		secrets, kind[tk.kind] = secrets+tk.line+"\n", tk
	}
	secrets += "end of fixture\n"
	gh, aws, slack, google, gl, pem := kind["github"], kind["aws"], kind["slack"], kind["google"], kind["gitlab"], kind["pem"]
	envVal := channelsRand("envsecret", 30, channelsAlnum)
	withEnv := append(append([]channelsTok{}, toks...), channelsTok{kind: "env-value", value: envVal, frags: []string{envVal}})
	goFile := "package main\n\nconst token = \"" + gh.value + "\"\nconst region = \"eu-west-1\"\n\nfunc main() {}\n"
	var longLog strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&longLog, "progress line %d of a long build log, nothing to see here\n", i)
		if i == 1000 {
			for _, tk := range toks {
				if tk.kind != "pem" {
					longLog.WriteString("FAIL: request with " + tk.line + " was rejected\n")
				}
			}
		}
	}
	rows := []struct {
		name  string
		files map[string]string
		opts  channelsOpts
		// answer, when set, answers server→client requests (and declares the capabilities).
		answer func(s *chanSession, method string, params json.RawMessage) (any, error)
		run    func(t *testing.T, s *chanSession)
	}{
		{name: "read shows each kind as its placeholder and keeps the key", files: map[string]string{"s.txt": secrets},
			run: func(t *testing.T, s *chanSession) {
				text := s.call("read", map[string]any{"path": "s.txt"}).Text()
				wantContains(t, "read", text, "github token [REDACTED:github-token]", "OPENAI_API_KEY=[REDACTED:openai-key]",
					"id_[REDACTED:github-token]", "token%3D[REDACTED:github-token]", "[REDACTED:private-key]")
				for _, tk := range toks {
					if key := strings.SplitN(tk.line, tk.value, 2)[0]; tk.kind != "pem" && !regexp.MustCompile(regexp.QuoteMeta("→"+key)+`\[REDACTED:[a-z0-9-]+\]`).MatchString(text) {
						t.Errorf("%s: no line %q followed by a placeholder", tk.kind, key)
					}
				}
			}},
		{name: "grep's redaction count says nothing of files the deny rules hide",
			files: map[string]string{"open.txt": gh.line + "\n", "hidden/s.txt": secrets, ".agentls/settings.json": `{"permissions": {"deny": ["Read(hidden/**)"]}}`},
			opts:  channelsOpts{env: []string{"XDG_CONFIG_HOME=/nonexistent"}},
			run: func(t *testing.T, s *chanSession) {
				for _, args := range []map[string]any{{"pattern": "."}, {"pattern": "token|key|pass|BEGIN|jwt"}, {"pattern": ".", "output": "count"}, {"pattern": ".", "output": "files"}} {
					r := s.call("grep", args)
					red := compactJSON(r.Details["redactions"])
					wantLacks(t, fmt.Sprint("grep redactions ", args), red, "pem", "private-key", "aws", "jwt", "slack")
					if args["output"] == nil {
						wantContains(t, fmt.Sprint("grep redactions ", args), red, "github")
					}
					wantLacks(t, fmt.Sprint("grep ", args), r.Text(), "hidden/s.txt")
				}
			}},
		{name: "edit result, diff, fuzzy snippet, dryRun, closest region and several matches",
			files: map[string]string{"code.txt": "start\nkey = \"old\"\nalpha   \n" + aws.line + "\nbefore google\n" + google.line + "\nafter google\ndup marker " + gl.value + "\ndup marker " + gl.value + "\nend\n",
				"key.txt": pem.line + "\ntail\n"},
			run: func(t *testing.T, s *chanSession) {
				edit := func(args map[string]any) harness.Result {
					s.call("read", map[string]any{"path": args["path"]})
					return s.call("edit", args)
				}
				one := func(path, old, new string) map[string]any {
					return map[string]any{"path": path, "edits": []any{map[string]any{"oldText": old, "newText": new}}}
				}
				r := edit(one("code.txt", `key = "old"`, `key = "`+gh.value+`"`))
				wantContains(t, "edit diff", fmt.Sprint(r.Details["unifiedDiff"]), `+key = "[REDACTED:github-token]"`)
				wantContains(t, "edit TextEdits", compactJSON(r.Details["edits"]), "[REDACTED:github-token]")
				wantContains(t, "disk", s.disk("code.txt"), `key = "`+gh.value+`"`)
				wantResult(t, "fuzzy edit", edit(one("code.txt", "alpha\n"+aws.line, "beta\n"+aws.line+" # kept")), false, "[REDACTED:")
				wantContains(t, "disk after the fuzzy edit", s.disk("code.txt"), "beta\n"+aws.line+" # kept\n")
				before := s.disk("code.txt")
				dry := one("code.txt", "start", "start "+slack.value)
				dry["dryRun"] = true
				if r := edit(dry); !strings.Contains(r.Text()+compactJSON(r.Details), "[REDACTED:") || s.disk("code.txt") != before {
					t.Errorf("dryRun: want a masked diff and no change: %s", r.Text())
				}
				wantResult(t, "closest region", edit(one("code.txt", "before googlx\ngoogle_key = AIza\nafter googlx", "x")), true, "google_key", "[REDACTED:")
				wantResult(t, "several matches", edit(one("code.txt", "dup marker", "x")), true, "add context or set replaceAll")
				edit(one("key.txt", "tail", "tail2")) // the hunk's context is the key's body
				for _, tk := range toks {
					if tk.kind != "pem" {
						s.c.CallTool(s.ctx, "write", map[string]any{"path": "rm.txt", "content": tk.line + "\nx\n"})
						edit(one("rm.txt", tk.line+"\n", "removed\n")) // the diff's removed line
					}
				}
				if len(s.c.Notes("tools/details")) == 0 {
					t.Errorf("no tools/details notification was sent")
				}
			}},
		{name: "an oldText copied with the placeholder keeps the secret on disk", files: map[string]string{"a.go": goFile},
			run: func(t *testing.T, s *chanSession) {
				wantContains(t, "read", s.call("read", map[string]any{"path": "a.go"}).Text(), `const token = "[REDACTED:github-token]"`)
				r := s.call("edit", map[string]any{"path": "a.go", "edits": []any{map[string]any{
					"oldText": "const token = \"[REDACTED:github-token]\"\nconst region = \"eu-west-1\"", "newText": "const token = \"[REDACTED:github-token]\"\nconst region = \"us-east-1\""}}})
				got := s.disk("a.go")
				if strings.Contains(got, "REDACTED") || !strings.Contains(got, gh.value) {
					t.Fatalf("the placeholder replaced the secret on disk:\n%s", got)
				}
				if r.IsError && !regexp.MustCompile(`(?i)redact|mask|secret|placeholder`).MatchString(strings.ReplaceAll(r.Text(), "[REDACTED:github-token]", "")) {
					t.Errorf("the edit failed without naming the masked secret as the cause: %s", r.Text())
				} else if !r.IsError && got != strings.Replace(goFile, "eu-west-1", "us-east-1", 1) {
					t.Errorf("disk = %q", got)
				}
			}},
		{name: "bash output, progress and a secret variable of the server's environment", files: map[string]string{"s.txt": secrets},
			opts: channelsOpts{env: []string{"CHAN_SERVICE_SECRET=" + envVal}},
			run: func(t *testing.T, s *chanSession) {
				s.toks = withEnv
				half := len(gh.value) / 2
				r := s.call("bash", map[string]any{"command": fmt.Sprintf(`t1=%s; t2=%s; echo "live ${t1}${t2}"; for i in 1 2 3 4; do cat s.txt; sleep 0.15; done; printf 'env %%s\n' "$CHAN_SERVICE_SECRET"`, gh.value[:half], gh.value[half:])})
				wantContains(t, "bash", r.Text(), "live [REDACTED:github-token]", "github token [REDACTED:github-token]")
				if !regexp.MustCompile(`env \[REDACTED:[a-z0-9-]+\]`).MatchString(r.Text()) {
					t.Errorf("the variable's value is not a placeholder:\n%s", r.Text())
				}
				wantContains(t, "tools/progress", channelsNotes(s.c, "tools/progress"), "[REDACTED:")
			}},
		{name: "bash failure lines picked out of the spilled part, and a read of the spill file",
			files: map[string]string{"build.log": longLog.String()},
			run: func(t *testing.T, s *chanSession) {
				r := s.call("bash", map[string]any{"command": "cat build.log; exit 1"})
				wantContains(t, "bash", r.Text(), "FAIL: request with github token [REDACTED:github-token] was rejected")
				m := regexp.MustCompile(`"path":\s*"([^"]+)"`).FindStringSubmatch(r.Text())
				if m == nil {
					t.Fatalf("no read call in the notice:\n%.2000s", r.Text())
				}
				if raw, err := os.ReadFile(m[1]); err != nil || !strings.Contains(string(raw), gh.value) {
					t.Errorf("the spill file should hold the raw output (%v)", err)
				}
				wantContains(t, "read spill", s.call("read", map[string]any{"path": m[1], "offset": 1000, "limit": 40}).Text(), "[REDACTED:github-token]")
			}},
		{name: "tools/confirm arguments, preview and reason, and the denial", files: map[string]string{"a.txt": "one\ntwo\n", gh.value + ".txt": "x\n"},
			opts: channelsOpts{mode: "default", confirm: true},
			answer: func(s *chanSession, method string, params json.RawMessage) (any, error) {
				return map[string]any{"decision": "rejectOnce", "message": "no"}, nil
			},
			run: func(t *testing.T, s *chanSession) {
				s.call("read", map[string]any{"path": "a.txt"})
				for _, c := range []struct {
					tool string
					args map[string]any
				}{
					{"bash", map[string]any{"command": "printf '%s\\n' " + gh.value + " > out.txt"}},
					{"bash", map[string]any{"command": "rm -rf ./" + gh.value + ".txt"}},
					{"bash", map[string]any{"command": "curl -H 'Authorization: Bearer " + kind["authorization"].value + "' https://example.invalid"}},
					{"edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "two", "newText": "two " + slack.value}}}},
					{"write", map[string]any{"path": "b.txt", "content": aws.line + "\n"}},
				} {
					wantResult(t, c.tool, s.call(c.tool, c.args), true, "denied by the user")
				}
				qs := strings.Split(s.asked(), "\n")
				if len(qs) != 5 {
					t.Fatalf("%d questions, want 5", len(qs))
				}
				for _, q := range qs {
					var p struct {
						Reason             string
						Arguments, Preview map[string]any
					}
					json.Unmarshal([]byte(strings.TrimPrefix(q, "tools/confirm ")), &p)
					if p.Reason == "" || !strings.Contains(compactJSON(p.Arguments), "[REDACTED:") || !strings.Contains(compactJSON(p.Preview), "[REDACTED:") {
						t.Errorf("want a reason, and placeholders in the arguments and the preview: %.300s", q)
					}
				}
				if _, err := os.Stat(filepath.Join(s.ws, gh.value+".txt")); err != nil {
					t.Errorf("a rejected rm removed the file")
				}
			}},
		{name: "editor diagnostics quoted in an edit's result", files: map[string]string{"a.go": goFile},
			opts: channelsOpts{diagnostics: true},
			answer: func(s *chanSession, method string, params json.RawMessage) (any, error) {
				var q struct {
					URIs   []string `json:"uris"`
					WaitMs float64  `json:"waitMs"`
				}
				json.Unmarshal(params, &q)
				var items []map[string]any
				for _, u := range q.URIs {
					diags := []map[string]any{}
					if q.WaitMs > 0 {
						diags = append(diags, map[string]any{"severity": 1, "source": "vet", "message": "hardcoded credential " + slack.value,
							"range": map[string]any{"start": map[string]any{"line": 2, "character": 0}, "end": map[string]any{"line": 2, "character": 5}}})
					}
					items = append(items, map[string]any{"uri": u, "diagnostics": diags})
				}
				return map[string]any{"items": items}, nil
			},
			run: func(t *testing.T, s *chanSession) {
				s.call("read", map[string]any{"path": "a.go"})
				r := s.call("edit", map[string]any{"path": "a.go", "edits": []any{map[string]any{"oldText": "eu-west-1", "newText": "us-east-1"}}})
				wantContains(t, "edit", r.Text(), "The editor reports new problems in a.go:", "hardcoded credential [REDACTED:slack")
				if !strings.Contains(s.asked(), "tools/diagnostics") {
					t.Errorf("no tools/diagnostics request")
				}
			}},
		{name: "an edit of an open document: the editor is sent the real text", files: map[string]string{"a.go": goFile},
			opts: channelsOpts{applyEdit: true},
			answer: func(s *chanSession, method string, params json.RawMessage) (any, error) {
				var q struct {
					Edit struct {
						DocumentChanges []struct {
							TextDocument struct {
								URI     string `json:"uri"`
								Version int    `json:"version"`
							} `json:"textDocument"`
							Edits []struct{ NewText string } `json:"edits"`
						} `json:"documentChanges"`
					} `json:"edit"`
				}
				json.Unmarshal(params, &q)
				if len(q.Edit.DocumentChanges) != 1 || !strings.Contains(compactJSON(q), slack.value) {
					return map[string]any{"applied": false, "failureReason": "the edit lacks the real text"}, nil
				}
				dc := q.Edit.DocumentChanges[0]
				// The real text: applied here by writing the expected result.
				want := strings.Replace(goFile, `const region = "eu-west-1"`, "const region = \"eu-west-1\"\nconst k2 = \""+slack.value+"\"", 1)
				go s.c.Conn.Notify(context.Background(), "textDocument/didChange", map[string]any{
					"textDocument": map[string]any{"uri": dc.TextDocument.URI, "version": dc.TextDocument.Version + 1}, "contentChanges": []map[string]any{{"text": want}}})
				return map[string]any{"applied": true}, nil
			},
			run: func(t *testing.T, s *chanSession) {
				s.c.Conn.Notify(s.ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": fileURI(filepath.Join(s.ws, "a.go")), "languageId": "go", "version": 1, "text": goFile}})
				wantContains(t, "read", s.call("read", map[string]any{"path": "a.go"}).Text(), "[REDACTED:github-token]")
				r := s.call("edit", map[string]any{"path": "a.go", "edits": []any{map[string]any{"oldText": `const region = "eu-west-1"`, "newText": "const region = \"eu-west-1\"\nconst k2 = \"" + slack.value + "\""}}})
				wantResult(t, "edit", r, false, "in the editor")
				if n := strings.Count(s.asked(), "workspace/applyEdit"); n != 1 {
					t.Errorf("%d workspace/applyEdit requests, want 1", n)
				}
			}},
		{name: "window/logMessage and the debug log file",
			files: map[string]string{".agentls/settings.json": `{"permissions": {"allow": ["Bash(echo ` + gh.value + `"]}}`, "s.txt": secrets,
				".agentls/tools/bad.json": `{"name": "bad name", "description": "uses ` + gl.value + `", "inputSchema": {"type": "object"}, "command": "echo ` + gl.value + `"}`},
			opts: channelsOpts{args: []string{"--log-level", "debug"}, extra: map[string]any{"chan_" + slack.value: true}},
			run: func(t *testing.T, s *chanSession) {
				for _, what := range []string{"settings.json", "chan_", "bad.json"} {
					if _, ok := s.c.WaitNote(10*time.Second, func(n harness.Note) bool {
						return n.Method == "window/logMessage" && strings.Contains(string(n.Params), what)
					}); !ok {
						t.Errorf("no window/logMessage about %s: %s", what, channelsNotes(s.c, "window/logMessage"))
					}
				}
				s.call("bash", map[string]any{"command": "cat s.txt; exit 3"})
				s.call("nosuchtool_"+gh.value, map[string]any{})
				wantContains(t, "window/logMessage", channelsNotes(s.c, "window/logMessage"), "[REDACTED:")
				s.c.Shutdown(s.ctx)
				channelsNoLeak(t, "--log-file (debug)", readFile(t, s.ws+".log"), toks)
			}},
		{name: "errors that echo the arguments", files: map[string]string{"s.txt": "x\n"},
			run: func(t *testing.T, s *chanSession) {
				for _, c := range []struct {
					tool string
					args map[string]any
				}{
					{"read", map[string]any{"path": "s.txt", "offset": gh.value}},
					{"read", map[string]any{"path": "dir/" + gl.value + ".txt"}},
					{"grep", map[string]any{"pattern": "(" + google.value}},
					{"grep", map[string]any{"pattern": "x", "context": aws.value}},
					{"find", map[string]any{"pattern": "[" + gh.value}},
					{"ls", map[string]any{"path": gh.value}},
					{"bash", map[string]any{"command": "true", "cwd": gl.value}},
					{"bash", map[string]any{"command": "true", "timeout": google.value}},
					{"x_" + gh.value, map[string]any{}},
					{"edit", map[string]any{"path": aws.value + ".go", "edits": []any{map[string]any{"oldText": "a", "newText": "b"}}}},
				} {
					if r := s.call(c.tool, c.args); !r.IsError {
						t.Errorf("%s %v: want isError, got %s", c.tool, c.args, r.Text())
					}
				}
			}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t, 60*time.Second)
			ws := newWorkspace(t, row.files)
			o := row.opts
			io := map[string]any{"mode": cmp.Or(o.mode, "bypass")}
			maps.Copy(io, o.extra)
			s := &chanSession{t: t, ctx: ctx, ws: ws, toks: toks}
			s.c = harness.Start(t, harness.Options{Root: ws, Env: append(o.env, "AGENTLS_AUDIT_DIR="+ws+".audit"), Args: append(o.args, "--log-file", ws+".log")})
			s.c.OnRequest = func(_ context.Context, method string, params json.RawMessage) (any, error) {
				s.mu.Lock()
				s.requests = append(s.requests, method+" "+string(params))
				s.mu.Unlock()
				if row.answer == nil {
					return nil, fmt.Errorf("unexpected request %s", method)
				}
				return row.answer(s, method, params)
			}
			s.c.Initialize(ctx, map[string]any{"initializationOptions": io, "capabilities": map[string]any{"experimental": map[string]any{"agentls": map[string]any{
				"confirm": o.confirm, "applyEdit": o.applyEdit, "diagnostics": o.diagnostics}}}})
			row.run(t, s)
			if !o.applyEdit { // workspace/applyEdit carries the real text, for the editor
				channelsNoLeak(t, "server→client requests", s.asked(), s.toks)
			}
			channelsNoLeak(t, "notifications", channelsNotes(s.c, ""), s.toks)
		})
	}
}
