package e2e

// Contract tests of the read tool, written from TOOLS.md,
// PROTOCOL.md, docs/tools.md and issues #2/#4 only.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/agentls/agentls/test/harness"
)

// a10rStart starts agentls on ws and initializes it.
func a10rStart(t *testing.T, ws string) (*harness.Client, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c := harness.Start(t, harness.Options{Root: ws})
	// acceptEdits: the stamp tests edit, and this client cannot answer tools/confirm.
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}})
	return c, ctx
}

// a10rWrite writes files (name → content) into ws.
func a10rWrite(t *testing.T, ws string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// a10rLines builds "prefix1\nprefix2\n…" with n lines.
func a10rLines(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s%d\n", prefix, i)
	}
	return b.String()
}

// a10rNumbered returns the numbered lines of a read text ("%6d→text").
var a10rNumRE = regexp.MustCompile(`(?m)^ *(\d+)→(.*)$`)

func a10rNumbered(text string) []int {
	var out []int
	for _, m := range a10rNumRE.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

func a10rPNG(extra int) []byte {
	chunk := func(typ string, data []byte) []byte {
		var b bytes.Buffer
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
		return b.Bytes()
	}
	var ihdr bytes.Buffer
	binary.Write(&ihdr, binary.BigEndian, uint32(1))
	binary.Write(&ihdr, binary.BigEndian, uint32(1))
	ihdr.Write([]byte{8, 2, 0, 0, 0})
	// zlib stream of one RGB pixel row (filter 0, 0xff 0 0).
	idat := []byte{0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00}
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, chunk("IHDR", ihdr.Bytes())...)
	out = append(out, chunk("IDAT", idat)...)
	out = append(out, chunk("IEND", nil)...)
	return append(out, make([]byte, extra)...)
}

// Numbering format and header, exact, per TOOLS.md ("src/config.ts, lines 1-42 of 42",
// "%6d→" lines, the line exactly as in the file).
func TestReadFormat(t *testing.T) {
	ws := t.TempDir()
	a10rWrite(t, ws, map[string]string{
		"src/config.ts": "alpha\n\tbeta  \ngamma\n",
		"nofinal.txt":   "a\nb",
		"one.txt":       "only\n",
	})
	c, ctx := a10rStart(t, ws)
	for _, tc := range []struct{ name, path, want string }{
		{"header and numbered lines", "src/config.ts", "src/config.ts, lines 1-3 of 3\n     1→alpha\n     2→\tbeta  \n     3→gamma"},
		{"no final newline", "nofinal.txt", "nofinal.txt, lines 1-2 of 2\n     1→a\n     2→b"},
		{"single line", "one.txt", "one.txt, lines 1-1 of 1\n     1→only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "read", map[string]any{"path": tc.path})
			if r.IsError || strings.TrimRight(r.Text(), "\n") != tc.want {
				t.Fatalf("isError=%v text=\n%q\nwant\n%q", r.IsError, r.Text(), tc.want)
			}
		})
	}
}

// At most 2000 lines, the header and the notice among them: truncation
// announced with "lines 1-1998 of 2500" and "use offset=1999"; the
// continuation reads the rest with no notice.
func TestReadLineLimit(t *testing.T) {
	ws := t.TempDir()
	a10rWrite(t, ws, map[string]string{"big.txt": a10rLines("line ", 2500)})
	c, ctx := a10rStart(t, ws)

	r := c.CallTool(ctx, "read", map[string]any{"path": "big.txt"})
	txt := r.Text()
	nums := a10rNumbered(txt)
	if r.IsError || len(nums) != 1998 || nums[0] != 1 || nums[1997] != 1998 || strings.Count(txt, "\n")+1 != 2000 {
		t.Fatalf("default read: isError=%v, %d numbered lines, %d lines in all", r.IsError, len(nums), strings.Count(txt, "\n")+1)
	}
	for _, want := range []string{"big.txt, lines 1-1998 of 2500", "[Showing lines 1-1998 of 2500"} {
		if !strings.Contains(txt, want) {
			t.Errorf("missing %q", want)
		}
	}
	if !strings.Contains(strings.ToLower(txt), "use offset=1999") {
		t.Errorf("notice lacks %q: %q", "use offset=1999", txt[len(txt)-200:])
	}

	r = c.CallTool(ctx, "read", map[string]any{"path": "big.txt", "offset": 1999})
	nums = a10rNumbered(r.Text())
	if r.IsError || len(nums) != 502 || nums[0] != 1999 || nums[501] != 2500 ||
		!strings.HasPrefix(r.Text(), "big.txt, lines 1999-2500 of 2500") || strings.Contains(r.Text(), "offset=") {
		t.Fatalf("continuation: %q … %d lines", r.Text()[:80], len(nums))
	}

	t.Run("limit over 2000 lowered and reported", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "big.txt", "limit": 5000})
		if r.IsError || len(a10rNumbered(r.Text())) != 1998 { // 2000 lines with the header and notice
			t.Fatalf("isError=%v lines=%d", r.IsError, len(a10rNumbered(r.Text())))
		}
		norm, _ := json.Marshal(r.Details["normalized"])
		if !strings.Contains(string(norm), "limit") {
			t.Errorf("details.normalized does not mention limit: %s", norm)
		}
	})
	t.Run("explicit limit announces continuation", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "big.txt", "offset": 10, "limit": 5})
		txt := r.Text()
		if nums := a10rNumbered(txt); len(nums) != 5 || nums[0] != 10 || nums[4] != 14 {
			t.Fatalf("lines %v", nums)
		}
		if !strings.Contains(txt, "lines 10-14 of 2500") || !strings.Contains(strings.ToLower(txt), "use offset=15") {
			t.Errorf("text %q", txt)
		}
	})
}

// At most 51,200 bytes per call (counting the numbered lines); the notice
// names the next offset.
func TestReadByteLimit(t *testing.T) {
	ws := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "%04d%s\n", i, strings.Repeat("x", 96))
	}
	a10rWrite(t, ws, map[string]string{"wide.txt": b.String()})
	c, ctx := a10rStart(t, ws)
	r := c.CallTool(ctx, "read", map[string]any{"path": "wide.txt"})
	txt := r.Text()
	nums := a10rNumbered(txt)
	if r.IsError || len(nums) == 0 || len(nums) >= 1000 {
		t.Fatalf("isError=%v lines=%d", r.IsError, len(nums))
	}
	last := nums[len(nums)-1]
	body := 0
	for _, m := range a10rNumRE.FindAllString(txt, -1) {
		body += len(m) + 1
	}
	lineBytes := body / len(nums)
	// The whole result, header and notice included, stays within 51,200
	// bytes and holds as many lines as fit.
	if len(txt) > 51200 || len(txt)+lineBytes <= 51200 {
		t.Errorf("result %d bytes (numbered body %d) for %d lines: not the most that fits in 51,200, header and notice included", len(txt), body, last)
	}
	if !strings.Contains(txt, fmt.Sprintf("lines 1-%d of 1000", last)) ||
		!strings.Contains(strings.ToLower(txt), fmt.Sprintf("use offset=%d", last+1)) {
		t.Errorf("notice: %q", txt[strings.LastIndex(txt, "\n["):])
	}
	if !strings.Contains(txt, "51200") && !strings.Contains(txt, "51,200") && !strings.Contains(txt, "50 KB") {
		t.Errorf("notice does not name the byte limit: %q", txt[strings.LastIndex(txt, "\n["):])
	}
}

// A line over 2000 characters is cut at 2000 characters (not bytes) with the
// marker docs/tools.md gives.
func TestReadLongLine(t *testing.T) {
	ws := t.TempDir()
	a10rWrite(t, ws, map[string]string{
		"ascii.txt": strings.Repeat("a", 2500) + "\nshort\n",
		"multi.txt": strings.Repeat("é", 2001) + "\n",
		"exact.txt": strings.Repeat("z", 2000) + "\n",
	})
	c, ctx := a10rStart(t, ws)
	for _, tc := range []struct{ name, path, line string }{
		{"ascii", "ascii.txt", "     1→" + strings.Repeat("a", 2000) + "… [line cut: 2000 of 2500 characters shown]"},
		{"multibyte counts characters", "multi.txt", "     1→" + strings.Repeat("é", 2000) + "… [line cut: 2000 of 2001 characters shown]"},
		{"exactly 2000 is not cut", "exact.txt", "     1→" + strings.Repeat("z", 2000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "read", map[string]any{"path": tc.path})
			lines := strings.Split(r.Text(), "\n")
			if r.IsError || len(lines) < 2 || lines[1] != tc.line {
				got := ""
				if len(lines) > 1 {
					got = lines[1]
					if len(got) > 80 {
						got = "…" + got[len(got)-80:]
					}
				}
				t.Fatalf("isError=%v line 1 ends %q", r.IsError, got)
			}
		})
	}
}

// A first line over the byte limit: explicit message with its size and how
// to read a byte window, never empty.
func TestReadHugeFirstLine(t *testing.T) {
	ws := t.TempDir()
	a10rWrite(t, ws, map[string]string{"min.js": strings.Repeat("b", 60000) + "\nnext\n"})
	c, ctx := a10rStart(t, ws)
	r := c.CallTool(ctx, "read", map[string]any{"path": "min.js"})
	txt := r.Text()
	if strings.TrimSpace(txt) == "" || !strings.Contains(txt, "60000") || !strings.Contains(txt, "cut -b") {
		t.Fatalf("text %q", txt)
	}
	if strings.Contains(txt, strings.Repeat("b", 100)) {
		t.Errorf("the line's content leaked into the message")
	}
	// Mid-window the same line is only cut at 2000 characters; as the first
	// line of a window it gets the explicit message, never an empty text.
	a10rWrite(t, ws, map[string]string{"mid.js": "a\nb\nc\nd\n" + strings.Repeat("q", 60000) + "\ne\n"})
	r = c.CallTool(ctx, "read", map[string]any{"path": "mid.js"})
	if nums := a10rNumbered(r.Text()); len(nums) != 6 || !strings.Contains(r.Text(), "… [line cut: 2000 of 60000 characters shown]") {
		t.Errorf("whole file: lines %v", nums)
	}
	r = c.CallTool(ctx, "read", map[string]any{"path": "mid.js", "offset": 5})
	if txt := r.Text(); !strings.Contains(txt, "60000") || !strings.Contains(txt, "cut -b") || !strings.Contains(txt, "5p") {
		t.Errorf("at the huge line: %q", txt)
	}
}

// offset/limit validation and the lenient normalizer.
func TestReadOffsetLimitValidation(t *testing.T) {
	ws := t.TempDir()
	a10rWrite(t, ws, map[string]string{"f.txt": a10rLines("l", 30), "empty.txt": ""})
	c, ctx := a10rStart(t, ws)
	const usage = "Usage: read {path: string, offset?: integer, limit?: integer}"
	for _, tc := range []struct {
		name    string
		args    map[string]any
		isError bool
		want    []string
		first   int // first numbered line when not an error
		count   int
	}{
		{"offset 0 means 1", map[string]any{"path": "f.txt", "offset": 0}, false, []string{"lines 1-30 of 30"}, 1, 30},
		{"absent offset", map[string]any{"path": "f.txt"}, false, []string{"lines 1-30 of 30"}, 1, 30},
		{"last line", map[string]any{"path": "f.txt", "offset": 30}, false, []string{"lines 30-30 of 30"}, 30, 1},
		{"numeric strings", map[string]any{"path": "f.txt", "offset": "5", "limit": "2"}, false, []string{"lines 5-6 of 30"}, 5, 2},
		{"float string whole", map[string]any{"path": "f.txt", "offset": 3.0, "limit": 1}, false, []string{"lines 3-3 of 30"}, 3, 1},
		{"codex aliases", map[string]any{"file_path": "f.txt", "line_offset": 4, "line_limit": 1}, false, []string{"lines 4-4 of 30"}, 4, 1},
		{"offset past end names line count", map[string]any{"path": "f.txt", "offset": 31}, true, []string{"31", "30 lines"}, 0, 0},
		{"negative offset", map[string]any{"path": "f.txt", "offset": -3}, true, []string{"`offset`", "≥ 1, got -3", usage}, 0, 0},
		{"non-numeric string offset", map[string]any{"path": "f.txt", "offset": "abc"}, true, []string{"`offset`", `"abc"`, usage}, 0, 0},
		{"fractional offset", map[string]any{"path": "f.txt", "offset": 1.5}, true, []string{"`offset`", "1.5"}, 0, 0},
		{"negative limit", map[string]any{"path": "f.txt", "limit": -1}, true, []string{"`limit`", "-1"}, 0, 0},
		{"missing path", map[string]any{"offset": 1}, true, []string{"path", usage}, 0, 0},
		{"path wrong type", map[string]any{"path": 42}, true, []string{"path", usage}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "read", tc.args)
			txt := r.Text()
			if r.IsError != tc.isError {
				t.Fatalf("isError=%v want %v: %q", r.IsError, tc.isError, txt)
			}
			for _, w := range tc.want {
				if !strings.Contains(txt, w) {
					t.Errorf("text lacks %q: %q", w, txt)
				}
			}
			if !tc.isError {
				nums := a10rNumbered(txt)
				if len(nums) != tc.count || nums[0] != tc.first {
					t.Errorf("lines %v, want %d from %d", nums, tc.count, tc.first)
				}
			}
		})
	}
	// TOOLS.md quotes this error text as the example of "says what to send instead".
	t.Run("contract example text", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "f.txt", "offset": -3})
		if want := "`offset` must be a line number ≥ 1, got -3"; !strings.Contains(r.Text(), want) {
			t.Errorf("want %q in %q", want, r.Text())
		}
	})
	t.Run("empty file", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "empty.txt"})
		if r.IsError || !strings.Contains(r.Text(), "empty") || len(a10rNumbered(r.Text())) != 0 {
			t.Errorf("isError=%v text=%q", r.IsError, r.Text())
		}
	})
}

func a10rUTF16(s string, be bool) []byte {
	u := utf16.Encode([]rune(s))
	out := []byte{0xff, 0xfe}
	if be {
		out = []byte{0xfe, 0xff}
	}
	for _, v := range u {
		if be {
			out = append(out, byte(v>>8), byte(v))
		} else {
			out = append(out, byte(v), byte(v>>8))
		}
	}
	return out
}

// Encodings: CRLF, lone CR, BOM stripped, UTF-16 decoded, invalid UTF-8 as U+FFFD with a note.
func TestReadEncodings(t *testing.T) {
	ws := t.TempDir()
	files := map[string][]byte{
		"crlf.txt":    []byte("one\r\ntwo\r\n"),
		"cr.txt":      []byte("a\rb\rc\n"),
		"bom.txt":     []byte("\xef\xbb\xbfhello\nworld\n"),
		"u16le.txt":   a10rUTF16("héllo\nwörld 😀\n", false),
		"u16be.txt":   a10rUTF16("héllo\nwörld 😀\n", true),
		"invalid.txt": []byte("ok \xff\xfe bad\nfine\n"),
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(ws, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, ctx := a10rStart(t, ws)
	for _, tc := range []struct {
		name, path string
		lines      []string
		note       string
	}{
		{"crlf shown without CR", "crlf.txt", []string{"     1→one", "     2→two"}, "CRLF"},
		{"lone CR kept as in the file", "cr.txt", []string{"     1→a\rb\rc"}, ""},
		{"utf-8 BOM stripped", "bom.txt", []string{"     1→hello", "     2→world"}, "BOM"},
		{"utf-16le decoded", "u16le.txt", []string{"     1→héllo", "     2→wörld 😀"}, "UTF-16"},
		{"utf-16be decoded", "u16be.txt", []string{"     1→héllo", "     2→wörld 😀"}, "UTF-16"},
		{"invalid utf-8", "invalid.txt", []string{"     1→ok \ufffd", "     2→fine"}, "U+FFFD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "read", map[string]any{"path": tc.path})
			txt := r.Text()
			if r.IsError {
				t.Fatalf("isError: %q", txt)
			}
			got := strings.Split(txt, "\n")
			for i, w := range tc.lines {
				if i+1 >= len(got) || !strings.HasPrefix(got[i+1], w) {
					t.Errorf("line %d: want prefix %q in %q", i+1, w, txt)
				}
			}
			if strings.Contains(txt, "\ufeff") || (tc.path == "crlf.txt" && strings.Contains(txt, "\r")) {
				t.Errorf("BOM or CR leaked: %q", txt)
			}
			if tc.note != "" && !strings.Contains(got[0], tc.note) {
				t.Errorf("header lacks note %q: %q", tc.note, got[0])
			}
			if !strings.HasPrefix(got[0], tc.path+", lines 1-") {
				t.Errorf("header %q", got[0])
			}
		})
	}
}

// Binary detection: NUL in the first 8 KiB (and no UTF-16 BOM) or a sniffed
// non-text type is refused with its type and size; a NUL past 8 KiB is text.
func TestReadBinary(t *testing.T) {
	ws := t.TempDir()
	elf := append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 2040)...)
	files := map[string][]byte{
		"nul.txt":      []byte("abc\x00def\n"),
		"prog":         elf,
		"a.zip":        append([]byte("PK\x03\x04"), make([]byte, 100)...),
		"late_nul.txt": append(bytes.Repeat([]byte("a\n"), 4200), 0, '\n'),
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(ws, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, ctx := a10rStart(t, ws)
	for _, tc := range []struct {
		name, path string
		want       []string
	}{
		{"NUL byte", "nul.txt", []string{"binary file (", "; not read"}},
		{"ELF", "prog", []string{"binary file (ELF executable, ", "2.0 KB", "; not read"}},
		{"zip", "a.zip", []string{"binary file (zip archive, 104 bytes); not read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "read", map[string]any{"path": tc.path})
			if !r.IsError {
				t.Fatalf("not refused: %q", r.Text())
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Text(), w) {
					t.Errorf("want %q in %q", w, r.Text())
				}
			}
		})
	}
	t.Run("NUL after the first 8 KiB is text", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "late_nul.txt", "offset": 4200})
		if r.IsError || !strings.Contains(r.Text(), "lines 4200-4201 of 4201") {
			t.Fatalf("isError=%v %q", r.IsError, r.Text())
		}
	})
}

// Images by content: PNG/JPEG/GIF/WebP come back as image parts with the
// right mimeType and the file's bytes; 5 MiB is the cap.
func TestReadImages(t *testing.T) {
	ws := t.TempDir()
	const capBytes = 5 << 20
	png := a10rPNG(0)
	files := map[string][]byte{
		"a.png":     png,
		"png.txt":   png,
		"text.png":  []byte("just text\n"),
		"a.gif":     []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"),
		"a.jpg":     []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"),
		"a.webp":    []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"),
		"at.png":    a10rPNG(capBytes - len(png)),
		"over.png":  a10rPNG(capBytes + 1 - len(png)),
		"under.png": a10rPNG(capBytes - 1 - len(png)),
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(ws, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, ctx := a10rStart(t, ws)
	for _, tc := range []struct{ name, path, mime string }{
		{"png", "a.png", "image/png"},
		{"png named .txt", "png.txt", "image/png"},
		{"gif", "a.gif", "image/gif"},
		{"jpeg", "a.jpg", "image/jpeg"},
		{"webp", "a.webp", "image/webp"},
		{"just under the cap", "under.png", "image/png"},
		{"exactly the cap", "at.png", "image/png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "read", map[string]any{"path": tc.path})
			if r.IsError {
				t.Fatalf("isError: %q", r.Text())
			}
			var img map[string]any
			for _, p := range r.Content {
				if p["type"] == "image" {
					img = p
				}
			}
			if img == nil || img["mimeType"] != tc.mime {
				t.Fatalf("no %s image part: %v", tc.mime, r.Text())
			}
			data, err := base64.StdEncoding.DecodeString(fmt.Sprint(img["data"]))
			if err != nil || !bytes.Equal(data, files[tc.path]) {
				t.Errorf("image data is not the file's bytes (err %v, %d vs %d bytes)", err, len(data), len(files[tc.path]))
			}
		})
	}
	t.Run("over the cap refused", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "over.png"})
		for _, p := range r.Content {
			if p["type"] == "image" {
				t.Fatalf("image part returned over the cap")
			}
		}
		if !r.IsError || !strings.Contains(r.Text(), "limit") {
			t.Errorf("isError=%v %q", r.IsError, r.Text())
		}
	})
	t.Run(".png holding text is text", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "text.png"})
		if r.IsError || !strings.Contains(r.Text(), "     1→just text") {
			t.Errorf("%q", r.Text())
		}
	})
}

// Missing files suggest up to 3 similar names; a directory suggests ls;
// special files are refused without blocking.
func TestReadNotAFile(t *testing.T) {
	ws := t.TempDir()
	a10rWrite(t, ws, map[string]string{
		"config.ts": "x\n", "config.js": "x\n", "config.tsx": "x\n", "conf.ts": "x\n",
		"deep/dir/unique_name.go": "x\n", "dir/keep": "x\n",
	})
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(ws, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	devErr := syscall.Mknod(filepath.Join(ws, "nulldev"), syscall.S_IFCHR|0o666, 1<<8|3) // /dev/null's numbers; needs root
	c, ctx := a10rStart(t, ws)

	t.Run("missing file suggests at most 3", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "config.t"})
		txt := r.Text()
		if !r.IsError || !strings.Contains(txt, "config.ts") {
			t.Fatalf("isError=%v %q", r.IsError, txt)
		}
		n := 0
		for _, name := range []string{"config.ts", "config.js", "config.tsx", "conf.ts"} {
			if regexp.MustCompile(`(^|[\s,:])` + regexp.QuoteMeta(name) + `([\s,?.]|$)`).MatchString(txt) {
				n++
			}
		}
		if n > 3 {
			t.Errorf("%d suggestions: %q", n, txt)
		}
	})
	t.Run("missing file found elsewhere by name", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": "unique_name.go"})
		if !r.IsError || !strings.Contains(r.Text(), "deep/dir/unique_name.go") {
			t.Errorf("isError=%v %q", r.IsError, r.Text())
		}
	})
	specials := []struct{ name, path, want string }{
		{"directory suggests ls", "dir", "ls"},
		{"fifo", "fifo", "not a regular file"},
		{"socket", "sock", "not a regular file"},
	}
	if devErr == nil {
		specials = append(specials, struct{ name, path, want string }{"device", "nulldev", "not a regular file"})
	} else {
		t.Logf("no device node (%v): device case not run", devErr)
	}
	for _, tc := range specials {
		t.Run(tc.name, func(t *testing.T) {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			r, err := c.TryCallTool(cctx, "read", map[string]any{"path": tc.path})
			if err != nil {
				t.Fatalf("call: %v (blocked?)", err)
			}
			if !r.IsError || !strings.Contains(r.Text(), tc.want) {
				t.Errorf("isError=%v %q", r.IsError, r.Text())
			}
		})
	}
	t.Run("permission denied", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("running as root: mode 000 does not deny reads")
		}
		p := filepath.Join(ws, "secret.txt")
		os.WriteFile(p, []byte("s\n"), 0o000)
		r := c.CallTool(ctx, "read", map[string]any{"path": "secret.txt"})
		if !r.IsError || !strings.Contains(strings.ToLower(r.Text()), "permission") {
			t.Errorf("isError=%v %q", r.IsError, r.Text())
		}
	})
}

// Paths: symlinks in/out, spaces and unicode, absolute inside, `~`, `@`, NBSP.
func TestReadPaths(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	a10rWrite(t, ws, map[string]string{
		"sub/target.txt": "inside\n", "sp ace ü.txt": "uni\n", "my file.txt": "nb\n",
	})
	a10rWrite(t, outside, map[string]string{"secret.txt": "OUTSIDE\n"})
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("sub/target.txt", filepath.Join(ws, "in_link")))
	must(os.Symlink(filepath.Join(ws, "sub/target.txt"), filepath.Join(ws, "abs_in_link")))
	must(os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "out_link")))
	must(os.Symlink("../"+filepath.Base(outside)+"/secret.txt", filepath.Join(ws, "rel_out_link")))
	c, ctx := a10rStart(t, ws)
	for _, tc := range []struct {
		name, path string
		ok         bool
		want       string
	}{
		{"symlink inside", "in_link", true, "1→inside"},
		{"absolute symlink inside", "abs_in_link", true, "1→inside"},
		{"spaces and unicode", "sp ace ü.txt", true, "1→uni"},
		{"absolute inside", filepath.Join(ws, "sp ace ü.txt"), true, "1→uni"},
		{"leading @", "@sub/target.txt", true, "1→inside"},
		{"NBSP normalized", "my\u00a0file.txt", true, "1→nb"},
		{"symlink outside", "out_link", false, "outside"},
		{"relative symlink outside", "rel_out_link", false, "outside"},
		{"absolute outside", filepath.Join(outside, "secret.txt"), false, "outside"},
		{"dotdot", "../" + filepath.Base(outside) + "/secret.txt", false, ".."},
		{"tilde", "~/secret.txt", false, "~"},
		{"NUL byte", "sub/target.txt\x00x", false, "NUL"},
		{"device path", "/dev/null", false, "refused"},
		{"proc path", "/proc/self/environ", false, "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "read", map[string]any{"path": tc.path})
			txt := r.Text()
			if r.IsError == tc.ok || !strings.Contains(txt, tc.want) {
				t.Errorf("isError=%v %q", r.IsError, txt)
			}
			if strings.Contains(txt, "OUTSIDE") {
				t.Errorf("outside content leaked: %q", txt)
			}
		})
	}
}

// Read stamps (issue #4): no read → edit refused; a partial read (lines 1-10)
// allows an edit at line 500; an external change after the read is refused.
func TestReadStamps(t *testing.T) {
	ws := t.TempDir()
	a10rWrite(t, ws, map[string]string{"f.txt": a10rLines("row ", 600), "g.txt": "keep\n"})
	c, ctx := a10rStart(t, ws)
	edit := func(path, old, nw string) harness.Result {
		return c.CallTool(ctx, "edit", map[string]any{"path": path, "edits": []any{map[string]any{"oldText": old, "newText": nw}}})
	}
	if r := edit("f.txt", "row 500\n", "ROW 500\n"); !r.IsError || !strings.Contains(r.Text(), "read f.txt first") {
		t.Fatalf("edit before read: isError=%v %q", r.IsError, r.Text())
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "f.txt", "limit": 10}); r.IsError {
		t.Fatal(r.Text())
	}
	if r := edit("f.txt", "row 500\n", "ROW 500\n"); r.IsError {
		t.Fatalf("edit after partial read: %q", r.Text())
	}
	got, _ := os.ReadFile(filepath.Join(ws, "f.txt"))
	if want := strings.Replace(a10rLines("row ", 600), "row 500\n", "ROW 500\n", 1); string(got) != want {
		t.Errorf("file content wrong after edit")
	}

	if r := c.CallTool(ctx, "read", map[string]any{"path": "g.txt"}); r.IsError {
		t.Fatal(r.Text())
	}
	p := filepath.Join(ws, "g.txt")
	if err := os.WriteFile(p, []byte("changed outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(3 * time.Second)
	os.Chtimes(p, later, later)
	if r := edit("g.txt", "changed outside\n", "mine\n"); !r.IsError || !strings.Contains(strings.ToLower(r.Text()), "read it again") {
		t.Errorf("stale edit: isError=%v %q", r.IsError, r.Text())
	}
	if b, _ := os.ReadFile(p); string(b) != "changed outside\n" {
		t.Errorf("external content not intact: %q", b)
	}
}

// A spill file path that bash printed can be opened by read (by its absolute path).
func TestReadSpillFile(t *testing.T) {
	ws := t.TempDir()
	c, ctx := a10rStart(t, ws)
	r := c.CallTool(ctx, "bash", map[string]any{"command": "seq 1 5000"})
	m := regexp.MustCompile(`read \{"path": "([^"]+)", "offset": (\d+)\}`).FindStringSubmatch(r.Text())
	if m == nil {
		t.Fatalf("no read call in bash notice: %q", r.Text()[:min(400, len(r.Text()))])
	}
	rr := c.CallTool(ctx, "read", map[string]any{"path": m[1], "offset": 2999, "limit": 3})
	if rr.IsError || !strings.Contains(rr.Text(), "lines 2999-3001 of 5000") ||
		!strings.Contains(rr.Text(), "  2999→2999\n  3000→3000\n  3001→3001") {
		t.Fatalf("isError=%v %q", rr.IsError, rr.Text())
	}
	off, _ := strconv.Atoi(m[2])
	rr = c.CallTool(ctx, "read", map[string]any{"path": m[1], "offset": off})
	if rr.IsError || len(a10rNumbered(rr.Text())) == 0 || a10rNumbered(rr.Text())[0] != off {
		t.Errorf("suggested call: isError=%v %q", rr.IsError, rr.Text()[:min(200, len(rr.Text()))])
	}
	// Other files in the spill directory's neighbourhood stay outside.
	rr = c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(filepath.Dir(m[1]), "..", "nope.log")})
	if !rr.IsError {
		t.Errorf("a path beside the spill dir was readable: %q", rr.Text())
	}
}
