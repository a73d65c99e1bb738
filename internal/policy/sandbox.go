package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentls/agentls/internal/sandbox"
)

// SandboxBlock is one source's "sandbox" object as written.
type SandboxBlock struct {
	Enabled                  *bool    `json:"enabled,omitempty"`
	AutoAllowBashIfSandboxed *bool    `json:"autoAllowBashIfSandboxed,omitempty"`
	FailIfUnavailable        *bool    `json:"failIfUnavailable,omitempty"`
	ExcludedCommands         []string `json:"excludedCommands,omitempty"`
	Filesystem               struct {
		AllowWrite []string `json:"allowWrite,omitempty"`
		DenyRead   []string `json:"denyRead,omitempty"`
	} `json:"filesystem"`
	Network struct {
		AllowedDomains []string `json:"allowedDomains,omitempty"`
	} `json:"network"`
}

// ParseSandbox reads a sandbox object strictly: an unknown key, a wrong
// type or an empty string is an error, never a setting quietly dropped.
func ParseSandbox(raw json.RawMessage) (SandboxBlock, error) {
	var b SandboxBlock
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return b, nil
	}
	d := json.NewDecoder(bytes.NewReader(t))
	d.DisallowUnknownFields()
	if err := d.Decode(&b); err != nil {
		return SandboxBlock{}, fmt.Errorf("sandbox: %v", err)
	}
	for name, list := range map[string][]string{
		"excludedCommands": b.ExcludedCommands, "filesystem.allowWrite": b.Filesystem.AllowWrite,
		"filesystem.denyRead": b.Filesystem.DenyRead, "network.allowedDomains": b.Network.AllowedDomains,
	} {
		for i, s := range list {
			if strings.TrimSpace(s) == "" {
				return SandboxBlock{}, fmt.Errorf("sandbox.%s[%d] is empty", name, i)
			}
		}
	}
	for i, d := range b.Network.AllowedDomains {
		if strings.ContainsAny(d, "/: ") {
			return SandboxBlock{}, fmt.Errorf("sandbox.network.allowedDomains[%d] %q must be a host name (example.com or *.example.com), without scheme, port or path", i, d)
		}
	}
	return b, nil
}

// sandboxSource is one source's parsed block with where it came from.
type sandboxSource struct {
	block     SandboxBlock
	workspace bool   // a folder's settings file
	folder    string // that folder's root
	file      string
}

// mergeSandbox merges the sources' blocks, highest precedence first:
// the first source that sets a switch decides it, lists are joined. Fail
// closed: a workspace file (a cloned repository) cannot switch the
// sandbox off that another source enables, nor open writes outside its
// folder; failIfUnavailable from any source holds.
func mergeSandbox(srcs []sandboxSource, home string) (sandbox.Settings, []Problem) {
	var s sandbox.Settings
	var problems []Problem
	var enabled, auto *bool
	anyEnables := false
	for _, src := range srcs {
		if e := src.block.Enabled; e != nil && *e {
			anyEnables = true
		}
	}
	for _, src := range srcs {
		b := src.block
		if b.Enabled != nil && enabled == nil {
			if !*b.Enabled && src.workspace && anyEnables {
				problems = append(problems, Problem{File: src.file, Msg: "sandbox.enabled false is ignored: a workspace settings file cannot switch off the sandbox another settings source enables"})
			} else {
				enabled = b.Enabled
			}
		}
		if b.AutoAllowBashIfSandboxed != nil && auto == nil {
			auto = b.AutoAllowBashIfSandboxed
		}
		if b.FailIfUnavailable != nil && *b.FailIfUnavailable {
			s.FailIfUnavailable = true
		}
		s.ExcludedCommands = append(s.ExcludedCommands, b.ExcludedCommands...)
		s.DenyRead = append(s.DenyRead, b.Filesystem.DenyRead...)
		s.AllowedDomains = append(s.AllowedDomains, b.Network.AllowedDomains...)
		for _, w := range b.Filesystem.AllowWrite {
			p := sandbox.ExpandHome(w, home, src.folder)
			if src.workspace && !strings.HasPrefix(p+"/", filepath.Clean(src.folder)+"/") {
				problems = append(problems, Problem{File: src.file, Msg: fmt.Sprintf("sandbox.filesystem.allowWrite %q is ignored: a workspace settings file may open writes only inside its own folder (set it in the user settings)", w)})
				continue
			}
			s.AllowWrite = append(s.AllowWrite, p)
		}
	}
	s.Enabled = enabled != nil && *enabled
	s.AutoAllowBash = auto != nil && *auto
	return s, problems
}

// brokenSandbox is what a sandbox block that cannot be read stands for:
// the sandbox on, with the defaults, refusing to run commands unconfined.
func brokenSandbox() SandboxBlock {
	t := true
	return SandboxBlock{Enabled: &t, FailIfUnavailable: &t}
}

// SandboxSettings are the merged sandbox settings.
func (c *Config) SandboxSettings() sandbox.Settings {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.sandbox
}

// SandboxPaths are the literal paths of the deny rules, absolute, which
// the sandbox enforces too: Read(...) denies reading, Edit(...) and
// Write(...) deny writing. Glob rules cannot be held by the sandbox's
// mounts and are left to the permission step.
func (c *Config) SandboxPaths() (denyRead, denyWrite []string) {
	v := c.view()
	c.mu.RLock()
	root, home := c.Root, c.Home
	c.mu.RUnlock()
	for _, r := range v.deny {
		if r.kind != kindPath || strings.ContainsAny(r.pat.glob, "*?[{\\") {
			continue
		}
		var p string
		switch {
		case r.pat.home:
			if home == "" {
				continue
			}
			p = filepath.Join(home, filepath.FromSlash(r.pat.glob))
		case r.pat.up:
			p = filepath.Join(root, filepath.FromSlash(r.pat.glob))
		case r.pat.abs:
			p = filepath.FromSlash(path.Clean(r.pat.glob))
		default:
			base := r.folder
			if base == "" {
				base = root
			}
			if base == "" {
				continue
			}
			p = filepath.Join(base, filepath.FromSlash(r.pat.glob))
		}
		switch r.Tool {
		case "read":
			denyRead = append(denyRead, p)
		case "edit", "write":
			denyWrite = append(denyWrite, p)
		}
	}
	return denyRead, denyWrite
}
