package builtin

import (
	"regexp"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/textedit"
)

// TestKeyish checks the hand-written check against the pattern it replaced.
func TestKeyish(t *testing.T) {
	ref := regexp.MustCompile(`^[A-Za-z0-9+/=]{32,}\r?$`)
	b64 := "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"
	tests := []struct {
		name string
		in   string
	}{
		{"32 base64 chars", b64},
		{"31 chars", b64[:31]},
		{"with CR", b64 + "\r"},
		{"31 chars and CR", b64[:31] + "\r"},
		{"two CRs", b64 + "\r\r"},
		{"CR inside", b64[:16] + "\r" + b64[16:]},
		{"padding", b64 + "=="},
		{"space", b64 + " x"},
		{"long", strings.Repeat(b64, 3)},
		{"non-ASCII", b64 + "é"},
		{"empty", ""},
		{"just CR", "\r"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := keyish(tc.in), ref.MatchString(tc.in); got != want {
				t.Errorf("keyish(%q) = %v, want %v", tc.in, got, want)
			}
		})
	}
}

// A change whose hunk starts inside a private key has no BEGIN line in it:
// the diff and the TextEdits mask the body lines by where they are, old
// lines by old numbers and added lines by new, and nothing else.
func TestChangeDetailsMaskKeyBodiesByPosition(t *testing.T) {
	body1 := strings.Repeat("QUJD", 16)
	body2 := "raZVCoiKzgjKfRSO7hXf3Spx0s2r=="
	head := "-----BEGIN " + "RSA PRIVATE KEY-----\n"
	old := "a\n" + head + body1 + "\n" + body2 + "\n-----END RSA PRIVATE KEY-----\ntail\n"
	new := strings.Replace(old, "tail", "tail2", 1)
	p := ops.Path{Rel: "k.txt"}
	d := ChangeDetails("edit", p, []byte(old), []byte(new))
	diff := d["unifiedDiff"].(string)
	for _, secret := range []string{body1, body2} {
		if strings.Contains(diff, secret) {
			t.Errorf("the diff shows a key line:\n%s", diff)
		}
	}
	if !strings.Contains(diff, " "+keyLineMask) || !strings.Contains(diff, "-tail") || !strings.Contains(diff, "+tail2") {
		t.Errorf("the diff lost its change or its masks:\n%s", diff)
	}
	// A changed key line stays visible as a change, masked on both sides.
	rotated := strings.Replace(old, body2, "zzZVCoiKzgjKfRSO7hXf3Spx0s2r==", 1)
	d = ChangeDetails("edit", p, []byte(old), []byte(rotated))
	diff = d["unifiedDiff"].(string)
	if !strings.Contains(diff, "-"+keyLineMask) || !strings.Contains(diff, "+"+keyLineMask) || strings.Contains(diff, "zzZV") {
		t.Errorf("a rotated key line should show as -mask/+mask:\n%s", diff)
	}
	for _, e := range d["edits"].([]any) {
		if nt := e.(map[string]any)["newText"].(string); strings.Contains(nt, "zzZV") {
			t.Errorf("a TextEdit carries the new key line: %q", nt)
		}
	}
	if d["newHash"] != textedit.Hash([]byte(rotated)) {
		t.Error("newHash must hash the real bytes")
	}
}

func TestKeyTailOnlyTriggersOnBase64WithAMark(t *testing.T) {
	for in, want := range map[string]bool{
		"raZVCoiKzgjKfRSO7hXf3Spx0s2r==": true,
		"AB==":                           true,
		"x9Yz":                           true,
		"return":                         false, // a word alone on a line
		"abc":                            false,
		"has space 1":                    false,
		strings.Repeat("A1", 16):         false, // 32 chars: keyish decides
	} {
		if got := keyTail(in); got != want {
			t.Errorf("keyTail(%q) = %v, want %v", in, got, want)
		}
	}
}
