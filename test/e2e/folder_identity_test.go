package e2e

// Folder identity (docs/protocol.md: a workspace folder deleted, replaced
// or turned into a symlink).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// identFolders starts agentls (bypass mode: only deny rules decide) on two
// fresh folders a and b. dir is a (first) or b, other the other one; in
// names a file of dir as a model would (relative in the first folder) and
// ls is the arguments listing dir; env is added to the server's.
func identFolders(t *testing.T, first bool, env ...string) (c *harness.Client, ctx context.Context, dir, other string, in func(string) string, ls map[string]any) {
	t.Helper()
	base := resolvedWorkspace(t, nil)
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	writeFiles(t, a, map[string]string{"x.txt": "old-x in a\n"})
	writeFiles(t, b, map[string]string{"x.txt": "old-x in b\n"})
	c, ctx = startOpts(t, harness.Options{Root: a, Env: env}, map[string]any{"rootUri": fileURI(a), "workspaceFolders": nestedFolders(a, b), "initializationOptions": bypassOptions()})
	dir, other, in, ls = a, b, func(n string) string { return n }, map[string]any{}
	if !first {
		dir, other, in, ls = b, a, func(n string) string { return filepath.Join(b, n) }, map[string]any{"path": b}
	}
	return
}

const identGone = "no longer exists"

// identNotSearched checks grep and find without a path name dir as not
// searched and leave out every one of lacks.
func identNotSearched(t *testing.T, ctx context.Context, c *harness.Client, dir, pattern string, wants []string, lacks ...string) {
	t.Helper()
	for _, call := range []struct{ tool, pattern string }{{"grep", pattern}, {"find", "*.txt"}} {
		r := c.CallTool(ctx, call.tool, map[string]any{"pattern": call.pattern}).Text()
		wantContains(t, call.tool+" while "+dir+" is not a folder", r, append([]string{"[Workspace folder " + dir + " no longer exists; it was not searched.]"}, wants...)...)
		wantLacks(t, call.tool+" while "+dir+" is not a folder", r, lacks...)
	}
}

// docs/protocol.md, didChangeWorkspaceFolders:
// "A folder whose directory is deleted and created again at its path (…),
// or replaced by another, is opened there again by the next call that finds
// something missing in it (read, ls, edit, write) and by every grep and
// find; the watchers and its settings follow the new directory. While no
// directory is there, calls in it say the folder no longer exists, and grep
// and find without a path name it as not searched." The read and ls rows run
// the Go grep backend, the others the default one.
func TestFolderIdentityFolderReplaced(t *testing.T) {
	slow(t)
	t.Parallel()
	for i, trigger := range []string{"read", "ls", "edit", "write", "grep", "find"} {
		first, mv := i%2 == 0, i/2%2 == 1 // rm -rf, or mv dir dir.old
		t.Run(fmt.Sprintf("%s/first folder %v/mv %v", trigger, first, mv), func(t *testing.T) {
			var env []string
			if i < 2 {
				env = []string{"AGENTLS_GREP_BACKEND=go"}
			}
			c, ctx, dir, other, in, ls := identFolders(t, first, env...)
			call := func(tool string, args map[string]any) harness.Result { return c.CallTool(ctx, tool, args) }
			wantResult(t, "read before removal", call("read", map[string]any{"path": in("x.txt")}), false, "old-x")
			remove := os.RemoveAll
			if mv {
				remove = func(dir string) error { return os.Rename(dir, dir+".old") }
			}
			if err := remove(dir); err != nil {
				t.Fatal(err)
			}
			oldUntouched := func(what string) { // nothing lands in the moved-away directory
				if names, _ := os.ReadDir(dir + ".old"); mv && (len(names) != 1 || !strings.HasPrefix(readFile(t, filepath.Join(dir+".old", "x.txt")), "old-x in ")) {
					t.Errorf("%s changed the moved-away directory %s.old: %v", what, dir, names)
				}
			}

			wantResult(t, "read while gone", call("read", map[string]any{"path": in("x.txt")}), true, identGone)
			wantResult(t, "ls while gone", call("ls", ls), true, identGone)
			wantResult(t, "edit while gone", call("edit", editCall(in("x.txt"), "old-x", "EDITED-WHILE-GONE")), true, identGone)
			wantResult(t, "write while gone", call("write", map[string]any{"path": in("gone.txt"), "content": "written while gone\n"}), true, identGone)
			for _, p := range []string{dir, filepath.Join(dir, "d")} {
				wantResult(t, "grep in "+p+" while gone", call("grep", map[string]any{"pattern": "old-x", "path": p}), true, identGone)
				wantResult(t, "find in "+p+" while gone", call("find", map[string]any{"pattern": "*.txt", "path": p}), true, identGone)
			}
			if first {
				wantResult(t, "bash in the gone first folder", call("bash", map[string]any{"command": "true"}), true)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("a call re-created the deleted folder")
			}
			oldUntouched("a call while gone")
			if first {
				identNotSearched(t, ctx, c, dir, "old-x", []string{filepath.Join(other, "x.txt")})
			} else {
				identNotSearched(t, ctx, c, dir, "old-x", []string{"x.txt"}, filepath.Join(dir, "x.txt"))
			}

			writeFiles(t, dir, map[string]string{ // a directory at the path again
				"y.txt": "new-y\n", "secret.txt": "TOPSECRET-23\n", ".agentls/settings.json": `{"permissions": {"deny": ["Read(secret.txt)"]}}`,
				".gitignore": "skipped.txt\n", "skipped.txt": "new-y but ignored\n",
			})
			switch trigger {
			case "read":
				wantResult(t, "read of a file only the new directory has", call("read", map[string]any{"path": in("y.txt")}), false, "new-y")
			case "ls": // .agentls is missing in the old directory
				wantResult(t, "ls of a directory only the new one has", call("ls", map[string]any{"path": in(".agentls")}), false, "settings.json")
			case "edit": // x.txt was read in the old directory; the new one has none
				wantResult(t, "edit of x.txt, which the new directory lacks", call("edit", editCall(in("x.txt"), "old-x", "EDITED")), true)
				if _, err := os.Stat(filepath.Join(dir, "x.txt")); err == nil {
					t.Errorf("edit created x.txt in the new directory")
				}
			case "write":
				wantResult(t, "write into the new directory", call("write", map[string]any{"path": in("z.txt"), "content": "new-z\n"}), false)
				if got := readFile(t, filepath.Join(dir, "z.txt")); got != "new-z\n" {
					t.Errorf("write: %s/z.txt = %q; want new-z", dir, got)
				}
			case "grep", "find":
				pattern, want := "new-y", "y.txt:1: new-y"
				if trigger == "find" {
					pattern, want = "*.txt", "y.txt"
				}
				gone := filepath.Join(dir, "x.txt")
				if first {
					gone = "\nx.txt"
				}
				r := call(trigger, map[string]any{"pattern": pattern})
				wantResult(t, trigger+" after re-creation", r, false, want)
				wantLacks(t, trigger+" after re-creation (x.txt is gone)", r.Text(), "no longer exists", gone)
			}
			oldUntouched(trigger + " after re-creation")

			// Whatever opened it, the folder is now the new directory.
			wantResult(t, "read y.txt in the new directory", call("read", map[string]any{"path": in("y.txt")}), false, "new-y")
			r := call("read", map[string]any{"path": in("secret.txt")})
			wantResult(t, "the new directory's deny rule", r, true, "Read(secret.txt)")
			wantLacks(t, "the new directory's deny rule", r.Text(), "TOPSECRET")
			wantLacks(t, "grep filtered by the new directory's deny rule", call("grep", map[string]any{"pattern": "TOPSECRET"}).Text(), "TOPSECRET-23")
			wantLacks(t, "grep filtered by the new directory's .gitignore", call("grep", map[string]any{"pattern": "new-y"}).Text(), "ignored")
			l := call("ls", ls)
			wantResult(t, "ls of the folder's root", l, false, "y.txt")
			wantLacks(t, "ls of the folder's root (x.txt was in the old directory; secret.txt is denied)", l.Text(), "x.txt", "secret.txt")

			// The watcher follows: a file read there, then changed from outside.
			t0, y := time.Now(), filepath.Join(dir, "y.txt")
			writeFile(t, y, "changed outside\n")
			if _, _, ok := waitExt(c, 8*time.Second, t0, extOf(y, "changed")); !ok {
				t.Errorf("no workspace/externalChange {uri: %s, kind: changed}; got %+v", fileURI(y), extChanges(c, y))
			}
		})
	}
}

// "A symbolic link put at its path is not
// followed: remove the folder and add the link's target" — calls in it say
// the folder no longer exists, grep and find name it as not searched.
func TestFolderIdentityFolderSymlinked(t *testing.T) {
	t.Parallel()
	for _, first := range []bool{true, false} {
		t.Run(fmt.Sprint("first folder ", first), func(t *testing.T) {
			c, ctx, dir, _, in, ls := identFolders(t, first)
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
			wantResult(t, "ls through the link", c.CallTool(ctx, "ls", ls), true, identGone)
			wantResult(t, "write through the link", c.CallTool(ctx, "write", map[string]any{"path": in("z.txt"), "content": "z\n"}), true, identGone)
			if _, err := os.Stat(filepath.Join(target, "z.txt")); err == nil {
				t.Errorf("write followed the symlink into %s", target)
			}
			identNotSearched(t, ctx, c, dir, "link-", nil, "y.txt", "link-x", "link-y")
		})
	}
}
