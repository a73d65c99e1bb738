package builtin

// prop returns the schema of a top-level property, for Tweak functions.
func prop(schema map[string]any, name string) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	if p == nil {
		p = map[string]any{}
	}
	return p
}
