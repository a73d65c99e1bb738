package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// permissionScriptCmds are the commands the permissions scripts need:
// `agentls call` approves what would ask (the person typing is the user),
// so whether a call asked, was allowed outright or denied is read from the
// audit log it leaves.
func permissionScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"decisions": cmdDecisions,
	}
}

// decisions [@FILE]: reads the JSON lines of `agentls audit --json` (FILE,
// else the last command's stdout) and prints one line per entry: the tool,
// its arguments as logged (masked), the decision (allow, ask:allowOnce, deny, invalid), the rule that decided
// when there is one, and "error" for an isError result. Times, call ids and
// durations, which vary, are left out.
func cmdDecisions(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "decisions")
	file := "stdout"
	if len(args) == 1 && strings.HasPrefix(args[0], "@") {
		file = args[0][1:]
	} else if len(args) != 0 {
		ts.Fatalf("usage: decisions [@FILE]")
	}
	for _, line := range strings.Split(strings.TrimSpace(ts.ReadFile(file)), "\n") {
		if line == "" {
			continue
		}
		var e struct {
			Tool      string          `json:"tool"`
			Arguments json.RawMessage `json:"arguments"`
			Decision  string          `json:"decision"`
			Rule      string          `json:"rule"`
			IsError   bool            `json:"isError"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			ts.Fatalf("decisions: %s: a line that is not JSON: %q", file, line)
		}
		var args bytes.Buffer
		if len(e.Arguments) > 0 {
			// Re-encoded so that & and < read as themselves.
			var v any
			ts.Check(json.Unmarshal(e.Arguments, &v))
			enc := json.NewEncoder(&args)
			enc.SetEscapeHTML(false)
			ts.Check(enc.Encode(v))
		}
		out := e.Tool + " " + strings.TrimSpace(args.String()) + " " + e.Decision
		if e.Rule != "" {
			out += " [" + e.Rule + "]"
		}
		if e.IsError {
			out += " error"
		}
		fmt.Fprintln(ts.Stdout(), out)
	}
}
