package builtin

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/unicode"

	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/tools"
)

// Limits of the read tool beyond its Limits: the image cap.
const (
	ReadMaxImage     = 5 * 1024 * 1024
	binarySniffBytes = 8 * 1024
	maxSuggestions   = 3
)

type readInput struct {
	Path   string `json:"path" jsonschema:"file to read: relative to the workspace root, or absolute inside a workspace folder"`
	Offset int    `json:"offset,omitzero" jsonschema:"1-based line number to start at (default 1)"`
	Limit  int    `json:"limit,omitzero" jsonschema:"number of lines to return (default and maximum: the read line limit)"`
}

func readDescription(l tools.Limits) string {
	return fmt.Sprintf(`Read a file of the workspace and return its lines, numbered.

When to use: before editing a file ({{edit}} and {{write}} refuse files you have not read), and whenever you need a file's exact content. Use {{grep}} to find where something is and {{find}} to locate files by name first; do not use {{bash}} cat/head/tail.

Parameters: path (relative to the workspace root); offset (1-based first line, default 1) and limit (line count) to page through large files.

Output: a header "path, lines A-B of N", then one line per file line as "<line number>→<text>". A result is at most %d lines and %d bytes, the header and notices included; lines longer than %d characters are cut with a marker. When anything is cut, a notice gives the exact offset to continue with. PNG, JPEG, GIF and WebP images (up to %d bytes) come back as an image. Binary files are refused with their detected type. A UTF-8 BOM is stripped, UTF-16 files are decoded, invalid UTF-8 is shown as U+FFFD.

Errors: a missing file lists up to %d similarly named files; a directory asks you to use {{ls}}; an offset past the end names the file's line count.`,
		l.ReadLines, l.ReadBytes, l.ReadLineChars, ReadMaxImage, maxSuggestions)
}

// NewRead returns the read tool enforcing l.
func NewRead(l tools.Limits) *tools.Tool {
	l = l.WithDefaults()
	return tools.Define(tools.Spec[readInput]{
		Name:        "read",
		Title:       "Read file",
		Description: readDescription(l),
		// The numbered text, its header and notices: the window keeps
		// within ReadBytes, and governance holds it to that.
		MaxResultBytes: l.ReadBytes,
		Static:         tools.Labels{ReadOnly: true, ConcurrencySafe: true},
		Idempotent:     true,
		Aliases:        map[string]string{"start": "offset", "lines": "limit", "n": "limit"},
		PrepareRaw:     mapLineRange,
		Prepare: func(args map[string]any, n *tools.Normalization) {
			if v, ok := args["offset"].(float64); ok && v == 0 {
				delete(args, "offset") // 0 means "from the start"
			}
			// An offset past any file is answered with the file's length,
			// however large it is.
			if v, ok := args["offset"].(float64); ok && v > math.MaxInt32 {
				n.Add("offset: %v → %d", v, math.MaxInt32)
				args["offset"] = float64(math.MaxInt32)
			}
			if v, ok := args["limit"].(float64); ok && v > float64(l.ReadLines) {
				n.Add("limit: %v → %d (the maximum)", v, l.ReadLines)
				args["limit"] = float64(l.ReadLines)
			}
		},
		Tweak: func(s map[string]any) {
			prop(s, "offset")["minimum"] = 1.0
			// The title names the value in errors: "`offset` must be a line
			// number ≥ 1, got -3".
			prop(s, "offset")["title"] = "line number"
			prop(s, "limit")["title"] = "line count"
			prop(s, "limit")["minimum"] = 1.0
			prop(s, "limit")["description"] = fmt.Sprintf("number of lines to return (default and maximum %d)", l.ReadLines)
		},
		Run: func(ctx context.Context, c *tools.Call, in readInput) (tools.Result, error) {
			return runRead(ctx, c, in, l)
		},
	})
}

func runRead(ctx context.Context, c *tools.Call, in readInput, l tools.Limits) (tools.Result, error) {
	fsys := c.Env.FS
	p, err := c.Resolve(in.Path)
	if err != nil {
		return tools.Errorf("%v", err), nil
	}
	if doc, open := c.Env.Buffers.Get(p.OS()); open {
		return readBuffer(c, p, doc, in, l), nil
	}
	// One open: the stat of the descriptor decides directory/non-regular
	// and is the edit guard's fingerprint of exactly the bytes read.
	// The folder's open directory may have been moved away or replaced
	// (one stat): read what is at its path now, or say it is gone.
	if refresh(c.Env, p.Folder) == ops.FolderGone {
		return tools.Errorf("%s not found: %s", p.Display(), folderGone(p)), nil
	}
	file, fi, err := fsys.OpenRead(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return notFound(c.Env, p), nil
		}
		// A socket cannot even be opened (ENXIO): say what it is.
		if st, serr := fsys.Stat(p); serr == nil && !st.Mode().IsRegular() && !st.IsDir() {
			return tools.Errorf("%s is not a regular file (%s); only files can be read.", p.Display(), st.Mode().Type()), nil
		}
		return tools.Errorf("cannot read %s: %v", p.Display(), err), nil
	}
	if fi.IsDir() {
		return c.Errorf("%s is a directory, not a file; use {{ls}} to list it ({{ls}} {\"path\": %q}).", p.Display(), p.Display()), nil
	}
	if !fi.Mode().IsRegular() {
		return tools.Errorf("%s is not a regular file (%s); only files can be read.", p.Display(), fi.Mode().Type()), nil
	}
	defer file.Close()
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	if fi.Size() > ReadStreamBytes {
		return readLarge(ctx, c, p, file, fi, in, l)
	}
	data, err := ops.ReadSized(file, fi.Size())
	if err != nil {
		return tools.Errorf("cannot read %s: %v", p.Display(), err), nil
	}
	if img := sniffImage(data); img != "" {
		if len(data) > ReadMaxImage {
			return imageTooLarge(p.Display(), img, int64(len(data))), nil
		}
		r := tools.Result{Content: []tools.Content{
			{Type: "text", Text: fmt.Sprintf("%s: %s image, %s", p.Display(), img, humanBytes(int64(len(data))))},
			{Type: "image", Data: base64.StdEncoding.EncodeToString(data), MimeType: img},
		}}
		r.SetDetail("path", p.Display())
		recordRead(c, p, fi, data)
		return r, nil
	}
	res := readWhole(p.Display(), data, in, l, c.Masker(), c.Names())
	if !res.IsError {
		recordRead(c, p, fi, data)
	}
	return res, nil
}

// readWhole is what read shows of a text file held whole (data).
func readWhole(display string, data []byte, in readInput, l tools.Limits, m tools.Masker, names mention.Prefix) tools.Result {
	text, notes, isBinary, kind := decodeText(data)
	if isBinary {
		return binaryRefusal(kind, int64(len(data)), names)
	}
	text, masked := maskKeyLines(text)
	res := formatLines(display, text, in.Offset, in.Limit, notes, l, m, names)
	addKeyRedactions(&res, masked)
	return res
}

// recordRead stamps p as read, fingerprinted from the FileInfo of the
// descriptor that was read (no second stat).
func recordRead(c *tools.Call, p ops.Path, fi fs.FileInfo, data []byte) {
	if c.Env.Guard != nil {
		c.Env.Guard.RecordReadInfo(p, fi, data)
	}
}

// decodeText turns file bytes into text: BOM stripped, UTF-16 decoded,
// binary detected (NUL in the first 8 KiB, git's and ripgrep's rule).
func decodeText(data []byte) (text string, notes []string, binary bool, kind string) {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		data = data[3:]
		notes = append(notes, "UTF-8 BOM stripped")
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		endian := unicode.LittleEndian
		name := "UTF-16LE"
		if data[0] == 0xFE {
			endian, name = unicode.BigEndian, "UTF-16BE"
		}
		dec := unicode.UTF16(endian, unicode.ExpectBOM).NewDecoder()
		out, err := dec.Bytes(data)
		if err == nil {
			return string(out), []string{"decoded from " + name}, false, ""
		}
	}
	head := data
	if len(head) > binarySniffBytes {
		head = head[:binarySniffBytes]
	}
	if bytes.IndexByte(head, 0) >= 0 || binarySniff(head) {
		return "", nil, true, binaryKind(data)
	}
	if !utf8.Valid(data) {
		notes = append(notes, "not valid UTF-8: invalid bytes are shown as U+FFFD")
		return strings.ToValidUTF8(string(data), "\uFFFD"), notes, false, ""
	}
	return string(data), notes, false, ""
}

func binaryKind(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x7fELF")):
		return "ELF executable"
	case bytes.HasPrefix(data, []byte("MZ")):
		return "Windows executable"
	case bytes.HasPrefix(data, []byte{0xCF, 0xFA, 0xED, 0xFE}), bytes.HasPrefix(data, []byte{0xCA, 0xFE, 0xBA, 0xBE}):
		return "Mach-O executable"
	case bytes.HasPrefix(data, []byte("\x00asm")):
		return "WebAssembly module"
	case bytes.HasPrefix(data, []byte("SQLite format 3\x00")):
		return "SQLite database"
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		return "zip archive"
	}
	return http.DetectContentType(data)
}

// binarySniff reports content whose sniffed type is binary even without a
// NUL in its first 8 KiB (a PDF, an archive, media).
func binarySniff(head []byte) bool {
	ct := http.DetectContentType(head)
	for _, p := range []string{"application/pdf", "application/zip", "application/x-gzip", "application/x-rar-compressed", "application/wasm", "application/ogg", "application/vnd.ms-fontobject", "font/", "audio/", "video/", "image/"} {
		if strings.HasPrefix(ct, p) {
			return true
		}
	}
	return false
}

// sniffImage names the image format data starts with: the signatures
// http.DetectContentType knows for these four types, without its walk
// through every other signature (a tenth of a small read's time).
func sniffImage(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\x0D\x0A\x1A\x0A")):
		return "image/png"
	case bytes.HasPrefix(data, []byte("\xFF\xD8\xFF")):
		return "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	case len(data) >= 14 && bytes.HasPrefix(data, []byte("RIFF")) && string(data[8:14]) == "WEBPVP":
		return "image/webp"
	}
	return ""
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// lineNumber appends read's line prefix, "%6d→", without fmt.
func lineNumber(dst []byte, n int) []byte {
	var buf [20]byte
	digits := strconv.AppendInt(buf[:0], int64(n), 10)
	for i := len(digits); i < 6; i++ {
		dst = append(dst, ' ')
	}
	dst = append(dst, digits...)
	return append(dst, "→"...)
}

// lineRangeStarts and lineRangeEnds are the names other agents' read tools
// give a first and a last line (VS Code's startLine/endLine among them);
// read takes offset (the first line) and limit (a count).
var (
	lineRangeStarts = []string{"startLine", "start_line", "lineStart", "fromLine", "from"}
	lineRangeEnds   = []string{"endLine", "end_line", "end", "lineEnd", "toLine", "to"}
)

// mapLineRange turns a first/last line pair, or lines: "a-b", into offset
// and limit, so that the range asked for is the range read. A value that
// is not a line number is refused under the name the model sent.
func mapLineRange(args map[string]any, n *tools.Normalization) {
	var start, end int
	startName, endName := "", ""
	if v, ok := args["lines"].(string); ok {
		if a, b, isRange := cutRange(v); isRange {
			x, okA := lineArg(a)
			y, okB := lineArg(b)
			if !okA || !okB {
				n.Refuse("`lines` must be a line count or a range of line numbers such as \"10-20\", got %s", tools.JSONKind(v))
				return
			}
			delete(args, "lines")
			start, end, startName, endName = x, y, "lines", "lines"
		} else if _, ok := lineArg(v); !ok {
			n.Refuse("`lines` must be a line count or a range of line numbers such as \"10-20\", got %s", tools.JSONKind(v))
			return
		}
	}
	take := func(names []string, into *int, name *string) {
		for _, k := range names {
			v, ok := args[k]
			if !ok {
				continue
			}
			delete(args, k)
			if *name != "" {
				n.Notice("ignored `%s`: `%s` was already given", k, *name)
				continue
			}
			x, ok := lineArg(v)
			if !ok {
				n.Refuse("`%s` must be a line number ≥ 1, got %s", k, tools.JSONKind(v))
				return
			}
			*into, *name = x, k
		}
	}
	take(lineRangeStarts, &start, &startName)
	take(lineRangeEnds, &end, &endName)
	if n.Refused() {
		return
	}
	if startName != "" {
		if _, given := args["offset"]; given {
			n.Notice("ignored `%s`: `offset` was given", startName)
			startName = ""
		} else {
			args["offset"] = float64(start)
			n.Add("%s → offset %d", startName, start)
		}
	}
	if endName == "" {
		return
	}
	first := 1
	if startName != "" {
		first = start
	} else if o, ok := args["offset"].(float64); ok {
		first = int(o)
	}
	switch _, given := args["limit"]; {
	case given:
		n.Notice("ignored `%s`: `limit` was given", endName)
	case end < first:
		n.Refuse("`%s` (%d) is before the first line (%d); send a last line at or after the first", endName, end, first)
	default:
		args["limit"] = float64(end - first + 1)
		n.Add("%s → limit %d (lines %d-%d)", endName, end-first+1, first, end)
	}
}

// lineArg reads v (a number or a numeric string) as a line number ≥ 1.
func lineArg(v any) (int, bool) {
	f, ok := v.(float64)
	if s, isStr := v.(string); isStr {
		g, err := strconv.Atoi(strings.TrimSpace(s))
		f, ok = float64(g), err == nil
	}
	if !ok || f != math.Trunc(f) || f < 1 || f > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

// cutRange splits "a-b" (also "a:b", "a..b", "a–b") into its ends.
func cutRange(s string) (string, string, bool) {
	for _, sep := range []string{"..", "-", "–", ":", ","} {
		if a, b, ok := strings.Cut(s, sep); ok {
			return strings.TrimSpace(a), strings.TrimSpace(b), true
		}
	}
	return "", "", false
}
