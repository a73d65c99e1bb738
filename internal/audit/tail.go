package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxLine bounds one log line when reading; Record's cut of long strings
// keeps real lines far below it.
const maxLine = 16 << 20

// Tail writes the last n entries across all sessions, oldest first, as the
// JSON lines they are stored as: it reads the newest files first, going back
// to older sessions until it has n. n ≤ 0 means every entry. A directory that
// does not exist holds no entries.
func Tail(dir string, n int, w io.Writer) error {
	lines, err := tailLines(dir, n)
	if err != nil {
		return err
	}
	for _, l := range lines {
		if _, err := fmt.Fprintf(w, "%s\n", l); err != nil {
			return err
		}
	}
	return nil
}

// TailEntries is Tail, decoded. A line that does not decode is skipped.
func TailEntries(dir string, n int) ([]Entry, error) {
	lines, err := tailLines(dir, n)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(lines))
	for _, l := range lines {
		var e Entry
		if json.Unmarshal(l, &e) == nil {
			out = append(out, e)
		}
	}
	return out, nil
}

func tailLines(dir string, n int) ([][]byte, error) {
	list, err := files(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	var out [][]byte // newest file's lines last
	for i := len(list) - 1; i >= 0; i-- {
		lines, err := readLines(list[i].path)
		if err != nil {
			if os.IsNotExist(err) {
				continue // pruned meanwhile
			}
			return nil, fmt.Errorf("audit: %w", err)
		}
		out = append(lines, out...)
		if n > 0 && len(out) >= n {
			return out[len(out)-n:], nil
		}
	}
	return out, nil
}

func readLines(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			out = append(out, bytes.Clone(l))
		}
	}
	return out, sc.Err()
}

// Format renders an entry as one human-readable line: time, call id, tool,
// decision (and rule), duration, result size, "error" when the call failed,
// and the arguments as JSON.
func Format(e Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %-8s %-12s %s", e.Time.Local().Format("2006-01-02 15:04:05"), e.CallID, e.Tool, e.Decision)
	if e.Rule != "" {
		fmt.Fprintf(&b, " (%s)", e.Rule)
	}
	fmt.Fprintf(&b, "  %.0fms  %dB", e.DurationMs, e.ResultBytes)
	if e.IsError {
		b.WriteString("  error")
	}
	if e.Arguments != nil {
		if a, err := json.Marshal(e.Arguments); err == nil {
			fmt.Fprintf(&b, "  %s", a)
		}
	}
	return b.String()
}
