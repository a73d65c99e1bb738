package secrets

// MaskValue masks every string inside a JSON-like value (string,
// map[string]any, []any, map[string]string, []string, nested freely) and
// returns the masked value with the counts per kind (nil when nothing was
// masked). Map keys and other types are kept as they are. The input is never
// modified: a map or slice is copied only when something inside it changed.
func (m *Masker) MaskValue(v any) (any, map[string]int) {
	var counts map[string]int
	out, _ := m.maskValue(v, &counts)
	return out, counts
}

// maskValue returns the masked value and whether it differs from v.
func (m *Masker) maskValue(v any, counts *map[string]int) (any, bool) {
	switch x := v.(type) {
	case string:
		return m.maskString(x, counts)
	case map[string]any:
		return maskMap(x, func(e any) (any, bool) { return m.maskValue(e, counts) })
	case []any:
		return maskSlice(x, func(e any) (any, bool) { return m.maskValue(e, counts) })
	case map[string]string:
		return maskMap(x, func(e string) (string, bool) { return m.maskString(e, counts) })
	case []string:
		return maskSlice(x, func(e string) (string, bool) { return m.maskString(e, counts) })
	}
	return v, false
}

func maskMap[V any](x map[string]V, f func(V) (V, bool)) (map[string]V, bool) {
	var out map[string]V
	for k, e := range x {
		me, changed := f(e)
		if !changed {
			continue
		}
		if out == nil {
			out = make(map[string]V, len(x))
			for k2, e2 := range x {
				out[k2] = e2
			}
		}
		out[k] = me
	}
	if out == nil {
		return x, false
	}
	return out, true
}

func maskSlice[V any](x []V, f func(V) (V, bool)) ([]V, bool) {
	var out []V
	for i, e := range x {
		me, changed := f(e)
		if !changed {
			continue
		}
		if out == nil {
			out = append([]V(nil), x...)
		}
		out[i] = me
	}
	if out == nil {
		return x, false
	}
	return out, true
}

func (m *Masker) maskString(s string, counts *map[string]int) (string, bool) {
	out, c := m.Mask(s)
	if len(c) == 0 {
		return s, false
	}
	if *counts == nil {
		*counts = make(map[string]int, len(c))
	}
	for k, n := range c {
		(*counts)[k] += n
	}
	return out, true
}
