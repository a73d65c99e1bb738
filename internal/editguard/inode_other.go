//go:build !unix

package editguard

import "io/fs"

func inode(fs.FileInfo) uint64 { return 0 }
