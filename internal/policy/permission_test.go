package policy

import (
	"context"
	"errors"
	"path"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeConfirmer answers from a script and records the questions.
type fakeConfirmer struct {
	mu     sync.Mutex
	answer ConfirmAnswer
	err    error
	block  bool // wait for ctx instead of answering
	asked  []ConfirmRequest
}

func (f *fakeConfirmer) Confirm(ctx context.Context, req ConfirmRequest) (ConfirmAnswer, error) {
	f.mu.Lock()
	f.asked = append(f.asked, req)
	f.mu.Unlock()
	if f.block {
		<-ctx.Done()
		return ConfirmAnswer{}, ctx.Err()
	}
	return f.answer, f.err
}

func (f *fakeConfirmer) errOrNil() error {
	if f == nil {
		return nil
	}
	return f.err
}

func (f *fakeConfirmer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.asked)
}

func TestGate(t *testing.T) {
	cases := []struct {
		name      string
		confirm   *fakeConfirmer // nil: no confirm capability
		req       Request
		allowed   bool
		reason    string // substring
		asked     int
		thenAgain Decision // Evaluate of the same request afterwards
	}{
		{name: "allow needs no question", confirm: &fakeConfirmer{}, req: read("a.go"), allowed: true, thenAgain: Allow},
		{name: "deny names rule and alternative", confirm: &fakeConfirmer{}, req: bash("curl x"), reason: "denied by the rule Bash(curl:*) (.agentls/settings.json). Do not retry", thenAgain: Deny},
		{name: "ask without confirmer denies", req: bash("make"), reason: "bash needs the user's approval (this call is not read-only), but this editor cannot ask the user", thenAgain: Ask},
		{name: "allowOnce", confirm: &fakeConfirmer{answer: ConfirmAnswer{Decision: AllowOnce}}, req: bash("make"), allowed: true, asked: 1, thenAgain: Ask},
		{name: "allowAlways adds session rule", confirm: &fakeConfirmer{answer: ConfirmAnswer{Decision: AllowAlways}}, req: bash("make"), allowed: true, asked: 1, thenAgain: Allow},
		{name: "allowAlways on secret lifts builtin", confirm: &fakeConfirmer{answer: ConfirmAnswer{Decision: AllowAlways}}, req: read(".env"), allowed: true, asked: 1, thenAgain: Allow},
		{name: "rejectOnce with message", confirm: &fakeConfirmer{answer: ConfirmAnswer{Decision: RejectOnce, Message: "use make test"}}, req: bash("make"), reason: "denied by the user: use make test", asked: 1, thenAgain: Ask},
		{name: "rejectAlways adds deny", confirm: &fakeConfirmer{answer: ConfirmAnswer{Decision: RejectAlways}}, req: edit("a.go"), reason: "denied by the user", asked: 1, thenAgain: Deny},
		{name: "unknown answer denies", confirm: &fakeConfirmer{answer: ConfirmAnswer{Decision: "sure"}}, req: bash("make"), reason: `answered "sure"`, asked: 1, thenAgain: Ask},
		{name: "confirm error denies", confirm: &fakeConfirmer{err: errors.New("method not found")}, req: bash("make"), reason: "could not ask the user for approval (method not found)", asked: 1, thenAgain: Ask},
		{name: "a client that cannot ask refuses in its own words", confirm: &fakeConfirmer{err: &CannotAsk{Reason: "bash needs the user's approval; this client cannot ask"}}, req: bash("make"), reason: "bash needs the user's approval; this client cannot ask", asked: 1, thenAgain: Ask},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := &Config{Root: testRoot, Deny: rules(t, SourceWorkspace, []string{"Bash(curl:*)"})}
			var conf Confirmer
			if c.confirm != nil {
				conf = c.confirm
			}
			g := NewGate(cfg, conf)
			out, err := g.Check(context.Background(), c.req, ConfirmRequest{CallID: "call-1", Arguments: map[string]any{"x": 1}})
			if err != nil {
				t.Fatal(err)
			}
			if out.Allowed != c.allowed || !strings.Contains(out.Reason, c.reason) {
				t.Errorf("got %+v, want allowed=%v reason~%q", out, c.allowed, c.reason)
			}
			var cannot *CannotAsk
			if errors.As(c.confirm.errOrNil(), &cannot) && (out.Asked || out.Rule == "user" || strings.Contains(out.Reason, "denied by the user")) {
				t.Errorf("nobody was asked, yet the outcome says so: %+v", out)
			}
			if c.confirm != nil && c.confirm.count() != c.asked {
				t.Errorf("asked %d times, want %d", c.confirm.count(), c.asked)
			}
			if c.asked > 0 && (c.confirm.asked[0].Tool != c.req.Tool || c.confirm.asked[0].CallID != "call-1" || c.confirm.asked[0].Reason == "") {
				t.Errorf("confirm request %+v", c.confirm.asked[0])
			}
			if v := cfg.Evaluate(c.req); v.Decision != c.thenAgain {
				t.Errorf("afterwards %s (%s), want %s", v.Decision, v.Rule, c.thenAgain)
			}
		})
	}
}

func TestGateCancel(t *testing.T) {
	g := NewGate(&Config{}, &fakeConfirmer{block: true})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	out, err := g.Check(ctx, bash("make"), ConfirmRequest{})
	if !errors.Is(err, context.DeadlineExceeded) || out.Allowed {
		t.Fatalf("got %+v, %v", out, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %v", d)
	}
}

// A question queued behind an allowAlways for the same call is settled
// without asking again.
func TestGateSerializesQuestions(t *testing.T) {
	conf := &fakeConfirmer{answer: ConfirmAnswer{Decision: AllowAlways}}
	g := NewGate(&Config{}, conf)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if out, err := g.Check(context.Background(), bash("make"), ConfirmRequest{}); err != nil || !out.Allowed {
				t.Errorf("got %+v %v", out, err)
			}
		})
	}
	wg.Wait()
	if conf.count() != 1 {
		t.Fatalf("asked %d times, want 1", conf.count())
	}
}

func TestSessionRules(t *testing.T) {
	cases := []struct {
		name    string
		req     Request
		want    string
		matches []Request
		misses  []Request
	}{
		{name: "bash exact line", req: bash("npm run build"), want: "Bash(npm run build)",
			matches: []Request{bash("npm  run build")}, misses: []Request{bash("npm run build && rm -rf ~"), bash("npm run build x")}},
		{name: "bash trailing star stays exact", req: bash("ls *"), want: "Bash(ls *)", misses: []Request{bash("ls -la")}},
		{name: "read exact file", req: read("a/[x].go"), want: "Read(//ws/a/[x].go)",
			matches: []Request{pathReq("grep", true, "a/[x].go")}, misses: []Request{read("a/x.go"), read("a/[x].go.bak")}},
		{name: "edit covers write", req: edit("a.go"), want: "Edit(//ws/a.go)", matches: []Request{write("a.go")}, misses: []Request{edit("b.go")}},
		{name: "mcp tool", req: mcp("github", "create_issue", false), want: "mcp__github__create_issue", misses: []Request{mcp("github", "delete_repo", false)}},
		{name: "other tool", req: Request{Tool: "deploy", Source: "extension"}, want: "deploy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := SessionRules(c.req)
			if len(rs) != 1 || rs[0].Raw != c.want {
				t.Fatalf("got %+v, want %s", rs, c.want)
			}
			// Allowed by the session rule: the request and its matches;
			// the misses are decided by something else.
			cfg := &Config{Root: testRoot}
			cfg.AddSessionRule("allow", rs[0])
			for _, r := range append([]Request{c.req}, c.matches...) {
				if v := cfg.Evaluate(r); v.Decision != Allow || !strings.Contains(v.Rule, SourceSession) {
					t.Errorf("%+v: got %s by %s, want allow by the session rule", r, v.Decision, v.Rule)
				}
			}
			for _, r := range c.misses {
				if v := cfg.Evaluate(r); strings.Contains(v.Rule, SourceSession) {
					t.Errorf("%+v: %s by %s", r, v.Decision, v.Rule)
				}
			}
			deny := &Config{Root: testRoot}
			deny.AddSessionRule("deny", rs[0])
			if v := deny.Evaluate(c.req); v.Decision != Deny {
				t.Errorf("rejectAlways rule: got %s by %s", v.Decision, v.Rule)
			}
		})
	}
}

func TestReadAndListAllowed(t *testing.T) {
	cfg := &Config{Root: testRoot,
		Deny:  rules(t, SourceWorkspace, []string{"Read(./private/**)"}),
		Ask:   rules(t, SourceWorkspace, []string{"Read(*.sql)"}),
		Allow: rules(t, SourceUser, []string{"Read(./config/.env)"})}
	cases := []struct {
		rel        string
		read, list bool
	}{
		{"src/a.go", true, true},
		{"private/x.txt", false, false},
		{"db/dump.sql", false, true},
		{".env", false, true},
		{"config/.env", true, true},
		{".env.example", true, true},
	}
	for _, c := range cases {
		t.Run(c.rel, func(t *testing.T) {
			abs := testRoot + "/" + c.rel
			if got := cfg.ReadAllowed(c.rel, abs); got != c.read {
				t.Errorf("ReadAllowed = %v, want %v", got, c.read)
			}
			if got := cfg.ListAllowed(c.rel, abs); got != c.list {
				t.Errorf("ListAllowed = %v, want %v", got, c.list)
			}
		})
	}
	bypass := &Config{Mode: ModeBypass, Deny: cfg.Deny}
	if !bypass.ReadAllowed(".env", "/ws/.env") || bypass.ReadAllowed("private/x", "/ws/private/x") {
		t.Error("bypass: secrets readable, deny rules kept")
	}
}

func TestReadRefusedNamesCoverWhatReadAllowedRefuses(t *testing.T) {
	cfg := &Config{Root: testRoot, Deny: rules(t, SourceWorkspace, []string{"Edit(./src/**)"})}
	globs, ok := cfg.ReadRefusedNames()
	if !ok {
		t.Fatal("no Read deny or ask rule, yet not ok")
	}
	names := []string{".env", ".ENV.local", ".env.example", "cert.pem", "a/b/Server.KEY", "id_rsa", "id_rsa.pub",
		"ID_ED25519", "main.go", "env", "key", "pem.txt", "x.keys", "my_id_rsa"}
	for _, n := range names {
		base := strings.ToLower(path.Base(n))
		covered := false
		for _, g := range globs {
			if m, _ := path.Match(strings.ToLower(g), base); m {
				covered = true
			}
		}
		if !cfg.ReadAllowed(n, testRoot+"/"+n) && !covered {
			t.Errorf("%s is refused but no glob of %q covers it", n, globs)
		}
	}
	for _, c := range []struct {
		name string
		cfg  *Config
		ok   bool
	}{
		{"Read deny", &Config{Root: testRoot, Deny: rules(t, SourceWorkspace, []string{"Read(./private/**)"})}, false},
		{"Read ask", &Config{Root: testRoot, Ask: rules(t, SourceWorkspace, []string{"Read(*.sql)"})}, false},
		{"Read ask in bypass", &Config{Root: testRoot, Mode: ModeBypass, Ask: rules(t, SourceWorkspace, []string{"Read(*.sql)"})}, true},
		{"session Read deny", func() *Config {
			c := &Config{Root: testRoot}
			r, err := ParseRule("Read(./x)")
			if err != nil {
				t.Fatal(err)
			}
			c.AddSessionRule("deny", r)
			return c
		}(), false},
	} {
		if _, ok := c.cfg.ReadRefusedNames(); ok != c.ok {
			t.Errorf("%s: ok = %v, want %v", c.name, ok, c.ok)
		}
	}
	if globs, _ := (&Config{Mode: ModeBypass}).ReadRefusedNames(); len(globs) != 0 {
		t.Errorf("bypass refuses no secret, got globs %q", globs)
	}
}
