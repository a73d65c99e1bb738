package settings

import (
	"fmt"
	"os"
	"path/filepath"
)

// Settings file locations.
const (
	// ConfigDir is a workspace folder's agentls directory: settings,
	// extension tools (tools/), MCP servers (mcp.json).
	ConfigDir     = ".agentls"
	LocalFile     = ".agentls/settings.local.json"
	WorkspaceFile = ".agentls/settings.json"
	// UserFile is relative to the user configuration directory.
	UserFile = "agentls/settings.json"
)

// UserConfigDir is the user configuration directory: $XDG_CONFIG_HOME
// when set, else os.UserConfigDir. The user's settings.json, mcp.json
// and extension tools are all below it, in agentls/.
func UserConfigDir() (string, error) {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return d, nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("user config dir: %w", err)
	}
	return d, nil
}

// FolderFiles are the settings files of the folder at root, the local one
// (higher in precedence) first.
func FolderFiles(root string) []string {
	return []string{filepath.Join(root, filepath.FromSlash(LocalFile)), filepath.Join(root, filepath.FromSlash(WorkspaceFile))}
}

// UserSettings is the user's settings file below userDir.
func UserSettings(userDir string) string {
	return filepath.Join(userDir, filepath.FromSlash(UserFile))
}

// Files are the settings files that hold rules, in precedence order: each
// folder's (roots, in order), then the user's ("" userDir: none). The
// editor's settings, higher than all, are not a file.
func Files(roots []string, userDir string) []string {
	var paths []string
	for _, root := range roots {
		paths = append(paths, FolderFiles(root)...)
	}
	if userDir != "" {
		paths = append(paths, UserSettings(userDir))
	}
	return paths
}
