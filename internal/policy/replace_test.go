package policy

import (
	"fmt"
	"testing"
)

// Replace is how edited settings files reach a running session: the new
// mode and rules apply to the next call; what the user allowed for the
// session stays allowed.
func TestReplaceKeepsSessionRules(t *testing.T) {
	c := &Config{Root: testRoot}
	bash := func(cmd string) Request { return Request{Tool: "bash", Command: cmd, InWorkspace: true} }
	c.AddSessionRule("allow", MustParseRule("Bash(make build)"))
	if v := c.Evaluate(bash("make build")); v.Decision != Allow {
		t.Fatalf("session rule: %v", v)
	}
	c.Replace(&Config{Mode: ModeReadOnly, Deny: rules(t, SourceWorkspace, []string{"Read(secret.txt)"})})
	if v := c.Evaluate(bash("touch x")); v.Decision != Deny || v.Rule != "mode:"+ModeReadOnly {
		t.Fatalf("after Replace, a write in readOnly mode: %+v", v)
	}
	if c.ReadAllowed("secret.txt", testRoot+"/secret.txt") {
		t.Fatal("the new deny rule does not filter reads")
	}
	c.Replace(&Config{})
	if v := c.Evaluate(bash("make build")); v.Decision != Allow || v.Rule == "mode:"+ModeDefault {
		t.Fatalf("the session rule was lost by Replace: %+v", v)
	}
	if v := c.Evaluate(bash("touch x")); v.Decision != Ask {
		t.Fatalf("an empty Replace leaves the default mode: %+v", v)
	}
}

// MustParseRule is ParseRule for rules written in code; it panics on a
// syntax error.
func MustParseRule(s string) Rule {
	r, err := ParseRule(s)
	if err != nil {
		panic(fmt.Sprintf("policy: rule %q: %v", s, err))
	}
	return r
}
