// Package watch owns the workspace file watcher: one fsnotify watcher per
// workspace folder that watches every non-ignored directory (fsnotify has no
// recursive mode), and turns kernel events into "this file may have
// changed" hints for the edit guard and the editor.
//
// It keeps the watch set in step with the tree: a new directory is watched
// as it appears and the files already inside it are reported as created (a
// `mkdir -p a/b/c && echo x > a/b/c/f` produces one kernel event, for a);
// a renamed or removed directory loses the watches under its old name
// (inotify would go on reporting the old paths) and is walked again under
// the new one. A kernel queue overflow triggers a rescan and OnRescan,
// since events were lost; hitting the watch limit degrades the watcher
// (Mode "degraded"), after which callers must stat at check time. A change
// to an ignore file invalidates the ignore matcher for its directory.
//
// Events are hints, not facts: inotify coalesces, and a kernel event says
// nothing about whether the content differs. Consumers compare stat
// fingerprints (internal/editguard).
package watch
