package tools_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/internal/tools/builtin"
	"github.com/google/jsonschema-go/jsonschema"
)

// kitchenSink has a field of every kind the schema generator handles.
type kitchenSink struct {
	Small   int8              `json:"small" jsonschema:"a bounded integer"`
	Count   uint              `json:"count,omitzero"`
	Ratio   float64           `json:"ratio,omitempty"`
	Name    *string           `json:"name,omitempty"`
	Tags    []string          `json:"tags"`
	Pair    [2]int            `json:"pair"`
	Labels  map[string]int    `json:"labels,omitempty"`
	Any     any               `json:"any,omitempty"`
	Raw     map[string]any    `json:"raw,omitempty"`
	Nested  sinkItem          `json:"nested"`
	List    []sinkItem        `json:"list"`
	When    time.Time         `json:"when,omitzero"`
	Skipped string            `json:"-"`
	Deep    map[string][]bool `json:"deep,omitempty"`
}

// sinkItem is a nested struct of the kitchen sink, shaped like edit's
// editItem.
type sinkItem struct {
	OldText    string `json:"oldText" jsonschema:"exact text to replace, as it is in the file (small but unique; include a line of context when it repeats)"`
	NewText    string `json:"newText" jsonschema:"replacement text"`
	ReplaceAll bool   `json:"replaceAll,omitzero" jsonschema:"replace every occurrence instead of requiring a unique match"`
}

// inputSchema generates the raw schema of a built-in tool's input type,
// which this package cannot name.
func inputSchema(tool *tools.Tool) func(*testing.T) *jsonschema.Schema {
	return func(t *testing.T) *jsonschema.Schema {
		t.Helper()
		s, err := jsonschema.ForType(tools.InputType(tool), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// schemaOf generates T's raw schema.
func schemaOf[T any](t *testing.T) *jsonschema.Schema {
	t.Helper()
	s, err := jsonschema.For[T](nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCleanSchemaMatchesJSON checks the direct conversion against the JSON
// round trip it replaces, for every core input type (which must take the
// direct path: that is the startup saving) and for schemas that must fall
// back to the round trip.
func TestCleanSchemaMatchesJSON(t *testing.T) {
	tests := []struct {
		name   string
		schema func(t *testing.T) *jsonschema.Schema
		direct bool // whether the direct conversion handles it (else the round trip)
	}{
		{"read", inputSchema(builtin.NewRead(tools.DefaultLimits())), true},
		{"ls", inputSchema(builtin.NewLs(tools.DefaultLimits())), true},
		{"grep", inputSchema(builtin.NewGrep(tools.DefaultLimits())), true},
		{"find", inputSchema(builtin.NewFind(tools.DefaultLimits())), true},
		{"edit", inputSchema(builtin.NewEdit()), true},
		{"write", inputSchema(builtin.NewWrite()), true},
		{"bash", inputSchema(builtin.NewBash(tools.DefaultLimits())), true},
		{"tool_search", inputSchema(builtin.NewToolSearch(tools.NewRegistry())), true},
		{"no fields", schemaOf[struct{}], true},
		{"every field kind", schemaOf[kitchenSink], true},
		{"enum falls back", func(*testing.T) *jsonschema.Schema {
			return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
				"mode": {Type: "string", Enum: []any{"a", "b"}},
			}}
		}, false},
		{"true and false sub-schemas", func(*testing.T) *jsonschema.Schema {
			return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
				"anything": {},
				"nothing":  {Not: &jsonschema.Schema{}},
			}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
		}, true},
		{"not of a non-empty schema falls back", func(*testing.T) *jsonschema.Schema {
			return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
				"x": {Not: &jsonschema.Schema{Type: "string"}},
			}}
		}, false},
		{"only null left", func(*testing.T) *jsonschema.Schema {
			return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
				"x": {Types: []string{"null"}},
				"y": {Types: []string{"null", "string", "integer"}},
			}}
		}, true},
		{"$schema property falls back", func(*testing.T) *jsonschema.Schema {
			return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
				"$schema": {Type: "string"},
			}}
		}, false},
		{"$schema keyword falls back", func(*testing.T) *jsonschema.Schema {
			return &jsonschema.Schema{Schema: "https://json-schema.org/draft/2020-12/schema", Type: "object"}
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, err := tools.CleanSchemaJSON(tc.schema(t))
			if err != nil {
				t.Fatal(err)
			}
			v, ok := tools.SchemaValue(tc.schema(t))
			if ok != tc.direct {
				t.Fatalf("direct conversion ok = %v, want %v", ok, tc.direct)
			}
			if ok && !reflect.DeepEqual(v, any(want)) {
				t.Errorf("direct conversion\n got  %#v\n want %#v", v, want)
			}
			got, err := tools.CleanSchema(tc.schema(t))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("tools.CleanSchema\n got  %#v\n want %#v", got, want)
			}
		})
	}
}

// coreTools are the tools Define builds.
func coreTools() []*tools.Tool {
	return append(builtin.Builtins(tools.DefaultLimits()), builtin.NewToolSearch(tools.NewRegistry()))
}

// TestCoreSchemasResolve resolves every core schema: Define leaves that to
// the first call, so a schema the validator rejects would otherwise only
// show when the model calls the tool.
func TestCoreSchemasResolve(t *testing.T) {
	for _, tool := range coreTools() {
		t.Run(tool.Name, func(t *testing.T) {
			res, err := tool.Resolve()
			if err != nil || res == nil {
				t.Fatalf("resolve: %v", err)
			}
		})
	}
}

// TestValidateResolvesLazily checks that the JSON Schema validator still
// runs after the hand-written checks, for limits only it enforces.
func TestValidateResolvesLazily(t *testing.T) {
	tests := []struct {
		name    string
		tool    func() *tools.Tool
		args    map[string]any
		wantErr string // "" = valid
	}{
		{"edit with no edits breaks minItems", builtin.NewEdit, map[string]any{"path": "a.go", "edits": []any{}}, "`edits` must hold at least 1 item(s), got an empty array"},
		{"edit with one edit is valid", builtin.NewEdit, map[string]any{"path": "a.go", "edits": []any{map[string]any{"oldText": "a", "newText": "b"}}}, ""},
		{"read with a path is valid", func() *tools.Tool { return builtin.NewRead(tools.DefaultLimits()) }, map[string]any{"path": "a.go"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := tc.tool().Validate(tc.args, "")
			if tc.wantErr == "" && msg != "" || tc.wantErr != "" && !strings.Contains(msg, tc.wantErr) {
				t.Errorf("validate = %q, want %q", msg, tc.wantErr)
			}
		})
	}
}

// BenchmarkBuiltins measures building the core tools, as every session
// does, against the JSON round trip (reference) for their schemas.
func BenchmarkBuiltins(b *testing.B) {
	b.Run("builtin.Builtins", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = builtin.Builtins(tools.DefaultLimits())
		}
	})
	raw := []*jsonschema.Schema{}
	for _, f := range []func() (*jsonschema.Schema, error){
		func() (*jsonschema.Schema, error) {
			return jsonschema.ForType(tools.InputType(builtin.NewRead(tools.DefaultLimits())), nil)
		},
		func() (*jsonschema.Schema, error) {
			return jsonschema.ForType(tools.InputType(builtin.NewLs(tools.DefaultLimits())), nil)
		},
		func() (*jsonschema.Schema, error) {
			return jsonschema.ForType(tools.InputType(builtin.NewGrep(tools.DefaultLimits())), nil)
		},
		func() (*jsonschema.Schema, error) {
			return jsonschema.ForType(tools.InputType(builtin.NewFind(tools.DefaultLimits())), nil)
		},
		func() (*jsonschema.Schema, error) { return jsonschema.ForType(tools.InputType(builtin.NewEdit()), nil) },
		func() (*jsonschema.Schema, error) {
			return jsonschema.ForType(tools.InputType(builtin.NewWrite()), nil)
		},
		func() (*jsonschema.Schema, error) {
			return jsonschema.ForType(tools.InputType(builtin.NewBash(tools.DefaultLimits())), nil)
		},
	} {
		s, err := f()
		if err != nil {
			b.Fatal(err)
		}
		raw = append(raw, s)
	}
	for _, bc := range []struct {
		name  string
		clean func(*jsonschema.Schema) (map[string]any, error)
	}{{"tools.CleanSchema", tools.CleanSchema}, {"tools.CleanSchemaJSON(reference)", tools.CleanSchemaJSON}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, s := range raw {
					if _, err := bc.clean(s); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	b.Run("resolve(first call)", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, tool := range builtin.Builtins(tools.DefaultLimits()) {
				if _, err := tool.Resolve(); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
