package settings

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// WatchUser calls changed when the user's agentls files change:
// <userDir>/agentls/settings.json, mcp.json and tools/*.json (workspace
// watchers do not see that directory). userDir itself is watched too, so
// an agentls directory made later is picked up. Its goroutine ends with
// ctx; the returned channel is closed then.
func WatchUser(ctx context.Context, userDir string, log *slog.Logger, changed func()) <-chan struct{} {
	done := make(chan struct{})
	w, err := fsnotify.NewWatcher()
	if err != nil {
		log.Debug("user configuration not watched", "err", err)
		close(done)
		return done
	}
	agentlsDir := filepath.Join(userDir, "agentls")
	toolsDir := filepath.Join(agentlsDir, "tools")
	watch := func() {
		for _, d := range []string{userDir, agentlsDir, toolsDir} {
			_ = w.Add(d) // a directory that does not exist yet is added when it appears
		}
	}
	watch()
	go func() {
		defer close(done)
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
				switch {
				case ev.Name == agentlsDir || ev.Name == toolsDir:
					if ev.Has(fsnotify.Create) {
						watch()
					}
				case dir == agentlsDir && (name == "settings.json" || name == "mcp.json"):
				case dir == toolsDir && strings.HasSuffix(name, ".json"):
				default:
					continue // another program's configuration
				}
				changed()
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				log.Debug("user configuration watcher", "err", err)
			}
		}
	}()
	return done
}
