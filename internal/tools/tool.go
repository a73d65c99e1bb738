package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/ignore"
	"github.com/agentls/agentls/internal/jobs"
	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/overlay"
	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/sandbox"
	"github.com/agentls/agentls/internal/spill"
	"github.com/agentls/agentls/internal/textedit"
)

// Labels are a call's input-dependent properties. The executor and the
// permission step read them; they are computed from the validated input.
type Labels struct {
	ReadOnly        bool
	Destructive     bool
	ConcurrencySafe bool
	// Key, when set, makes a non-concurrency-safe call safe to run beside
	// calls with a different Key (edits of different files). Calls that share
	// a Key run in call order.
	Key string
}

// Progress is a tools/progress payload (callId and tool are added by the
// reporter).
type Progress struct {
	Message    string   `json:"message,omitempty"`
	Output     string   `json:"output,omitempty"`
	Percentage *float64 `json:"percentage,omitempty"`
}

// Reporter carries a running call's notifications to the client.
type Reporter interface {
	Progress(p Progress)
	// Details sends tools/details as soon as they exist, before the reply.
	Details(d map[string]any)
}

// NopReporter drops everything.
type NopReporter struct{}

func (NopReporter) Progress(Progress)      {}
func (NopReporter) Details(map[string]any) {}

// Env is what a handler may use: the operations layer and the services
// later layers add (edit guard, watcher, spill files).
type Env struct {
	FS  ops.FS
	Log *slog.Logger
	// Guard is the edit guard: read stamps what the model saw, edit and
	// write consult it. nil records nothing and refuses edits.
	Guard *editguard.Guard
	// Reaper keeps the process groups of the session's commands that are
	// running or left children behind; the session kills them at Close.
	Reaper *proc.Reaper
	// SpillDir keeps the full output of commands whose output was cut.
	SpillDir *spill.Dir
	// Jobs are the session's background commands (bash run_in_background,
	// bash_output, bash_kill); nil refuses background starts.
	Jobs *jobs.Table
	// Visible hides files the permission rules forbid reading from grep
	// matches and ls/find listings; nil shows everything.
	Visible PathFilter
	// Buffers are the documents open in the editor (text document sync):
	// read shows their unsaved text. nil when the client sends none.
	Buffers *overlay.Store
	// Editor takes edits of open documents into the editor's buffers
	// (workspace/applyEdit). nil when the client cannot: an open document
	// with unsaved changes is then not edited at all.
	Editor BufferEditor
	// Folders is the session's side of the workspace folders: each one's
	// shared ignore matcher, and what follows a folder opened anew. nil:
	// rules are read fresh for each call and nobody is told.
	Folders FolderKeeper
	// Diagnostics asks the editor what its language servers report, so
	// edit and write can tell the model about problems they introduced;
	// nil when the client cannot.
	Diagnostics DiagnosticsSource
	// Names is how the client's model sees the tool names
	// (initializationOptions.toolNamePrefix; "" for MCP hosts and the CLI):
	// every hint that points to a tool names it so. Set before the first
	// call, never changed.
	Names mention.Prefix
	// Sandbox confines bash commands (and extension tools' commands) when
	// the settings enable it; nil = never sandboxed.
	Sandbox *sandbox.Sandbox
	// limits are the session's limits, for extension tools, which run
	// through bash's machinery (the built-in tools enforce the Limits they
	// were built with). Settings reloads change them while calls run.
	limits atomic.Pointer[Limits]
}

// FolderKeeper keeps what a session knows of its folders beyond the FS.
type FolderKeeper interface {
	// Matcher returns f's shared ignore matcher, kept fresh by the watcher
	// (rule files edited are invalidated); nil means rules are read fresh.
	Matcher(f *ops.Folder) *ignore.Matcher
	// Reopened is told of folder f deleted (or replaced) and found again at
	// its path, which the FS opened anew (ops.FS.Refresh): the keeper
	// re-arms its watchers and reads the folder's settings again, and has
	// dropped f's shared matcher when it returns.
	Reopened(f *ops.Folder)
}

// SetLimits sets the session's limits (zero fields: the defaults). The
// defaults are filled in here, once: Limits runs several times per call.
func (e *Env) SetLimits(l Limits) {
	l = l.WithDefaults()
	e.limits.Store(&l)
}

// Limits returns the session's limits, defaults filled in.
func (e *Env) Limits() Limits {
	if l := e.limits.Load(); l != nil {
		return *l
	}
	return DefaultLimits()
}

// BufferEditor applies edits (ranges in doc.Text) to a document open in the
// editor; applied=false with the editor's reason when it refused.
type BufferEditor interface {
	ApplyEdit(ctx context.Context, label string, doc overlay.Doc, edits []textedit.TextEdit) (applied bool, reason string, err error)
}

// PathFilter is the part of the permission policy that filters results.
// rel is relative to the folder, abs the real path.
type PathFilter interface {
	ReadAllowed(rel, abs string) bool // grep matches
	ListAllowed(rel, abs string) bool // ls and find names
}

// Call is the per-call context a handler receives.
type Call struct {
	ID       string
	Tool     string
	Env      *Env
	Reporter Reporter

	// resolved are the call's path resolutions, see Resolve. A call
	// resolves one or two paths, so a slice scan beats a map, and the first
	// one lives inline, costing no allocation.
	first    resolution
	resolved []resolution
	// diag is what the editor reported for the file before the call
	// changed it; nil when the editor does not report diagnostics.
	diag *diagBaseline
	// mask is the executor's masker (nil: none), for what a tool quotes of
	// a file outside the result text's usual path (masked.go).
	mask Masker
	// sandboxOnly: the permission step allowed the command because it runs
	// sandboxed (RequireSandbox); it must not run any other way.
	sandboxOnly bool
}

// Names is how the client's model sees the tool names (Env.Names); ""
// for a call without an Env.
func (c *Call) Names() mention.Prefix {
	if c == nil || c.Env == nil {
		return ""
	}
	return c.Env.Names
}

// Errorf is Errorf for text that names tools as {{name}}: the marks in
// format are rendered for the client, the arguments are data.
func (c *Call) Errorf(format string, args ...any) Result {
	return ErrorIn(c.Names(), format, args...)
}

// ErrorIn is Errorf naming tools for the client: names renders the
// {{tool}} marks of format (for code that has no Call).
func ErrorIn(names mention.Prefix, format string, args ...any) Result {
	r := Text(names.Sprintf(format, args...))
	r.IsError = true
	return r
}

// Hintf is Sprintf for text that names tools as {{name}} (Call.Errorf).
func (c *Call) Hintf(format string, args ...any) string {
	return c.Names().Sprintf(format, args...)
}

// Masker is the executor's secret masker for what a tool quotes of a
// file outside its result text (which governance masks itself); nil:
// none.
func (c *Call) Masker() Masker { return c.mask }

// SandboxOnly reports whether the call may run its command only
// sandboxed (RequireSandbox).
func (c *Call) SandboxOnly() bool { return c.sandboxOnly }

// RequireSandbox marks the call as allowed only to run sandboxed: if the
// sandbox is off by the time the command starts (the settings changed),
// the command is refused instead of run unconfined.
func (c *Call) RequireSandbox() { c.sandboxOnly = true }

type resolution struct {
	input string
	ok    bool // set once the resolution is stored
	p     ops.Path
	err   error
}

// Resolve resolves a path argument once per call: the permission step and
// the handler see the same resolution, so the policy judges exactly the path
// the tool then uses, and the symlink walk is not paid twice. A call runs on
// one goroutine at a time, so the cache needs no lock.
func (c *Call) Resolve(input string) (ops.Path, error) {
	if c.first.ok && c.first.input == input {
		return c.first.p, c.first.err
	}
	for _, r := range c.resolved {
		if r.input == input {
			return r.p, r.err
		}
	}
	p, err := c.Env.FS.Resolve(input)
	r := resolution{input: input, ok: true, p: p, err: err}
	if !c.first.ok {
		c.first = r
	} else {
		c.resolved = append(c.resolved, r)
	}
	return p, err
}

// Tool is one registered tool. Build core tools with Define.
type Tool struct {
	Name string
	// Title is the name a host shows its user (MCP Tool.title); empty:
	// DisplayTitle makes one of Name.
	Title       string
	Description string
	// Schema is the JSON Schema of the input, cleaned for every model API
	// (plain "type": "array", no null unions, no $ref).
	Schema map[string]any
	// Aliases maps alternative field names (any nesting level) to canonical ones.
	Aliases map[string]string
	// Prepare runs after generic normalization, before validation, for
	// tool-specific repairs.
	Prepare func(args map[string]any, n *Normalization)
	// PrepareRaw runs on the raw argument object before normalization drops
	// unknown fields (e.g. wrapping a legacy single edit into edits).
	PrepareRaw func(args map[string]any, n *Normalization)
	// MaxResultBytes is the governance budget for the text content.
	MaxResultBytes int
	// KeepTail cuts over-budget output from the front (logs) instead of the end.
	KeepTail bool
	// Deferred tools stay out of tools/list until activated.
	Deferred bool
	// Idempotent and OpenWorld feed the MCP annotations.
	Idempotent, OpenWorld bool
	// Source is "core", "extension" or "mcp:<server>".
	Source string

	// template is Description with its tool mentions as {{name}}
	// (mention.go); "" when it has none.
	template string
	// resolve returns the schema resolved for validation (nil: none).
	resolve func() (*jsonschema.Resolved, error)
	order   []string // property order of the input struct, for usage lines
	dynamic bool     // labels depend on the input
	// Hints, when set, are the labels tools/list states for a tool whose
	// labels depend on the input (an extension tool's definition and
	// command template); nil states the cautious answer.
	Hints  *Labels
	decode func(args map[string]any) (any, error)
	labels func(in any) Labels
	run    func(ctx context.Context, c *Call, in any) (Result, error)
	// check runs the tool's side-effect-free checks (nil: none).
	check func(ctx context.Context, c *Call, in any) (Plan, *Result)
}

// Spec declares a tool with a typed input.
type Spec[In any] struct {
	Name           string
	Title          string // what a host shows its user
	Description    string
	Aliases        map[string]string
	Prepare        func(args map[string]any, n *Normalization)
	PrepareRaw     func(args map[string]any, n *Normalization)
	MaxResultBytes int
	KeepTail       bool
	Deferred       bool
	Idempotent     bool
	OpenWorld      bool
	// Labels computes input-dependent labels; nil means Static.
	Labels func(in In) Labels
	Static Labels
	// Tweak adjusts the generated schema (minimums, enums) before it is
	// resolved for validation.
	Tweak func(schema map[string]any)
	Run   func(ctx context.Context, c *Call, in In) (Result, error)
	// Check runs every check of Run that cannot change anything (the
	// file was read, is not stale, the old text matches once, the cwd
	// exists) and says what Run would do; a non-nil Result is the refusal
	// Run would return. The permission step runs it before it asks, so a
	// call that would fail is not put to the user. nil: no checks.
	Check func(ctx context.Context, c *Call, in In) (Plan, *Result)
}

// DefaultMaxResultBytes is the governance budget of a tool that sets none.
const DefaultMaxResultBytes = 64 * 1024

// Define builds a Tool from a Spec; the schema comes from In's fields and
// their `jsonschema` tags. It panics on a type the schema generator rejects,
// which is a programming error caught by every test run.
func Define[In any](s Spec[In]) *Tool {
	raw, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: schema: %v", s.Name, err))
	}
	schema, err := cleanSchema(raw)
	if err != nil {
		panic(fmt.Sprintf("tool %s: schema: %v", s.Name, err))
	}
	if s.Tweak != nil {
		s.Tweak(schema)
	}
	t := newTool(s.Name, Mentions(s.Description, ""), schema)
	if t.Description != s.Description {
		t.template = s.Description
	}
	t.Title = s.Title
	// Resolving for validation is most of a tool's construction cost and
	// only a call needs it, so it waits for the first call. A core schema
	// that does not resolve is a programming error: TestCoreSchemasResolve
	// resolves every one.
	t.resolve = sync.OnceValues(func() (*jsonschema.Resolved, error) { return resolveSchema(s.Name, schema) })
	t.order = fieldOrder(reflect.TypeFor[In]())
	t.Aliases, t.Prepare, t.PrepareRaw = s.Aliases, s.Prepare, s.PrepareRaw
	t.MaxResultBytes, t.KeepTail, t.Deferred = s.MaxResultBytes, s.KeepTail, s.Deferred
	t.Idempotent, t.OpenWorld, t.Source = s.Idempotent, s.OpenWorld, "core"
	fast := newFlatDecoder(reflect.TypeFor[In]())
	t.decode = func(args map[string]any) (any, error) {
		var in In
		if fast != nil && fast.decode(args, reflect.ValueOf(&in).Elem()) {
			return in, nil
		}
		b, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		in = *new(In) // the fast path may have set some fields
		if err := json.Unmarshal(b, &in); err != nil {
			return nil, err
		}
		return in, nil
	}
	static := s.Static
	if s.Labels != nil {
		t.dynamic = true
		t.labels = func(in any) Labels { return s.Labels(in.(In)) }
	} else {
		t.labels = func(any) Labels { return static }
	}
	t.run = func(ctx context.Context, c *Call, in any) (Result, error) { return s.Run(ctx, c, in.(In)) }
	if s.Check != nil {
		t.check = func(ctx context.Context, c *Call, in any) (Plan, *Result) { return s.Check(ctx, c, in.(In)) }
	}
	return t
}

// NewTool builds an untyped tool from a JSON Schema (extension and MCP
// tools); set its handler with SetHandler. Unlike a core tool's, the schema
// is resolved here: it comes from a file or a server, so an error in it must
// surface now.
func NewTool(name, description string, schema map[string]any) (*Tool, error) {
	res, err := resolveSchema(name, schema)
	if err != nil {
		return nil, err
	}
	t := newTool(name, description, schema)
	t.resolve = func() (*jsonschema.Resolved, error) { return res, nil }
	return t, nil
}

// newTool is an untyped tool whose schema is not resolved yet.
func newTool(name, description string, schema map[string]any) *Tool {
	t := &Tool{Name: name, Description: description, Schema: schema, Source: "extension"}
	t.decode = func(args map[string]any) (any, error) { return args, nil }
	t.labels = func(any) Labels { return Labels{} }
	return t
}

// SetHandler sets an untyped tool's handler and labels.
func (t *Tool) SetHandler(labels func(args map[string]any) Labels, run func(ctx context.Context, c *Call, args map[string]any) (Result, error)) {
	t.labels = func(in any) Labels { return labels(in.(map[string]any)) }
	t.run = func(ctx context.Context, c *Call, in any) (Result, error) { return run(ctx, c, in.(map[string]any)) }
}

// DisplayTitle is t.Title, or one made of its name: "my_tool" is
// "My tool", an upstream server's "srv__lookup" is "Lookup (srv)".
func (t *Tool) DisplayTitle() string {
	if t.Title != "" {
		return t.Title
	}
	name, server := t.Name, ""
	if i := strings.Index(name, "__"); i > 0 && i+2 < len(name) {
		server, name = name[:i], name[i+2:]
	}
	title := strings.ReplaceAll(strings.ReplaceAll(name, "_", " "), "-", " ")
	if r, n := utf8.DecodeRuneInString(title); n > 0 {
		title = string(unicode.ToUpper(r)) + title[n:]
	}
	if server != "" {
		title += " (" + server + ")"
	}
	return title
}

func (t *Tool) budget() int {
	if t.MaxResultBytes > 0 {
		return t.MaxResultBytes
	}
	return DefaultMaxResultBytes
}

// fieldOrder lists the JSON names of a struct's fields in declaration order.
func fieldOrder(t reflect.Type) []string {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

// flatDecoder decodes normalized arguments into a struct of scalar fields
// (string, bool, int kinds, float64) by setting the fields directly, which
// is what json.Marshal of the map and json.Unmarshal into the struct would
// do, without the round trip. It handles only cases where the two provably
// agree; decode reports false for anything else (a key that is not exactly
// a field's JSON name, a value of another type, a null, a non-integral or
// huge number for an int, invalid UTF-8) and the caller takes the round trip.
type flatDecoder struct {
	fields map[string]flatField // by JSON name
}

type flatField struct {
	index int
	kind  reflect.Kind
}

// maxExactInt bounds the float64 values an int field takes directly: every
// integer up to it is exact in a float64 and fits every int kind used.
const maxExactInt = 1 << 53

// newFlatDecoder returns nil when t is not a struct of plain scalar fields.
func newFlatDecoder(t reflect.Type) *flatDecoder {
	if t.Kind() != reflect.Struct {
		return nil
	}
	d := &flatDecoder{fields: map[string]flatField{}}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil // json promotes embedded fields, even unexported ones
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts != "" && opts != "omitempty" && opts != "omitzero" || !plainName(name) {
			return nil // ",string", unusual names and the like: let encoding/json decide
		}
		if name == "" {
			name = f.Name
		}
		switch k := f.Type.Kind(); k {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
			if _, dup := d.fields[name]; dup {
				return nil
			}
			d.fields[name] = flatField{index: i, kind: k}
		default:
			return nil
		}
	}
	return d
}

// plainName reports a JSON field name of letters, digits and underscores
// (or none), which encoding/json takes as it is.
func plainName(s string) bool {
	for _, r := range s {
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// decode sets v's fields from args and reports whether it could; on false v
// may be partly set and must be reset.
func (d *flatDecoder) decode(args map[string]any, v reflect.Value) bool {
	for k, val := range args {
		f, ok := d.fields[k]
		if !ok {
			return false
		}
		fv := v.Field(f.index)
		switch f.kind {
		case reflect.String:
			s, ok := val.(string)
			if !ok || !utf8.ValidString(s) {
				return false
			}
			fv.SetString(s)
		case reflect.Bool:
			b, ok := val.(bool)
			if !ok {
				return false
			}
			fv.SetBool(b)
		case reflect.Int, reflect.Int64:
			n, ok := val.(float64)
			if !ok || n != math.Trunc(n) || math.Abs(n) > maxExactInt {
				return false
			}
			fv.SetInt(int64(n))
		case reflect.Float64:
			n, ok := val.(float64)
			if !ok || math.IsInf(n, 0) || math.IsNaN(n) {
				return false
			}
			fv.SetFloat(n)
		}
	}
	return true
}
