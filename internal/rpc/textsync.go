package rpc

import (
	"context"

	"go.lsp.dev/protocol"

	"github.com/agentls/agentls/internal/overlay"
	"github.com/agentls/agentls/internal/textedit"
)

// Text document sync (optional, docs/protocol.md): a client that sends
// didOpen/didChange/didClose makes its open documents the truth for read;
// with the applyEdit capability, edits of open documents go back to it
// through workspace/applyEdit (internal/tools/buffers.go).

// textDocumentSync is the initialize capability: open/close and
// incremental changes (LSP TextDocumentSyncKind.Incremental = 2).
func textDocumentSync() map[string]any {
	return map[string]any{"openClose": true, "change": 2}
}

type textDocumentItem struct {
	URI     string `json:"uri"`
	Version int32  `json:"version"`
	Text    string `json:"text"`
}

type didChangeParams struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int32  `json:"version"`
	} `json:"textDocument"`
	ContentChanges []struct {
		Range *textedit.Range `json:"range"`
		Text  string          `json:"text"`
	} `json:"contentChanges"`
}

// docPath maps an opened document's URI to the store's key, the real path
// the tools resolve to; ok=false for documents outside the workspace
// (ignored). Later notifications find the key by URI in the store.
func (s *Server) docPath(uri string) (string, bool) {
	path, err := uriToPath(uri)
	if err != nil {
		return "", false
	}
	p, err := s.session().FS.Resolve(path)
	if err != nil {
		return "", false
	}
	return p.OS(), true
}

// textDocument handles the sync notifications. Their errors are logged,
// never returned: a notification has no reply, and a document the store
// cannot follow is dropped (read falls back to the disk).
func (s *Server) textDocument(method string, raw []byte) error {
	docs := s.docs
	switch method {
	case "textDocument/didOpen":
		var p struct {
			TextDocument textDocumentItem `json:"textDocument"`
		}
		if err := decodeParams(raw, &p); err != nil {
			return err
		}
		if path, ok := s.docPath(p.TextDocument.URI); ok {
			docs.Open(path, p.TextDocument.URI, p.TextDocument.Version, p.TextDocument.Text)
		}
	case "textDocument/didChange":
		var p didChangeParams
		if err := decodeParams(raw, &p); err != nil {
			return err
		}
		path, ok := docs.PathOf(p.TextDocument.URI)
		if !ok {
			return nil // not opened, or outside the workspace
		}
		changes := make([]overlay.Change, len(p.ContentChanges))
		for i, c := range p.ContentChanges {
			changes[i] = overlay.Change{Range: c.Range, Text: c.Text}
		}
		if err := docs.Change(path, p.TextDocument.Version, changes); err != nil {
			s.logMessage(2, "agentls: "+err.Error())
		}
	case "textDocument/didClose":
		var p struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
		}
		if err := decodeParams(raw, &p); err != nil {
			return err
		}
		if path, ok := docs.PathOf(p.TextDocument.URI); ok {
			docs.Close(path)
		}
	}
	return nil
}

// applier sends edits of open documents to the client (workspace/applyEdit).
type applier struct{ s *Server }

func (a *applier) ApplyEdit(ctx context.Context, label string, doc overlay.Doc, edits []textedit.TextEdit) (bool, string, error) {
	params := map[string]any{
		"label": label,
		"edit": map[string]any{
			// Versioned, so the editor refuses edits computed against a text
			// it no longer has; changes for clients that know only those.
			"documentChanges": []any{map[string]any{
				"textDocument": map[string]any{"uri": doc.URI, "version": doc.Version},
				"edits":        edits,
			}},
			"changes": map[string]any{doc.URI: edits},
		},
	}
	var ans struct {
		Applied       bool   `json:"applied"`
		FailureReason string `json:"failureReason"`
	}
	if err := protocol.Call(ctx, a.s.conn, "workspace/applyEdit", params, &ans); err != nil {
		return false, "", err
	}
	return ans.Applied, ans.FailureReason, nil
}
