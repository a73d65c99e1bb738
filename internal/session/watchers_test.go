package session

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/watch"
)

// watchersArmed makes opts report each arming's watch mode on the channel.
func watchersArmed(opts *Options) <-chan string {
	armed := make(chan string, 8)
	opts.OnWatcherReady = func(mode string) { armed <- mode }
	return armed
}

// waitArmed waits for the next arming and returns its mode.
func waitArmed(t *testing.T, armed <-chan string) string {
	t.Helper()
	select {
	case mode := <-armed:
		return mode
	case <-time.After(10 * time.Second):
		t.Fatal("the file watchers were never reported armed")
		return ""
	}
}

func quietOptions(dir string) Options {
	return Options{Folders: []ops.FolderSpec{{Path: dir}}, Log: slog.New(slog.DiscardHandler), NoUpstream: true, AuditDir: "-", UserConfigDir: filepath.Join(dir, ".user")}
}

// New does not wait for the watchers: they are armed after it returns,
// OnWatcherReady names the mode, and from then on an external change to a
// file the model read is announced.
func TestWatchersArmAfterNewAndSayWhenReady(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), "one\n")
	opts := quietOptions(dir)
	armed := watchersArmed(&opts)
	changed := make(chan string, 8)
	opts.OnExternalChange = func(uri, kind string, readStale bool) { changed <- uri }
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mode := waitArmed(t, armed)
	if mode == "" || mode == watch.ModeDegraded {
		t.Fatalf("watch mode = %q, want a working watcher on a small tree", mode)
	}
	p := ops.Path{Folder: s.FS.Folders()[0], Rel: "a.txt"}
	s.Env.Guard.RecordRead(p, []byte("one\n"))
	writeFile(t, filepath.Join(dir, "a.txt"), "two\n")
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no external change announced after the watchers were armed")
	}
}

// A folder change arms the watchers anew, and says so again.
func TestFolderChangeReportsTheNewArming(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	opts := quietOptions(dir)
	armed := watchersArmed(&opts)
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waitArmed(t, armed)
	if err := s.SetFolders([]ops.FolderSpec{{Path: other}}); err != nil {
		t.Fatal(err)
	}
	if mode := waitArmed(t, armed); mode == "" || mode == watch.ModeDegraded {
		t.Errorf("watch mode after the folder change = %q", mode)
	}
}

// Close stops an arming under way and waits for it: no report comes after
// Close returns, and the watchers it started are not left running.
func TestCloseWaitsForTheArming(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		if err := os.MkdirAll(filepath.Join(dir, "d", string(rune('a'+i%26)), filepath.Base(t.Name())+string(rune('a'+i/26))), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := quietOptions(dir)
	var closed, late atomic.Bool
	opts.OnWatcherReady = func(string) {
		if closed.Load() {
			late.Store(true)
		}
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	closed.Store(true)
	time.Sleep(50 * time.Millisecond)
	if late.Load() {
		t.Error("OnWatcherReady was called after Close returned")
	}
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if len(s.watchers) != 0 {
		t.Errorf("%d watchers left after Close", len(s.watchers))
	}
}
