package launcher

import (
	"reflect"
	"strings"
	"testing"
)

func TestPolicyRoundTripsThroughItsArgument(t *testing.T) {
	in := Policy{Write: []string{"/w"}, ReadOnly: []string{"/w/.git/hooks"}, Pin: []string{"/w/.git"}, DenyDirs: []string{"/h/.ssh"}, DenyFiles: []string{"/h/.netrc"}, Blank: "/t/blank", Proxy: "/t/px.sock", Dir: "/w"}
	js, err := in.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(js)
	if err != nil {
		t.Fatal(err)
	}
	in.Format = Format
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("decoded %+v, want %+v", out, in)
	}
}

// A launcher of another build must not run a command under a policy it
// reads differently: a field it does not know (a restriction added
// since) or another format is refused, never ignored.
func TestPolicyOfAnotherBuildIsRefused(t *testing.T) {
	good, err := Policy{Dir: "/w"}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ arg, want string }{
		"unknown field":  {strings.Replace(good, `{`, `{"denyNetwork":true,`, 1), `unknown field "denyNetwork"`},
		"other format":   {strings.Replace(good, `"format":1`, `"format":2`, 1), "different builds"},
		"no format":      {`{"write":[],"dir":"/w"}`, "policy format 0"},
		"trailing data":  {good + `{}`, "trailing data"},
		"not JSON":       {"write=/", "policy:"},
		"wrong type":     {strings.Replace(good, `"dir":"/w"`, `"dir":["/w"]`, 1), "policy:"},
		"empty argument": {"", "policy:"},
	} {
		t.Run(name, func(t *testing.T) {
			if c.arg == good {
				t.Fatalf("the case did not change the policy: %s", good)
			}
			_, err := Decode(c.arg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Decode(%s) = %v, want an error with %q", c.arg, err, c.want)
			}
		})
	}
}
