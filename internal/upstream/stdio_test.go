package upstream

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/tools"
)

// TestJSONLines: what a server prints that is not a JSON-RPC message is
// skipped and logged; messages, blank lines and long lines pass as sent.
func TestJSONLines(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	long := `{"jsonrpc":"2.0","method":"x","params":{"s":"` + strings.Repeat("a", maxCheckedLine+10) + `"}}` + "\n"
	tests := []struct {
		name, in, want string
		skipped        int
	}{
		{"messages pass", msg + msg, msg + msg, 0},
		{"a banner before the first message", "server v1.2 ready\n" + msg, msg, 1},
		{"JSON that is not an object or array", "true\n42\n\"hi\"\n" + msg, msg, 3},
		{"a broken object", "{oops\n" + msg, msg, 1},
		{"a batch passes", `[` + strings.TrimSpace(msg) + "]\n", `[` + strings.TrimSpace(msg) + "]\n", 0},
		{"blank lines and CRLF pass", "\r\n" + strings.TrimSuffix(msg, "\n") + "\r\n", "\r\n" + strings.TrimSuffix(msg, "\n") + "\r\n", 0},
		{"the last line without a newline", "noise\n" + strings.TrimSuffix(msg, "\n"), strings.TrimSuffix(msg, "\n"), 1},
		{"a line longer than the check passes unchecked", "noise\n" + long + msg, long + msg, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logged bytes.Buffer
			j := &jsonLines{r: bufio.NewReaderSize(strings.NewReader(tc.in), maxCheckedLine), log: slog.New(slog.NewTextHandler(&logged, nil))}
			got, err := io.ReadAll(j)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("passed on %d bytes %.80q…, want %d bytes %.80q…", len(got), got, len(tc.want), tc.want)
			}
			if n := strings.Count(logged.String(), "not JSON-RPC"); n != tc.skipped {
				t.Errorf("%d lines logged as skipped, want %d:\n%s", n, tc.skipped, logged.String())
			}
		})
	}
}

// TestStderrTail: a failure message quotes the last stderr lines, each cut
// to stderrTailLine, and a last line without its newline.
func TestStderrTail(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"nothing written", "", ""},
		{"one line", "fatal: no token\n", "fatal: no token"},
		{"the last lines only", "1\n2\n3\n4\n5\n6\n7\n", "3 | 4 | 5 | 6 | 7"},
		{"a line without its newline", "a\nb", "a | b"},
		{"a long line is cut", strings.Repeat("x", stderrTailLine+50) + "\n", strings.Repeat("x", stderrTailLine) + "…"},
		{"blank lines are not kept", "a\n\n\r\n", "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &logWriter{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			io.WriteString(w, tc.in)
			if got := w.tail(); got != tc.want {
				t.Errorf("tail() = %q, want %q", got, tc.want)
			}
			want := ""
			if tc.want != "" {
				want = "; its stderr ended with: " + tc.want
			}
			if got := stderrSaid(w); got != want {
				t.Errorf("stderrSaid = %q, want %q", got, want)
			}
		})
	}
	if got := stderrSaid(nil); got != "" {
		t.Errorf("stderrSaid(nil) = %q", got)
	}
}

// TestChildStdinClose: closing ends the child whether it exits on EOF,
// on SIGTERM, or only on SIGKILL, and waits for it.
func TestChildStdinClose(t *testing.T) {
	const grace = 100 * time.Millisecond
	tests := []struct {
		name, script, status string
	}{
		{"exits on EOF", "cat >/dev/null", "exit status 0"},
		{"exits on SIGTERM", "exec 0<&-; trap 'exit 3' TERM; while :; do sleep 0.01; done", "exit status 3"},
		{"ignores SIGTERM", "exec 0<&-; trap '' TERM; while :; do sleep 0.01; done", "signal: killed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", tc.script)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			c := &childStdin{cmd: cmd, stdin: stdin, terminate: grace}
			start := time.Now()
			c.Close()
			if cmd.ProcessState == nil {
				t.Fatal("Close returned before the child was waited for")
			}
			if got := cmd.ProcessState.String(); got != tc.status {
				t.Errorf("the child ended with %q, want %q", got, tc.status)
			}
			// Generous: the bound is three grace periods, the slack is the machine.
			if d := time.Since(start); d > 3*grace+2*time.Second {
				t.Errorf("Close took %v", d)
			}
		})
	}
}

// TestSearchNotes: a search is told about a server on its first start (a
// process that never answers initialize) and one that failed to start,
// and about nothing once every server runs.
func TestSearchNotes(t *testing.T) {
	dir := t.TempDir()
	reg := tools.NewRegistry()
	m, err := Register(context.Background(), reg, []ServerConfig{
		{Name: "hung", Type: TransportStdio, Command: "sh", Args: []string{"-c", "exec sleep 60"}, Dir: dir},
		{Name: "gone", Type: TransportStdio, Command: "./no-such-server", Dir: dir},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	var notes []string
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if notes = m.SearchNotes(); len(notes) == 2 && strings.Contains(strings.Join(notes, "\n"), "not running") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	want := []string{
		`MCP server "hung" is still starting, so its tools are not listed yet: search again in a few seconds.`,
		`MCP server "gone" is not running (restarting in `,
	}
	if len(notes) != len(want) {
		t.Fatalf("notes = %q, want %d", notes, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(notes[i], w) {
			t.Errorf("note %d = %q, want it to start with %q", i, notes[i], w)
		}
	}
	// A command that does not exist will not start by waiting: the model
	// is told to do without it and tell the user, not to call again.
	if msg, ok := m.Explain("", "gone__anything"); !ok || !strings.Contains(msg, `the MCP server "gone" cannot start`) || !strings.Contains(msg, "Calling again will not help") {
		t.Errorf("Explain of a tool of a server whose command is missing = %q, %v", msg, ok)
	}

	idle, err := Register(context.Background(), tools.NewRegistry(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if got := idle.SearchNotes(); got != nil {
		t.Errorf("no servers: notes = %q", got)
	}
}
