package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/testscript"
)

// editScriptCmds are the commands the edit, write, bash and arguments
// scripts need beyond testscript's own: exact bytes a txtar section cannot
// hold (CR, a BOM, no final newline), one field of a --json result, and a
// file's inode (to tell a rename from an in-place rewrite), and LSP
// TextEdits applied to a text (to show details.edits reproduce the file)
// and a file's hash as details.oldHash and newHash give it.
func editScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"bytes":      cmdBytes,
		"jsonget":    cmdJSONGet,
		"inode":      cmdInode,
		"applyedits": cmdApplyEdits,
		"hash":       cmdHash,
	}
}

// bytes FILE 'ESCAPED': writes FILE (mode 0644) with the content of a Go
// string literal whose escapes (\n, \r, \t, \xEF, \u00a0) ESCAPED holds;
// a double quote is written as it is.
func cmdBytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: bytes FILE \"go-quoted content\"")
	}
	s, err := strconv.Unquote(`"` + strings.ReplaceAll(args[1], `"`, `\"`) + `"`)
	if err != nil {
		ts.Fatalf("bytes %s: unquote %q: %v", args[0], args[1], err)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(s), 0o644))
}

// jsonget [@FILE] PATH [-KEY...]: prints the value at PATH (dot-separated
// keys and array indexes, e.g. 1.details.unifiedDiff) of the JSON in FILE,
// else in the last command's stdout: a string as it is (and a newline
// when it does not end in one, as a txtar section does), anything else as indented JSON
// without the keys named -KEY (durationMs varies from run to run). With !,
// the path must not exist.
func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	file := "stdout"
	if len(args) > 0 && strings.HasPrefix(args[0], "@") {
		file, args = args[0][1:], args[1:]
	}
	if len(args) < 1 {
		ts.Fatalf("usage: jsonget [@FILE] PATH [-KEY...]")
	}
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile(file)), &v); err != nil {
		ts.Fatalf("jsonget: %s is not JSON: %v", file, err)
	}
	for _, k := range strings.Split(args[0], ".") {
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[k]; !ok {
				if neg {
					return
				}
				ts.Fatalf("jsonget %s: no key %q", args[0], k)
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(c) {
				if neg {
					return
				}
				ts.Fatalf("jsonget %s: no index %q in an array of %d", args[0], k, len(c))
			}
			v = c[i]
		default:
			if neg {
				return
			}
			ts.Fatalf("jsonget %s: %q is not in a %T", args[0], k, v)
		}
	}
	if neg {
		ts.Fatalf("jsonget %s: present: %v", args[0], v)
	}
	if s, ok := v.(string); ok {
		if !strings.HasSuffix(s, "\n") {
			s += "\n" // as a txtar section ends
		}
		fmt.Fprint(ts.Stdout(), s)
		return
	}
	if m, ok := v.(map[string]any); ok {
		for _, k := range args[1:] {
			delete(m, strings.TrimPrefix(k, "-"))
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	ts.Check(enc.Encode(v))
	fmt.Fprint(ts.Stdout(), b.String())
}

// inode FILE VAR: sets VAR to FILE's inode number.
func cmdInode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: inode FILE VAR")
	}
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		ts.Fatalf("inode %s: no inode on this system", args[0])
	}
	ts.Setenv(args[1], strconv.FormatUint(st.Ino, 10))
}

// applyedits OLD EDITS.json OUT: applies the LSP TextEdits in EDITS.json
// (positions in UTF-16 code units, as agentls sends them) to the text of
// OLD and writes OUT. A UTF-8 BOM is not part of the text the positions
// count, as editors keep it out of the document; it is kept in OUT.
func cmdApplyEdits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: applyedits OLD EDITS.json OUT")
	}
	text := ts.ReadFile(args[0])
	const bom = "\ufeff"
	hadBOM := strings.HasPrefix(text, bom)
	text = strings.TrimPrefix(text, bom)
	var edits []struct {
		NewText string `json:"newText"`
		Range   struct {
			Start, End struct{ Line, Character int }
		} `json:"range"`
	}
	if err := json.Unmarshal([]byte(ts.ReadFile(args[1])), &edits); err != nil {
		ts.Fatalf("applyedits: %s: %v", args[1], err)
	}
	offset := func(line, char int) int {
		pos := 0
		for ; line > 0; line-- {
			i := strings.IndexByte(text[pos:], '\n')
			if i < 0 {
				ts.Fatalf("applyedits: line %d is past the end", line)
			}
			pos += i + 1
		}
		for units := 0; units < char; {
			if pos >= len(text) || text[pos] == '\n' {
				ts.Fatalf("applyedits: character %d is past the end of its line", char)
			}
			r, size := utf8.DecodeRuneInString(text[pos:])
			units += utf16.RuneLen(r)
			pos += size
		}
		return pos
	}
	// Edits do not overlap; applied from the last one back, the earlier
	// ones' offsets stay valid.
	type span struct {
		from, to int
		newText  string
	}
	spans := make([]span, len(edits))
	for i, e := range edits {
		spans[i] = span{offset(e.Range.Start.Line, e.Range.Start.Character), offset(e.Range.End.Line, e.Range.End.Character), e.NewText}
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].from > spans[j].from })
	for _, s := range spans {
		text = text[:s.from] + s.newText + text[s.to:]
	}
	if hadBOM {
		text = bom + text
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(text), 0o644))
}

// hash FILE: prints "sha256:<64 hex digits>" of FILE's bytes, the form of
// details.oldHash and newHash.
func cmdHash(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: hash FILE")
	}
	fmt.Fprintf(ts.Stdout(), "sha256:%x\n", sha256.Sum256([]byte(ts.ReadFile(args[0]))))
}
