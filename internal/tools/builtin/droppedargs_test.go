package builtin

import (
	"strings"
	"testing"
)

// read {path, startLine, endLine} (VS Code's names) returned the whole
// file, and end, end_line, lines: "a-b" were dropped too; they are mapped
// to offset and limit.
func TestReadLineRangeNamesAreMappedNotDropped(t *testing.T) {
	x, _ := newTestExecutor(t, map[string][]byte{"a.txt": numbered(10, 8)})
	for _, args := range []string{
		`{"path":"a.txt","startLine":3,"endLine":5}`,
		`{"path":"a.txt","start_line":3,"end_line":5}`,
		`{"path":"a.txt","offset":3,"end":5}`,
		`{"path":"a.txt","lines":"3-5"}`,
		`{"path":"a.txt","startLine":"3","endLine":"5"}`,
	} {
		text := call(t, x, "read", args).TextOf()
		if !strings.Contains(text, "3→line 3") || !strings.Contains(text, "5→line 5") || strings.Contains(text, "6→") || strings.Contains(text, "2→") {
			t.Errorf("read %s: want lines 3-5, got:\n%s", args, text)
		}
	}
	if text := call(t, x, "read", `{"path":"a.txt","endLine":2}`).TextOf(); !strings.Contains(text, "2→") || strings.Contains(text, "3→") {
		t.Errorf("endLine alone: want lines 1-2, got:\n%s", text)
	}
}

// lines: "1-3" was reported as "`limit` must be a number"; a wrong value
// is named under the field the model sent.
func TestWrongValueNamesTheFieldTheModelSent(t *testing.T) {
	x, _ := newTestExecutor(t, map[string][]byte{"a.txt": numbered(10, 8)})
	for args, want := range map[string]string{
		`{"path":"a.txt","lines":"x-3"}`:             "`lines`",
		`{"path":"a.txt","lines":"many"}`:            "`lines`",
		`{"path":"a.txt","startLine":"abc"}`:         "`startLine`",
		`{"path":"a.txt","endLine":-1}`:              "`endLine`",
		`{"path":"a.txt","startLine":5,"endLine":2}`: "`endLine`",
		`{"file_path":7}`:                            "`file_path`",
	} {
		r := call(t, x, "read", args)
		if !r.IsError || !strings.Contains(r.TextOf(), want) {
			t.Errorf("read %s: want an error naming %s, got: %s", args, want, r.TextOf())
		}
		if strings.Contains(r.TextOf(), "`limit` must") {
			t.Errorf("read %s: named limit, which was not sent: %s", args, r.TextOf())
		}
	}
}

// Fields that may carry meaning were dropped with a note only in
// details.normalized, which the model never sees: they are named in the
// result; harmless extras (a description of the call) drop silently.
func TestIgnoredArgumentsAreNamedInTheResult(t *testing.T) {
	x, _ := newTestExecutor(t, map[string][]byte{"src/a.go": []byte("package a\n"), "b.py": []byte("package = 1\n")})
	for _, tc := range []struct{ tool, args, want, lacks string }{
		{"ls", `{"path":"src","recursive":true}`, "ignored `recursive`: ls lists one directory; find lists a whole tree, e.g. find {\"pattern\": \"*\", \"path\": \"src\"}", ""},
		{"grep", `{"pattern":"package","output_mode":"files_with_matches"}`, "ignored `output_mode`", ""},
		{"grep", `{"pattern":"package","type":"go"}`, "src/a.go", "b.py"},
		{"grep", `{"pattern":"package","type":"cobol"}`, "ignored `type`", ""},
		{"read", `{"path":"src/a.go","frobnicate":true}`, "ignored `frobnicate`", ""},
		{"read", `{"path":"src/a.go","description":"look at a","thought":"x"}`, "1→package a", "ignored"},
	} {
		r := call(t, x, tc.tool, tc.args)
		text := r.TextOf()
		if !strings.Contains(text, tc.want) || tc.lacks != "" && strings.Contains(text, tc.lacks) {
			t.Errorf("%s %s: want %q (and not %q) in:\n%s", tc.tool, tc.args, tc.want, tc.lacks, text)
		}
	}
}
