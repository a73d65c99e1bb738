package rpc

import (
	"bytes"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
)

// codec marshals payloads with encoding/json, which coerces invalid UTF-8
// to U+FFFD instead of failing (the json/v2 default codec refuses such
// strings, turning a Latin-1 file into an internal error), and does not
// escape HTML, as the jsonrpc2 Codec contract requires.
type codec struct{}

func (codec) Marshal(v any) ([]byte, error) {
	switch x := v.(type) {
	case jsonrpc2.RawMessage:
		return x, nil
	case json.RawMessage:
		return x, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func (codec) Unmarshal(data []byte, v any) error {
	switch x := v.(type) {
	case *jsonrpc2.RawMessage:
		*x = append((*x)[:0], data...)
		return nil
	case *json.RawMessage:
		*x = append((*x)[:0], data...)
		return nil
	}
	return json.Unmarshal(data, v)
}

// decodeParams decodes request params leniently: absent, null and [] (how
// Lua clients encode an empty table) all mean an empty object.
func decodeParams(raw []byte, v any) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" || string(t) == "[]" {
		return nil
	}
	if err := json.Unmarshal(t, v); err != nil {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params: %v", err)
	}
	return nil
}
