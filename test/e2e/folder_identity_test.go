package e2e

// Folder identity and large files (docs/protocol.md: a workspace folder
// deleted, replaced or turned into a symlink; docs/tools.md: read's large
// files and the edit guard over them).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// identNoteWait bounds waits for a notification on a loaded machine.
const identNoteWait = 8 * time.Second

// identFolders starts agentls on two fresh folders a and b (bypass mode, so
// only deny rules decide permissions) and returns the client, a context and
// the two paths.
func identFolders(t *testing.T) (*harness.Client, context.Context, string, string) {
	t.Helper()
	base := resolvedWorkspace(t, nil)
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	writeFiles(t, a, map[string]string{"x.txt": "old-x in a\n"})
	writeFiles(t, b, map[string]string{"x.txt": "old-x in b\n"})
	c := harness.Start(t, harness.Options{Root: a})
	ctx := testCtx(t, sessionTimeout)
	c.Initialize(ctx, map[string]any{
		"rootUri": fileURI(a),
		"workspaceFolders": []map[string]any{
			{"uri": fileURI(a), "name": "a"},
			{"uri": fileURI(b), "name": "b"},
		},
		"initializationOptions": bypassOptions(),
	})
	return c, ctx, a, b
}

// identIn names file name in folder dir the way a model would: relative for
// the first folder, absolute for another.
func identIn(first bool, dir, name string) string {
	if first {
		return name
	}
	return filepath.Join(dir, name)
}

// identRemove takes dir away: rm -rf, or mv dir dir.old.
func identRemove(t *testing.T, dir, how string) {
	t.Helper()
	remove := os.RemoveAll
	if how == "mv" {
		remove = func(dir string) error { return os.Rename(dir, dir+".old") }
	}
	if err := remove(dir); err != nil {
		t.Fatal(err)
	}
}

// identNewFolderFiles is what the directory created again at a folder's
// path holds: a file only it has, a secret its own settings deny reading.
var identNewFolderFiles = map[string]string{
	"y.txt":                  "new-y\n",
	"secret.txt":             "TOPSECRET-23\n",
	".agentls/settings.json": `{"permissions": {"deny": ["Read(secret.txt)"]}}`,
	".gitignore":             "skipped.txt\n",
	"skipped.txt":            "new-y but ignored\n",
}

const identGone = "no longer exists"

// docs/protocol.md, didChangeWorkspaceFolders:
// "A folder whose directory is deleted and created again at its path (…),
// or replaced by another, is opened there again by the next call that finds
// something missing in it (read, ls, edit, write) and by every grep and
// find; the watchers and its settings follow the new directory. While no
// directory is there, calls in it say the folder no longer exists, and grep
// and find without a path name it as not searched."
func TestFolderIdentityFolderReplaced(t *testing.T) {
	slow(t)
	t.Parallel()
	for i, trigger := range []string{"read", "ls", "edit", "write", "grep", "find"} {
		first, how := i%2 == 0, []string{"rmrf", "mv"}[i/2%2]
		t.Run(fmt.Sprintf("%s/first folder %v/%s", trigger, first, how), func(t *testing.T) {
			identFolderReplaced(t, first, how, trigger)
		})
	}
}

func identFolderReplaced(t *testing.T, first bool, how, trigger string) {
	c, ctx, a, b := identFolders(t)
	dir := a
	if !first {
		dir = b
	}
	in := func(name string) string { return identIn(first, dir, name) }
	wantResult(t, "read before removal", c.CallTool(ctx, "read", map[string]any{"path": in("x.txt")}), false, "old-x")

	identRemove(t, dir, how)

	// While no directory is there.
	wantResult(t, "read while gone", c.CallTool(ctx, "read", map[string]any{"path": in("x.txt")}), true, identGone)
	lsArgs := map[string]any{}
	if !first {
		lsArgs["path"] = dir
	}
	wantResult(t, "ls while gone", c.CallTool(ctx, "ls", lsArgs), true, identGone)
	wantResult(t, "edit while gone", c.CallTool(ctx, "edit", editCall(in("x.txt"), "old-x", "EDITED-WHILE-GONE")), true, identGone)
	wantResult(t, "write while gone", c.CallTool(ctx, "write", map[string]any{"path": in("gone.txt"), "content": "written while gone\n"}), true, identGone)
	if how == "mv" {
		if got := readFile(t, filepath.Join(dir+".old", "x.txt")); strings.Contains(got, "EDITED") {
			t.Errorf("edit while gone changed the moved-away directory's x.txt: %q", got)
		}
		if _, err := os.Stat(filepath.Join(dir+".old", "gone.txt")); err == nil {
			t.Errorf("write while gone created %s.old/gone.txt", dir)
		}
	}
	for _, call := range []struct{ tool, pattern string }{{"grep", "old-x"}, {"find", "x.txt"}} {
		r := c.CallTool(ctx, call.tool, map[string]any{"pattern": call.pattern})
		wantContains(t, call.tool+" while gone", r.Text(), "[Workspace folder", dir, "no longer exists; it was not searched.]")
		if first {
			wantContains(t, call.tool+" while gone (the other folder is searched)", r.Text(), filepath.Join(b, "x.txt"))
		} else {
			wantContains(t, call.tool+" while gone (the other folder is searched)", r.Text(), "x.txt")
			wantLacks(t, call.tool+" while gone", r.Text(), filepath.Join(dir, "x.txt"))
		}
	}

	// A directory at the path again.
	writeFiles(t, dir, identNewFolderFiles)

	switch trigger {
	case "read":
		wantResult(t, "read of a file only the new directory has", c.CallTool(ctx, "read", map[string]any{"path": in("y.txt")}), false, "new-y")
	case "ls":
		// .agentls is missing in the old directory.
		r := c.CallTool(ctx, "ls", map[string]any{"path": in(".agentls")})
		wantResult(t, "ls of a directory only the new one has", r, false, "settings.json")
	case "edit":
		// x.txt was read in the old directory; the new one has none.
		r := c.CallTool(ctx, "edit", editCall(in("x.txt"), "old-x", "EDITED"))
		if !r.IsError {
			t.Errorf("edit of x.txt, which the new directory lacks, succeeded: %s", r.Text())
		}
		if _, err := os.Stat(filepath.Join(dir, "x.txt")); err == nil {
			t.Errorf("edit created x.txt in the new directory")
		}
		if how == "mv" {
			if got := readFile(t, filepath.Join(dir+".old", "x.txt")); strings.Contains(got, "EDITED") {
				t.Errorf("edit changed the moved-away directory's x.txt: %q", got)
			}
		}
	case "write":
		r := c.CallTool(ctx, "write", map[string]any{"path": in("z.txt"), "content": "new-z\n"})
		wantResult(t, "write into the new directory", r, false)
		if got, err := os.ReadFile(filepath.Join(dir, "z.txt")); err != nil || string(got) != "new-z\n" {
			t.Errorf("write: %s/z.txt = %q, %v; want new-z", dir, got, err)
		}
		if how == "mv" {
			if _, err := os.Stat(filepath.Join(dir+".old", "z.txt")); err == nil {
				t.Errorf("write landed in the moved-away directory %s.old", dir)
			}
		}
	case "grep":
		r := c.CallTool(ctx, "grep", map[string]any{"pattern": "new-y"})
		wantResult(t, "grep after re-creation", r, false, "y.txt:1: new-y")
		wantLacks(t, "grep after re-creation", r.Text(), "no longer exists")
	case "find":
		r := c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt"})
		wantResult(t, "find after re-creation", r, false, "y.txt")
		wantLacks(t, "find after re-creation", r.Text(), "no longer exists")
		if first {
			wantLacks(t, "find after re-creation (x.txt is gone)", r.Text(), "\nx.txt")
		} else {
			wantLacks(t, "find after re-creation (x.txt is gone)", r.Text(), filepath.Join(dir, "x.txt"))
		}
	}

	// Whatever opened it, the folder is now the new directory.
	wantResult(t, "read y.txt in the new directory", c.CallTool(ctx, "read", map[string]any{"path": in("y.txt")}), false, "new-y")
	r := c.CallTool(ctx, "read", map[string]any{"path": in("secret.txt")})
	wantResult(t, "the new directory's deny rule", r, true, "Read(secret.txt)")
	wantLacks(t, "the new directory's deny rule", r.Text(), "TOPSECRET")
	g := c.CallTool(ctx, "grep", map[string]any{"pattern": "TOPSECRET"})
	wantLacks(t, "grep filtered by the new directory's deny rule", g.Text(), "TOPSECRET-23")
	wantLacks(t, "grep filtered by the new directory's .gitignore", c.CallTool(ctx, "grep", map[string]any{"pattern": "new-y"}).Text(), "ignored")
	l := c.CallTool(ctx, "ls", lsArgs)
	wantResult(t, "ls of the folder's root", l, false, "y.txt")
	wantLacks(t, "ls of the folder's root (x.txt was in the old directory; secret.txt is denied)", l.Text(), "x.txt", "secret.txt")

	// The watcher follows: a file read there, then changed from outside.
	t0 := time.Now()
	yURI := fileURI(filepath.Join(dir, "y.txt"))
	writeFile(t, filepath.Join(dir, "y.txt"), "changed outside\n")
	if _, ok := c.WaitNote(identNoteWait, func(n harness.Note) bool {
		if n.Method != "workspace/externalChange" || n.At.Before(t0) {
			return false
		}
		var p struct{ URI, Kind string }
		json.Unmarshal(n.Params, &p)
		return p.URI == yURI && p.Kind == "changed"
	}); !ok {
		t.Errorf("no workspace/externalChange {uri: %s, kind: changed} within %v; notes: %v", yURI, identNoteWait, identNoteDump(c))
	}
}

// identNoteDump lists the notifications received so far, for a failure.
func identNoteDump(c *harness.Client) string {
	var b strings.Builder
	for _, n := range c.Notes("") {
		if n.Method == "window/logMessage" || n.Method == "workspace/externalChange" {
			fmt.Fprintf(&b, "\n  %s %s", n.Method, lastBytes(string(n.Params), 300))
		}
	}
	return b.String()
}

// "A symbolic link put at its path is not
// followed: remove the folder and add the link's target" — calls in it say
// the folder no longer exists, grep and find name it as not searched.
func TestFolderIdentityFolderSymlinked(t *testing.T) {
	t.Parallel()
	for _, folder := range []string{"first", "second"} {
		t.Run(folder, func(t *testing.T) {
			first := folder == "first"
			c, ctx, a, b := identFolders(t)
			dir := a
			if !first {
				dir = b
			}
			in := func(name string) string { return identIn(first, dir, name) }
			wantResult(t, "read before", c.CallTool(ctx, "read", map[string]any{"path": in("x.txt")}), false, "old-x")
			target := dir + ".target"
			writeFiles(t, target, map[string]string{"y.txt": "link-y\n", "x.txt": "link-x\n"})
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			symlink(t, target, dir)

			for _, name := range []string{"y.txt", "x.txt"} {
				r := c.CallTool(ctx, "read", map[string]any{"path": in(name)})
				wantResult(t, "read through the link "+name, r, true, identGone)
				wantLacks(t, "read through the link "+name, r.Text(), "link-")
			}
			lsArgs := map[string]any{}
			if !first {
				lsArgs["path"] = dir
			}
			wantResult(t, "ls through the link", c.CallTool(ctx, "ls", lsArgs), true, identGone)
			w := c.CallTool(ctx, "write", map[string]any{"path": in("z.txt"), "content": "z\n"})
			wantResult(t, "write through the link", w, true, identGone)
			if _, err := os.Stat(filepath.Join(target, "z.txt")); err == nil {
				t.Errorf("write followed the symlink into %s", target)
			}
			for _, call := range []struct{ tool, pattern string }{{"grep", "link-"}, {"find", "*.txt"}} {
				r := c.CallTool(ctx, call.tool, map[string]any{"pattern": call.pattern})
				wantContains(t, call.tool+" with a symlink at the folder's path", r.Text(), "[Workspace folder", dir, "no longer exists; it was not searched.]")
				wantLacks(t, call.tool+" with a symlink at the folder's path", r.Text(), "y.txt", "link-x", "link-y")
			}
		})
	}
}

// identBigLines is the line count of the large-file fixtures; identLongLine is
// the line made long in the big one (not shown by the windows compared).
const (
	identBigLines   = 1_000_000
	identLongLine   = 700_000
	identBadLine    = 800_000 // holds invalid UTF-8 in both files
	identKeyBegin   = 900_000 // -----BEGIN … PRIVATE KEY----- in both files
	identKeyBody    = 30
	identStreamSize = 16 << 20 // docs/tools.md: "A file over 16 MiB"
)

// identKeyLine is body line i of the planted private key: base64 text that
// alone does not look like a key.
func identKeyLine(i int) string {
	s := strings.Repeat(fmt.Sprintf("Qk%02dZm9vYmFy", i), 6)
	return s[:64]
}

// identBigContent is the fixture: line i is %07d, except the invalid UTF-8
// line, the key block, and (when long > 0) line identLongLine padded with
// long bytes.
func identBigContent(long int) []byte {
	var b bytes.Buffer
	b.Grow(identBigLines*8 + long + 4096)
	for i := 1; i <= identBigLines; i++ {
		switch {
		case i == identBadLine:
			b.WriteString("bad\xff\xfebytes")
		case i == identKeyBegin:
			b.WriteString("-----BEGIN RSA PRIVATE KEY-----")
		case i > identKeyBegin && i <= identKeyBegin+identKeyBody:
			b.WriteString(identKeyLine(i - identKeyBegin))
		case i == identKeyBegin+identKeyBody+1:
			b.WriteString("-----END RSA PRIVATE KEY-----")
		default:
			fmt.Fprintf(&b, "%07d", i)
			if i == identLongLine && long > 0 {
				b.Write(bytes.Repeat([]byte("y"), long))
			}
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// "UTF-16 text that large is refused with an
// `iconv … | sed` command (decoding needs the whole file)."
func TestUTF16FileOver16MiBIsRefused(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, nil)
	line := []byte{}
	for _, r := range "utf16 line\n" {
		line = append(line, byte(r), 0)
	}
	body := append([]byte{0xFF, 0xFE}, bytes.Repeat(line, identStreamSize/len(line)+1000)...)
	writeBytes(t, filepath.Join(ws, "wide.txt"), body)
	c, ctx := startIn(t, ws, bypass())
	r := c.CallTool(ctx, "read", map[string]any{"path": "wide.txt"})
	wantResult(t, "read of a UTF-16 file over 16 MiB", r, true, "iconv", "sed", "wide.txt")
	wantLacks(t, "read of a UTF-16 file over 16 MiB", r.Text(), "utf16 line")
}

// "only the lines shown are kept, while the same
// pass … hashes the content for the edit guard": after a read of a file
// over 16 MiB an edit is allowed, and a change after the read is caught.
func TestEditAfterReadingAFileOver16MiB(t *testing.T) {
	slow(t)
	t.Parallel()
	content := identBigContent(identStreamSize + 1)
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, p string) // between the read and the edit
		stale  bool
	}{
		{"edit after the read", nil, false},
		{"same-size change after the read", func(t *testing.T, p string) { // line 1: 0000001 → 9000001
			f, _ := os.OpenFile(p, os.O_WRONLY, 0)
			defer f.Close()
			f.WriteAt([]byte("9"), 0)
		}, true},
		{"appended after the read", func(t *testing.T, p string) {
			f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			defer f.Close()
			f.WriteString("tail\n")
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := resolvedWorkspace(t, nil)
			p := filepath.Join(ws, "big.log")
			writeBytes(t, p, content)
			c, ctx := startIn(t, ws, bypass())
			wantResult(t, "read", c.CallTool(ctx, "read", map[string]any{"path": "big.log", "offset": 10, "limit": 5}), false, "of 1000000")
			if tc.change != nil {
				tc.change(t, p)
			}
			before := readFile(t, p)
			r := c.CallTool(ctx, "edit", editCall("big.log", "\n0000020\n", "\n0000020 edited\n"))
			if tc.stale {
				wantResult(t, "edit after a change", r, true, "changed since you read it", "Read it again")
				if readFile(t, p) != before {
					t.Errorf("a refused edit changed the file")
				}
				return
			}
			wantResult(t, "edit after a read of a file over 16 MiB", r, false, "Edited big.log")
			got := readFile(t, p)
			if want := strings.Replace(string(content), "\n0000020\n", "\n0000020 edited\n", 1); got != want {
				t.Errorf("file after the edit differs from the expected content (len %d, want %d)", len(got), len(want))
			}
		})
	}
}
