package upstream

import "testing"

// An error about a configured URL shows it without its password and
// query, however the message spelled it (as written, as net/url redacts
// it, or in parts).
func TestRedactURLKeepsCredentialsOutOfMessages(t *testing.T) {
	const raw = "http://alice:pw-in-url-77@127.0.0.1:9/mcp?key=query-secret-88"
	for _, msg := range []string{
		`Post "` + raw + `": dial tcp 127.0.0.1:9: connect: connection refused`,
		`Post "http://alice:***@127.0.0.1:9/mcp?key=query-secret-88": dial tcp 127.0.0.1:9: connect: connection refused`,
	} {
		want := `Post "http://127.0.0.1:9/mcp": dial tcp 127.0.0.1:9: connect: connection refused`
		if got := redactURL(msg, raw); got != want {
			t.Errorf("redactURL(%q)\n = %q\nwant %q", msg, got, want)
		}
	}
	if got := redactURL("user alice:pw-in-url-77@ and ?key=query-secret-88 apart", raw); got != "user  and  apart" {
		t.Errorf("parts: %q", got)
	}
}
