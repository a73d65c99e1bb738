package tools_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// jsonExamples returns each JSON object a hint offers as an example call:
// every "{" that follows "e.g. " (optionally after a tool name).
func jsonExamples(text string) []string {
	var out []string
	for rest := text; ; {
		i := strings.Index(rest, "e.g. ")
		if i < 0 {
			return out
		}
		rest = rest[i+len("e.g. "):]
		s := rest
		if j := strings.IndexByte(s, ' '); j > 0 && j < 20 && !strings.HasPrefix(s, "{") && strings.HasPrefix(s[j+1:], "{") {
			s = s[j+1:] // "find {...}"
		}
		if !strings.HasPrefix(s, "{") {
			continue
		}
		out = append(out, s)
	}
}

// Example calls in hints must parse: one read `find {"pattern": "*.txt""}`
// for a quoted path, and the multiline and run_in_background (once refused) hints
// ended "…it., e.g. {"command": "…"}" with the generic example glued on.
func TestEveryHintExampleIsValidJSON(t *testing.T) {
	x, _ := newTestExecutor(t, map[string][]byte{"a.txt": []byte("a\n")})
	calls := [][2]string{
		{"read", `{"path":"nope.txt\""}`},
		{"read", `{"path":"dir/\"odd\\name.txt"}`},
		{"read", `{"path":"nope"}`},
		{"read", `{}`},
		{"read", `[1]`},
		{"read", `not json`},
		{"ls", `{"path":"nowhere"}`},
		{"find", `{}`},
		{"find", `{"pattern":"*","path":"nowhere"}`},
		{"grep", `{}`},
		{"grep", `{"pattern":"x","multiline":true}`},
		{"grep", `{"pattern":"(a"}`},
		{"grep", `{"pattern":"x","path":"nowhere"}`},
		{"bash", `{}`},
		{"bash", `{"command":""}`},
		{"bash", `{"command":"sleep 1","run_in_background":true}`},
		{"edit", `{}`},
		{"edit", `"x"`},
		{"edit", `{"path":"nope.txt","edits":[{"oldText":"a","newText":"b"}]}`},
		{"write", `{}`},
		{"write", `17`},
	}
	for _, tl := range x.Registry.List(true) {
		calls = append(calls, [2]string{tl.Name, `{}`}, [2]string{tl.Name, `"not an object"`})
		if ex := tl.Example(); !json.Valid([]byte(ex)) {
			t.Errorf("%s: example %s is not valid JSON", tl.Name, ex)
		}
	}
	seen := 0
	for _, c := range calls {
		text := call(t, x, c[0], c[1]).TextOf()
		if strings.Contains(text, "., e.g.") {
			t.Errorf("%s %s: a sentence with an example glued on: %s", c[0], c[1], text)
		}
		for _, ex := range jsonExamples(text) {
			seen++
			var v map[string]any
			if err := json.NewDecoder(bytes.NewReader([]byte(ex))).Decode(&v); err != nil {
				t.Errorf("%s %s: example is not valid JSON (%v): %s", c[0], c[1], err, text)
			}
		}
	}
	if seen < 10 {
		t.Errorf("only %d examples found: the scan is broken", seen)
	}
}

// A path wrapped in one pair of quotes, as copied from a shell line, names
// the file inside them when the quoted name does not exist.
func TestQuotedPathIsUnwrappedWhenTheQuotedNameIsMissing(t *testing.T) {
	x, _ := newTestExecutor(t, map[string][]byte{"src/some app/a.txt": []byte("inside\n")})
	for _, p := range []string{`"src/some app/a.txt"`, `'src/some app/a.txt'`, "`src/some app/a.txt`"} {
		args, _ := json.Marshal(map[string]string{"path": p})
		if r := call(t, x, "read", string(args)); r.IsError || !strings.Contains(r.TextOf(), "inside") {
			t.Errorf("read %s: %s", p, r.TextOf())
		}
	}
	if r := call(t, x, "ls", `{"path":"\"src/some app/\""}`); r.IsError || !strings.Contains(r.TextOf(), "a.txt") {
		t.Errorf("ls of a quoted directory: %s", r.TextOf())
	}
}
