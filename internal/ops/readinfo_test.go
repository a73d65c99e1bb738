package ops_test

import (
	"errors"
	"io/fs"
	"os"
	"testing"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/ops/opstest"
)

// TestContractReadFileInfo: content and FileInfo come from one open, and
// what is not a regular file is described, not read.
func TestContractReadFileInfo(t *testing.T) {
	forEachImpl(t, func(t *testing.T, f fixture) {
		tests := []struct {
			name, input string
			wantData    string
			wantMode    fs.FileMode // fs.ModeType bits; 0 = regular
			wantErr     error
		}{
			{name: "file", input: "src/a.go", wantData: "package src\n"},
			{name: "empty file", input: "empty/.k", wantData: ""},
			{name: "directory", input: "a/b", wantMode: fs.ModeDir},
			{name: "root", input: ".", wantMode: fs.ModeDir},
			{name: "read-only root", input: f.spill + "/secret.txt", wantData: "secret\n"},
			{name: "missing", input: "src/nope.go", wantErr: fs.ErrNotExist},
			{name: "missing dir", input: "nodir/x", wantErr: fs.ErrNotExist},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				p := resolve(t, f.fsys, tc.input)
				data, fi, err := opstest.ReadFileInfo(f.fsys, p)
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("ReadFileInfo = %q, %v, %v; want %v", data, fi, err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode().Type(); got != tc.wantMode {
					t.Fatalf("mode type = %v, want %v", got, tc.wantMode)
				}
				if tc.wantMode != 0 {
					if data != nil {
						t.Errorf("a %v was read: %q", tc.wantMode, data)
					}
					return
				}
				if string(data) != tc.wantData || fi.Size() != int64(len(data)) {
					t.Errorf("data %q, Size %d; want %q and its length", data, fi.Size(), tc.wantData)
				}
				// The FileInfo is the file's: same as a Stat now.
				st, err := f.fsys.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if st.Size() != fi.Size() || !st.ModTime().Equal(fi.ModTime()) || st.Mode() != fi.Mode() {
					t.Errorf("info %v %v %v, Stat %v %v %v", fi.Size(), fi.ModTime(), fi.Mode(), st.Size(), st.ModTime(), st.Mode())
				}
				if _, isLocal := f.fsys.(*ops.Local); isLocal && !os.SameFile(st, fi) {
					t.Error("info is not the stat of the file read (different inode)")
				}
			})
		}
	})
}

// TestLocalReadFileInfoContainment: a Path built by hand cannot climb out
// of its root, and a symlink inside reads its target.
func TestLocalReadFileInfoContainment(t *testing.T) {
	w := newWorkspace(t)
	l := newLocal(t, ops.FolderSpec{Path: w.root})

	t.Run("hand-made escaping Path", func(t *testing.T) {
		p := ops.Path{Folder: l.Folders()[0], Rel: "../outside/secret.txt"}
		if data, _, err := opstest.ReadFileInfo(l, p); err == nil {
			t.Fatalf("read %q outside the root", data)
		}
	})
	t.Run("symlink resolved to its target", func(t *testing.T) {
		p := resolve(t, l, "srclink/a.go")
		data, fi, err := opstest.ReadFileInfo(l, p)
		if err != nil || string(data) != "package src\n" || !fi.Mode().IsRegular() {
			t.Fatalf("ReadFileInfo = %q, %v, %v", data, fi, err)
		}
	})
}
