package tools_test

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/internal/tools/builtin"
)

// TestChecksCompleteAgreesWithValidator: whenever validate skips the JSON
// Schema validator (tools.CheckObject passed and tools.ChecksComplete holds), the
// validator would have accepted the arguments too. Arguments are drawn from
// values of every JSON kind, out-of-range numbers, missing and unknown
// fields, for every built-in tool and for schemas with keywords tools.CheckObject
// does not enforce.
func TestChecksCompleteAgreesWithValidator(t *testing.T) {
	pool := []any{
		nil, true, false, "", "x", "src/a.go",
		0.0, 1.0, -3.0, 2.5, 20.0, 21.0, 600.0, 601.0, 1e9,
		[]any{}, []any{"a"}, []any{map[string]any{"oldText": "a", "newText": "b"}},
		[]any{map[string]any{"oldText": "a"}}, []any{map[string]any{"oldText": "a", "newText": "b", "extra": 1.0}},
		[]any{map[string]any{"oldText": 1.0, "newText": "b"}}, map[string]any{}, map[string]any{"k": "v"},
	}
	byType := map[string][]any{
		"string": {"", "x"}, "integer": {0.0, 1.0, 5.0, 2.5, 601.0}, "number": {0.0, 1.0, 2.5},
		"boolean": {true, false}, "array": pool[15:21], "object": {map[string]any{}, map[string]any{"k": "v"}},
	}
	tls := builtin.Builtins(tools.DefaultLimits())
	tls = append(tls, mustTool(t, "enum", map[string]any{
		"type": "object", "additionalProperties": false,
		"properties": map[string]any{"mode": map[string]any{"type": "string", "enum": []any{"a", "b"}}},
	}), mustTool(t, "untyped", map[string]any{
		"type":       "object",
		"properties": map[string]any{"n": map[string]any{"minimum": 5.0}},
	}), mustTool(t, "open object", map[string]any{
		"type": "object", "properties": map[string]any{"o": map[string]any{"type": "object", "additionalProperties": false}},
	}))
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tl := range tls {
		t.Run(tl.Name, func(t *testing.T) {
			res, err := tl.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			props, _ := tl.Schema["properties"].(map[string]any)
			names := make([]string, 0, len(props)+1)
			for k := range props {
				names = append(names, k)
			}
			sort.Strings(names)
			names = append(names, "unknownField")
			skipped := 0
			for range 3000 {
				args := map[string]any{}
				for _, k := range names {
					ps, _ := props[k].(map[string]any)
					switch typed := byType[tools.SchemaType(ps)]; {
					case rng.IntN(3) == 0: // absent
					case rng.IntN(2) == 0 && typed != nil: // the right kind, maybe out of range
						args[k] = typed[rng.IntN(len(typed))]
					default:
						args[k] = pool[rng.IntN(len(pool))]
					}
				}
				if tools.CheckObject("", args, tl.Schema) != "" || !tools.ChecksComplete(tl.Schema, args) {
					continue
				}
				skipped++
				if err := res.Validate(args); err != nil {
					t.Fatalf("validator skipped for %v, but it says: %v", args, err)
				}
			}
			if tl.Source == "core" && tl.Name != "edit" && skipped == 0 {
				t.Errorf("the validator was never skipped for %s: tools.ChecksComplete is too strict", tl.Name)
			}
		})
	}
}

// TestChecksComplete names the choices: which schema and argument shapes
// skip the validator.
func TestChecksComplete(t *testing.T) {
	read := builtin.NewRead(tools.DefaultLimits()).Schema
	edit := builtin.NewEdit().Schema
	tests := []struct {
		name   string
		schema map[string]any
		args   map[string]any
		want   bool
	}{
		{"read", read, map[string]any{"path": "a.go", "offset": 2.0}, true},
		{"read with a field Prepare added", read, map[string]any{"path": "a.go", "bogus": 1.0}, false},
		{"edit: minItems is checked by hand", edit, map[string]any{"path": "a", "edits": []any{}}, true},
		{"enum is the validator's", map[string]any{"type": "object", "properties": map[string]any{
			"m": map[string]any{"type": "string", "enum": []any{"a"}}}}, map[string]any{"m": "b"}, false},
		{"enum unreached by args", map[string]any{"type": "object", "properties": map[string]any{
			"m": map[string]any{"type": "string", "enum": []any{"a"}}}}, map[string]any{}, true},
		{"type union", map[string]any{"type": "object", "properties": map[string]any{
			"m": map[string]any{"type": []any{"string", "number"}}}}, map[string]any{"m": 1.0}, false},
		{"integer minimum", map[string]any{"type": "object", "properties": map[string]any{
			"m": map[string]any{"type": "integer", "minimum": 1}}}, map[string]any{"m": 0.0}, false},
		{"boolean schema", map[string]any{"type": "object", "properties": map[string]any{"m": false}}, map[string]any{"m": 1.0}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tools.ChecksComplete(tc.schema, tc.args); got != tc.want {
				t.Errorf("tools.ChecksComplete = %v, want %v", got, tc.want)
			}
		})
	}
}

func mustTool(t *testing.T, name string, schema map[string]any) *tools.Tool {
	t.Helper()
	tl, err := tools.NewTool(name, name, schema)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}
