package rpc

import (
	"encoding/json"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

func TestCancelID(t *testing.T) {
	cases := []struct {
		name, params string
		want         jsonrpc2.ID
		bad          bool
	}{
		{name: "small integer", params: `{"id":7}`, want: jsonrpc2.NewNumberID(7)},
		{name: "negative", params: `{"id":-3}`, want: jsonrpc2.NewNumberID(-3)},
		{name: "beyond int32", params: `{"id":2147483653}`, want: jsonrpc2.NewNumberID(2147483653)},
		{name: "beyond uint32", params: `{"id":1099511627783}`, want: jsonrpc2.NewNumberID(1099511627783)},
		{name: "integral float", params: `{"id":7.0}`, want: jsonrpc2.NewNumberID(7)},
		{name: "string", params: `{"id":"call-9"}`, want: jsonrpc2.NewStringID("call-9")},
		{name: "fraction", params: `{"id":1.5}`, bad: true},
		{name: "beyond int64", params: `{"id":99999999999999999999}`, bad: true},
		{name: "null", params: `{"id":null}`, bad: true},
		{name: "missing", params: `{}`, bad: true},
		{name: "object", params: `{"id":{}}`, bad: true},
		{name: "not an object", params: `[1]`, bad: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cancelID(json.RawMessage(tc.params))
			if tc.bad {
				if err == nil {
					t.Fatalf("cancelID(%s) = %v, want an error", tc.params, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("cancelID(%s) = %v, %v; want %v", tc.params, got, err, tc.want)
			}
		})
	}
}
