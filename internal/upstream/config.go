package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Config file locations.
const (
	// WorkspaceConfig is relative to a workspace folder.
	WorkspaceConfig = ".agentls/mcp.json"
	// UserConfig is relative to the user configuration directory (settings.UserConfigDir).
	UserConfig = "agentls/mcp.json"
)

// Transports a server may use (ServerConfig.Type after ParseConfig).
const (
	// TransportStdio runs Command and speaks MCP over its stdin and stdout.
	TransportStdio = "stdio"
	// TransportHTTP is MCP's streamable HTTP transport at URL.
	TransportHTTP = "http"
	// TransportSSE is the older HTTP+SSE transport at URL.
	TransportSSE = "sse"
)

// ServerConfig declares one MCP server: a command (stdio) or a URL (http,
// sse).
type ServerConfig struct {
	Name string `json:"-"`
	// Type is the transport. ParseConfig sets it to TransportStdio,
	// TransportHTTP or TransportSSE: an entry without a type is stdio when it
	// has a command and http when it has a url (as VS Code infers);
	// "streamable-http" and "streamableHttp" mean http.
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// URL is the endpoint of an http or sse server (http or https).
	URL string `json:"url,omitempty"`
	// Headers are sent with every request to URL (Authorization, API keys).
	// Their values are never logged.
	Headers map[string]string `json:"headers,omitempty"`
	// Disabled servers are skipped.
	Disabled bool `json:"disabled,omitempty"`
	// Dir is the folder a stdio server runs in, and a relative command
	// resolves against: the workspace folder whose config declares it (the
	// first folder for the user's config), as Claude Code starts servers in
	// the project.
	Dir string `json:"-"`
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
// {"mcpServers": {name: cfg}}. Variable references in command, args, env
// values, url and header values are expanded (see expander) with workspace,
// the home directory and the process environment. Entries that cannot run
// are reported in the error and left out; an unset variable is reported
// too, but its server is kept.
func ParseConfig(data []byte, workspace string) ([]ServerConfig, error) {
	home, _ := os.UserHomeDir()
	return parseConfig(data, workspace, home, os.LookupEnv)
}

// parseConfig is ParseConfig with the home directory and the environment
// given.
func parseConfig(data []byte, workspace, home string, lookup func(string) (string, bool)) ([]ServerConfig, error) {
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
	var out []ServerConfig
	var errs []error
	for _, n := range slices.Sorted(maps.Keys(all)) {
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
		}
		c.Dir = workspace
		e := &expander{server: n, workspace: workspace, home: home, lookup: lookup}
		c, err := resolveServer(c, e)
		errs = append(errs, e.problems...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}

// resolveServer settles c's transport, expands its variables and checks
// that it can run.
func resolveServer(c ServerConfig, e *expander) (ServerConfig, error) {
	typ, err := transportOf(c)
	if err != nil {
		return c, err
	}
	c.Type = typ
	if typ == TransportStdio {
		c.Command = e.expand(c.Command, "command")
		for i := range c.Args {
			c.Args[i] = e.expand(c.Args[i], fmt.Sprintf("args[%d]", i))
		}
		for _, k := range slices.Sorted(maps.Keys(c.Env)) {
			c.Env[k] = e.expand(c.Env[k], fmt.Sprintf("env %q", k))
		}
		return c, nil
	}
	rawURL := c.URL
	c.URL = e.expand(c.URL, "url")
	if err := checkURL(c.URL); err != nil {
		// The url as written: the expanded one may carry a token.
		return c, fmt.Errorf("server %q: url %q %v", c.Name, rawURL, err)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Headers)) {
		if !validHeaderName(k) {
			return c, fmt.Errorf("server %q: header name %q is not a valid HTTP header name", c.Name, k)
		}
		c.Headers[k] = e.expand(c.Headers[k], fmt.Sprintf("header %q", k))
		if strings.ContainsAny(c.Headers[k], "\r\n\x00") {
			return c, fmt.Errorf("server %q: header %q: the value contains a line break or NUL", c.Name, k)
		}
	}
	return c, nil
}

// transportOf is c's transport in canonical spelling.
func transportOf(c ServerConfig) (string, error) {
	switch strings.ToLower(c.Type) {
	case "":
		switch {
		case c.Command != "":
			return TransportStdio, nil
		case c.URL != "":
			return TransportHTTP, nil
		}
		return "", fmt.Errorf("server %q: no command (a stdio server) or url (an http server)", c.Name)
	case TransportStdio:
		if c.Command == "" {
			return "", fmt.Errorf("server %q: no command (a stdio server needs one; url is for \"http\" and \"sse\" servers)", c.Name)
		}
		return TransportStdio, nil
	case TransportHTTP, "streamable-http", "streamablehttp", "streamable_http":
		if c.URL == "" {
			return "", fmt.Errorf("server %q: type %q needs a \"url\"", c.Name, c.Type)
		}
		return TransportHTTP, nil
	case TransportSSE:
		if c.URL == "" {
			return "", fmt.Errorf("server %q: type %q needs a \"url\"", c.Name, c.Type)
		}
		return TransportSSE, nil
	}
	return "", fmt.Errorf("server %q: type %q is not supported (use \"stdio\", \"http\" or \"sse\")", c.Name, c.Type)
}

// checkURL says what is wrong with an endpoint URL, or nil. The message
// follows the URL in a sentence and never repeats it.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a token
		}
		return fmt.Errorf("is not a valid URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("must start with http:// or https://")
	}
	if u.Host == "" {
		return errors.New("has no host")
	}
	return nil
}

// validHeaderName reports whether name is an HTTP token (RFC 9110 5.6.2).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// LoadConfigs reads the user's <userDir>/agentls/mcp.json (userDir ""
// skips it: settings.UserConfigDir is the user's), then each workspace
// folder's .agentls/mcp.json. A workspace folder's server replaces the user's of
// the same name; between folders the first one's wins, as for extension
// tools, and the other is reported. Missing files are not errors.
func LoadConfigs(userDir string, folders []string) ([]ServerConfig, error) {
	type src struct {
		path, workspace string
		folder          bool
	}
	var srcs []src
	ws := ""
	if len(folders) > 0 {
		ws = folders[0]
	}
	if userDir != "" {
		srcs = append(srcs, src{filepath.Join(userDir, UserConfig), ws, false})
	}
	for _, f := range folders {
		srcs = append(srcs, src{filepath.Join(f, WorkspaceConfig), f, true})
	}
	byName := map[string]ServerConfig{}
	inFolder := map[string]string{} // server name → the folder file declaring it
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
			if first, ok := inFolder[c.Name]; ok && s.folder {
				errs = append(errs, fmt.Errorf("%s: server %q is already declared by %s, which takes precedence", s.path, c.Name, first))
				continue
			}
			if _, ok := byName[c.Name]; !ok {
				order = append(order, c.Name)
			}
			byName[c.Name] = c
			if s.folder {
				inFolder[c.Name] = s.path
			}
		}
	}
	out := make([]ServerConfig, 0, len(order))
	for _, n := range order {
		out = append(out, byName[n])
	}
	return out, errors.Join(errs...)
}
