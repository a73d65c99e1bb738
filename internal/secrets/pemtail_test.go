package secrets

import (
	"strings"
	"testing"
)

const tailBodyLine = "MIIJQwIBADANBgkqhkiG9w0BAQEFAASCCS0wggkpAgEAAoICAQDa7vT8yK2mW9xR"

// A key whose BEGIN line was cut away (the tail of a long line, the tail
// of output) is masked back from its END line; what precedes the key's
// lines stays.
func TestKeyTailWithoutBeginIsMasked(t *testing.T) {
	m := New(nil)
	tests := []struct{ name, in, keep string }{
		{"json tail after a line cut", `x … [3887 characters cut] … K2mW9xR\n` + strings.Repeat(tailBodyLine+`\n`, 3) + `AB12==\n-----END PRIVATE KEY-----\n"}`, "characters cut]"},
		{"output tail", strings.Repeat(tailBodyLine+"\n", 3) + "AB12==\n-----END RSA PRIVATE KEY-----\n$ done", "$ done"},
		{"crlf", "ok\r\n" + strings.Repeat(tailBodyLine+"\r\n", 2) + "-----END EC PRIVATE KEY-----\r\n", "ok\r\n"},
	}
	for _, tc := range tests {
		out, c := m.Mask(tc.in)
		if strings.Contains(out, tailBodyLine[10:40]) || strings.Contains(out, "AB12") || c[KindPrivateKey] != 1 {
			t.Errorf("%s: Mask = %q %v", tc.name, out, c)
		}
		if !strings.Contains(out, tc.keep) {
			t.Errorf("%s: %q was masked too: %q", tc.name, tc.keep, out)
		}
	}
	for _, in := range []string{
		`const end = "-----END RSA PRIVATE KEY-----"`,
		"if line == \"-----END PRIVATE KEY-----\" {",
		"done\n-----END PRIVATE KEY-----",
	} {
		if out, _ := m.Mask(in); out != in {
			t.Errorf("Mask(%q) = %q: no key there", in, out)
		}
	}
}

// A key in log lines that each carry a prefix (docker compose's
// "web-1  | ") is masked from its BEGIN to its END line.
func TestKeyInPrefixedLogLinesIsMasked(t *testing.T) {
	m := New(nil)
	for _, p := range []string{"web-1  | ", "2026-12-02T10:00:00Z app[42]: "} {
		in := p + "starting\n" + p + "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat(p+tailBodyLine+"\n", 3) + p + "AB12==\n" + p + "-----END RSA PRIVATE KEY-----\n" + p + "listening on :8080\n"
		out, c := m.Mask(in)
		if strings.Contains(out, tailBodyLine[10:40]) || strings.Contains(out, "AB12") || c[KindPrivateKey] != 1 {
			t.Errorf("prefix %q: Mask = %q %v", p, out, c)
		}
		if !strings.Contains(out, p+"starting\n") || !strings.Contains(out, p+"listening on :8080") {
			t.Errorf("prefix %q: masked too much: %q", p, out)
		}
	}
}
