package secrets

import (
	"fmt"
	"testing"
)

func TestPrivateKeyLines(t *testing.T) {
	cases := []struct {
		name    string
		content string
		want    string
	}{
		{"none", "a\nb\n", "[]"},
		{"rsa block", "x\n-----BEGIN RSA PRIVATE KEY-----\nAAA\nBBB\n-----END RSA PRIVATE KEY-----\ny\n", "[[3 4]]"},
		{"two blocks", "-----BEGIN PRIVATE KEY-----\nA\n-----END PRIVATE KEY-----\n-----BEGIN OPENSSH PRIVATE KEY-----\nB\nC\n-----END OPENSSH PRIVATE KEY-----\n", "[[2 2] [5 6]]"},
		{"unterminated", "-----BEGIN EC PRIVATE KEY-----\nA\nB", "[[2 3]]"},
		{"public key is not secret", "-----BEGIN PUBLIC KEY-----\nA\n-----END PUBLIC KEY-----\n", "[]"},
		{"pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nA\n-----END PGP PRIVATE KEY BLOCK-----\n", "[[2 2]]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := fmt.Sprint(PrivateKeyLines([]byte(tc.content)))
			if got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
