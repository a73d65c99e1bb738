package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestUsageNamesEverySubcommandFlag: `agentls --help` is where a newcomer
// looks first, so every flag a subcommand takes appears in it (the global
// ones under "flags:").
func TestUsageNamesEverySubcommandFlag(t *testing.T) {
	var top bytes.Buffer
	if code := run([]string{"--help"}, strings.NewReader(""), &top, &top); code != 0 {
		t.Fatalf("--help exited %d:\n%s", code, top.String())
	}
	usage, globals, _ := strings.Cut(top.String(), "flags:")
	flagLine := regexp.MustCompile(`(?m)^  -([a-z-]+)`)
	global := map[string]bool{} // listed once, under "flags:"
	for _, f := range flagLine.FindAllStringSubmatch(globals, -1) {
		global[f[1]] = true
	}
	for _, sub := range []string{"tools", "call", "mcp", "audit"} {
		t.Run(sub, func(t *testing.T) {
			var out bytes.Buffer
			if code := run([]string{sub, "--help"}, strings.NewReader(""), &out, &out); code != 0 {
				t.Fatalf("%s --help exited %d:\n%s", sub, code, out.String())
			}
			flags := flagLine.FindAllStringSubmatch(out.String(), -1)
			if len(flags) == 0 {
				t.Fatalf("%s --help lists no flags:\n%s", sub, out.String())
			}
			for _, f := range flags {
				if global[f[1]] {
					continue
				}
				if !regexp.MustCompile(`agentls ` + sub + ` [^\n]*--` + regexp.QuoteMeta(f[1]) + `\b`).MatchString(usage) {
					t.Errorf("agentls --help does not show `agentls %s … --%s`:\n%s", sub, f[1], usage)
				}
			}
		})
	}
}
