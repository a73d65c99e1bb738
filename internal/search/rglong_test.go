package search

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// An rg event longer than rgEventMax keeps its line number and the start of
// its line, whatever escapes stand at the cut or in the rest, and leaves
// the reader at the next event; a line in base64 ("bytes") too.
func TestLongRgEventKeepsNumberAndStart(t *testing.T) {
	long := `é"\` + strings.Repeat("x\"y\\z\u00e9\n", rgEventMax/4) + "end"
	text, _ := json.Marshal(long)
	bin := base64.StdEncoding.EncodeToString([]byte("\xff\xfe" + strings.Repeat("q", rgEventMax)))
	for _, tc := range []struct {
		name, event string
		match       bool
		start       string
	}{
		{"match, text", `{"type":"match","data":{"path":{"text":"a.txt"},"lines":{"text":` + string(text) + `},"line_number":42,"absolute_offset":0,"submatches":[]}}`, true, `é"\x"y\z`},
		{"context, bytes", `{"type":"context","data":{"path":{"text":"a.txt"},"lines":{"bytes":"` + bin + `"},"line_number":42,"absolute_offset":0,"submatches":[]}}`, false, "\xff\xfeqqq"},
		{"long submatches", `{"type":"match","data":{"path":{"text":"a.txt"},"lines":{"text":"short"},"line_number":42,"absolute_offset":0,"submatches":[` + strings.Repeat(`{"match":{"text":"s"},"start":0,"end":1},`, rgEventMax/40) + `{}]}}`, true, "short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tc.event+"\n"+`{"type":"end"}`+"\n"), 4096)
			head, err := r.ReadSlice('\n')
			if err != bufio.ErrBufferFull {
				t.Fatalf("event fits the buffer: %v", err)
			}
			ev, n, start, err := readLongEvent(r, head, nil)
			if err != nil || ev != nil {
				t.Fatalf("readLongEvent: ev %d bytes, err %v", len(ev), err)
			}
			if n != 42 || !strings.HasPrefix(string(start), tc.start) || len(start) > rgEventMax {
				t.Errorf("line %d, start %q (%d bytes), want 42, %q…", n, string(start[:min(20, len(start))]), len(start), tc.start)
			}
			rest, err := r.ReadString('\n')
			if err != nil || rest != `{"type":"end"}`+"\n" {
				t.Errorf("next event %q, %v", rest, err)
			}
		})
	}
	t.Run("an event that fits after all is returned whole", func(t *testing.T) {
		ev := `{"type":"begin","data":{"path":{"text":"` + strings.Repeat("p", 10000) + `"}}}`
		r := bufio.NewReaderSize(strings.NewReader(ev+"\n"), 4096)
		head, _ := r.ReadSlice('\n')
		got, _, _, err := readLongEvent(r, head, nil)
		if err != nil || string(got) != ev+"\n" {
			t.Errorf("got %d bytes, %v", len(got), err)
		}
	})
}
