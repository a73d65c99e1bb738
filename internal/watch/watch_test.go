package watch

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/ignore"
)

// waitTimeout bounds every wait for an event; events normally arrive in
// well under a millisecond.
const waitTimeout = 3 * time.Second

// recorder collects events and wakes waiters.
type recorder struct {
	mu     sync.Mutex
	events []Event
	at     []time.Time
	wake   chan struct{}
}

func newRecorder() *recorder { return &recorder{wake: make(chan struct{})} }

func (r *recorder) add(ev Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.at = append(r.at, time.Now())
	close(r.wake)
	r.wake = make(chan struct{})
	r.mu.Unlock()
}

// wait returns the time of the first event at index ≥ from satisfying pred.
func (r *recorder) wait(t *testing.T, from int, pred func(Event) bool) (time.Time, bool) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		r.mu.Lock()
		for i := from; i < len(r.events); i++ {
			if pred(r.events[i]) {
				at := r.at[i]
				r.mu.Unlock()
				return at, true
			}
		}
		wake := r.wake
		r.mu.Unlock()
		select {
		case <-wake:
		case <-deadline:
			return time.Time{}, false
		}
	}
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

func (r *recorder) snapshot() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func is(rel string, kinds ...Kind) func(Event) bool {
	return func(e Event) bool { return e.Rel == rel && (len(kinds) == 0 || slices.Contains(kinds, e.Kind)) }
}

// tree creates files (name → content; a name ending in "/" is a directory).
func tree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type fixture struct {
	root string
	w    *Watcher
	rec  *recorder
	m    *ignore.Matcher
	logs *syncBuffer
}

// start watches a temp dir holding files; tweak adjusts the options.
func start(t testing.TB, files map[string]string, tweak func(*Options)) *fixture {
	t.Helper()
	root := t.TempDir()
	tree(t, root, files)
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	f := &fixture{root: root, rec: newRecorder(), m: ignore.NewMatcher(r.FS(), ignore.Outer{}), logs: &syncBuffer{}}
	opts := Options{
		Root:    root,
		FS:      r.FS(),
		Matcher: f.m,
		OnEvent: f.rec.add,
		Log:     slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if tweak != nil {
		tweak(&opts)
	}
	f.w, err = Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.w.Close() })
	return f
}

func (f *fixture) path(rel string) string { return filepath.Join(f.root, filepath.FromSlash(rel)) }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestEvents(t *testing.T) {
	cases := []struct {
		name   string
		files  map[string]string
		act    func(t *testing.T, f *fixture)
		want   Event
		never  string // no event may name this path or one below it
		dirsOK func(n int) bool
	}{
		{
			name:  "external write to a file",
			files: map[string]string{"a.txt": "one\n"},
			act: func(t *testing.T, f *fixture) {
				os.WriteFile(f.path("a.txt"), []byte("two\n"), 0o644)
			},
			want: Event{"a.txt", Changed},
		},
		{
			name:  "new file in a subdirectory",
			files: map[string]string{"src/": ""},
			act: func(t *testing.T, f *fixture) {
				os.WriteFile(f.path("src/new.go"), []byte("package x\n"), 0o644)
			},
			want: Event{"src/new.go", Created},
		},
		{
			name:  "touch reports a change",
			files: map[string]string{"t.txt": "x"},
			act: func(t *testing.T, f *fixture) {
				later := time.Now().Add(time.Hour)
				os.Chtimes(f.path("t.txt"), later, later)
			},
			want: Event{"t.txt", Changed},
		},
		{
			name:  "remove",
			files: map[string]string{"gone.txt": "x"},
			act: func(t *testing.T, f *fixture) {
				os.Remove(f.path("gone.txt"))
			},
			want: Event{"gone.txt", Deleted},
		},
		{
			name:  "atomic save by rename over the file",
			files: map[string]string{"s.txt": "old"},
			act: func(t *testing.T, f *fixture) {
				os.WriteFile(f.path("s.txt.tmp"), []byte("new"), 0o644)
				os.Rename(f.path("s.txt.tmp"), f.path("s.txt"))
			},
			want: Event{"s.txt", Created},
		},
		{
			name:  "mkdir -p then a file: the file inside is reported",
			files: map[string]string{},
			act: func(t *testing.T, f *fixture) {
				os.MkdirAll(f.path("a/b/c"), 0o755)
				os.WriteFile(f.path("a/b/c/f"), []byte("x\n"), 0o644)
			},
			want:   Event{"a/b/c/f", Created},
			dirsOK: func(n int) bool { return n == 4 },
		},
		{
			name:  "renamed directory is watched under its new name",
			files: map[string]string{"d/sub/keep.txt": "x"},
			act: func(t *testing.T, f *fixture) {
				if err := os.Rename(f.path("d"), f.path("e")); err != nil {
					t.Fatal(err)
				}
				if _, ok := f.rec.wait(t, 0, is("e/sub/keep.txt")); !ok {
					t.Fatal("no event for the content of the renamed directory")
				}
				os.WriteFile(f.path("e/sub/g"), []byte("x"), 0o644)
			},
			want:   Event{"e/sub/g", Created},
			never:  "d/sub",
			dirsOK: func(n int) bool { return n == 3 },
		},
		{
			name:  "removed directory drops its watches",
			files: map[string]string{"x/y/z/f": "x", "keep/": ""},
			act: func(t *testing.T, f *fixture) {
				os.RemoveAll(f.path("x"))
			},
			want:   Event{"x", Deleted},
			dirsOK: func(n int) bool { return n == 2 },
		},
		{
			name:  "our own temp files are not reported",
			files: map[string]string{},
			act: func(t *testing.T, f *fixture) {
				os.WriteFile(f.path(".agentls-tmp-123"), []byte("x"), 0o644)
				os.WriteFile(f.path("after"), []byte("x"), 0o644)
			},
			want:  Event{"after", Created},
			never: ".agentls-tmp-123",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := start(t, tc.files, nil)
			tc.act(t, f)
			if _, ok := f.rec.wait(t, 0, is(tc.want.Rel, tc.want.Kind)); !ok {
				t.Fatalf("no %v; got %v", tc.want, f.rec.snapshot())
			}
			for _, e := range f.rec.snapshot() {
				if tc.never != "" && (e.Rel == tc.never || strings.HasPrefix(e.Rel, tc.never+"/")) {
					t.Errorf("unexpected event %v", e)
				}
			}
			if tc.dirsOK != nil {
				// Watch-set updates happen before the event is emitted,
				// but a removal's Deleted comes before the subtree's own
				// kernel events: allow them a moment.
				deadline := time.Now().Add(waitTimeout)
				for !tc.dirsOK(f.w.Dirs()) && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				if !tc.dirsOK(f.w.Dirs()) {
					t.Errorf("Dirs() = %d", f.w.Dirs())
				}
			}
		})
	}
}

// maxLatencyP50 is the bound on the median delay between an external write
// and its event.
const maxLatencyP50 = 50 * time.Millisecond

// maxLatencyP99 is generous: a loaded CI machine may stall a goroutine.
const maxLatencyP99 = 500 * time.Millisecond

func TestExternalChangeLatency(t *testing.T) {
	f := start(t, map[string]string{"f.txt": "0"}, nil)
	const trials = 20
	var lat []time.Duration
	for i := range trials {
		from := f.rec.len()
		t0 := time.Now()
		if err := os.WriteFile(f.path("f.txt"), fmt.Appendf(nil, "%d", i+1), 0o644); err != nil {
			t.Fatal(err)
		}
		at, ok := f.rec.wait(t, from, is("f.txt"))
		if !ok {
			t.Fatalf("trial %d: no event", i)
		}
		lat = append(lat, at.Sub(t0))
	}
	slices.Sort(lat)
	p50, p99 := lat[trials/2], lat[trials-1]
	t.Logf("external change → event: p50 %v, max %v over %d trials", p50, p99, trials)
	if p50 > maxLatencyP50 || p99 > maxLatencyP99 {
		t.Errorf("latency p50 %v (max %v), max %v (max %v)", p50, maxLatencyP50, p99, maxLatencyP99)
	}
}

func TestIgnoredDirectoriesAreNotWatched(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		dirs  int
	}{
		{"plain tree", map[string]string{"src/a/x.go": "", "src/b/": "", "docs/": ""}, 5},
		{"node_modules and build via .gitignore", map[string]string{
			".gitignore": "node_modules/\nbuild/\n", "src/x.go": "",
			"node_modules/a/b/index.js": "", "build/out/": "",
		}, 2},
		{".git is never watched", map[string]string{".git/objects/aa/": "", "main.go": ""}, 1},
		{"nested .gitignore", map[string]string{"pkg/.gitignore": "gen/\n", "pkg/gen/deep/": "", "pkg/src/": ""}, 3},
		{".agentlsignore", map[string]string{".agentlsignore": "vendor/\n", "vendor/x/": "", "cmd/": ""}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := start(t, tc.files, nil)
			if got := f.w.Dirs(); got != tc.dirs {
				t.Errorf("Dirs() = %d, want %d", got, tc.dirs)
			}
			if f.w.Mode() == ModeDegraded {
				t.Errorf("Mode() = degraded")
			}
		})
	}
}

func TestIgnoreFileEditInvalidates(t *testing.T) {
	f := start(t, map[string]string{".gitignore": "gen/\n", "gen/old.txt": "x", "a.log": ""}, nil)
	if f.w.Dirs() != 1 || !f.m.Ignored("gen", true) || f.m.Ignored("a.log", false) {
		t.Fatalf("before: Dirs()=%d", f.w.Dirs())
	}
	from := f.rec.len()
	if err := os.WriteFile(f.path(".gitignore"), []byte("*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.rec.wait(t, from, is(".gitignore")); !ok {
		t.Fatal("no event for .gitignore")
	}
	// The un-ignored directory is watched now and its content reported.
	if _, ok := f.rec.wait(t, from, is("gen/old.txt", Created)); !ok {
		t.Fatalf("gen/old.txt not reported after gen/ stopped being ignored: %v", f.rec.snapshot())
	}
	// os.WriteFile truncates, then writes: two events, and the first rewalk
	// may read the empty file; the rules settle once the second is handled.
	newRules := func() bool { return f.m.Ignored("a.log", false) && !f.m.Ignored("gen", true) }
	for deadline := time.Now().Add(waitTimeout); !newRules() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if !newRules() {
		t.Error("matcher still uses the old rules")
	}
	if f.w.Dirs() != 2 {
		t.Errorf("Dirs() = %d, want 2", f.w.Dirs())
	}
	os.WriteFile(f.path("gen/new.txt"), []byte("x"), 0o644)
	if _, ok := f.rec.wait(t, from, is("gen/new.txt")); !ok {
		t.Error("no event in the newly watched directory")
	}
}

func TestWatchLimitDegrades(t *testing.T) {
	var adds atomic.Int32
	f := start(t, map[string]string{"a/": "", "b/": "", "c/": "", "d/x/": ""}, func(o *Options) {
		o.AddHook = func(dir string) error {
			if adds.Add(1) > 2 {
				return syscall.ENOSPC
			}
			return nil
		}
	})
	if got := f.w.Mode(); got != ModeDegraded {
		t.Fatalf("Mode() = %q, want %q", got, ModeDegraded)
	}
	if n := f.w.Dirs(); n != 2 {
		t.Errorf("Dirs() = %d, want the 2 watched before the limit", n)
	}
	if n := strings.Count(f.logs.String(), "file watcher degraded"); n != 1 {
		t.Errorf("degraded logged %d times, want once:\n%s", n, f.logs.String())
	}
	// New directories are not watched any more, and no more is logged.
	os.MkdirAll(f.path("e/f"), 0o755)
	os.WriteFile(f.path("z"), []byte("x"), 0o644)
	f.rec.wait(t, 0, is("z"))
	if n := f.w.Dirs(); n != 2 {
		t.Errorf("Dirs() = %d after mkdir in degraded mode", n)
	}
	if n := strings.Count(f.logs.String(), "file watcher degraded"); n != 1 {
		t.Errorf("degraded logged %d times, want once", n)
	}
}

func TestOverflowRescans(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 20,000 files")
	}
	const files = 20000 // more than the default inotify queue (16,384)
	release := make(chan struct{})
	var rescans atomic.Int32
	var once sync.Once
	var rec *recorder
	f := start(t, map[string]string{"storm/": ""}, func(o *Options) {
		inner := o.OnEvent
		o.OnEvent = func(e Event) {
			// Stall on the first event so the kernel queue fills up.
			once.Do(func() { <-release })
			inner(e)
		}
		o.OnRescan = func() { rescans.Add(1) }
	})
	rec = f.rec
	for i := range files {
		if err := os.WriteFile(f.path(fmt.Sprintf("storm/f%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A directory created during the storm is only found by the rescan.
	os.MkdirAll(f.path("storm/late/deeper"), 0o755)
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for rescans.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if rescans.Load() == 0 {
		t.Fatalf("no rescan after %d creates (%d events seen)", files, rec.len())
	}
	// Nothing is missed afterwards, including in the directory that
	// appeared while events were being dropped.
	from := rec.len()
	os.WriteFile(f.path("storm/f00042"), []byte("changed"), 0o644)
	os.WriteFile(f.path("storm/late/deeper/x"), []byte("x"), 0o644)
	if _, ok := rec.wait(t, from, is("storm/f00042", Changed)); !ok {
		t.Error("change after the rescan missed")
	}
	if _, ok := rec.wait(t, from, is("storm/late/deeper/x")); !ok {
		t.Error("file in a directory created during the overflow missed")
	}
}

func TestStopsWithContextAndClose(t *testing.T) {
	root := t.TempDir()
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := Start(ctx, Options{Root: root, FS: r.FS(), Matcher: ignore.NewMatcher(r.FS(), ignore.Outer{})})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-w.done:
	case <-time.After(waitTimeout):
		t.Fatal("goroutine did not exit on context cancellation")
	}
	if err := w.Close(); err != nil {
		t.Error(err)
	}
	if _, err := Start(context.Background(), Options{Root: "relative"}); err == nil {
		t.Error("Start accepted a relative root without FS")
	}
}

// TestSettleCoalescesAWriteInSteps: a save seen in steps (truncated, then
// written) is one event with Settle, delivered once the path is quiet, and
// two or more without; paths settle independently.
func TestSettleCoalescesAWriteInSteps(t *testing.T) {
	const settle = 200 * time.Millisecond
	writeInSteps := func(t *testing.T, p string) time.Time {
		t.Helper()
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(settle / 10) // the writer stalls between truncating and writing
		if _, err := f.WriteString("same\n"); err != nil {
			t.Fatal(err)
		}
		// The time before the close that ends the write: the watcher may
		// see the close's event before a time taken after it.
		closing := time.Now()
		f.Close()
		return closing
	}
	for _, tc := range []struct {
		name   string
		settle time.Duration
		want   func(n int) bool
	}{
		{"without Settle", 0, func(n int) bool { return n >= 2 }},
		{"with Settle", settle, func(n int) bool { return n == 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := start(t, map[string]string{"a.txt": "same\n", "b.txt": "b\n"}, func(o *Options) { o.Settle = tc.settle })
			done := writeInSteps(t, f.path("a.txt"))
			// b.txt's change is the barrier: events are delivered in order
			// of settling, and b.txt settles after a.txt.
			time.Sleep(5 * time.Millisecond)
			if err := os.WriteFile(f.path("b.txt"), []byte("b2\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, ok := f.rec.wait(t, 0, is("b.txt")); !ok {
				t.Fatal("no event for b.txt")
			}
			n := 0
			var last time.Time
			f.rec.mu.Lock()
			for i, e := range f.rec.events {
				if e.Rel == "a.txt" {
					n++
					last = f.rec.at[i]
				}
			}
			f.rec.mu.Unlock()
			if !tc.want(n) {
				t.Errorf("%d events for a.txt", n)
			}
			if tc.settle > 0 && last.Sub(done) < tc.settle {
				t.Errorf("a.txt delivered %v after the write ended, before it had been quiet for %v", last.Sub(done), tc.settle)
			}
		})
	}
}
