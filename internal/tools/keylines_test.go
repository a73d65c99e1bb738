package tools

import (
	"regexp"
	"strings"
	"testing"
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
