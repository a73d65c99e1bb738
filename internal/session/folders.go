package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentls/agentls/internal/ops"
)

// UsableFolders splits specs into the folders that can be opened and the
// ones that cannot (missing, not a directory, unreadable), each of the
// latter named with its reason. A client's folder list is its workspace:
// the usable ones are kept and the others reported, never the whole list
// dropped for one stale entry.
func UsableFolders(specs []ops.FolderSpec) (usable []ops.FolderSpec, bad []string) {
	for _, s := range specs {
		if err := folderUsable(s.Path); err != nil {
			bad = append(bad, fmt.Sprintf("%s (%v)", s.Path, err))
			continue
		}
		usable = append(usable, s)
	}
	return usable, bad
}

func folderUsable(p string) error {
	if p == "" {
		return errors.New("empty path")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return err
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("does not exist")
	case err != nil:
		return err
	case !fi.IsDir():
		return errors.New("not a directory")
	}
	// os.Root is what the workspace opens; a directory it cannot open
	// (no permission) is no folder either.
	r, err := os.OpenRoot(abs)
	if err != nil {
		return fmt.Errorf("cannot be opened: %w", err)
	}
	return r.Close()
}

// NoFolders makes every tool call fail with why: the client's folders (or
// roots) left none usable, and agentls never falls back to its working
// directory or to earlier folders. A later SetFolders that succeeds lifts
// it. why is the client's own wording (editor folders, MCP roots).
func (s *Session) NoFolders(why string) { s.noFolders.Store(&why) }

// FoldersRefusal is why tool calls fail for want of a usable folder, ""
// when there is one; the transports answer every call with it.
func (s *Session) FoldersRefusal() string {
	if why := s.noFolders.Load(); why != nil {
		return *why
	}
	return ""
}
