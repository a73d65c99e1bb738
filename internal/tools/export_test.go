package tools

import (
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentls/agentls/internal/mention"
)

// The framework's internals the external tests (package tools_test) check
// with the built-in tools as their subjects, which only an external test
// can import.
var (
	CheckObject     = checkObject
	ChecksComplete  = checksComplete
	CleanSchema     = cleanSchema
	CleanSchemaJSON = cleanSchemaJSON
	SchemaValue     = schemaValue
	SchemaType      = schemaType
	ResultText      = resultText
	NewFlatDecoder  = newFlatDecoder
)

func (d *flatDecoder) Decode(args map[string]any, v reflect.Value) bool { return d.decode(args, v) }

func (x *Executor) PrepareCall(req Request, rf ReporterFactory, audit bool) (*Prepared, Result, bool) {
	return x.prepare(req, rf, audit)
}

func (x *Executor) MaskValueCounted(v any) (any, map[string]int) { return x.maskValue(v) }

func (x *Executor) MaskTree(v any, counts *map[string]int) (any, bool) { return x.maskTree(v, counts) }

func (t *Tool) Resolve() (*jsonschema.Resolved, error) { return t.resolve() }

func (t *Tool) Validate(args map[string]any, names mention.Prefix) string {
	return t.validate(args, names)
}

func (t *Tool) Decode(args map[string]any) (any, error) { return t.decode(args) }

func (t *Tool) Example() string { return t.example() }

// InputType is the Go type of t's input (for a tool defined elsewhere,
// whose input type the test cannot name).
func InputType(t *Tool) reflect.Type {
	v, err := t.decode(map[string]any{})
	if err != nil {
		panic(err)
	}
	return reflect.TypeOf(v)
}
