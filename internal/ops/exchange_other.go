//go:build !linux

package ops

import "os"

// exchange cannot swap two names in one step here; ReplaceFile falls back
// to checking just before a rename.
func exchange(*os.Root, string, string) (bool, error) { return false, nil }
