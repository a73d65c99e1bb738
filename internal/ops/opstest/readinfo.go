package opstest

import (
	"fmt"
	"io/fs"

	"github.com/agentls/agentls/internal/ops"
)

// ReadFileInfo reads p whole through one open descriptor (ops.FS.OpenRead) and
// returns the descriptor's stat with the content: nil data for a file that
// is not regular.
func ReadFileInfo(fsys ops.FS, p ops.Path) ([]byte, fs.FileInfo, error) {
	f, fi, err := fsys.OpenRead(p)
	if f == nil {
		return nil, fi, err
	}
	defer f.Close()
	data, err := ops.ReadSized(f, fi.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", p.Rel, err)
	}
	return data, fi, nil
}
