package builtin

import (
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/ops"
)

// In a workspace of several folders, grep and find without a path walk
// each folder once (one inside another is walked with the outer one),
// name the first folder's files relatively and the others' absolutely,
// and every name leads back to its file.
func TestSearchWithoutPathCoversEachFolderOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		// folders relative to the test dir; files live in a/ and b/
		folders []string
		want    []string // grep's lines, "{dir}" standing for the test dir
	}{
		{"two folders", []string{"a", "b"}, []string{"in/z.txt:1: needle in", "x.txt:1: needle a", "{dir}/b/y.txt:1: needle b"}},
		{"second inside the first", []string{"a", "a/in"}, []string{"in/z.txt:1: needle in", "x.txt:1: needle a"}},
		{"first inside the second", []string{"a/in", "a"}, []string{"z.txt:1: needle in", "{dir}/a/x.txt:1: needle a"}},
		{"one folder twice", []string{"a", "a"}, []string{"in/z.txt:1: needle in", "x.txt:1: needle a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, dir := newTestExecutor(t, map[string][]byte{
				"a/x.txt":    []byte("needle a\n"),
				"a/in/z.txt": []byte("needle in\n"),
				"b/y.txt":    []byte("needle b\n"),
			})
			var specs []ops.FolderSpec
			for _, f := range tc.folders {
				specs = append(specs, ops.FolderSpec{Path: dir + "/" + f})
			}
			if err := x.Env.FS.SetFolders(specs); err != nil {
				t.Fatal(err)
			}
			r := call(t, x, "grep", `{"pattern": "needle"}`)
			want := strings.ReplaceAll(strings.Join(tc.want, "\n"), "{dir}", dir)
			if got := strings.TrimSpace(r.TextOf()); r.IsError || got != want {
				t.Errorf("grep:\n%s\nwant\n%s", got, want)
			}
			f := call(t, x, "find", `{"pattern": "*.txt"}`)
			var paths []string
			for _, l := range tc.want {
				paths = append(paths, strings.ReplaceAll(l[:strings.Index(l, ":")], "{dir}", dir))
			}
			if got := strings.TrimSpace(f.TextOf()); f.IsError || got != strings.Join(paths, "\n") {
				t.Errorf("find:\n%s\nwant\n%s", got, strings.Join(paths, "\n"))
			}
			for _, p := range paths {
				if r := call(t, x, "read", `{"path": "`+p+`"}`); r.IsError || !strings.Contains(r.TextOf(), "needle") {
					t.Errorf("read %s: %s", p, r.TextOf())
				}
			}
		})
	}
}
