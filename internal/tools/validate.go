package tools

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/agentls/agentls/internal/mention"
)

// validate checks args against the tool's schema and returns a message for
// the model naming the field, what was received and what to send, or "".
// Common failures get hand-written messages; anything else falls through to
// the JSON Schema validator.
func (t *Tool) validate(args map[string]any, names mention.Prefix) string {
	if msg := checkObject("", args, t.Schema); msg != "" {
		return msg + "\n" + t.usage(names)
	}
	if checksComplete(t.Schema, args) {
		// checkObject enforced every keyword of this schema: the JSON
		// Schema validator (a fifth of a small read's CPU) would find
		// nothing more. TestChecksCompleteAgreesWithValidator holds the two
		// to the same verdicts.
		return ""
	}
	if t.resolve != nil {
		res, err := t.resolve()
		if err != nil {
			return fmt.Sprintf("%v (an agentls bug: the tool cannot validate its input)", err)
		}
		if err := res.Validate(args); err != nil {
			return fmt.Sprintf("invalid arguments for %s: %v\n%s", names.Of(t.Name), err, t.usage(names))
		}
	}
	return ""
}

// checksComplete reports whether checkObject's pass is the whole verdict
// for args: schema (and every subschema args reaches) uses only keywords
// checkObject enforces (a single "type", "properties", "required",
// "minimum", "maximum", "items") or that validate nothing ("description",
// "title", "default"), and where "additionalProperties" is false, args has
// no field outside "properties" (normalization drops them, but a tool's
// Prepare runs after it). Anything else goes to the JSON Schema validator.
// It walks the schema without allocating.
func checksComplete(schema map[string]any, args map[string]any) bool {
	if !simpleSchema(schema) {
		return false
	}
	props, _ := schema["properties"].(map[string]any)
	if schema["additionalProperties"] == false {
		for k := range args {
			if _, ok := props[k]; !ok {
				return false
			}
		}
	}
	for k, v := range args {
		ps, _ := props[k].(map[string]any)
		if !valueComplete(ps, v) {
			return false
		}
	}
	return true
}

// valueComplete is checksComplete for one value and its subschema (nil when
// the field has none: nothing to check).
func valueComplete(ps map[string]any, v any) bool {
	if ps == nil {
		return true
	}
	switch x := v.(type) {
	case map[string]any:
		return checksComplete(ps, x)
	case []any:
		if !simpleSchema(ps) {
			return false
		}
		items, _ := ps["items"].(map[string]any)
		for _, e := range x {
			if !valueComplete(items, e) {
				return false
			}
		}
		return true
	}
	return simpleSchema(ps)
}

// simpleSchema reports whether one schema level uses only the keywords
// checksComplete allows, each where checkValue enforces it: "minimum" and
// "maximum" (numbers) with a numeric "type", "items" with "array",
// "properties", "required" and "additionalProperties" with "object".
// Subschemas are judged where a value reaches them.
func simpleSchema(s map[string]any) bool {
	typ, _ := s["type"].(string)
	switch typ {
	case "string", "integer", "number", "boolean", "array", "object":
	default:
		return false // none (checkValue checks nothing), a union, or "null"
	}
	for k, v := range s {
		switch k {
		case "type", "description", "title", "default":
		case "minimum", "maximum":
			if _, ok := v.(float64); !ok || typ != "integer" && typ != "number" {
				return false
			}
		case "items":
			if _, ok := v.(map[string]any); !ok || typ != "array" {
				return false
			}
		case "minItems", "maxItems":
			if _, ok := v.(float64); !ok || typ != "array" {
				return false
			}
		case "required":
			if _, ok := v.([]any); !ok || typ != "object" {
				return false
			}
		case "additionalProperties":
			if _, ok := v.(bool); !ok || typ != "object" {
				return false
			}
		case "properties":
			m, ok := v.(map[string]any)
			if !ok || typ != "object" {
				return false
			}
			for _, ps := range m {
				if _, ok := ps.(map[string]any); !ok {
					return false // a true/false schema
				}
			}
		default:
			return false
		}
	}
	return true
}

func checkObject(prefix string, args map[string]any, schema map[string]any) string {
	props, _ := schema["properties"].(map[string]any)
	req, _ := schema["required"].([]any)
	for _, r := range req {
		name, _ := r.(string)
		if _, ok := args[name]; !ok {
			ps, _ := props[name].(map[string]any)
			return fmt.Sprintf("missing required field `%s` (%s)%s", prefix+name, typeWord(ps), describe(ps))
		}
	}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		ps, _ := props[k].(map[string]any)
		if msg := checkValue(prefix+k, args[k], ps); msg != "" {
			return msg
		}
	}
	return ""
}

func checkValue(name string, v any, ps map[string]any) string {
	if ps == nil {
		return ""
	}
	want := schemaType(ps)
	switch want {
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("`%s` must be a string, got %s%s", name, JSONKind(v), describe(ps))
		}
	case "integer", "number":
		f, ok := v.(float64)
		if !ok {
			return fmt.Sprintf("`%s` must be a number, got %s%s", name, JSONKind(v), describe(ps))
		}
		if want == "integer" && f != math.Trunc(f) {
			return fmt.Sprintf("`%s` must be a whole number, got %v", name, f)
		}
		// Beyond 2^53 a JSON number is no longer an exact integer, and
		// beyond int64 the handler's field cannot hold it.
		if want == "integer" && math.Abs(f) > maxExactInteger {
			low := -float64(maxExactInteger)
			if min, ok := ps["minimum"].(float64); ok {
				low = min
			}
			return fmt.Sprintf("`%s` is too large: got %v, send a whole number from %v to %d%s", name, f, low, int64(maxExactInteger), describe(ps))
		}
		if min, ok := ps["minimum"].(float64); ok && f < min {
			return fmt.Sprintf("`%s` must be %s≥ %v, got %v%s", name, titled(ps), min, f, describe(ps))
		}
		if max, ok := ps["maximum"].(float64); ok && f > max {
			return fmt.Sprintf("`%s` must be %s≤ %v, got %v%s", name, titled(ps), max, f, describe(ps))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("`%s` must be true or false, got %s", name, JSONKind(v))
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Sprintf("`%s` must be an array, got %s%s", name, JSONKind(v), describe(ps))
		}
		if min, ok := ps["minItems"].(float64); ok && float64(len(arr)) < min {
			if len(arr) == 0 {
				return fmt.Sprintf("`%s` must hold at least %v item(s), got an empty array%s", name, min, describe(ps))
			}
			return fmt.Sprintf("`%s` must hold at least %v items, got %d%s", name, min, len(arr), describe(ps))
		}
		if max, ok := ps["maxItems"].(float64); ok && float64(len(arr)) > max {
			return fmt.Sprintf("`%s` may hold at most %v items, got %d; split the call%s", name, max, len(arr), describe(ps))
		}
		items, _ := ps["items"].(map[string]any)
		for i, x := range arr {
			if msg := checkValue(fmt.Sprintf("%s[%d]", name, i), x, items); msg != "" {
				return msg
			}
		}
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("`%s` must be an object, got %s%s", name, JSONKind(v), describe(ps))
		}
		return checkObject(name+".", m, ps)
	}
	return ""
}

// maxExactInteger is the largest integer a JSON number (a float64) holds
// exactly: 2^53 - 1.
const maxExactInteger = 1<<53 - 1

func typeWord(ps map[string]any) string {
	t := schemaType(ps)
	switch t {
	case "":
		return "any value"
	case "array":
		if items, ok := ps["items"].(map[string]any); ok && schemaType(items) != "" {
			return "array of " + schemaType(items)
		}
	}
	return t
}

// titled is "a <title> " when the property has a title (a noun such as
// "line number"), so a range error names what the value is.
func titled(ps map[string]any) string {
	if t, ok := ps["title"].(string); ok && t != "" {
		return "a " + t + " "
	}
	return ""
}

func describe(ps map[string]any) string {
	if d, ok := ps["description"].(string); ok && d != "" {
		return ": " + d
	}
	return ""
}

// usage is a one-line reminder of the tool's fields, appended to input
// errors, naming the tool as the client's model sees it.
func (t *Tool) usage(names mention.Prefix) string {
	props, _ := t.Schema["properties"].(map[string]any)
	req := t.required()
	var parts []string
	for _, name := range t.propertyOrder() {
		ps, _ := props[name].(map[string]any)
		opt := "?"
		if req[name] {
			opt = ""
		}
		parts = append(parts, fmt.Sprintf("%s%s: %s", name, opt, typeWord(ps)))
	}
	return fmt.Sprintf("Usage: %s {%s}", names.Of(t.Name), strings.Join(parts, ", "))
}

// required is the set of t's required fields.
func (t *Tool) required() map[string]bool {
	req := map[string]bool{}
	if rs, ok := t.Schema["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				req[s] = true
			}
		}
	}
	return req
}

// example is a minimal argument object for t: its required fields with
// placeholder values, e.g. {"path": "…"}. It is valid JSON, so a model
// that copies it sends something that parses.
func (t *Tool) example() string {
	return exampleObject(t.Schema, t.propertyOrder())
}

// exampleObject is schema's required fields, in order, with placeholders.
func exampleObject(schema map[string]any, order []string) string {
	props, _ := schema["properties"].(map[string]any)
	req := map[string]bool{}
	if rs, ok := schema["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				req[s] = true
			}
		}
	}
	var parts []string
	for _, name := range order {
		if !req[name] {
			continue
		}
		ps, _ := props[name].(map[string]any)
		parts = append(parts, fmt.Sprintf("%q: %s", name, exampleValue(ps)))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// exampleValue is a placeholder of ps's type: "…", 1, true, an array of
// one example item, an object of its required fields.
func exampleValue(ps map[string]any) string {
	switch schemaType(ps) {
	case "integer", "number":
		return "1"
	case "boolean":
		return "true"
	case "array":
		items, _ := ps["items"].(map[string]any)
		if items == nil {
			return "[]"
		}
		return "[" + exampleValue(items) + "]"
	case "object":
		return exampleObject(ps, sortedProps(ps))
	}
	return `"…"`
}

func sortedProps(ps map[string]any) []string {
	props, _ := ps["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func (t *Tool) propertyOrder() []string {
	props, _ := t.Schema["properties"].(map[string]any)
	names := append([]string(nil), t.order...)
	if len(names) != len(props) {
		names = names[:0]
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
	}
	return names
}
