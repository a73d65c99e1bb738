package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// editScriptCmds are the commands the edit, write, bash and arguments
// scripts need beyond testscript's own: exact bytes a txtar section cannot
// hold (CR, a BOM, no final newline), one field of a --json result, and a
// file's inode (to tell a rename from an in-place rewrite).
func editScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"bytes":   cmdBytes,
		"jsonget": cmdJSONGet,
		"inode":   cmdInode,
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
