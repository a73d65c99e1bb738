package search

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/ignore"
)

// goEngine is a Go-backend engine over dir with the given buffer sizes.
func goEngine(dir string, z sizes) *Engine {
	fsys := os.DirFS(dir)
	return &Engine{Root: dir, FS: fsys, Matcher: ignore.NewMatcher(fsys, ignore.Outer{}), sizes: z}
}

// wholeSizes never chunks; chunkSizes chunks every file over 16 bytes.
var wholeSizes = sizes{bigFile: 1 << 40}

func chunkSizes(chunk int) sizes { return sizes{firstRead: 16, bigFile: 1, chunk: chunk} }

// TestChunkedMatchesWhole runs each query over each workspace twice, reading
// files whole and in tiny chunks (boundaries fall on every kind of line),
// and wants the same result.
func TestChunkedMatchesWhole(t *testing.T) {
	marks := map[int]string{1: "mark first", 9: "mark nine", 10: "mark ten", 11: "Mark eleven",
		63: "mark 63", 64: "mark 64", 65: "mark 65", 120: "x mark", 199: "mark 199", 200: "mark last"}
	long := strings.Repeat("y", 700)
	workspaces := []struct {
		name  string
		files map[string]string
		// skip names queries whose results may differ by design
		skip func(Query) bool
	}{
		{"numbered", map[string]string{"f.txt": numbered(200, marks)}, nil},
		{"crlf", map[string]string{"f.txt": strings.ReplaceAll(numbered(200, marks), "\n", "\r\n")}, nil},
		{"crlf from the middle on", map[string]string{"f.txt": numbered(100, marks) +
			strings.ReplaceAll(numbered(100, map[int]string{3: "mark crlf end", 50: "end mark"}), "\n", "\r\n")}, nil},
		{"lines longer than a chunk", map[string]string{"f.txt": "a\n" + long + " mark in long\nb\nmark short\n" + long + "\nc\n" + long + "mark" + long + "\n"}, nil},
		{"no final newline", map[string]string{"f.txt": numbered(40, map[int]string{39: "mark"}) + "last mark"}, nil},
		{"no final newline crlf", map[string]string{"f.txt": "mark a\r\nb\r\nlast mark"}, nil},
		{"lone CR at the end of a crlf file", map[string]string{"f.txt": numbered(30, nil) + "mark end\r\nb\r\n" + numbered(30, nil) + "last end\r"}, nil},
		{"empty lines", map[string]string{"f.txt": "\n\nmark\n\n\nx\n\n" + numbered(30, nil) + "\n\n"}, nil},
		{"invalid utf-8", map[string]string{"f.txt": numbered(50, map[int]string{25: "caf\xe9 mark \xff"})}, nil},
		{"utf-8 bom", map[string]string{"f.txt": "\xef\xbb\xbfmark one\n" + numbered(60, map[int]string{60: "mark end"})}, nil},
		{"utf-16 bom", map[string]string{"f.txt": "\xff\xfe" + utf16le("mark one\n"+numbered(60, map[int]string{33: "mark mid"}))}, nil},
		{"NUL after matches", map[string]string{"f.txt": numbered(100, marks) + "bin\x00ary\n" + numbered(20, nil)},
			// A limit reached before the NUL ends the chunked search
			// before it, as in rg: TestChunkedNULAfterLimit.
			func(q Query) bool { return q.Limit > 0 && q.Limit < len(marks) }},
		{"NUL at the start", map[string]string{"f.txt": "\x00\n" + numbered(100, marks)}, nil},
		{"every line matches", map[string]string{"f.txt": repeatLines("mark", 300)}, nil},
		{"multiple files", map[string]string{
			"a.txt": numbered(80, map[int]string{2: "mark a2", 79: "mark a79"}),
			"b.txt": repeatLines("mark b", 50),
			"c.txt": "mark c\n",
			"d.txt": strings.ReplaceAll(numbered(90, marks), "\n", "\r\n"),
			"e.txt": numbered(30, nil),
		}, nil},
	}
	queries := []Query{
		{Pattern: "mark"},
		{Pattern: "mark", Context: 1},
		{Pattern: "mark", Context: 3},
		{Pattern: "mark", Context: 20},
		{Pattern: "mark", Limit: 3},
		{Pattern: "mark", Limit: 3, Context: 2},
		{Pattern: "mark", Limit: 7, Context: 4},
		{Pattern: `mark \d+`, Context: 2},
		{Pattern: `m.rk`, Context: 1},
		{Pattern: `mark`, IgnoreCase: true, Limit: 5, Context: 1},
		{Pattern: `end$`},
		{Pattern: `^$`, Context: 1},
		{Pattern: `^line 1\d$`, Context: 1},
		{Pattern: `line`, Limit: 150, Context: 1},
		{Pattern: "zzz"},
	}
	ctx := context.Background()
	for _, ws := range workspaces {
		dir := t.TempDir()
		for name, body := range ws.files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		whole := goEngine(dir, wholeSizes)
		for _, q := range queries {
			if ws.skip != nil && ws.skip(q) {
				continue
			}
			want, err := whole.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, chunk := range []int{1, 7, 64} {
				name := fmt.Sprintf("%s/%s/ctx%d/limit%d/chunk%d", ws.name, q.Pattern, q.Context, q.Limit, chunk)
				t.Run(name, func(t *testing.T) {
					got, err := goEngine(dir, chunkSizes(chunk)).Search(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("chunked:\n%s%+v\nwhole:\n%s%+v", got.Text, got, want.Text, want)
					}
				})
			}
		}
	}
}

// countingFS counts the bytes read from its files.
type countingFS struct {
	fs.FS
	read *atomic.Int64
}

func (c countingFS) Open(name string) (fs.File, error) {
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return countingFile{f, c.read}, nil
}

type countingFile struct {
	fs.File
	read *atomic.Int64
}

func (f countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.read.Add(int64(n))
	return n, err
}

// TestChunkedStopsReading checks that a big file is read only as far as
// the matches and trailing context the result can show.
func TestChunkedStopsReading(t *testing.T) {
	dir := t.TempDir()
	const lines = 100000 // about 1.3 MB
	body := repeatLines("hit", lines)
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	const chunk = 4096
	tests := []struct {
		name    string
		z       sizes
		q       Query
		maxRead int64
	}{
		{"chunked stops after the limit", sizes{bigFile: 64 << 10, chunk: chunk}, Query{Pattern: "hit", Limit: 10}, readBufSize + 2*chunk},
		{"chunked reads the trailing context", sizes{bigFile: 64 << 10, chunk: chunk}, Query{Pattern: "hit", Limit: 10, Context: 20}, readBufSize + 2*chunk},
		{"chunked reads all without a match", sizes{bigFile: 64 << 10, chunk: chunk}, Query{Pattern: "miss"}, int64(len(body))},
		{"whole reads all", wholeSizes, Query{Pattern: "hit", Limit: 10}, int64(len(body))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var read atomic.Int64
			e := goEngine(dir, tc.z)
			e.FS = countingFS{e.FS, &read}
			res, err := e.Search(context.Background(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := read.Load(); got > tc.maxRead {
				t.Errorf("read %d bytes, want at most %d", got, tc.maxRead)
			}
			if tc.q.Pattern == "hit" && (res.Matches != tc.q.Limit || !res.LimitHit) {
				t.Errorf("matches=%d limitHit=%v, want %d true", res.Matches, res.LimitHit, tc.q.Limit)
			}
		})
	}
}

// bigFile writes lines lines of 64 bytes ("hit 0000001 xxx…") to dir/name.
func bigFile(t testing.TB, dir, name string, lines int) string {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := 1; i <= lines; i++ {
		w.WriteString(bigLine(i))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func bigLine(i int) string {
	l := fmt.Sprintf("hit %07d ", i)
	return l + strings.Repeat("x", 63-len(l))
}

// peakHeapGrowth runs fn and returns how far the heap's live and unswept
// objects grew above their size before it, sampled every millisecond.
func peakHeapGrowth(fn func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // sampler: exits when done closes
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	if v := read(); v > peak.Load() {
		peak.Store(v)
	}
	return max(peak.Load(), base) - base
}

// TestBigFileHeapBounded searches a 64 MiB file with the default sizes
// and wants the heap to grow far less than the file's size.
func TestBigFileHeapBounded(t *testing.T) {
	const (
		lines     = 1 << 20 // of 64 bytes: 64 MiB
		maxGrowth = 24 << 20
	)
	dir := bigFile(t, t.TempDir(), "big.txt", lines)
	tests := []struct {
		name string
		q    Query
		want string
	}{
		{"match on the last line only", Query{Pattern: bigLine(lines)}, fmt.Sprintf("big.txt:%d: %s\n", lines, bigLine(lines))},
		{"regexp on the last line only", Query{Pattern: fmt.Sprintf("^h.t %07d", lines)}, fmt.Sprintf("big.txt:%d: %s\n", lines, bigLine(lines))},
		{"every line matches", Query{Pattern: "hit", Limit: 2}, fmt.Sprintf("big.txt:1: %s\nbig.txt:2: %s\n[2 matches shown (limit 2). Narrow the pattern, add path/glob, or call again with limit=4.]\n", bigLine(1), bigLine(2))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := goEngine(dir, sizes{})
			var res Result
			var err error
			growth := peakHeapGrowth(func() { res, err = e.Search(context.Background(), tc.q) })
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tc.want {
				t.Errorf("text %q, want %q", res.Text, tc.want)
			}
			t.Logf("peak heap growth %.1f MiB", float64(growth)/(1<<20))
			if growth > maxGrowth {
				t.Errorf("heap grew %d MiB searching a %d MiB file, want < %d MiB", growth>>20, lines*64>>20, maxGrowth>>20)
			}
		})
	}
}

// TestChunkedNULAfterLimit pins the one way the chunked search differs from
// the whole-file one: a NUL beyond the point where the result is decided is
// not read, so the file is not skipped as binary. rg, which reads in
// buffers and stops at --max-count, shows the same matches.
func TestChunkedNULAfterLimit(t *testing.T) {
	dir := t.TempDir()
	body := repeatLines("hit", 100000) + "\x00\n"
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	q := Query{Pattern: "hit", Limit: 3}
	const shown = "big.txt:1: hit 1\nbig.txt:2: hit 2\nbig.txt:3: hit 3\n[3 matches shown (limit 3). Narrow the pattern, add path/glob, or call again with limit=6.]\n"
	tests := []struct {
		name string
		e    *Engine
		want string
	}{
		{"chunked", goEngine(dir, sizes{bigFile: 64 << 10, chunk: 4096}), shown},
		{"whole", goEngine(dir, wholeSizes), "No matches for \"hit\" in the workspace.\n"},
	}
	if rg, err := exec.LookPath("rg"); err == nil {
		e := goEngine(dir, sizes{})
		e.RgPath = rg
		tests = append(tests, struct {
			name string
			e    *Engine
			want string
		}{"rg", e, shown})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.e.Search(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tc.want {
				t.Errorf("text %q, want %q", res.Text, tc.want)
			}
		})
	}
}

// BenchmarkGrepBigFile searches a 64 MiB file in chunks (the default) and
// whole (the reference: the searcher before chunking).
func BenchmarkGrepBigFile(b *testing.B) {
	const lines = 1 << 20 // of 64 bytes: 64 MiB
	dir := bigFile(b, b.TempDir(), "big.txt", lines)
	queries := []struct {
		name string
		q    Query
	}{
		{"last-line-literal", Query{Pattern: bigLine(lines)}},
		{"last-line-regexp", Query{Pattern: fmt.Sprintf("%07d x|zzzz", lines)}},
		{"every-line-limit100", Query{Pattern: "hit"}},
		{"every-line-limit100-context5", Query{Pattern: "hit", Context: 5}},
	}
	modes := []struct {
		name string
		z    sizes
	}{{"chunked", sizes{}}, {"whole", wholeSizes}}
	ctx := context.Background()
	for _, qc := range queries {
		for _, m := range modes {
			b.Run(qc.name+"/"+m.name, func(b *testing.B) {
				e := goEngine(dir, m.z)
				b.SetBytes(lines * 64)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := e.Search(ctx, qc.q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestChunkedStopsWhenCancelled checks that a big file's search ends at
// the next chunk once its context is done (the Go backend cancels it when
// files before it decide the result).
func TestChunkedStopsWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	body := repeatLines("miss", 100000)
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cancel  bool
		minRead int64
		maxRead int64
	}{
		{"running reads all", false, int64(len(body)), int64(len(body))},
		{"cancelled stops", true, 0, readBufSize},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var read atomic.Int64
			fsys := countingFS{os.DirFS(dir), &read}
			s := &fileSearcher{re: regexp.MustCompile("hit"), literal: []byte("hit"), complete: true, maxMatches: 11,
				sizes: sizes{bigFile: 64 << 10, chunk: 4096}.withDefaults()}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			var buf []byte
			if h := s.search(ctx, &dirOpener{fsys: fsys}, "big.txt", &buf); h.matches != 0 {
				t.Errorf("%d matches, want 0", h.matches)
			}
			if got := read.Load(); got < tc.minRead || got > tc.maxRead {
				t.Errorf("read %d bytes, want %d to %d", got, tc.minRead, tc.maxRead)
			}
		})
	}
}
