package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Config file locations.
const (
	// WorkspaceConfig is relative to a workspace folder.
	WorkspaceConfig = ".agentls/mcp.json"
	// UserConfig is relative to os.UserConfigDir().
	UserConfig = "agentls/mcp.json"
)

// ServerConfig declares one stdio MCP server.
type ServerConfig struct {
	Name    string            `json:"-"`
	Command string            `json:"command"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Type is "stdio" or empty; other transports are refused.
	Type string `json:"type,omitempty"`
	// Disabled servers are skipped.
	Disabled bool `json:"disabled,omitempty"`
}

// MaxServerName is the longest server name; with ToolNameSep and the tool's
// name it must fit MaxToolName.
const MaxServerName = 32

// validServerName reports whether name matches ^[a-zA-Z0-9_-]{1,MaxServerName}$.
// A loop, not a regexp: compiling the bounded repeat cost every process
// start a few hundred µs at init.
func validServerName(name string) bool {
	if len(name) == 0 || len(name) > MaxServerName {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !nameByte(name[i]) {
			return false
		}
	}
	return true
}

// nameByte reports whether c may appear in a server or tool name.
func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// ParseConfig reads either {"servers": {name: cfg}} (.vscode/mcp.json) or
// {"mcpServers": {name: cfg}}. ${workspaceFolder} and ${userHome} in command,
// args and env are replaced with workspace and the home directory. Entries
// that cannot run are reported in the error and left out.
func ParseConfig(data []byte, workspace string) ([]ServerConfig, error) {
	var raw struct {
		Servers    map[string]ServerConfig `json:"servers"`
		MCPServers map[string]ServerConfig `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not an MCP config ({\"servers\": {...}} or {\"mcpServers\": {...}}): %w", err)
	}
	all := map[string]ServerConfig{}
	for n, c := range raw.MCPServers {
		all[n] = c
	}
	for n, c := range raw.Servers {
		all[n] = c
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	home, _ := os.UserHomeDir()
	expand := func(s string) string {
		return strings.NewReplacer("${workspaceFolder}", workspace, "${userHome}", home).Replace(s)
	}
	var out []ServerConfig
	var errs []error
	for _, n := range names {
		c := all[n]
		c.Name = n
		switch {
		case c.Disabled:
			continue
		case !validServerName(n):
			errs = append(errs, fmt.Errorf("server %q: names must match ^[a-zA-Z0-9_-]{1,%d}$", n, MaxServerName))
			continue
		case strings.Contains(n, "__"):
			errs = append(errs, fmt.Errorf("server %q: a name may not contain \"__\" (it separates server and tool)", n))
			continue
		case c.Type != "" && c.Type != "stdio":
			errs = append(errs, fmt.Errorf("server %q: type %q is not supported (only stdio servers)", n, c.Type))
			continue
		case c.Command == "":
			errs = append(errs, fmt.Errorf("server %q: no command", n))
			continue
		}
		c.Command = expand(c.Command)
		for i := range c.Args {
			c.Args[i] = expand(c.Args[i])
		}
		for k, v := range c.Env {
			c.Env[k] = expand(v)
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}

// LoadConfigs reads the user config, then each workspace folder's
// .agentls/mcp.json; a later server of the same name replaces an earlier one.
// Missing files are not errors.
func LoadConfigs(folders []string) ([]ServerConfig, error) {
	type src struct{ path, workspace string }
	var srcs []src
	ws := ""
	if len(folders) > 0 {
		ws = folders[0]
	}
	if dir, err := os.UserConfigDir(); err == nil {
		srcs = append(srcs, src{filepath.Join(dir, UserConfig), ws})
	}
	for _, f := range folders {
		srcs = append(srcs, src{filepath.Join(f, WorkspaceConfig), f})
	}
	byName := map[string]ServerConfig{}
	var order []string
	var errs []error
	for _, s := range srcs {
		data, err := os.ReadFile(s.path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.path, err))
			continue
		}
		cfgs, err := ParseConfig(data, s.workspace)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.path, err))
		}
		for _, c := range cfgs {
			if _, ok := byName[c.Name]; !ok {
				order = append(order, c.Name)
			}
			byName[c.Name] = c
		}
	}
	out := make([]ServerConfig, 0, len(order))
	for _, n := range order {
		out = append(out, byName[n])
	}
	return out, errors.Join(errs...)
}
