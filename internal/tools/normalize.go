package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/agentls/agentls/internal/mention"
)

// Normalization records what the lenient input repair changed; it is
// reported in details.normalized and never an error by itself.
type Normalization struct {
	Changes []string
	// refusal, set by a tool's PrepareRaw, is an argument that cannot be
	// honoured and must not be dropped silently (it would change the
	// meaning): the call fails with it.
	refusal string
	// notices are told to the model with the result: an argument that was
	// ignored or mapped where the model could not otherwise know.
	notices []string
	// sent is, for a field given under another name, the name the model
	// used, so that a wrong value is reported under it.
	sent map[string]string
	// names renders the {{tool}} marks of notices and refusals for the
	// client (Env.Names); set by the executor before normalizing.
	names mention.Prefix
}

// Notice tells the model msg alongside the result; {{tool}} marks in
// format are rendered for the client.
func (n *Normalization) Notice(format string, args ...any) {
	n.notices = append(n.notices, n.names.Sprintf(format, args...))
}

// harmlessExtras are fields models add to every call that carry no
// argument (a note about why they call): dropped without telling them.
var harmlessExtras = map[string]bool{
	"description": true, "explanation": true, "reason": true, "reasoning": true, "thought": true,
	"thoughts": true, "intent": true, "purpose": true, "comment": true, "summary": true, "why": true,
	"goal": true, "rationale": true, "note": true, "toolCallId": true, "tool_call_id": true,
}

// namedIn rewrites msg (a validation message about canonical fields) to
// name the fields as the model sent them.
func (n *Normalization) namedIn(msg string) string {
	for canon, sent := range n.sent {
		if q := "`" + canon + "`"; strings.Contains(msg, q) {
			msg = strings.Replace(msg, q, "`"+sent+"` (taken as `"+canon+"`)", 1)
		}
	}
	return msg
}

// noticeText is the notices as lines to add to a result, or "".
func (n *Normalization) noticeText() string {
	if len(n.notices) == 0 {
		return ""
	}
	return "[" + strings.Join(n.notices, "]\n[") + "]"
}

// Refuse fails the call with msg (see refusal); the first refusal wins.
func (n *Normalization) Refuse(format string, args ...any) {
	if n.refusal == "" {
		n.refusal = n.names.Sprintf(format, args...)
	}
}

// Refused reports whether a PrepareRaw refused the call (Refuse).
func (n *Normalization) Refused() bool { return n.refusal != "" }

// refusalError is a PrepareRaw refusal: a complete sentence for the model,
// shown without the generic "send an object like" example.
type refusalError string

func (e refusalError) Error() string { return string(e) }

// Add records a repair in Changes (details.normalized).
func (n *Normalization) Add(format string, args ...any) {
	n.Changes = append(n.Changes, fmt.Sprintf(format, args...))
}

// commonAliases apply to every tool, at every object level, when the target
// field exists in the schema: the names models use from other agents' tools.
var commonAliases = map[string]string{
	"file_path": "path", "filePath": "path", "filepath": "path", "file": "path", "filename": "path", "file_name": "path",
	"old_string": "oldText", "oldString": "oldText", "old_str": "oldText", "old_text": "oldText", "old": "oldText",
	"new_string": "newText", "newString": "newText", "new_str": "newText", "new_text": "newText", "new": "newText",
	"replace_all": "replaceAll", "ignore_case": "ignoreCase", "case_insensitive": "ignoreCase", "dry_run": "dryRun",
	"cmd": "command", "timeout_seconds": "timeout", "directory": "path", "dir": "path",
	"include_ignored": "includeIgnored", "start_line": "offset", "line": "offset", "max_results": "limit",
	"text": "content", "contents": "content", "regex": "pattern", "query_string": "query",
	"absolute_path": "path", "dir_path": "path", "line_offset": "offset", "line_limit": "limit",
	"literal_text": "literal", "fixed_strings": "literal",
}

// wrapperKeys are where some clients nest the real arguments.
var wrapperKeys = []string{"input", "arguments", "parameters", "params", "args"}

// unwrap returns the object nested under a lone wrapper key the schema does
// not have ({"input": {...}}), parsing a JSON string there too.
func unwrap(obj map[string]any, schema map[string]any) (map[string]any, string, bool) {
	if len(obj) != 1 {
		return nil, "", false
	}
	props, _ := schema["properties"].(map[string]any)
	for _, k := range wrapperKeys {
		v, ok := obj[k]
		if !ok || props[k] != nil {
			continue
		}
		if s, ok := v.(string); ok {
			var inner any
			if json.Unmarshal([]byte(s), &inner) == nil {
				v = inner
			}
		}
		if m, ok := v.(map[string]any); ok {
			return m, k, true
		}
	}
	return nil, "", false
}

// normalizeArgs repairs model-written arguments against schema: it accepts
// [] or null for an empty object, parses JSON strings where objects or arrays
// are expected, applies aliases, converts numeric strings and "true"/"false",
// and drops unknown fields. The returned map is fresh.
func normalizeArgs(raw json.RawMessage, schema map[string]any, aliases map[string]string, pre func(map[string]any, *Normalization), n *Normalization) (map[string]any, error) {
	var v any
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" || string(trimmed) == "[]" {
		v = map[string]any{}
	} else if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON (%v); send one JSON object", err)
	}
	if s, ok := v.(string); ok {
		var inner any
		if json.Unmarshal([]byte(s), &inner) == nil {
			n.Add("arguments: parsed the JSON string into an object")
			v = inner
		}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("arguments must be a JSON object, got %s; send one object", JSONKind(v))
	}
	if inner, key, ok := unwrap(obj, schema); ok {
		n.Add("arguments: took the object nested under %q", key)
		obj = inner
	}
	if pre != nil {
		pre(obj, n)
		if n.refusal != "" {
			return nil, refusalError(n.refusal)
		}
	}
	out := normalizeObject("", obj, schema, aliases, n)
	return out, nil
}

func normalizeObject(prefix string, obj map[string]any, schema map[string]any, aliases map[string]string, n *Normalization) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	out := make(map[string]any, len(obj))
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	// Canonical names first (pass 0), then the rest (pass 1), so an alias
	// never overwrites a field that was given under its real name.
	for pass := range 2 {
		for _, k := range keys {
			if _, canonical := props[k]; canonical != (pass == 0) {
				continue
			}
			normalizeField(prefix, k, obj[k], props, out, aliases, n)
		}
	}
	return out
}

// normalizeField stores the field k (value val) in out under its canonical
// name, coerced to its schema, or records why it was dropped.
func normalizeField(prefix, k string, val any, props, out map[string]any, aliases map[string]string, n *Normalization) {
	name := k
	if _, ok := props[name]; !ok {
		name = resolveAlias(k, props, aliases)
		if name == "" {
			n.Add("dropped unknown field %q", prefix+k)
			if !harmlessExtras[k] {
				n.Notice("ignored `%s`: not a field of this tool (fields: %s)", prefix+k, fieldList(props))
			}
			return
		}
		if _, dup := out[name]; dup {
			n.Add("dropped %q: %q was already given", prefix+k, prefix+name)
			n.Notice("ignored `%s`: `%s` was already given", prefix+k, prefix+name)
			return
		}
		n.Add("%s → %s", prefix+k, prefix+name)
		if n.sent == nil {
			n.sent = map[string]string{}
		}
		n.sent[prefix+name] = prefix + k
	}
	ps, _ := props[name].(map[string]any)
	out[name] = coerce(prefix+name, val, ps, aliases, n)
}

// resolveAlias finds the schema property k stands for: an explicit alias,
// a common alias, or the same name in another case style (ignore_case,
// IgnoreCase → ignoreCase).
func resolveAlias(k string, props map[string]any, aliases map[string]string) string {
	for _, table := range []map[string]string{aliases, commonAliases} {
		if t, ok := table[k]; ok {
			if _, exists := props[t]; exists {
				return t
			}
		}
	}
	fold := foldName(k)
	for p := range props {
		if foldName(p) == fold {
			return p
		}
	}
	return ""
}

// fieldList is the schema's field names, sorted, for a notice.
func fieldList(props map[string]any) string {
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func foldName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == '-' {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func schemaType(ps map[string]any) string {
	switch t := ps["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

func coerce(name string, val any, ps map[string]any, aliases map[string]string, n *Normalization) any {
	if ps == nil {
		return val
	}
	switch schemaType(ps) {
	case "integer", "number":
		if s, ok := val.(string); ok {
			s = strings.TrimSpace(s)
			if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				n.Add("%s: string %q → number", name, s)
				return f
			}
		}
	case "boolean":
		if s, ok := val.(string); ok {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "true":
				n.Add("%s: string %q → true", name, s)
				return true
			case "false":
				n.Add("%s: string %q → false", name, s)
				return false
			}
		}
	case "array":
		if s, ok := val.(string); ok && strings.HasPrefix(strings.TrimSpace(s), "[") {
			var arr []any
			if json.Unmarshal([]byte(s), &arr) == nil {
				n.Add("%s: parsed the JSON string into an array", name)
				val = arr
			}
		}
		if m, ok := val.(map[string]any); ok {
			n.Add("%s: wrapped a single object into an array", name)
			val = []any{m}
		}
		if arr, ok := val.([]any); ok {
			items, _ := ps["items"].(map[string]any)
			out := make([]any, len(arr))
			for i, x := range arr {
				out[i] = coerce(fmt.Sprintf("%s[%d]", name, i), x, items, aliases, n)
			}
			return out
		}
	case "object":
		if s, ok := val.(string); ok && strings.HasPrefix(strings.TrimSpace(s), "{") {
			var m map[string]any
			if json.Unmarshal([]byte(s), &m) == nil {
				n.Add("%s: parsed the JSON string into an object", name)
				val = m
			}
		}
		if arr, ok := val.([]any); ok && len(arr) == 0 {
			val = map[string]any{} // Lua's {} arrives as []
		}
		if m, ok := val.(map[string]any); ok {
			if _, hasProps := ps["properties"]; hasProps {
				return normalizeObject(name+".", m, ps, aliases, n)
			}
		}
	}
	return val
}

// JSONKind names v's JSON type for a message to the model (a string
// quoted, cut to 60 characters).
func JSONKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", TruncateRunes(x, 60))
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// TruncateRunes cuts s to n characters, marking the cut with "…".
func TruncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}

// Truthy reports a raw argument that means true (as normalization would
// read it: true, "true", "True", "yes", 1).
func Truthy(v any) bool {
	b, ok := boolish(v)
	return ok && b
}

// Falsy reports a raw argument that means false.
func Falsy(v any) bool {
	b, ok := boolish(v)
	return ok && !b
}

// boolish reads v as a boolean the way a model may write one.
func boolish(v any) (value, ok bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "1":
			return true, true
		case "false", "no", "0":
			return false, true
		}
	case float64:
		if x == 0 || x == 1 {
			return x == 1, true
		}
	}
	return false, false
}
