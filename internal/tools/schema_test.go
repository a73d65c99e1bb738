package tools

import (
	"reflect"
	"strings"
	"testing"
	"time"

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
	Nested  editItem          `json:"nested"`
	List    []editItem        `json:"list"`
	When    time.Time         `json:"when,omitzero"`
	Skipped string            `json:"-"`
	Deep    map[string][]bool `json:"deep,omitempty"`
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
		{"read", schemaOf[readInput], true},
		{"ls", schemaOf[lsInput], true},
		{"grep", schemaOf[grepInput], true},
		{"find", schemaOf[findInput], true},
		{"edit", schemaOf[editInput], true},
		{"write", schemaOf[writeInput], true},
		{"bash", schemaOf[bashInput], true},
		{"tool_search", schemaOf[toolSearchInput], true},
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
			want, err := cleanSchemaJSON(tc.schema(t))
			if err != nil {
				t.Fatal(err)
			}
			v, ok := schemaValue(tc.schema(t))
			if ok != tc.direct {
				t.Fatalf("direct conversion ok = %v, want %v", ok, tc.direct)
			}
			if ok && !reflect.DeepEqual(v, any(want)) {
				t.Errorf("direct conversion\n got  %#v\n want %#v", v, want)
			}
			got, err := cleanSchema(tc.schema(t))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("cleanSchema\n got  %#v\n want %#v", got, want)
			}
		})
	}
}

// coreTools are the tools Define builds.
func coreTools() []*Tool {
	return append(Builtins(DefaultLimits()), NewToolSearch(NewRegistry()))
}

// TestCoreSchemasResolve resolves every core schema: Define leaves that to
// the first call, so a schema the validator rejects would otherwise only
// show when the model calls the tool.
func TestCoreSchemasResolve(t *testing.T) {
	for _, tool := range coreTools() {
		t.Run(tool.Name, func(t *testing.T) {
			res, err := tool.resolve()
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
		tool    func() *Tool
		args    map[string]any
		wantErr string // "" = valid
	}{
		{"edit with no edits breaks minItems", NewEdit, map[string]any{"path": "a.go", "edits": []any{}}, "`edits` must hold at least 1 item(s), got an empty array"},
		{"edit with one edit is valid", NewEdit, map[string]any{"path": "a.go", "edits": []any{map[string]any{"oldText": "a", "newText": "b"}}}, ""},
		{"read with a path is valid", func() *Tool { return NewRead(DefaultLimits()) }, map[string]any{"path": "a.go"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := tc.tool().validate(tc.args, "")
			if tc.wantErr == "" && msg != "" || tc.wantErr != "" && !strings.Contains(msg, tc.wantErr) {
				t.Errorf("validate = %q, want %q", msg, tc.wantErr)
			}
		})
	}
}

// BenchmarkBuiltins measures building the core tools, as every session
// does, against the JSON round trip (reference) for their schemas.
func BenchmarkBuiltins(b *testing.B) {
	b.Run("Builtins", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Builtins(DefaultLimits())
		}
	})
	raw := []*jsonschema.Schema{}
	for _, f := range []func() (*jsonschema.Schema, error){
		func() (*jsonschema.Schema, error) { return jsonschema.For[readInput](nil) },
		func() (*jsonschema.Schema, error) { return jsonschema.For[lsInput](nil) },
		func() (*jsonschema.Schema, error) { return jsonschema.For[grepInput](nil) },
		func() (*jsonschema.Schema, error) { return jsonschema.For[findInput](nil) },
		func() (*jsonschema.Schema, error) { return jsonschema.For[editInput](nil) },
		func() (*jsonschema.Schema, error) { return jsonschema.For[writeInput](nil) },
		func() (*jsonschema.Schema, error) { return jsonschema.For[bashInput](nil) },
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
	}{{"cleanSchema", cleanSchema}, {"cleanSchemaJSON(reference)", cleanSchemaJSON}} {
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
			for _, tool := range Builtins(DefaultLimits()) {
				if _, err := tool.resolve(); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
