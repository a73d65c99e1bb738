package e2e

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// edit and write refuse files over 64 MiB (the limit their descriptions
// state) with a message naming the size and what to do instead, without
// reading the file: an edit of a 500 MB file used to take 3 GiB and kill
// the server. The files are sparse, so the test writes nothing to disk.
func TestEditAndWriteRefuseFilesOver64MiB(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("huge input: files over 64 MiB")
	}
	if runtime.GOOS != "linux" {
		t.Skip("peak memory is read from /proc (Linux only)")
	}
	ws := t.TempDir()
	p := filepath.Join(ws, "huge.txt")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("needle\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(500 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s := hugeStart(t, ws)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"edit", map[string]any{"path": "huge.txt", "edits": []map[string]any{{"oldText": "needle", "newText": "pin"}}}},
		{"write", map[string]any{"path": "huge.txt", "content": "small\n"}},
	} {
		r := s.c.CallTool(s.ctx, tc.tool, tc.args)
		text := r.Text()
		if !r.IsError || !strings.Contains(text, "500.0 MiB") || !strings.Contains(text, "up to 64 MiB") || !strings.Contains(text, "sed -i") {
			t.Errorf("%s of a 500 MB file: isError %v, %q; want a refusal naming the size, the limit and bash", tc.tool, r.IsError, text)
		}
	}
	s.checkMem(t, "edit and write of a 500 MB file", hugePeakGrowth)
	if fi, err := os.Stat(p); err != nil || fi.Size() != 500<<20 {
		t.Errorf("the refused file changed: %v, %v", fi.Size(), err)
	}
	for _, tool := range []string{"edit", "write"} {
		var list struct {
			Tools []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"tools"`
		}
		if err := s.c.Call(s.ctx, "tools/list", map[string]any{"includeDeferred": true}, &list); err != nil {
			t.Fatal(err)
		}
		var desc string
		for _, d := range list.Tools {
			if d.Name == tool {
				desc = d.Description
			}
		}
		if !strings.Contains(desc, "64 MiB") {
			t.Errorf("the %s description does not state the 64 MiB limit: %q", tool, desc)
		}
	}
	big := strings.Repeat("x", 64<<20+1)
	r := s.c.CallTool(s.ctx, "write", map[string]any{"path": "new.txt", "content": big})
	if !r.IsError || !strings.Contains(r.Text(), "the content for new.txt is 67108865 bytes (64.0 MiB)") {
		t.Errorf("write of 64 MiB + 1 byte: isError %v, %q; want a refusal", r.IsError, r.Text())
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); err == nil {
		t.Error("the refused write created new.txt")
	}
}
