//go:build linux

package e2e

// Staleness, black-box: "an edit needs a fresh read and an external change
// is caught before it is overwritten", in the hard cases: same-size rewrites
// whose mtime is restored (stat alone cannot see them), ignored, hidden and
// new directories, hard links, symlinks, a swapped parent directory, a git
// checkout, a burst of 200 changes, and the editor's overlay.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

const (
	a21sEditOld  = "alpha"
	a21sEditNew  = "omega"
	a21sWritten  = "written by the agent\n"
	a21sNoteWait = 2 * time.Second
)

// a21sRereadRE: a refusal must tell the model to read the file again.
var a21sRereadRE = regexp.MustCompile(`(?i)\bre-?read\b|\bread\b.*\b(again|first)\b`)

// a21sStart starts a session on ws in bypass mode (so no permission prompt
// hides what the edit guard decides) with optional client capabilities.
func a21sStart(t *testing.T, ws string, caps map[string]any) (*harness.Client, context.Context) {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: ws})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	t.Cleanup(cancel)
	params := map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}}
	if caps != nil {
		params["capabilities"] = caps
	}
	c.Initialize(ctx, params)
	return c, ctx
}

// a21sWS makes a workspace (symlink-resolved, so URIs compare) with files.
func a21sWS(t *testing.T, files map[string]string) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for rel, body := range files {
		a21sPut(t, filepath.Join(ws, rel), body)
	}
	return ws
}

func a21sPut(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func a21sDisk(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return string(b)
}

// a21sTimes returns the access and modification times of p (following links).
func a21sTimes(t *testing.T, p string) (atime, mtime time.Time) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return time.Unix(st.Atim.Sec, st.Atim.Nsec), fi.ModTime()
}

// a21sBackdate makes p an old file: mtime and atime an hour ago.
func a21sBackdate(t *testing.T, p string) {
	t.Helper()
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// a21sRewrite writes body in place through writePath (same inode, no
// truncation; body must be the same size) and restores statPath's atime and
// mtime, so size, inode and mtime all match what was read.
func a21sRewrite(t *testing.T, writePath, statPath, body string) {
	t.Helper()
	at, mt := a21sTimes(t, statPath)
	fi, err := os.Stat(statPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != int64(len(body)) {
		t.Fatalf("a21sRewrite %s: new body %d bytes, file %d", writePath, len(body), fi.Size())
	}
	f, err := os.OpenFile(writePath, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(body), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(statPath, at, mt); err != nil {
		t.Fatal(err)
	}
	_, mt2 := a21sTimes(t, statPath)
	if !mt2.Equal(mt) {
		t.Fatalf("mtime not restored: %v != %v", mt2, mt)
	}
}

// a21sPlain rewrites p in place with a same-size body and lets the mtime
// move: the change a stat can see (the control for the watcher).
func a21sPlain(t *testing.T, p, body string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(body), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func a21sRead(t *testing.T, ctx context.Context, c *harness.Client, rel string) {
	t.Helper()
	r := c.CallTool(ctx, "read", map[string]any{"path": rel})
	if r.IsError {
		t.Fatalf("read %s: %s", rel, r.Text())
	}
}

// a21sWantRefusedEdit edits rel (an oldText the current disk text contains)
// and requires a refusal that asks for a re-read, with the disk unchanged.
func a21sWantRefusedEdit(t *testing.T, ctx context.Context, c *harness.Client, rel, abs, what string) {
	t.Helper()
	before := a21sDisk(t, abs)
	r := c.CallTool(ctx, "edit", map[string]any{"path": rel, "edits": []any{map[string]any{"oldText": a21sEditOld, "newText": a21sEditNew}}})
	after := a21sDisk(t, abs)
	if !r.IsError {
		t.Errorf("%s: edit %s after an external change was applied: %q; disk now %q (was %q)", what, rel, r.Text(), after, before)
	} else if !a21sRereadRE.MatchString(r.Text()) {
		t.Errorf("%s: edit %s refused without telling the model to read again: %q", what, rel, r.Text())
	} else {
		t.Logf("%s: edit %s refused: %q", what, rel, r.Text())
	}
	if after != before {
		t.Errorf("%s: edit %s changed the disk: %q -> %q", what, rel, before, after)
	}
}

// a21sWantRefusedWrite is a21sWantRefusedEdit for write.
func a21sWantRefusedWrite(t *testing.T, ctx context.Context, c *harness.Client, rel, abs, what string) {
	t.Helper()
	before := a21sDisk(t, abs)
	r := c.CallTool(ctx, "write", map[string]any{"path": rel, "content": a21sWritten})
	after := a21sDisk(t, abs)
	if !r.IsError {
		t.Errorf("%s: write %s after an external change was applied: %q; disk now %q (was %q)", what, rel, r.Text(), after, before)
	} else if !a21sRereadRE.MatchString(r.Text()) {
		t.Errorf("%s: write %s refused without telling the model to read again: %q", what, rel, r.Text())
	} else {
		t.Logf("%s: write %s refused: %q", what, rel, r.Text())
	}
	if after != before {
		t.Errorf("%s: write %s changed the disk: %q -> %q", what, rel, before, after)
	}
}

// a21sWantApplied edits an unchanged, read file: the control that shows the
// refusals above come from the change, not from the session.
func a21sWantApplied(t *testing.T, ctx context.Context, c *harness.Client, rel, abs, what string) {
	t.Helper()
	before := a21sDisk(t, abs)
	r := c.CallTool(ctx, "edit", map[string]any{"path": rel, "edits": []any{map[string]any{"oldText": a21sEditOld, "newText": a21sEditNew}}})
	if r.IsError {
		t.Errorf("%s: edit of unchanged %s refused: %q", what, rel, r.Text())
		return
	}
	if want := strings.Replace(before, a21sEditOld, a21sEditNew, 1); a21sDisk(t, abs) != want {
		t.Errorf("%s: edit of %s: disk %q, want %q", what, rel, a21sDisk(t, abs), want)
	}
}

type a21sNote struct {
	URI       string `json:"uri"`
	Kind      string `json:"kind"`
	ReadStale bool   `json:"readStale"`
}

func a21sDecode(n harness.Note) a21sNote {
	var p a21sNote
	_ = json.Unmarshal(n.Params, &p)
	return p
}

// a21sWaitStale waits for a workspace/externalChange with readStale for one
// of the absolute paths.
func a21sWaitStale(c *harness.Client, timeout time.Duration, abs ...string) (a21sNote, bool) {
	uris := map[string]bool{}
	for _, p := range abs {
		uris[fileURI(p)] = true
	}
	n, ok := c.WaitNote(timeout, func(n harness.Note) bool {
		if n.Method != "workspace/externalChange" {
			return false
		}
		p := a21sDecode(n)
		return uris[p.URI] && p.ReadStale
	})
	return a21sDecode(n), ok
}

func a21sAllNotes(c *harness.Client) string {
	var out []string
	for _, n := range c.Notes("workspace/externalChange") {
		out = append(out, string(n.Params))
	}
	return "[" + strings.Join(out, " ") + "]"
}

func a21sNotesFor(c *harness.Client, abs string) []a21sNote {
	var out []a21sNote
	for _, n := range c.Notes("workspace/externalChange") {
		if p := a21sDecode(n); p.URI == fileURI(abs) {
			out = append(out, p)
		}
	}
	return out
}

// a21sBody is a file body of a fixed size whose tag differs between versions.
func a21sBody(name, tag string) string {
	return fmt.Sprintf("alpha %s %s\nsecond line stays\n", name, tag)
}

type a21sTiming int

const (
	a21sSoon      a21sTiming = iota // change < 1 s after the read
	a21sSlept                       // change 2.5 s after the read
	a21sBackdated                   // the file's mtime is an hour before the read
)

// a21sLocations are where the rewritten files live: the root, two ignored
// directories, a hidden one.
var a21sLocations = []struct {
	dir     string
	watched bool // docs: the watcher honours the ignore rules
}{
	{"", true},
	{"dist/", false},
	{"node_modules/pkg/", false},
	{".cache/", true},
}

// a21sRewriteCase: read, change in place (same size, times restored), then
// edit one file and write another; an untouched control file still edits.
func a21sRewriteCase(t *testing.T, timing a21sTiming) {
	files := map[string]string{".gitignore": "dist/\nnode_modules/\n"}
	for _, l := range a21sLocations {
		for _, n := range []string{"e.txt", "w.txt", "ctl.txt", "p.txt"} {
			files[l.dir+n] = a21sBody(l.dir+n, "AAAA")
		}
	}
	ws := a21sWS(t, files)
	if timing == a21sBackdated {
		for rel := range files {
			a21sBackdate(t, filepath.Join(ws, rel))
		}
	}
	c, ctx := a21sStart(t, ws, nil)
	for _, l := range a21sLocations {
		for _, n := range []string{"e.txt", "w.txt", "ctl.txt", "p.txt"} {
			a21sRead(t, ctx, c, l.dir+n)
		}
	}
	if timing == a21sSlept {
		time.Sleep(2500 * time.Millisecond) // deliberate: the read is no longer recent
	}
	for _, l := range a21sLocations {
		for _, n := range []string{"e.txt", "w.txt"} {
			p := filepath.Join(ws, l.dir+n)
			a21sRewrite(t, p, p, a21sBody(l.dir+n, "BBBB"))
		}
		a21sPlain(t, filepath.Join(ws, l.dir+"p.txt"), a21sBody(l.dir+"p.txt", "PPPP"))
	}
	for _, l := range a21sLocations {
		what := "dir " + l.dir
		if l.dir == "" {
			what = "root"
		}
		a21sWantRefusedEdit(t, ctx, c, l.dir+"e.txt", filepath.Join(ws, l.dir+"e.txt"), what)
		a21sWantRefusedWrite(t, ctx, c, l.dir+"w.txt", filepath.Join(ws, l.dir+"w.txt"), what)
		a21sWantApplied(t, ctx, c, l.dir+"ctl.txt", filepath.Join(ws, l.dir+"ctl.txt"), what)
		a21sWantRefusedEdit(t, ctx, c, l.dir+"p.txt", filepath.Join(ws, l.dir+"p.txt"), what+" (mtime moved)")
	}
	// Notifications: p.txt (mtime moved) shows the location is watched at
	// all; e.txt (mtime restored) that the watcher sees the content change.
	deadline := time.Now().Add(a21sNoteWait) // one wait for all, so missing notes cost 2 s once
	left := func() time.Duration { return max(time.Until(deadline), 100*time.Millisecond) }
	for _, l := range a21sLocations {
		pp := filepath.Join(ws, l.dir+"p.txt")
		pe := filepath.Join(ws, l.dir+"e.txt")
		if !l.watched {
			t.Logf("ignored %s: notes p.txt %+v, e.txt %+v (docs: ignored files are not watched)", l.dir, a21sNotesFor(c, pp), a21sNotesFor(c, pe))
			continue
		}
		if _, ok := a21sWaitStale(c, left(), pp); !ok {
			t.Errorf("%q: no workspace/externalChange {readStale: true} for a same-size write with a new mtime (%s); got %+v", l.dir, pp, a21sNotesFor(c, pp))
		}
		if _, ok := a21sWaitStale(c, left(), pe); !ok {
			t.Errorf("%q: no workspace/externalChange {readStale: true} for a same-size rewrite with the mtime restored (%s); got %+v", l.dir, pe, a21sNotesFor(c, pe))
		}
	}
}

func TestStaleRewriteSoon(t *testing.T) {
	t.Parallel()
	a21sRewriteCase(t, a21sSoon)
}

func TestStaleRewriteAfterSleep(t *testing.T) {
	t.Parallel()
	a21sRewriteCase(t, a21sSlept)
}

func TestStaleRewriteBackdated(t *testing.T) {
	t.Parallel()
	a21sRewriteCase(t, a21sBackdated)
}

// TestStaleNewDir: a directory created after the session started.
func TestStaleNewDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		backdate bool
	}{{"soon", false}, {"backdated", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := a21sWS(t, map[string]string{"keep.txt": "x\n"})
			c, ctx := a21sStart(t, ws, nil)
			var abs []string
			for _, rel := range []string{"fresh/sub/e.txt", "fresh/sub/w.txt"} {
				p := filepath.Join(ws, rel)
				a21sPut(t, p, a21sBody(rel, "AAAA"))
				if tc.backdate {
					a21sBackdate(t, p)
				}
				abs = append(abs, p)
			}
			// The read may come before the watcher has seen the new directory;
			// the guard must not depend on it.
			a21sRead(t, ctx, c, "fresh/sub/e.txt")
			a21sRead(t, ctx, c, "fresh/sub/w.txt")
			a21sRewrite(t, abs[0], abs[0], a21sBody("fresh/sub/e.txt", "BBBB"))
			a21sRewrite(t, abs[1], abs[1], a21sBody("fresh/sub/w.txt", "BBBB"))
			a21sWantRefusedEdit(t, ctx, c, "fresh/sub/e.txt", abs[0], "new dir")
			a21sWantRefusedWrite(t, ctx, c, "fresh/sub/w.txt", abs[1], "new dir")
			// Control: a change that moves the mtime, so a missing note below
			// is about the restored mtime, not an unwatched new directory.
			pp := filepath.Join(ws, "fresh/sub/p.txt")
			a21sPut(t, pp, a21sBody("p", "AAAA"))
			a21sRead(t, ctx, c, "fresh/sub/p.txt")
			a21sPlain(t, pp, a21sBody("p", "PPPP"))
			if _, ok := a21sWaitStale(c, a21sNoteWait, pp); !ok {
				t.Errorf("no workspace/externalChange {readStale: true} for a same-size write with a new mtime in a new dir (%s); got %+v", pp, a21sNotesFor(c, pp))
			}
			if _, ok := a21sWaitStale(c, a21sNoteWait, abs[0]); !ok {
				t.Errorf("no workspace/externalChange {readStale: true} for a same-size rewrite with the mtime restored (%s); got %+v", abs[0], a21sNotesFor(c, abs[0]))
			}
		})
	}
}

// TestStaleHardLink: the change is written through another name of
// the same inode.
func TestStaleHardLink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		backdate bool
	}{{"soon", false}, {"backdated", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ws := a21sWS(t, map[string]string{"e.txt": a21sBody("e", "AAAA"), "w.txt": a21sBody("w", "AAAA")})
			for _, n := range []string{"e", "w"} {
				if err := os.Link(filepath.Join(ws, n+".txt"), filepath.Join(ws, n+"-other.txt")); err != nil {
					t.Fatal(err)
				}
				if tc.backdate {
					a21sBackdate(t, filepath.Join(ws, n+".txt"))
				}
			}
			c, ctx := a21sStart(t, ws, nil)
			a21sRead(t, ctx, c, "e.txt")
			a21sRead(t, ctx, c, "w.txt")
			for _, n := range []string{"e", "w"} {
				a21sRewrite(t, filepath.Join(ws, n+"-other.txt"), filepath.Join(ws, n+".txt"), a21sBody(n, "BBBB"))
			}
			a21sWantRefusedEdit(t, ctx, c, "e.txt", filepath.Join(ws, "e.txt"), "hard link")
			a21sWantRefusedWrite(t, ctx, c, "w.txt", filepath.Join(ws, "w.txt"), "hard link")
			t.Logf("hard link: notes for e.txt %+v", a21sNotesFor(c, filepath.Join(ws, "e.txt")))
		})
	}
}

// TestStaleSymlink: link.txt -> real.txt; read one name, change
// through the other.
func TestStaleSymlink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		backdate bool
		readLink bool // read (and edit) the link, change the target; else the reverse
	}{
		{"read link, change target, soon", false, true},
		{"read link, change target, backdated", true, true},
		{"read target, change via link, soon", false, false},
		{"read target, change via link, backdated", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := a21sWS(t, map[string]string{"real-e.txt": a21sBody("e", "AAAA"), "real-w.txt": a21sBody("w", "AAAA")})
			for _, n := range []string{"e", "w"} {
				if err := os.Symlink("real-"+n+".txt", filepath.Join(ws, "link-"+n+".txt")); err != nil {
					t.Fatal(err)
				}
				if tc.backdate {
					a21sBackdate(t, filepath.Join(ws, "real-"+n+".txt"))
				}
			}
			c, ctx := a21sStart(t, ws, nil)
			name := func(n string, read bool) string {
				if read == tc.readLink {
					return "link-" + n + ".txt"
				}
				return "real-" + n + ".txt"
			}
			for _, n := range []string{"e", "w"} {
				a21sRead(t, ctx, c, name(n, true))
			}
			for _, n := range []string{"e", "w"} {
				a21sRewrite(t, filepath.Join(ws, name(n, false)), filepath.Join(ws, "real-"+n+".txt"), a21sBody(n, "BBBB"))
			}
			// The disk check is on the target, whichever name was used.
			a21sWantRefusedEdit(t, ctx, c, name("e", true), filepath.Join(ws, "real-e.txt"), tc.name)
			a21sWantRefusedWrite(t, ctx, c, name("w", true), filepath.Join(ws, "real-w.txt"), tc.name)
			for _, n := range []string{"e", "w"} {
				if fi, err := os.Lstat(filepath.Join(ws, "link-"+n+".txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("link-%s.txt is no longer a symlink (%v)", n, err)
				}
			}
			// Control: the same through the other name, letting the mtime move.
			a21sPut(t, filepath.Join(ws, "real-p.txt"), a21sBody("p", "AAAA"))
			if err := os.Symlink("real-p.txt", filepath.Join(ws, "link-p.txt")); err != nil {
				t.Fatal(err)
			}
			pread, pwrite := "link-p.txt", "real-p.txt"
			if !tc.readLink {
				pread, pwrite = pwrite, pread
			}
			a21sRead(t, ctx, c, pread)
			a21sPlain(t, filepath.Join(ws, pwrite), a21sBody("p", "PPPP"))
			if _, ok := a21sWaitStale(c, a21sNoteWait, filepath.Join(ws, "link-p.txt"), filepath.Join(ws, "real-p.txt")); !ok {
				t.Errorf("no workspace/externalChange {readStale: true} for a change (mtime moved) of %s through %s; notes %s", pread, pwrite, a21sAllNotes(c))
			}
			if _, ok := a21sWaitStale(c, a21sNoteWait, filepath.Join(ws, "link-e.txt"), filepath.Join(ws, "real-e.txt")); !ok {
				t.Errorf("no workspace/externalChange {readStale: true} for link-e.txt or real-e.txt (mtime restored); notes %s", a21sAllNotes(c))
			}
		})
	}
}

// TestStaleDirSwap: the parent directory is renamed away and another
// put in its place, holding a same-named, same-size file with other bytes
// and the old mtime.
func TestStaleDirSwap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		backdate bool
	}{{"soon", false}, {"backdated", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ws := a21sWS(t, map[string]string{"d/e.txt": a21sBody("e", "AAAA"), "d/w.txt": a21sBody("w", "AAAA")})
			if tc.backdate {
				a21sBackdate(t, filepath.Join(ws, "d/e.txt"))
				a21sBackdate(t, filepath.Join(ws, "d/w.txt"))
			}
			c, ctx := a21sStart(t, ws, nil)
			a21sRead(t, ctx, c, "d/e.txt")
			a21sRead(t, ctx, c, "d/w.txt")
			type times struct{ a, m time.Time }
			old := map[string]times{}
			for _, n := range []string{"e", "w"} {
				a, m := a21sTimes(t, filepath.Join(ws, "d", n+".txt"))
				old[n] = times{a, m}
			}
			if err := os.Rename(filepath.Join(ws, "d"), filepath.Join(ws, "d-away")); err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"e", "w"} {
				p := filepath.Join(ws, "d", n+".txt")
				a21sPut(t, p, a21sBody(n, "BBBB"))
				if err := os.Chtimes(p, old[n].a, old[n].m); err != nil {
					t.Fatal(err)
				}
			}
			a21sWantRefusedEdit(t, ctx, c, "d/e.txt", filepath.Join(ws, "d/e.txt"), "dir swap")
			a21sWantRefusedWrite(t, ctx, c, "d/w.txt", filepath.Join(ws, "d/w.txt"), "dir swap")
			if got := a21sDisk(t, filepath.Join(ws, "d-away/e.txt")); got != a21sBody("e", "AAAA") {
				t.Errorf("the moved-away file changed: %q", got)
			}
			if _, ok := a21sWaitStale(c, a21sNoteWait, filepath.Join(ws, "d/e.txt")); !ok {
				t.Errorf("no workspace/externalChange {readStale: true} for d/e.txt; got %+v", a21sNotesFor(c, filepath.Join(ws, "d/e.txt")))
			}
		})
	}
}

func a21sGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=a21s@example.com", "-c", "user.name=a21s", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestStaleGitCheckout: 20 files read, a checkout changes 10 of them
// (same sizes): those 10 edits are refused, the other 10 apply.
func TestStaleGitCheckout(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 20 {
		files[fmt.Sprintf("src/f%02d.txt", i)] = a21sBody(fmt.Sprintf("f%02d", i), "main")
	}
	ws := a21sWS(t, files)
	a21sGit(t, ws, "init", "-q")
	a21sGit(t, ws, "add", "-A")
	a21sGit(t, ws, "commit", "-q", "-m", "base")
	a21sGit(t, ws, "checkout", "-q", "-b", "other")
	for i := range 10 {
		a21sPut(t, filepath.Join(ws, fmt.Sprintf("src/f%02d.txt", i)), a21sBody(fmt.Sprintf("f%02d", i), "othr"))
	}
	a21sGit(t, ws, "commit", "-q", "-am", "other")
	a21sGit(t, ws, "checkout", "-q", "main")

	c, ctx := a21sStart(t, ws, nil)
	for i := range 20 {
		a21sRead(t, ctx, c, fmt.Sprintf("src/f%02d.txt", i))
	}
	a21sGit(t, ws, "checkout", "-q", "other")
	for i := range 20 {
		rel := fmt.Sprintf("src/f%02d.txt", i)
		abs := filepath.Join(ws, rel)
		if i < 10 {
			if got := a21sDisk(t, abs); got != a21sBody(fmt.Sprintf("f%02d", i), "othr") {
				t.Fatalf("checkout did not change %s: %q", rel, got)
			}
			a21sWantRefusedEdit(t, ctx, c, rel, abs, "git checkout")
		} else {
			a21sWantApplied(t, ctx, c, rel, abs, "git checkout")
		}
	}
	for i := range 10 {
		p := filepath.Join(ws, fmt.Sprintf("src/f%02d.txt", i))
		if _, ok := a21sWaitStale(c, a21sNoteWait, p); !ok {
			t.Errorf("no workspace/externalChange {readStale: true} for %s; got %+v", p, a21sNotesFor(c, p))
		}
	}
}

type a21sBatchResult struct {
	Results []harness.Result `json:"results"`
}

// TestStaleBurst: 200 old files read, all rewritten from outside in a
// tight loop (same sizes, mtimes restored): every edit and write is refused
// and each file gets its own externalChange.
func TestStaleBurst(t *testing.T) {
	t.Parallel()
	t.Run("mtime restored", func(t *testing.T) { t.Parallel(); a21sBurst(t, true) })
	t.Run("mtime moved", func(t *testing.T) { t.Parallel(); a21sBurst(t, false) })
}

func a21sBurst(t *testing.T, restore bool) {
	const n = 200
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("b/f%03d.txt", i)] = a21sBody(fmt.Sprintf("f%03d", i), "AAAA")
	}
	ws := a21sWS(t, files)
	for rel := range files {
		a21sBackdate(t, filepath.Join(ws, rel))
	}
	c, ctx := a21sStart(t, ws, nil)
	var reads []any
	for i := range n {
		reads = append(reads, map[string]any{"name": "read", "arguments": map[string]any{"path": fmt.Sprintf("b/f%03d.txt", i)}})
	}
	var rb a21sBatchResult
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": reads}, &rb); err != nil {
		t.Fatal(err)
	}
	if len(rb.Results) != n {
		t.Fatalf("read batch: %d results", len(rb.Results))
	}
	for i, r := range rb.Results {
		if r.IsError {
			t.Fatalf("read %d: %s", i, r.Text())
		}
	}
	for i := range n {
		p := filepath.Join(ws, fmt.Sprintf("b/f%03d.txt", i))
		if restore {
			a21sRewrite(t, p, p, a21sBody(fmt.Sprintf("f%03d", i), "BBBB"))
		} else {
			a21sPlain(t, p, a21sBody(fmt.Sprintf("f%03d", i), "BBBB"))
		}
	}
	// Even files: edit; odd files: write. One batch, so no time for events.
	var calls []any
	for i := range n {
		rel := fmt.Sprintf("b/f%03d.txt", i)
		if i%2 == 0 {
			calls = append(calls, map[string]any{"name": "edit", "arguments": map[string]any{"path": rel, "edits": []any{map[string]any{"oldText": a21sEditOld, "newText": a21sEditNew}}}})
		} else {
			calls = append(calls, map[string]any{"name": "write", "arguments": map[string]any{"path": rel, "content": a21sWritten}})
		}
	}
	var eb a21sBatchResult
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &eb); err != nil {
		t.Fatal(err)
	}
	applied := 0
	for i, r := range eb.Results {
		rel := fmt.Sprintf("b/f%03d.txt", i)
		want := a21sBody(fmt.Sprintf("f%03d", i), "BBBB")
		if got := a21sDisk(t, filepath.Join(ws, rel)); !r.IsError || got != want {
			applied++
			if applied <= 3 {
				t.Errorf("%s: isError=%v %q; disk %q", rel, r.IsError, r.Text(), got)
			}
		}
	}
	if applied > 0 || len(eb.Results) != n {
		t.Errorf("burst: %d of %d results (want %d) overwrote an external change", applied, len(eb.Results), n)
	}
	// Each of the 200 gets a readStale notification.
	missing := func() []string {
		seen := map[string]bool{}
		for _, nt := range c.Notes("workspace/externalChange") {
			if p := a21sDecode(nt); p.ReadStale {
				seen[p.URI] = true
			}
		}
		var out []string
		for i := range n {
			if u := fileURI(filepath.Join(ws, fmt.Sprintf("b/f%03d.txt", i))); !seen[u] {
				out = append(out, u)
			}
		}
		return out
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(missing()) > 0 && time.Now().Before(deadline) {
		c.WaitNote(200*time.Millisecond, func(harness.Note) bool { return false })
	}
	if m := missing(); len(m) > 0 {
		t.Errorf("burst: %d of %d files got no workspace/externalChange {readStale: true}, e.g. %v", len(m), n, m[0])
	}
}

// a21sEditor answers workspace/applyEdit like an editor: it records the
// request, reports the change with didChange, and replies applied.
type a21sEditor struct {
	mu      sync.Mutex
	applies []json.RawMessage
}

func (e *a21sEditor) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.applies)
}

// TestStaleOverlay: the editor has the file open. docs/protocol.md:
// an open document is the truth for the file; without applyEdit, an open
// document whose text differs from the disk is not edited ("save or revert
// it first"); with applyEdit the edit goes to the document and typing after
// the read fails with "changed in the editor since you read it".
func TestStaleOverlay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		applyEdit bool
		disk      bool // change the disk from outside; else type in the editor
	}{
		{"disk changed, no applyEdit", false, true},
		{"disk changed, applyEdit", true, true},
		{"editor changed, no applyEdit", false, false},
		{"editor changed, applyEdit", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := a21sBody("o", "AAAA")
			ws := a21sWS(t, map[string]string{"e.txt": orig, "w.txt": orig})
			var caps map[string]any
			if tc.applyEdit {
				caps = map[string]any{"experimental": map[string]any{"agentls": map[string]any{"applyEdit": true}}}
			}
			c, ctx := a21sStart(t, ws, caps)
			ed := &a21sEditor{}
			versions := map[string]int{"e.txt": 1, "w.txt": 1, "probe.txt": 1}
			var vmu sync.Mutex
			c.OnRequest = func(rctx context.Context, method string, params json.RawMessage) (any, error) {
				if method != "workspace/applyEdit" {
					return nil, fmt.Errorf("unexpected %s", method)
				}
				ed.mu.Lock()
				ed.applies = append(ed.applies, params)
				ed.mu.Unlock()
				return map[string]any{"applied": false, "failureReason": "a21s editor declines"}, nil
			}
			a21sPut(t, filepath.Join(ws, "probe.txt"), orig)
			for _, n := range []string{"e.txt", "w.txt", "probe.txt"} {
				if err := c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
					"uri": fileURI(filepath.Join(ws, n)), "languageId": "plaintext", "version": 1, "text": orig}}); err != nil {
					t.Fatal(err)
				}
			}
			for _, n := range []string{"e.txt", "w.txt"} {
				r := c.CallTool(ctx, "read", map[string]any{"path": n})
				if r.IsError || !strings.Contains(r.Text(), "AAAA") {
					t.Fatalf("read %s: %q", n, r.Text())
				}
			}
			for _, n := range []string{"e.txt", "w.txt", "probe.txt"} {
				p := filepath.Join(ws, n)
				if tc.disk {
					a21sRewrite(t, p, p, a21sBody("o", "BBBB"))
				} else {
					vmu.Lock()
					versions[n]++
					v := versions[n]
					vmu.Unlock()
					if err := c.Conn.Notify(ctx, "textDocument/didChange", map[string]any{
						"textDocument":   map[string]any{"uri": fileURI(p), "version": v},
						"contentChanges": []any{map[string]any{"text": a21sBody("o", "CCCC")}},
					}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if !tc.disk {
				// didChange is a notification, handled in order: a read of the
				// probe that shows the typed text proves all three were taken in
				// (reading e.txt or w.txt would refresh their stamps).
				r := c.CallTool(ctx, "read", map[string]any{"path": "probe.txt", "limit": 1})
				if !strings.Contains(r.Text(), "CCCC") {
					t.Fatalf("read after didChange does not show the editor's text: %q", r.Text())
				}
			}
			diskBefore := map[string]string{"e.txt": a21sDisk(t, filepath.Join(ws, "e.txt")), "w.txt": a21sDisk(t, filepath.Join(ws, "w.txt"))}

			if tc.disk {
				// The document (unchanged, still the text read) is the truth.
				// Without applyEdit, it now differs from the disk: refused,
				// "save or revert". With applyEdit, the edit goes to the
				// document; the disk's external change stays either way. The
				// oldText is only in the document ("AAAA"; the disk has "BBBB"),
				// so an applyEdit proves the document was matched.
				re := c.CallTool(ctx, "edit", map[string]any{"path": "e.txt", "edits": []any{map[string]any{"oldText": "o AAAA", "newText": "o ZZZZ"}}})
				rw := c.CallTool(ctx, "write", map[string]any{"path": "w.txt", "content": a21sWritten})
				t.Logf("edit: %q; write: %q", re.Text(), rw.Text())
				if tc.applyEdit {
					if ed.count() != 2 {
						t.Errorf("applyEdit requests: %d, want 2 (the document is the truth); edit %q, write %q", ed.count(), re.Text(), rw.Text())
					}
					if !re.IsError || !strings.Contains(re.Text(), "a21s editor declines") {
						t.Errorf("edit with the editor declining: isError=%v %q", re.IsError, re.Text())
					}
				} else {
					for n, r := range map[string]harness.Result{"edit": re, "write": rw} {
						if !r.IsError || !regexp.MustCompile(`(?i)save|revert`).MatchString(r.Text()) {
							t.Errorf("%s of an open document whose disk changed: isError=%v %q; want a refusal asking to save or revert", n, r.IsError, r.Text())
						}
					}
				}
			} else {
				re := c.CallTool(ctx, "edit", map[string]any{"path": "e.txt", "edits": []any{map[string]any{"oldText": a21sEditOld, "newText": a21sEditNew}}})
				rw := c.CallTool(ctx, "write", map[string]any{"path": "w.txt", "content": a21sWritten})
				t.Logf("edit: %q; write: %q", re.Text(), rw.Text())
				for n, r := range map[string]harness.Result{"edit": re, "write": rw} {
					if !r.IsError {
						t.Errorf("%s after the user typed in the editor was applied: %q", n, r.Text())
						continue
					}
					if tc.applyEdit && !strings.Contains(r.Text(), "changed in the editor since you read it") {
						t.Errorf("%s: %q, want \"changed in the editor since you read it\"", n, r.Text())
					}
					if !tc.applyEdit && !regexp.MustCompile(`(?i)save|revert`).MatchString(r.Text()) {
						t.Errorf("%s: %q, want a refusal asking to save or revert", n, r.Text())
					}
				}
				if ed.count() != 0 {
					t.Errorf("applyEdit sent %d times for a stale document", ed.count())
				}
			}
			for n, want := range diskBefore {
				if got := a21sDisk(t, filepath.Join(ws, n)); got != want {
					t.Errorf("%s on disk changed: %q -> %q", n, want, got)
				}
			}
		})
	}
}

// TestStaleNeedsRead: the guard's baseline — no read, no edit/write of
// an existing file — so the refusals above are not a session artefact.
func TestStaleNeedsRead(t *testing.T) {
	t.Parallel()
	ws := a21sWS(t, map[string]string{"e.txt": a21sBody("e", "AAAA"), "w.txt": a21sBody("w", "AAAA")})
	c, ctx := a21sStart(t, ws, nil)
	a21sWantRefusedEdit(t, ctx, c, "e.txt", filepath.Join(ws, "e.txt"), "never read")
	a21sWantRefusedWrite(t, ctx, c, "w.txt", filepath.Join(ws, "w.txt"), "never read")
}
