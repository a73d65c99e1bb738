package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf16"

	"github.com/agentls/agentls/internal/search"
	"github.com/rogpeppe/go-internal/testscript"
)

// readScriptCmds are the commands the read/ls/grep/find scripts need to lay
// out files a txtar section cannot hold: many lines, bytes a text editor
// would mangle (NUL, invalid UTF-8, UTF-16), images and special files.
func readScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"genlines": cmdGenlines,
		"genfile":  cmdGenfile,
		"utf16":    cmdUTF16,
		"png":      cmdPNG,
		"mkfifo":   cmdMkfifo,
		"mksocket": cmdMksocket,
		"grepboth": cmdGrepBoth,
		"genfiles": cmdGenfiles,
	}
}

// unescape reads a script argument as the inside of a Go string literal, so
// `\n`, `\x00`, `\u00a0` are the bytes they name.
func unescape(ts *testscript.TestScript, s string) string {
	u, err := strconv.Unquote(`"` + strings.ReplaceAll(s, `"`, `\"`) + `"`)
	ts.Check(err)
	return u
}

func noNeg(ts *testscript.TestScript, neg bool, name string) {
	if neg {
		ts.Fatalf("unsupported: ! %s", name)
	}
}

// genlines FILE FORMAT N [FROM]: N lines, each fmt.Sprintf(FORMAT, i) for
// i from FROM (default 1), each ending in "\n". FORMAT is unescaped.
func cmdGenlines(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "genlines")
	if len(args) != 3 && len(args) != 4 {
		ts.Fatalf("usage: genlines FILE FORMAT N [FROM]")
	}
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	from := 1
	if len(args) == 4 {
		from, err = strconv.Atoi(args[3])
		ts.Check(err)
	}
	format := unescape(ts, args[1])
	var b strings.Builder
	for i := from; i < from+n; i++ {
		if strings.Contains(format, "%") {
			fmt.Fprintf(&b, format, i)
		} else {
			b.WriteString(format)
		}
		b.WriteByte('\n')
	}
	ts.Check(os.WriteFile(ts.MkAbs(unescape(ts, args[0])), []byte(b.String()), 0o644))
}

// genfiles DIR FORMAT N [CONTENT]: N files in DIR (made if missing), named
// fmt.Sprintf(FORMAT, i) for i from 1, holding CONTENT (unescaped, and
// formatted with i when it holds a %; default empty).
func cmdGenfiles(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "genfiles")
	if len(args) != 3 && len(args) != 4 {
		ts.Fatalf("usage: genfiles DIR FORMAT N [CONTENT]")
	}
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	content := ""
	if len(args) == 4 {
		content = unescape(ts, args[3])
	}
	dir := ts.MkAbs(unescape(ts, args[0]))
	ts.Check(os.MkdirAll(dir, 0o755))
	for i := 1; i <= n; i++ {
		body := content
		if strings.Contains(body, "%") {
			body = fmt.Sprintf(body, i)
		}
		ts.Check(os.WriteFile(filepath.Join(dir, fmt.Sprintf(args[1], i)), []byte(body), 0o644))
	}
}

var repeatSuffix = regexp.MustCompile(`\*(\d+)$`)

// genfile FILE PART...: the concatenation of the PARTs, each unescaped;
// a PART ending in *N is repeated N times (write a literal trailing *N as
// \x2aN).
func cmdGenfile(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "genfile")
	if len(args) < 1 {
		ts.Fatalf("usage: genfile FILE PART...")
	}
	var b bytes.Buffer
	for _, part := range args[1:] {
		times := 1
		if m := repeatSuffix.FindStringSubmatch(part); m != nil {
			times, _ = strconv.Atoi(m[1])
			part = part[:len(part)-len(m[0])]
		}
		b.WriteString(strings.Repeat(unescape(ts, part), times))
	}
	ts.Check(os.WriteFile(ts.MkAbs(unescape(ts, args[0])), b.Bytes(), 0o644))
}

// utf16 FILE le|be|le-nobom|be-nobom TEXT: TEXT (unescaped) in UTF-16.
func cmdUTF16(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "utf16")
	if len(args) != 3 {
		ts.Fatalf("usage: utf16 FILE le|be|le-nobom|be-nobom TEXT")
	}
	order, bom := strings.CutSuffix(args[1], "-nobom")
	bom = !bom
	var out []byte
	put := func(v uint16) {
		if order == "be" {
			out = append(out, byte(v>>8), byte(v))
		} else {
			out = append(out, byte(v), byte(v>>8))
		}
	}
	if order != "le" && order != "be" {
		ts.Fatalf("utf16: byte order %q: use le, be, le-nobom or be-nobom", args[1])
	}
	if bom {
		put(0xfeff)
	}
	for _, v := range utf16.Encode([]rune(unescape(ts, args[2]))) {
		put(v)
	}
	ts.Check(os.WriteFile(ts.MkAbs(unescape(ts, args[0])), out, 0o644))
}

// png FILE [SIZE]: a valid 1×1 PNG, padded with zero bytes to SIZE bytes.
func cmdPNG(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "png")
	if len(args) != 1 && len(args) != 2 {
		ts.Fatalf("usage: png FILE [SIZE]")
	}
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
	if len(args) == 2 {
		size, err := strconv.Atoi(args[1])
		ts.Check(err)
		if size < len(out) {
			ts.Fatalf("png: a PNG is at least %d bytes", len(out))
		}
		out = append(out, make([]byte, size-len(out))...)
	}
	ts.Check(os.WriteFile(ts.MkAbs(unescape(ts, args[0])), out, 0o644))
}

// mkfifo FILE: a named pipe.
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "mkfifo")
	if len(args) != 1 {
		ts.Fatalf("usage: mkfifo FILE")
	}
	ts.Check(syscall.Mkfifo(ts.MkAbs(unescape(ts, args[0])), 0o644))
}

// mksocket FILE: a Unix socket file with nobody listening (the listener is
// closed at once and the file left behind).
func cmdMksocket(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "mksocket")
	if len(args) != 1 {
		ts.Fatalf("usage: mksocket FILE")
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: ts.MkAbs(unescape(ts, args[0])), Net: "unix"})
	ts.Check(err)
	ln.SetUnlinkOnClose(false)
	ts.Check(ln.Close())
}

// [!] grepboth ARGS...: `agentls call grep ARGS...` with ripgrep (when rg is
// on PATH) and with the Go searcher; both must print the same text and
// exit the same way (non-zero under !). stdout is the common text.
func cmdGrepBoth(ts *testscript.TestScript, neg bool, args []string) {
	backends := []string{search.BackendGo}
	if _, err := exec.LookPath("rg"); err == nil {
		// Any value but "go" leaves the choice to agentls, which takes rg.
		backends = append([]string{search.BackendRg}, backends...)
	}
	old := ts.Getenv(search.BackendEnv)
	defer ts.Setenv(search.BackendEnv, old)
	var first string
	for i, b := range backends {
		ts.Setenv(search.BackendEnv, b)
		err := ts.Exec("agentls", append([]string{"call", "grep"}, args...)...)
		if failed := err != nil; failed != neg {
			ts.Fatalf("grep with the %s backend: exit error %v, want failure %v", b, err, neg)
		}
		out := ts.ReadFile("stdout")
		if i == 0 {
			first = out
		} else if out != first {
			ts.Fatalf("the %s and %s backends differ:\n--- %s:\n%s\n--- %s:\n%s", backends[0], b, backends[0], first, b, out)
		}
	}
}
