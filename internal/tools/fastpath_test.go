package tools_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/internal/tools/builtin"
)

type flatInput struct {
	Path    string  `json:"path"`
	N       int     `json:"n,omitzero"`
	Big     int64   `json:"big,omitempty"`
	On      bool    `json:"on"`
	F       float64 `json:"f"`
	Renamed string
	Skip    string `json:"-"`
	//lint:ignore U1000 there to show that json, and so the decoder, ignores unexported fields
	hidden string
}

// TestFlatDecoderMatchesRoundTrip: whenever the flat decoder takes the
// arguments, it gives exactly what the json.Marshal → json.Unmarshal round
// trip gives, and it takes the arguments a read call sends.
func TestFlatDecoderMatchesRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		args map[string]any
		fast bool
	}{
		{"empty", map[string]any{}, true},
		{"read call", map[string]any{"path": "a.txt"}, true},
		{"all kinds", map[string]any{"path": "été/日本.go", "n": 20.0, "big": -9007199254740992.0, "on": true, "f": 1.5, "Renamed": "<&>"}, true},
		{"negative zero", map[string]any{"n": math.Copysign(0, -1), "f": math.Copysign(0, -1)}, true},
		{"fraction for an int", map[string]any{"n": 1.5}, false},
		{"int beyond 2^53", map[string]any{"n": 1e17}, false},
		{"int beyond int64", map[string]any{"big": 1e21}, false},
		{"string for an int", map[string]any{"n": "3"}, false},
		{"number for a string", map[string]any{"path": 3.0}, false},
		{"string for a bool", map[string]any{"on": "true"}, false},
		{"null", map[string]any{"path": nil}, false},
		{"invalid UTF-8", map[string]any{"path": "a\xffb"}, false},
		{"other case", map[string]any{"PATH": "a"}, false},
		{"skipped field", map[string]any{"Skip": "a"}, false},
		{"unknown field", map[string]any{"extra": "a"}, false},
		{"object for a string", map[string]any{"path": map[string]any{}}, false},
	}
	d := tools.NewFlatDecoder(reflect.TypeFor[flatInput]())
	if d == nil {
		t.Fatal("no flat decoder for a struct of scalars")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var fast flatInput
			ok := d.Decode(tc.args, reflect.ValueOf(&fast).Elem())
			if ok != tc.fast {
				t.Fatalf("fast path taken = %v, want %v", ok, tc.fast)
			}
			b, err := json.Marshal(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			var slow flatInput
			slowErr := json.Unmarshal(b, &slow)
			if ok && (slowErr != nil || !reflect.DeepEqual(fast, slow) || math.Signbit(fast.F) != math.Signbit(slow.F)) {
				t.Errorf("fast %+v, round trip %+v (err %v)", fast, slow, slowErr)
			}
		})
	}
}

func TestNewFlatDecoder(t *testing.T) {
	type withSlice struct {
		Paths []string `json:"paths"`
	}
	type withString struct {
		N int `json:"n,string"`
	}
	type embedded struct{ flatInput }
	type dashName struct {
		A string `json:"-,"`
	}
	tests := []struct {
		name string
		t    reflect.Type
		want bool
	}{
		{"read input", tools.InputType(builtin.NewRead(tools.DefaultLimits())), true},
		{"scalars", reflect.TypeFor[flatInput](), true},
		{"slice field", reflect.TypeFor[withSlice](), false},
		{"string option", reflect.TypeFor[withString](), false},
		{"embedded struct", reflect.TypeFor[embedded](), false},
		{"field named -", reflect.TypeFor[dashName](), false},
		{"map", reflect.TypeFor[map[string]any](), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tools.NewFlatDecoder(tc.t) != nil; got != tc.want {
				t.Errorf("flat decoder = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestReadDecodeFastAndSlow: the read tool decodes the same input whichever
// path its arguments take.
func TestReadDecodeFastAndSlow(t *testing.T) {
	tl := builtin.NewRead(tools.DefaultLimits())
	for _, args := range []map[string]any{
		{"path": "a.txt", "offset": 3.0, "limit": 10.0},
		{"path": "a.txt", "offset": 2.5}, // round trip: an error
		{"path": "a\xffb"},               // round trip: U+FFFD
	} {
		got, gotErr := tl.Decode(args)
		b, _ := json.Marshal(args)
		want := reflect.New(tools.InputType(tl)) // read's input, which this package cannot name
		wantErr := json.Unmarshal(b, want.Interface())
		if (gotErr != nil) != (wantErr != nil) || gotErr == nil && got != want.Elem().Interface() {
			t.Errorf("decode(%v) = %+v, %v; want %+v, %v", args, got, gotErr, want, wantErr)
		}
	}
}

// masker hides "SECRET" (and counts it) for the governance tests.
type secretMasker struct{}

func (secretMasker) Mask(s string) (string, map[string]int) {
	n := strings.Count(s, "SECRET")
	if n == 0 {
		return s, nil
	}
	return strings.ReplaceAll(s, "SECRET", "[REDACTED]"), map[string]int{"test": n}
}

// TestMaskTreeMatchesMaskValue: the copy-on-change walk govern uses gives
// the values and counts of the copying walk, and leaves its input alone.
func TestMaskTreeMatchesMaskValue(t *testing.T) {
	tests := []struct {
		name    string
		details func() map[string]any
		changed bool
	}{
		{"read details", func() map[string]any {
			return map[string]any{"fromLine": 1, "toLine": 2, "totalLines": 2, "durationMs": 0.1}
		}, false},
		{"secret in a string", func() map[string]any { return map[string]any{"path": "a SECRET b", "n": 1} }, true},
		{"secret deep", func() map[string]any {
			return map[string]any{"x": map[string]any{"y": []any{"ok", map[string]any{"z": "SECRET SECRET"}}}, "keep": []any{"a"}}
		}, true},
		{"secret in []string", func() map[string]any { return map[string]any{"normalized": []string{"a", "SECRET"}} }, true},
		{"no secret, nested", func() map[string]any {
			return map[string]any{"normalized": []string{"a → b"}, "perm": map[string]any{"rule": "r"}, "l": []any{1.0}}
		}, false},
		{"nil containers", func() map[string]any {
			return map[string]any{"m": map[string]any(nil), "a": []any(nil), "s": []string(nil)}
		}, true},
		{"typed values without secrets kept", func() map[string]any {
			return map[string]any{"redactions": map[string]int{"SECRET": 1}, "ss": map[string]string{"k": "ok"}}
		}, false},
		// A typed value (LSP TextEdits, diagnostics) is masked in its JSON
		// form: what leaves the server must not carry the secret.
		{"typed values with secrets masked", func() map[string]any {
			return map[string]any{"ss": map[string]string{"k": "SECRET"}, "edits": []struct{ NewText string }{{"x SECRET"}}}
		}, true},
	}
	x := &tools.Executor{Masker: secretMasker{}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.details()
			want, wantCounts := x.MaskValueCounted(tc.details())
			var counts map[string]int
			got, changed := x.MaskTree(in, &counts)
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("maskTree = %#v\nmaskValue = %#v", got, want)
			}
			if len(counts) != len(wantCounts) || !reflect.DeepEqual(counts, wantCounts) && len(counts) > 0 {
				t.Errorf("counts = %v, want %v", counts, wantCounts)
			}
			if !reflect.DeepEqual(in, tc.details()) {
				t.Errorf("input modified: %#v", in)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			if string(gj) != string(wj) {
				t.Errorf("JSON %s, want %s", gj, wj)
			}
		})
	}
}

// countingFS counts Resolve calls; the rest of ops.FS is not used.
type countingFS struct {
	ops.FS
	calls map[string]int
}

func (f *countingFS) Resolve(input string) (ops.Path, error) {
	f.calls[input]++
	if input == "bad" {
		return ops.Path{}, errors.New("outside")
	}
	return ops.Path{Rel: "r/" + input}, nil
}

func TestCallResolveOncePerInput(t *testing.T) {
	fsys := &countingFS{calls: map[string]int{}}
	c := &tools.Call{Env: &tools.Env{FS: fsys}}
	for _, in := range []string{"a", "b", "a", "bad", "c", "b", "bad", "a", "c"} {
		p, err := c.Resolve(in)
		if in == "bad" {
			if err == nil {
				t.Errorf("Resolve(bad) lost its error")
			}
			continue
		}
		if err != nil || p.Rel != "r/"+in {
			t.Errorf("Resolve(%s) = %v, %v", in, p.Rel, err)
		}
	}
	for in, n := range fsys.calls {
		if n != 1 {
			t.Errorf("%s resolved %d times, want once", in, n)
		}
	}
	if len(fsys.calls) != 4 {
		t.Errorf("resolved %v", fsys.calls)
	}
}
