package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/session"
)

// rootFolders checks the --root directories: one that cannot be opened is
// named on stderr and skipped, the others are the workspace. With roots
// given and none usable it is an error (exit 2): the working directory is
// never used in their place. No roots give no folders.
func rootFolders(cmd string, roots []string, stderr io.Writer) ([]ops.FolderSpec, error) {
	if len(roots) == 0 {
		return nil, nil
	}
	var specs []ops.FolderSpec
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, fmt.Errorf("--root %s: %w", r, err)
		}
		specs = append(specs, ops.FolderSpec{Path: abs})
	}
	usable, bad := session.UsableFolders(specs)
	if len(usable) == 0 {
		return nil, errors.New("no usable --root (not a directory agentls can open): " + strings.Join(bad, "; "))
	}
	for _, b := range bad {
		fmt.Fprintf(stderr, "%s: warning: --root %s skipped\n", cmd, b)
	}
	return usable, nil
}
