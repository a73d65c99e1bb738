package builtin

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/jobs"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/tools"
)

// pngBytes is a 1×1 PNG.
var pngBytes, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

// newTestExecutor is an Executor with the built-in tools over a temp
// folder holding files, and no edit guard (a test that edits sets one).
func newTestExecutor(t testing.TB, files map[string][]byte) (*tools.Executor, string) {
	t.Helper()
	return newLimitedExecutor(t, files, tools.DefaultLimits())
}

// newLimitedExecutor is newTestExecutor with the built-in tools built for l.
func newLimitedExecutor(t testing.TB, files map[string][]byte, l tools.Limits) (*tools.Executor, string) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := ops.NewLocal([]ops.FolderSpec{{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	reg := tools.NewRegistry()
	reg.MustRegister(Builtins(l)...)
	env := &tools.Env{FS: fsys, Jobs: jobs.New(jobs.Options{Lines: l.BashLines, Bytes: l.BashBytes})}
	t.Cleanup(env.Jobs.Close)
	env.SetLimits(l)
	return &tools.Executor{Registry: reg, Env: env}, dir
}

func call(t *testing.T, x *tools.Executor, name, args string) tools.Result {
	t.Helper()
	return x.Call(context.Background(), tools.Request{Name: name, Arguments: []byte(args)}, nil)
}

func numbered(n, width int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		line := fmt.Sprintf("line %d ", i)
		line += strings.Repeat("x", max(0, width-len(line)))
		b.WriteString(line + "\n")
	}
	return b.Bytes()
}

func TestRead(t *testing.T) {
	elf := append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 2000)...)
	x, _ := newTestExecutor(t, map[string][]byte{
		"big.txt":       numbered(2500, 10),
		"wide.txt":      numbered(500, 209), // 210 bytes with the newline
		"small.txt":     []byte("one\ntwo\nthree\n"),
		"image.txt":     pngBytes,
		"notimage.png":  []byte("just text\n"),
		"bom.txt":       []byte("\xef\xbb\xbfhello\n"),
		"crlf.txt":      []byte("a\r\nb\r\n"),
		"utf16.txt":     []byte("\xff\xfeh\x00i\x00\n\x00"),
		"prog":          elf,
		"longline.txt":  []byte(strings.Repeat("é", 3000) + "\nshort\n"),
		"huge1.txt":     []byte(strings.Repeat("a", 60000) + "\nnext\n"),
		"empty.txt":     nil,
		"dir/inner.go":  []byte("package dir\n"),
		"src/config.ts": []byte("x\n"),
		"doc.pdf":       []byte("%PDF-1.4\n%âãÏÓ\n1 0 obj << /Type /Catalog >> endobj\n"),
	})
	cases := []struct {
		name    string
		args    string
		isError bool
		want    []string
		not     []string
	}{
		{"2500 lines stop at 2000 result lines, header and notice included", `{"path":"big.txt"}`, false,
			[]string{"big.txt, lines 1-1998 of 2500", "1998→line 1998 ", "[Showing lines 1-1998 of 2500 (at most 2000 lines per call). Use offset=1999 to continue.]"},
			[]string{"1999→"}},
		{"offset continues", `{"path":"big.txt","offset":2001}`, false,
			[]string{"lines 2001-2500 of 2500", "2500→line 2500"}, []string{"Use offset="}},
		{"wide lines are cut by bytes", `{"path":"wide.txt"}`, false,
			[]string{"the 51200-byte limit was reached. Use offset=", "wide.txt, lines 1-"}, []string{"500→"}},
		{"limit", `{"path":"small.txt","offset":2,"limit":1}`, false,
			[]string{"small.txt, lines 2-2 of 3", "2→two", "Use offset=3 to continue."}, []string{"1→one", "3→three"}},
		{"offset beyond EOF names the line count", `{"path":"small.txt","offset":10}`, true,
			[]string{"offset 10 is beyond the end of small.txt, which has 3 lines"}, nil},
		{"a PNG named .txt is an image", `{"path":"image.txt"}`, false, []string{"image/png image"}, nil},
		{"a .png holding text is text", `{"path":"notimage.png"}`, false, []string{"1→just text"}, nil},
		{"BOM stripped", `{"path":"bom.txt"}`, false, []string{"     1→hello", "UTF-8 BOM stripped"}, []string{"\ufeff"}},
		{"CRLF shown without CR", `{"path":"crlf.txt"}`, false, []string{"1→a\n", "CRLF line endings"}, []string{"\r"}},
		{"UTF-16 decoded", `{"path":"utf16.txt"}`, false, []string{"1→hi", "decoded from UTF-16LE"}, nil},
		{"ELF refused with its type", `{"path":"prog"}`, true, []string{"binary file (ELF executable, 2.0 KiB); not read"}, nil},
		{"a PDF without NUL is refused by its sniffed type", `{"path":"doc.pdf"}`, true, []string{"binary file (application/pdf"}, nil},
		{"a long line is cut with a marker", `{"path":"longline.txt"}`, false,
			[]string{"… [line cut: 2000 of 3000 characters shown]", "2→short"}, nil},
		{"a first line over the byte limit explains itself", `{"path":"huge1.txt"}`, false,
			[]string{"Line 1 of huge1.txt is 58.6 KiB (60000 bytes), too long to show within the 51200-byte read limit", "sed -n '1p' huge1.txt"}, nil},
		{"empty file", `{"path":"empty.txt"}`, false, []string{"empty.txt is empty (0 lines)."}, nil},
		{"directory suggests ls", `{"path":"dir"}`, true, []string{"dir is a directory", "use ls"}, nil},
		{"missing file suggests similar names", `{"path":"smal.txt"}`, true, []string{"smal.txt not found. Did you mean: small.txt"}, nil},
		{"missing file in another dir finds the same name", `{"path":"config.ts"}`, true, []string{"Did you mean: src/config.ts"}, nil},
		{"escape refused", `{"path":"../outside"}`, true, []string{"climbs out of the workspace"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, x, "read", tc.args)
			text := r.TextOf()
			if r.IsError != tc.isError {
				t.Fatalf("isError = %v; text:\n%s", r.IsError, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q in:\n%.600s", w, text)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(text, w) {
					t.Errorf("unexpected %q in:\n%.600s", w, text)
				}
			}
		})
	}
	t.Run("image content part", func(t *testing.T) {
		r := call(t, x, "read", `{"path":"image.txt"}`)
		if len(r.Content) != 2 || r.Content[1].Type != "image" || r.Content[1].MimeType != "image/png" || r.Content[1].Data != base64.StdEncoding.EncodeToString(pngBytes) {
			t.Fatalf("content = %+v", r.Content)
		}
	})
	t.Run("byte limit is respected", func(t *testing.T) {
		r := call(t, x, "read", `{"path":"wide.txt"}`)
		body := r.TextOf()
		body = body[strings.Index(body, "\n")+1 : strings.LastIndex(body, "\n[Showing")]
		if len(body) > tools.ReadMaxBytes {
			t.Fatalf("body is %d bytes", len(body))
		}
	})
	t.Run("a partial read stamps the file for the edit guard", func(t *testing.T) {
		guard := editguard.New(x.Env.FS)
		x.Env.Guard = guard
		t.Cleanup(func() { x.Env.Guard = nil })
		call(t, x, "read", `{"path":"small.txt","offset":2,"limit":1}`)
		p, err := x.Env.FS.Resolve("small.txt")
		if err != nil {
			t.Fatal(err)
		}
		if !guard.Has(p) {
			t.Fatal("no stamp for small.txt after reading its line 2")
		}
	})
}

// The description's numbers are the constants the code enforces.
func TestReadDescriptionNumbersMatchConstants(t *testing.T) {
	d := NewRead(tools.DefaultLimits()).Description
	for _, n := range []int{tools.ReadMaxLines, tools.ReadMaxBytes, tools.ReadMaxLineChars, ReadMaxImage, maxSuggestions} {
		if !strings.Contains(d, fmt.Sprint(n)) {
			t.Errorf("description lacks %d", n)
		}
	}
}
