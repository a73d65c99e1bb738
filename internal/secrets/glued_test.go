package secrets

import (
	"strings"
	"testing"
)

// TestMaskGlued: tokens directly after a letter, digit, "_", ".", "-" or a
// URL escape are masked from their prefix on, the glued text staying
// visible.
func TestMaskGlued(t *testing.T) {
	m := New(nil)
	const gh = "[REDACTED:github-token]"
	tests := []struct{ name, in, want string }{
		{"after letters", "abc" + ghpToken, "abc" + gh},
		{"after digits", "123" + ghpToken, "123" + gh},
		{"after underscore", "id_" + ghpToken + "\n", "id_" + gh + "\n"},
		{"after a dot", "cfg." + ghpToken, "cfg." + gh},
		{"after a dash", "x-" + ghpToken, "x-" + gh},
		{"url-encoded =", "https://e.com/cb?state=x%26token%3D" + ghpToken, "https://e.com/cb?state=x%26token%3D" + gh},
		{"after =", "x=" + ghpToken, "x=" + gh},
		{"inside a longer identifier", "my_" + ghpToken + "_suffix", "my_" + gh + "_suffix"},
		{"tool name", "deploy_nope_" + ghpToken, "deploy_nope_" + gh},
		{"two in one word", "a_" + ghpToken + "_b_" + glToken, "a_" + gh + "_b_[REDACTED:gitlab-token]"},
		{"glued after a token", ghpToken + "_" + ghpToken, gh + "_" + gh},
		{"github fine-grained", "pat" + ghFineToken, "pat" + gh},
		{"gitlab", "url_" + glToken, "url_[REDACTED:gitlab-token]"},
		{"slack", "bot" + slackToken, "bot[REDACTED:slack-token]"},
		{"google", "key" + googleKey + ".", "key[REDACTED:google-api-key]."},
		// Tokens kept to word starts are still found after a URL escape.
		{"aws after url escape", "id%3D" + awsKeyID + "&x", "id%3D[REDACTED:aws-access-key]&x"},
		{"openai after url escape", "k%3D" + openAIKey, "k%3D[REDACTED:openai-key]"},
		{"jwt after url escape", "t%3D" + jwtToken, "t%3D[REDACTED:jwt]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, kinds := m.Mask(tt.in)
			if got != tt.want {
				t.Errorf("Mask(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if n := strings.Count(tt.want, "[REDACTED:"); sum(kinds) != n {
				t.Errorf("counts %v, want %d secrets", kinds, n)
			}
			if again, k := m.Mask(got); again != got || k != nil {
				t.Errorf("not idempotent: %q", again)
			}
		})
	}
}

// TestMaskGluedNearMisses: what looks like a glued prefix but is not a
// token, and the prefixes deliberately left to word starts.
func TestMaskGluedNearMisses(t *testing.T) {
	m := New(nil)
	body30 := "R4nd0mLooking1Token2ForTests3a" // ghClassicMinBody bytes
	tests := []struct{ name, in string }{
		{"body one byte short", "id_ghp_" + body30[:ghClassicMinBody-1]},
		{"word containing ghp", "aghpx_" + body30 + "bcd and laughing_" + body30},
		{"gh prefix letter not a token type", "highx_" + body30 + " weighz_" + body30},
		{"short glued gitlab", "url_glpat-" + strings.Repeat("a", glpatMinBody-1)},
		{"xoxo is not slack", "hugs_xoxo-" + strings.Repeat("k", 2*slackMinBody)},
		{"google body too long", "keyAIza" + strings.Repeat("b", googleBody+1)},
		{"google body too short", "keyAIza" + strings.Repeat("b", googleBody-1)},
		{"sk- inside kebab names", "task-ant-colony-simulation-runner-v2 disk-Ab3dEf9hIj1kLm5nOp7qRs2t"},
		{"stripe-like snake name", "disk_test_" + strings.Repeat("Ab1", 8)},
		{"aws-like upper-case run", "XAKIAZ7QRSTUVWXY23456 FANTASIAZ7QRSTUVWXY23456"},
		{"percent not an escape", "100%zzAKIAZ7QRSTUVWXY23456x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, kinds := m.Mask(tt.in); got != tt.in {
				t.Errorf("changed (%v):\n in %q\nout %q", kinds, tt.in, got)
			}
		})
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
