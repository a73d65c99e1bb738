package mcp

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/tools"
)

// The host table in docs/tools.md ("agentls keeps to") is the one in
// hostCaps: every host the docs name has the cap they state, every host
// in the table is in the docs, and the row for any other client states
// UnknownHostBytes.
func TestHostCapsAreTheOnesDocsToolsMdStates(t *testing.T) {
	doc, err := os.ReadFile("../../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	num := regexp.MustCompile(`([\d,]+) (bytes|lines)`)
	documented := map[string]bool{}
	sawOther := false
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 7 {
			continue
		}
		name, keeps := strings.TrimSpace(cells[2]), strings.TrimSpace(cells[4])
		if name == "`clientInfo.name`" || strings.HasPrefix(name, "---") {
			continue
		}
		// The cell's lead states the cap; what follows in brackets says why.
		keeps, _, _ = strings.Cut(keeps, "(")
		var want tools.HostCap
		for _, m := range num.FindAllStringSubmatch(keeps, -1) {
			n, err := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
			if err != nil {
				t.Fatalf("%q: %v", keeps, err)
			}
			if m[2] == "bytes" {
				want.Bytes = n
			} else {
				want.Lines = n
			}
		}
		switch {
		case name == "—":
			sawOther = true
			if want != (tools.HostCap{Bytes: UnknownHostBytes}) {
				t.Errorf("docs/tools.md: any other client keeps to %q, UnknownHostBytes is %d", keeps, UnknownHostBytes)
			}
		case strings.HasPrefix(name, "`") && strings.HasSuffix(name, "`"):
			name = strings.Trim(name, "`")
			documented[name] = true
			if got, ok := hostCaps[name]; !ok || got != want {
				t.Errorf("docs/tools.md: %s keeps to %q (%+v); hostCaps has %+v (known: %v)", name, keeps, want, got, ok)
			}
		}
	}
	if !sawOther {
		t.Error("docs/tools.md: the host table has no row for any other client")
	}
	for name := range hostCaps {
		if !documented[name] {
			t.Errorf("hostCaps has %s, docs/tools.md's host table does not", name)
		}
	}
}
