package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agentls/agentls/internal/ignore"
	"github.com/agentls/agentls/internal/ops"
)

// Kind says what happened to a path.
type Kind string

// The kinds of Event.
const (
	Created Kind = "created"
	Changed Kind = "changed"
	Deleted Kind = "deleted"
)

// ModeDegraded is the Mode of a watcher that could not watch every
// directory (watch limit reached, or no backend): callers must not trust
// the absence of events.
const ModeDegraded = "degraded"

// Event is one "this path may have changed" hint. Created and Changed name
// files (never directories); Deleted may name a file or a directory, and a
// deleted or renamed-away directory takes everything under it along.
type Event struct {
	Rel  string // slash path relative to Root
	Kind Kind
}

// Options configure Start.
type Options struct {
	Root    string          // absolute OS path of one workspace folder
	FS      fs.FS           // the same folder (os.Root.FS()); all walking goes through it
	Matcher *ignore.Matcher // prunes ignored dirs (node_modules, build output); .git is never watched
	OnEvent func(Event)     // called from the watcher goroutine, never concurrently
	// Settle, when positive, holds a path's events until none has come for
	// that long and then delivers one: a write seen half done (truncated,
	// the data still to come) is judged once it is done, not reported as a
	// change and then as none.
	Settle time.Duration
	// OnRescan is called (from the watcher goroutine) after a rescan that
	// followed lost events: callers re-check everything they rely on.
	OnRescan func()
	Log      *slog.Logger
	// OnDegrade, if set, is called once, when the watcher degrades (the
	// watch limit is hit): during Start, or later as directories appear.
	OnDegrade func(err error)
	// AddHook, if set, is called with the slash path (relative to Root) of
	// each directory before it is watched; an error is treated as the
	// error of the watch itself (syscall.ENOSPC simulates the watch limit).
	AddHook func(dir string) error
}

// Watcher watches one workspace folder. Its goroutine runs until the
// context given to Start ends or Close is called.
type Watcher struct {
	opts Options
	log  *slog.Logger
	fsw  *fsnotify.Watcher // nil when degraded from the start

	cancel context.CancelFunc
	done   chan struct{}

	degraded atomic.Bool

	mu   sync.Mutex
	dirs map[string]struct{} // watched directories, slash paths relative to Root ("." = Root)

	// With Settle: events held back, by path, and the timer for the
	// earliest; both only touched by the watcher goroutine.
	held      map[string]heldEvent
	heldTimer *time.Timer
}

// heldEvent is an event waiting out Settle.
type heldEvent struct {
	ev  Event
	due time.Time
}

// Start watches every non-ignored directory below opts.Root and returns once
// the initial walk is done. A watcher that cannot watch everything still
// starts, in Mode "degraded"; an error means the options or the root are
// unusable.
func Start(ctx context.Context, opts Options) (*Watcher, error) {
	if opts.FS == nil || opts.Matcher == nil || !filepath.IsAbs(opts.Root) {
		return nil, fmt.Errorf("watch: Root must be absolute and FS and Matcher set (root %q)", opts.Root)
	}
	opts.Root = filepath.Clean(opts.Root)
	w := &Watcher{
		opts: opts,
		log:  opts.Log,
		done: make(chan struct{}),
		dirs: map[string]struct{}{},
		held: map[string]heldEvent{},
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		w.degrade(err)
		close(w.done)
		w.cancel = func() {}
		return w, nil
	}
	w.fsw = fsw
	if err := w.addTree(ctx, ".", false); err != nil {
		fsw.Close()
		return nil, fmt.Errorf("watch %s: %w", opts.Root, err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	go w.run(runCtx)
	return w, nil
}

// Mode names the backend in use, or "degraded".
func (w *Watcher) Mode() string {
	if w.degraded.Load() {
		return ModeDegraded
	}
	switch runtime.GOOS {
	case "linux", "android":
		return "inotify"
	case "windows":
		return "windows"
	case "solaris", "illumos":
		return "fen"
	default:
		return "kqueue" // darwin and the BSDs: fsnotify uses kqueue there
	}
}

// Dirs returns how many directories are watched.
func (w *Watcher) Dirs() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.dirs)
}

// Close stops the watcher and waits for its goroutine.
func (w *Watcher) Close() error {
	w.cancel()
	<-w.done
	return nil
}

func (w *Watcher) run(ctx context.Context) {
	defer close(w.done)
	defer w.fsw.Close()
	defer func() {
		if w.heldTimer != nil {
			w.heldTimer.Stop()
		}
	}()
	for {
		if len(w.held) > 0 && w.heldTimer == nil {
			w.heldTimer = time.NewTimer(w.opts.Settle)
		}
		var settled <-chan time.Time
		if w.heldTimer != nil {
			settled = w.heldTimer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-settled:
			w.heldTimer = nil
			w.release(time.Now())
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.handle(ctx, ev)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.rescan(ctx)
				continue
			}
			w.log.Warn("file watcher error", "root", w.opts.Root, "err", err)
		}
	}
}

// handle turns one kernel event into watch-set updates and Events.
func (w *Watcher) handle(ctx context.Context, ev fsnotify.Event) {
	rel, ok := w.rel(ev.Name)
	if !ok || rel == "." {
		return // the root itself: nothing a caller can act on
	}
	base := path.Base(rel)
	if strings.HasPrefix(base, ops.TempPrefix) {
		return // our own atomic writes in flight; the rename that ends one is reported
	}
	if base == ".git" {
		// A new or removed repository root changes which rules apply below it.
		w.rulesChanged(ctx, parent(rel))
		return
	}
	switch {
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		w.dropTree(rel)
		w.emit(Event{Rel: rel, Kind: Deleted})
	case ev.Has(fsnotify.Create):
		info, err := fs.Lstat(w.opts.FS, rel)
		if err != nil {
			return // gone again; its removal is reported separately
		}
		if info.IsDir() {
			// Renamed here from elsewhere, or new: watch it and report what
			// is already inside (created before the watch existed).
			w.dropTree(rel)
			if err := w.addTree(ctx, rel, true); err != nil {
				w.log.Debug("watch new directory", "dir", rel, "err", err)
			}
			return
		}
		w.emit(Event{Rel: rel, Kind: Created})
	case ev.Has(fsnotify.Write) || ev.Has(fsnotify.Chmod):
		if w.watched(rel) {
			return // attribute change of a directory
		}
		w.emit(Event{Rel: rel, Kind: Changed})
	default:
		return
	}
	if isRuleFile(base) {
		w.rulesChanged(ctx, parent(rel))
	}
}

// rulesChanged drops cached ignore rules under dir and watches directories
// that are no longer ignored. Directories that became ignored stay watched:
// a watch too many costs nothing but a little kernel memory.
func (w *Watcher) rulesChanged(ctx context.Context, dir string) {
	if dir == "." {
		dir = ""
	}
	w.opts.Matcher.Invalidate(dir)
	if err := w.addTree(ctx, fsName(dir), true); err != nil {
		w.log.Debug("rewalk after ignore rules changed", "dir", dir, "err", err)
	}
}

// rescan recovers from lost events: forget directories that are gone, watch
// the ones that appeared, then let the caller re-check what it relies on.
func (w *Watcher) rescan(ctx context.Context) {
	w.log.Info("file watcher queue overflowed; rescanning", "root", w.opts.Root)
	w.mu.Lock()
	dirs := make([]string, 0, len(w.dirs))
	for d := range w.dirs {
		dirs = append(dirs, d)
	}
	w.mu.Unlock()
	for _, d := range dirs {
		if info, err := fs.Lstat(w.opts.FS, d); err != nil || !info.IsDir() {
			w.dropTree(d)
		}
	}
	if err := w.addTree(ctx, ".", true); err != nil {
		w.log.Warn("file watcher rescan", "root", w.opts.Root, "err", err)
	}
	if w.opts.OnRescan != nil {
		w.opts.OnRescan()
	}
}

// addTree watches rel and every non-ignored directory below it. With synth,
// the files of each newly watched directory are reported as created: they
// may have appeared before the watch did. A directory is watched before it
// is listed, so nothing falls between the listing and the watch.
func (w *Watcher) addTree(ctx context.Context, rel string, synth bool) error {
	var fresh map[string]bool // only read with synth; arming skips the bookkeeping
	if synth {
		fresh = map[string]bool{}
	}
	return w.opts.Matcher.Walk(ctx, rel, ignore.WalkOptions{}, func(p string, d fs.DirEntry) error {
		if d.IsDir() {
			if w.watched(p) {
				return nil
			}
			if w.degraded.Load() {
				return fs.SkipAll
			}
			if w.add(p) && synth {
				fresh[p] = true
			}
			return nil
		}
		if synth && fresh[parent(p)] && !strings.HasPrefix(d.Name(), ops.TempPrefix) {
			w.emit(Event{Rel: p, Kind: Created})
		}
		return nil
	})
}

// add watches one directory; it reports whether the watch was added.
func (w *Watcher) add(rel string) bool {
	var err error
	if w.opts.AddHook != nil {
		err = w.opts.AddHook(rel)
	}
	if err == nil {
		err = w.fsw.Add(w.osPath(rel))
	}
	switch {
	case err == nil:
		w.mu.Lock()
		w.dirs[rel] = struct{}{}
		w.mu.Unlock()
		return true
	case errors.Is(err, syscall.ENOSPC):
		w.degrade(err)
	case errors.Is(err, fs.ErrNotExist):
		// Removed while we walked: its removal is reported by the parent.
	default:
		w.log.Debug("watch directory", "dir", rel, "err", err)
	}
	return false
}

// degrade switches to Mode "degraded" and says so once.
func (w *Watcher) degrade(err error) {
	if w.degraded.Swap(true) {
		return
	}
	w.log.Warn("file watcher degraded: cannot watch every directory (on Linux raise fs.inotify.max_user_watches); edits are checked by stat instead",
		"root", w.opts.Root, "err", err)
	if w.opts.OnDegrade != nil {
		w.opts.OnDegrade(err)
	}
}

// dropTree forgets the watches on rel and below (a removed or renamed
// directory: inotify would report its subdirectories under the old name).
func (w *Watcher) dropTree(rel string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.dirs[rel]; !ok {
		return // not a watched directory (the common case: a file)
	}
	prefix := rel + "/"
	for d := range w.dirs {
		if d == rel || strings.HasPrefix(d, prefix) {
			// The kernel may have dropped it already; the error says so.
			_ = w.fsw.Remove(w.osPath(d))
			delete(w.dirs, d)
		}
	}
}

func (w *Watcher) watched(rel string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.dirs[rel]
	return ok
}

func (w *Watcher) emit(ev Event) {
	if w.opts.OnEvent == nil {
		return
	}
	if w.opts.Settle <= 0 {
		w.opts.OnEvent(ev)
		return
	}
	if prev, ok := w.held[ev.Rel]; ok && prev.ev.Kind == Created && ev.Kind == Changed {
		ev.Kind = Created // a new file still being written is still new
	}
	w.held[ev.Rel] = heldEvent{ev: ev, due: time.Now().Add(w.opts.Settle)}
}

// release delivers the held events that have settled by now, oldest
// first, and arms the timer for the rest.
func (w *Watcher) release(now time.Time) {
	var ready []heldEvent
	next := time.Time{}
	for rel, h := range w.held {
		if !h.due.After(now) {
			ready = append(ready, h)
			delete(w.held, rel)
		} else if next.IsZero() || h.due.Before(next) {
			next = h.due
		}
	}
	slices.SortFunc(ready, func(a, b heldEvent) int { return a.due.Compare(b.due) })
	for _, h := range ready {
		w.opts.OnEvent(h.ev)
	}
	if !next.IsZero() {
		w.heldTimer = time.NewTimer(next.Sub(now))
	}
}

// rel turns an event's OS path into a slash path relative to Root.
func (w *Watcher) rel(name string) (string, bool) {
	r, err := filepath.Rel(w.opts.Root, name)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

func (w *Watcher) osPath(rel string) string {
	if rel == "." {
		return w.opts.Root
	}
	return filepath.Join(w.opts.Root, filepath.FromSlash(rel))
}

// isRuleFile reports whether base names an ignore file whose change
// invalidates the matcher.
func isRuleFile(base string) bool {
	switch base {
	case ".gitignore", ".ignore", ".agentlsignore":
		return true
	}
	return false
}

// parent is path.Dir for slash paths relative to the root ("." at the top).
func parent(rel string) string { return path.Dir(rel) }

func fsName(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}
