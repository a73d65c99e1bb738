package builtin

import (
	"bytes"
	"context"
	"time"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/overlay"
	"github.com/agentls/agentls/internal/textedit"
	"github.com/agentls/agentls/internal/tools"
)

// Files open in the editor (text document sync). While a file is open its
// document, unsaved edits included, is the truth: read shows it, and edit
// and write change it through the editor (workspace/applyEdit) when the
// client can take edits, so the user sees them in the buffer and decides
// when to save. A client that cannot gets its open files edited on disk
// only while the document has no unsaved changes.

// bufferSyncWait bounds how long an edit the editor applied waits for the
// didChange that reports it, so that the next edit checks against the
// document the editor now has.
const bufferSyncWait = 2 * time.Second

// readBuffer is read for a file open in the editor.
func readBuffer(c *tools.Call, p ops.Path, doc overlay.Doc, in readInput, l tools.Limits) tools.Result {
	var notes []string
	if disk, err := c.Env.FS.ReadFile(p); err != nil || !docEqualsDisk(doc.Text, disk) {
		notes = append(notes, c.Hintf("unsaved text from the editor; the file on disk, which {{bash}} and {{grep}} see, differs"))
	}
	text, masked := maskKeyLines(string(doc.Text))
	res := formatLines(p.Display(), text, in.Offset, in.Limit, notes, l, c.Masker(), c.Names())
	addKeyRedactions(&res, masked)
	res.SetDetail("editorVersion", doc.Version)
	if !res.IsError && c.Env.Guard != nil {
		c.Env.Guard.RecordBufferRead(p, doc.Text)
	}
	return res
}

// docEqualsDisk reports whether an editor's document shows the file's
// bytes: the same bytes, or the same text once a BOM is left out (editors
// keep a UTF-8 BOM out of the document) and UTF-16 is decoded.
func docEqualsDisk(doc, disk []byte) bool {
	return bytes.Equal(doc, disk) || bytes.Equal(doc, editguard.DocumentText(disk))
}

// diskBase is what a change that goes to disk starts from when the guard
// checked p's open document (checked): the file's own bytes, BOM and
// encoding included, when the document shows them (docEqualsDisk), so
// that the change keeps them and its write condition holds.
func diskBase(c *tools.Call, p ops.Path, checked []byte) []byte {
	if _, open := c.Env.Buffers.Get(p.OS()); !open {
		return checked
	}
	disk, err := c.Env.FS.ReadFile(p)
	if err != nil || bytes.Equal(disk, checked) || !docEqualsDisk(checked, disk) {
		return checked
	}
	return disk
}

// editorDoc returns the editor's document for p when changes to p go
// through the editor; unsaved is an error result when p is open in an
// editor that cannot take edits and its document differs from the disk.
func editorDoc(c *tools.Call, p ops.Path) (doc overlay.Doc, inEditor bool, unsaved *tools.Result) {
	doc, open := c.Env.Buffers.Get(p.OS())
	if !open {
		return doc, false, nil
	}
	if c.Env.Editor != nil {
		return doc, true, nil
	}
	if disk, err := c.Env.FS.ReadFile(p); err == nil && docEqualsDisk(doc.Text, disk) {
		return doc, false, nil
	}
	// The document may be the one behind: a change on disk the editor has
	// not loaded yet looks the same from here as unsaved typing.
	r := c.Errorf("%s is open in the editor and its text there differs from the file on disk (unsaved changes, or a change on disk the editor has not loaded yet), and this editor cannot take edits into its buffers; save or revert it there (revert keeps what is on disk), {{read}} it again, then retry. Nothing was changed.", p.Display())
	return doc, false, &r
}

// applyInEditor changes the editor's document p from old (the text the
// guard checked) to new, and waits for the editor to report the change. A
// non-nil refusal is the result to return. saved says whether the file on
// disk now holds new too: editors save a document the edit found clean
// (the VS Code and Neovim clients do), and leave unsaved work unsaved.
func applyInEditor(ctx context.Context, c *tools.Call, p ops.Path, old, new []byte, label string) (saved bool, refusal *tools.Result, err error) {
	doc, open := c.Env.Buffers.Get(p.OS())
	if !open || !bytes.Equal(doc.Text, old) {
		r := c.Errorf("%s changed in the editor while the edit was prepared; {{read}} it again and retry. Nothing was changed.", p.Display())
		return false, &r, nil
	}
	// Sending the edit is the commit: the editor may apply it at once.
	if err := tools.MayCommit(ctx); err != nil {
		return false, nil, err
	}
	applied, reason, err := c.Env.Editor.ApplyEdit(ctx, label, doc, textedit.TextEdits(old, new))
	if err != nil {
		if ctx.Err() != nil {
			return false, nil, ctx.Err()
		}
		r := tools.Errorf("the editor did not take the change to %s (%v); nothing was changed.", p.Display(), err)
		return false, &r, nil
	}
	if !applied {
		why := ""
		if reason != "" {
			why = ": " + reason
		}
		r := tools.Errorf("the editor refused the change to %s%s; nothing was changed. Read it again and retry.", p.Display(), why)
		return false, &r, nil
	}
	c.Env.Guard.WroteBuffer(p, new)
	wait, cancel := context.WithTimeout(ctx, bufferSyncWait)
	defer cancel()
	if !c.Env.Buffers.WaitFor(wait, p.OS(), func(text []byte) bool { return bytes.Equal(text, new) }) && ctx.Err() == nil && c.Env.Log != nil {
		c.Env.Log.Debug("the editor applied an edit but did not report the new text", "path", p.Display())
	}
	disk, err := c.Env.FS.ReadFile(p)
	return err == nil && bytes.Equal(disk, new), nil, nil
}

// inEditorNote tells the model where a change applied in the editor is.
func inEditorNote(saved bool, names mention.Prefix) string {
	if saved {
		return " in the editor (saved)"
	}
	return names.Render(" in the editor (unsaved; {{bash}} and {{grep}} see the file on disk until it is saved)")
}

// derefResult is *r, or the zero Result for nil (an error is returned instead).
func derefResult(r *tools.Result) tools.Result {
	if r == nil {
		return tools.Result{}
	}
	return *r
}
