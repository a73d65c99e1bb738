//go:build !unix

package search

import "io/fs"

// removed cannot tell here; a deleted directory is searched as empty.
func removed(fs.FileInfo) bool { return false }
