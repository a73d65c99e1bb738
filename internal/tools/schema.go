package tools

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// cleanSchema turns the generator's schema into a plain map every model API
// accepts: ["null","array"] unions become "array", and no $ref or $defs.
// The map holds what json.Unmarshal would give (float64 numbers, []any
// arrays). Schemas made only of the keywords schemaValue knows are converted
// directly; anything else takes the JSON round trip, the reference.
func cleanSchema(s *jsonschema.Schema) (map[string]any, error) {
	if v, ok := schemaValue(s); ok {
		if m, ok := v.(map[string]any); ok {
			return m, nil
		}
	}
	return cleanSchemaJSON(s)
}

// cleanSchemaJSON is cleanSchema by marshalling the schema and walking the
// decoded value. It costs ~50 µs a tool at startup; cleanSchema uses it only
// for keywords the direct conversion does not know.
func cleanSchemaJSON(s *jsonschema.Schema) (map[string]any, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ts, ok := x["type"].([]any); ok {
				x["type"] = dropNull(ts)
			}
			delete(x, "$schema")
			for _, v := range x {
				walk(v)
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	walk(m)
	return m, nil
}

// dropNull removes "null" from a type union: one type left is returned
// alone, otherwise the rest as a list (nil when nothing is left).
func dropNull(ts []any) any {
	var keep []any
	for _, t := range ts {
		if t != "null" {
			keep = append(keep, t)
		}
	}
	if len(keep) == 1 {
		return keep[0]
	}
	return keep
}

// schemaValue converts s to the value cleanSchemaJSON would produce for it:
// a map, or true/false for the schemas JSON writes that way. It knows the
// keywords jsonschema.For sets for plain structs, slices, maps and scalars;
// ok is false when s uses any other, or a case whose JSON it does not mirror.
func schemaValue(s *jsonschema.Schema) (v any, ok bool) {
	if s == nil {
		return nil, false
	}
	// Everything but the known keywords must be unset.
	rest := *s
	rest.Type, rest.Types, rest.Description = "", nil, ""
	rest.Properties, rest.PropertyOrder, rest.Required = nil, nil, nil
	rest.Items, rest.AdditionalProperties, rest.Not = nil, nil, nil
	rest.Minimum, rest.Maximum, rest.MinItems, rest.MaxItems = nil, nil, nil, nil
	if !reflect.ValueOf(rest).IsZero() {
		return nil, false
	}
	if s.Not != nil {
		// {"not": {}} is written false; any other "not" is left to JSON.
		only := *s
		only.Not, only.PropertyOrder = nil, nil // PropertyOrder is never written
		if empty, ok := schemaValue(s.Not); ok && empty == true && reflect.ValueOf(only).IsZero() {
			return false, true
		}
		return nil, false
	}
	m := map[string]any{}
	switch {
	case s.Type != "" && s.Types != nil:
		return nil, false // the library refuses to marshal both
	case s.Type != "":
		m["type"] = s.Type
	case len(s.Types) > 0:
		ts := make([]any, len(s.Types))
		for i, t := range s.Types {
			ts[i] = t
		}
		m["type"] = dropNull(ts)
	case s.Types != nil:
		return nil, false // an empty list, written [] and cleaned to null
	}
	if s.Description != "" {
		m["description"] = s.Description
	}
	if s.Properties != nil {
		props := make(map[string]any, len(s.Properties))
		for name, p := range s.Properties {
			pv, ok := schemaValue(p)
			if !ok || name == "$schema" { // the JSON walk would delete that property
				return nil, false
			}
			props[name] = pv
		}
		m["properties"] = props
	}
	if len(s.Required) > 0 {
		req := make([]any, len(s.Required))
		for i, r := range s.Required {
			req[i] = r
		}
		m["required"] = req
	}
	for _, sub := range [...]struct {
		key string
		s   *jsonschema.Schema
	}{{"items", s.Items}, {"additionalProperties", s.AdditionalProperties}} {
		if sub.s == nil {
			continue
		}
		sv, ok := schemaValue(sub.s)
		if !ok {
			return nil, false
		}
		m[sub.key] = sv
	}
	if s.Minimum != nil {
		m["minimum"] = *s.Minimum
	}
	if s.Maximum != nil {
		m["maximum"] = *s.Maximum
	}
	if s.MinItems != nil {
		m["minItems"] = float64(*s.MinItems)
	}
	if s.MaxItems != nil {
		m["maxItems"] = float64(*s.MaxItems)
	}
	if len(m) == 0 {
		return true, true // {} is written true
	}
	return m, true
}

// resolveSchema resolves a cleaned schema for validation.
func resolveSchema(name string, schema map[string]any) (*jsonschema.Resolved, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("tool %s: schema: %w", name, err)
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(b, &js); err != nil {
		return nil, fmt.Errorf("tool %s: schema: %w", name, err)
	}
	res, err := js.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("tool %s: schema: %w", name, err)
	}
	return res, nil
}
