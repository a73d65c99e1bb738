package tools

import "strings"

// Content is one part of a result the model reads.
type Content struct {
	Type     string `json:"type"` // "text" | "image"
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"` // base64, for images
	MimeType string `json:"mimeType,omitempty"`
}

// Result is what a tool call returns. Content goes to the model; Details go
// to the editor and logs, never to the model.
type Result struct {
	CallID  string         `json:"callId"`
	Content []Content      `json:"content"`
	IsError bool           `json:"isError"`
	Details map[string]any `json:"details,omitempty"`
}

// Text returns a result holding one text part.
func Text(s string) Result { return Result{Content: []Content{{Type: "text", Text: s}}} }

// Errorf returns an isError result with a message for the model.
func Errorf(format string, args ...any) Result {
	r := Text(sprintf(format, args...))
	r.IsError = true
	return r
}

// TextOf concatenates the text parts (for CLIs, tests and logs).
func (r Result) TextOf() string {
	s := ""
	for _, c := range r.Content {
		if c.Type == "text" {
			if s != "" {
				s += "\n"
			}
			s += c.Text
		}
	}
	return s
}

func (r *Result) SetDetail(k string, v any) {
	if r.Details == nil {
		r.Details = map[string]any{}
	}
	r.Details[k] = v
}

// addNote appends a line to the result's last text part (or adds one), so
// the model reads it with the result.
func (r *Result) addNote(note string) {
	for i := len(r.Content) - 1; i >= 0; i-- {
		if r.Content[i].Type == "text" {
			if r.Content[i].Text != "" && !strings.HasSuffix(r.Content[i].Text, "\n") {
				r.Content[i].Text += "\n"
			}
			r.Content[i].Text += note
			return
		}
	}
	r.Content = append(r.Content, Content{Type: "text", Text: note})
}
