package extension

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/shell"
	"github.com/agentls/agentls/internal/tools"
)

// Limits of a definition file.
const (
	// DefaultTimeout applies when a definition sets no timeout (seconds).
	DefaultTimeout = 120 * time.Second
	// MaxTimeout is the longest timeout a definition may set, as for bash.
	MaxTimeout = 600 * time.Second
	// MaxFileBytes caps a definition file; a larger one is refused.
	MaxFileBytes = 256 * 1024
	// MaxNameLen is the longest tool name (the MCP and model APIs' limit).
	MaxNameLen = 64
)

// WorkspaceSubdir and UserSubdir are where definitions live: below each
// workspace folder, and below the user configuration directory (settings.UserConfigDir).
const (
	WorkspaceSubdir = ".agentls/tools"
	UserSubdir      = "agentls/tools"
)

// Scopes of a Dir.
const (
	ScopeWorkspace = "workspace"
	ScopeUser      = "user"
)

// validName reports whether name matches ^[a-zA-Z0-9_-]{1,MaxNameLen}$.
// A loop, not a regexp: compiling that bounded repeat at init cost ~1 ms of
// every process start.
func validName(name string) bool {
	if len(name) == 0 || len(name) > MaxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Runner runs a rendered command with the bash tool's machinery (process
// group, timeout, output cut and spill, masking) and returns its result.
type Runner func(ctx context.Context, c *tools.Call, command string, timeout time.Duration) (tools.Result, error)

// Dir is one directory of definition files.
type Dir struct {
	FS fs.FS
	// Path is the directory inside FS ("." for its root).
	Path string
	// Label names the directory in problems and details (an absolute path).
	Label string
	// Scope is ScopeWorkspace or ScopeUser; user definitions are trusted
	// for their readOnly claim.
	Scope string
}

// Problem is a definition file that was skipped, and why.
type Problem struct {
	File string
	Msg  string
}

func (p Problem) String() string { return p.File + ": " + p.Msg }

// Def is the JSON form of one definition file.
type Def struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
	Command     string         `json:"command"`
	ReadOnly    bool           `json:"readOnly"`
	Destructive bool           `json:"destructive"`
	// Deferred defaults to true: extension tools wait for tool_search.
	Deferred *bool `json:"deferred"`
	// Timeout in seconds; 0 means DefaultTimeout.
	Timeout float64 `json:"timeout"`
	// Schema is an editor's JSON Schema reference for the file; unused.
	Schema string `json:"$schema"`
}

// WorkspaceDir is the definitions directory of a workspace folder:
// <root>/.agentls/tools.
func WorkspaceDir(root string) Dir {
	return Dir{FS: os.DirFS(root), Path: WorkspaceSubdir, Label: filepath.Join(root, filepath.FromSlash(WorkspaceSubdir)), Scope: ScopeWorkspace}
}

// UserDir is the user's definitions directory below configDir
// (settings.UserConfigDir): <configDir>/agentls/tools.
func UserDir(configDir string) Dir {
	d := filepath.Join(configDir, filepath.FromSlash(UserSubdir))
	return Dir{FS: os.DirFS(d), Path: ".", Label: d, Scope: ScopeUser}
}

// DefaultDirs returns the directories Load reads, in precedence order: each
// workspace root's .agentls/tools (first root first), then the user's
// <userDir>/agentls/tools ("" userDir: none; settings.UserConfigDir is the
// user's). A directory that does not exist is simply empty.
func DefaultDirs(workspaceRoots []string, userDir string) []Dir {
	var dirs []Dir
	for _, r := range workspaceRoots {
		dirs = append(dirs, WorkspaceDir(r))
	}
	if userDir != "" {
		dirs = append(dirs, UserDir(userDir))
	}
	return dirs
}

// Load reads every *.json file of dirs (in name order within a directory)
// and builds one tool per valid definition. When two definitions share a
// name, the one from the earlier Dir wins — so with DefaultDirs a workspace
// tool overrides the user's tool of the same name — and the other is
// reported. Names in reserved (the core tools) are refused, case-insensitively
// since tool lookup falls back to that. Problems never stop the loading.
func Load(dirs []Dir, reserved []string, run Runner) ([]*tools.Tool, []Problem) {
	taken := map[string]string{} // lower-case name → file that defined it
	res := map[string]bool{}
	for _, r := range reserved {
		res[strings.ToLower(r)] = true
	}
	var out []*tools.Tool
	var probs []Problem
	for _, d := range dirs {
		files, err := fs.Glob(d.FS, path.Join(d.Path, "*.json"))
		if err != nil {
			probs = append(probs, Problem{File: d.Label, Msg: err.Error()})
			continue
		}
		sort.Strings(files)
		for _, f := range files {
			label := filepath.Join(d.Label, path.Base(f))
			t, err := loadFile(d, f, label, run)
			if err != nil {
				probs = append(probs, Problem{File: label, Msg: err.Error()})
				continue
			}
			key := strings.ToLower(t.Name)
			switch {
			case res[key]:
				probs = append(probs, Problem{File: label, Msg: fmt.Sprintf("name %q is a core tool; choose another name", t.Name)})
			case taken[key] != "":
				probs = append(probs, Problem{File: label, Msg: fmt.Sprintf("name %q is already defined by %s, which takes precedence", t.Name, taken[key])})
			default:
				taken[key] = label
				out = append(out, t)
			}
		}
	}
	return out, probs
}

func loadFile(d Dir, name, label string, run Runner) (*tools.Tool, error) {
	f, err := d.FS.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("file is larger than %d bytes", MaxFileBytes)
	}
	def, err := ParseDef(data)
	if err != nil {
		return nil, err
	}
	return Build(def, label, d.Scope == ScopeUser, run)
}

// ParseDef decodes one definition strictly: unknown fields (a misspelt
// "timout") and trailing data are errors, so a typo cannot silently change
// what a tool does. Field names match case-insensitively (encoding/json).
func ParseDef(data []byte) (Def, error) {
	var def Def
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return def, fmt.Errorf(`invalid definition: the file must hold one JSON object, {"name": …, "description": …, "inputSchema": …, "command": …}`)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&def); err != nil {
		return def, fmt.Errorf("invalid definition: %s", defError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return def, fmt.Errorf("invalid definition: more than one JSON value in the file")
	}
	return def, nil
}

// defError says what is wrong with a definition in the file's terms, where
// encoding/json's message names Go types.
func defError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		t := te.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		want := map[reflect.Kind]string{reflect.String: "a string", reflect.Bool: "true or false", reflect.Float64: "a number", reflect.Map: "an object"}[t.Kind()]
		return fmt.Sprintf("%q must be %s, not a JSON %s", te.Field, cmp.Or(want, te.Type.String()), te.Value)
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Sprintf("unknown field %s (the fields are name, description, inputSchema, command, readOnly, destructive, deferred, timeout)", msg)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// Build validates def and makes its tool. file is recorded in the result
// details; trusted says whether def's readOnly claim is believed without the
// shell analysis agreeing.
func Build(def Def, file string, trusted bool, run Runner) (*tools.Tool, error) {
	if run == nil {
		return nil, fmt.Errorf("extension tools cannot run: no command runner configured")
	}
	if !validName(def.Name) {
		return nil, fmt.Errorf("name %q must be 1-%d letters, digits, _ or -", def.Name, MaxNameLen)
	}
	if strings.TrimSpace(def.Description) == "" {
		return nil, fmt.Errorf("description is empty; say when to use the tool and what it prints")
	}
	if strings.TrimSpace(def.Command) == "" {
		return nil, fmt.Errorf("command is empty")
	}
	timeout := DefaultTimeout
	switch {
	case def.Timeout < 0:
		return nil, fmt.Errorf("timeout must be a number of seconds > 0, got %v", def.Timeout)
	case def.Timeout > MaxTimeout.Seconds():
		return nil, fmt.Errorf("timeout %v s exceeds the maximum of %v s", def.Timeout, MaxTimeout.Seconds())
	case def.Timeout > 0:
		timeout = time.Duration(def.Timeout * float64(time.Second))
	}
	schema := def.InputSchema
	if schema == nil {
		schema = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	if schema["type"] != "object" {
		return nil, fmt.Errorf(`inputSchema must have "type": "object"`)
	}
	tmpl, err := ParseTemplate(def.Command)
	if err != nil {
		return nil, err
	}
	props, _ := schema["properties"].(map[string]any)
	for _, n := range tmpl.Names() {
		if _, ok := props[n]; !ok {
			return nil, fmt.Errorf("command uses {{%s}}, which is not a property of inputSchema", n)
		}
	}
	t, err := tools.NewTool(def.Name, def.Description, schema)
	if err != nil {
		return nil, err
	}
	t.Source = "extension"
	t.Deferred = def.Deferred == nil || *def.Deferred
	t.OpenWorld = true
	labels := func(args map[string]any) tools.Labels {
		a := shell.Analyze(tmpl.Render(args), shell.Options{})
		destructive := def.Destructive || a.Destructive
		ro := def.ReadOnly && (trusted || a.ReadOnly) && !destructive
		return tools.Labels{ReadOnly: ro, Destructive: destructive, ConcurrencySafe: ro}
	}
	// tools/list states the definition's labels, checked against the
	// command with plain words for its placeholders (arguments are quoted,
	// so they cannot add commands).
	plain := map[string]any{}
	for _, n := range tmpl.Names() {
		plain[n] = "x"
	}
	hints := labels(plain)
	t.Hints = &hints
	t.SetHandler(labels, func(ctx context.Context, c *tools.Call, args map[string]any) (tools.Result, error) {
		if r := uncarriable(args); r != nil {
			return *r, nil
		}
		cmd := tmpl.Render(args)
		r, err := run(ctx, c, cmd, timeout)
		if err != nil {
			return r, err
		}
		if r.Details == nil {
			r.Details = map[string]any{}
		}
		r.Details["extension"] = map[string]any{"file": file, "command": cmd}
		return r, nil
	})
	return t, nil
}

// uncarriable refuses, naming the argument, a value no command line can
// carry: one with a NUL byte, or one longer than the whole command may be.
// (The command runner would refuse the rendered command too, without
// knowing which argument made it so.)
func uncarriable(args map[string]any) *tools.Result {
	for _, name := range slices.Sorted(maps.Keys(args)) {
		s, ok := args[name].(string)
		switch {
		case !ok:
		case strings.IndexByte(s, 0) >= 0:
			r := tools.Errorf("argument %q contains a NUL byte, which no command line can carry; nothing was run. Leave it out, or put the data in a file and pass its path.", name)
			return &r
		case len(s) > proc.MaxCommandBytes:
			r := tools.Errorf("argument %q is %d bytes, more than one command line can carry (%d bytes); nothing was run. Write it to a file (write) and pass the file's path instead.", name, len(s), proc.MaxCommandBytes)
			return &r
		}
	}
	return nil
}
