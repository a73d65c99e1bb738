package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// Settings is the sandbox block of the settings, merged over every source
// by internal/policy:
//
//	{"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true,
//	  "failIfUnavailable": false, "excludedCommands": ["docker:*"],
//	  "filesystem": {"allowWrite": [...], "denyRead": [...]},
//	  "network": {"allowedDomains": [...]}}}
type Settings struct {
	Enabled           bool
	AutoAllowBash     bool
	FailIfUnavailable bool
	ExcludedCommands  []string
	AllowWrite        []string // paths; ~ is the home directory
	DenyRead          []string // added to DefaultDenyRead
	AllowedDomains    []string // "example.com" or "*.example.com"
}

// DefaultDenyRead are the paths a sandboxed command cannot read whatever
// the settings say: credentials of common tools.
func DefaultDenyRead() []string {
	return []string{"~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gcloud", "~/.netrc", "~/.docker/config.json"}
}

// ExpandHome turns a leading ~ into home and cleans the path; a relative
// path is taken relative to base.
func ExpandHome(p, home, base string) string {
	switch {
	case p == "~":
		p = home
	case strings.HasPrefix(p, "~/"):
		p = filepath.Join(home, p[2:])
	case !filepath.IsAbs(p) && base != "":
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+string(os.PathSeparator))
}
