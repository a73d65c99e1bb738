package builtin

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/textedit"
	"github.com/agentls/agentls/internal/tools"
)

type writeInput struct {
	Path    string `json:"path" jsonschema:"file to create or replace, relative to the workspace root"`
	Content string `json:"content" jsonschema:"the complete new content of the file"`
}

var writeDescription = fmt.Sprintf(`Create a file, or replace a whole file's content.

When to use: to create a new file, or to rewrite a file completely. To change part of a file use {{edit}} (it is safer and shows a smaller diff); do not use {{bash}} echo or cat with redirection.

Parameters: path (parent directories are created); content is the complete file content.

Output: one line saying whether the file was created or replaced, with its line count and size. Inside an editor whose language servers check the file, the errors and warnings that appeared with the change follow (up to %d) — fix them next.

Errors: replacing an existing file needs a read of it in this session and no change since (read it first); a new file is created exclusively, so a file that appeared meanwhile is not overwritten; a path that is a directory is refused; content over %d MiB, or replacing a file over %d MiB, is refused — write big files with {{bash}}, in parts.`, tools.MaxDiagnostics, MaxChangeBytes>>20, MaxChangeBytes>>20)

// NewWrite returns the write tool.
func NewWrite() *tools.Tool {
	return tools.Define(tools.Spec[writeInput]{
		Name:        "write",
		Title:       "Write file",
		Description: writeDescription,
		Labels: func(in writeInput) tools.Labels {
			return tools.Labels{Key: "file:" + path.Clean(in.Path)}
		},
		Run:   tools.WithDiagnostics(runWrite),
		Check: planWrite,
	})
}

func runWrite(ctx context.Context, c *tools.Call, in writeInput) (tools.Result, error) {
	p, inEditor, unlock, refusal, err := lockForChange(ctx, c, in.Path, "writing")
	if err != nil {
		return tools.Result{}, err
	}
	if refusal != nil {
		return *refusal, nil
	}
	defer unlock()
	ch, refusal := checkWrite(c, p, inEditor, in)
	if refusal != nil {
		return *refusal, nil
	}
	content := []byte(in.Content)
	// The hashes of the details are computed while the file is written
	// (see runEdit).
	diff := textedit.Compare(ch.old, content)
	hashes := diff.HashesLater()
	defer hashes()
	if inEditor {
		return replaceInEditor(ctx, c, p, ch.old, content, diff, hashes)
	}
	if ch.exists {
		old := ch.old
		if err := ctx.Err(); err != nil {
			return tools.Result{}, err
		}
		c.DiagnosticsBefore(ctx, p, true)
		if r, err := commitWrite(ctx, c, p, old, content, ch.mode); r != nil || err != nil {
			return derefResult(r), err
		}
		details := changeDetails("write", p, old, content, diff)
		details["oldHash"], details["newHash"] = hashes()
		c.Reporter.Details(details)
		r := tools.Text(fmt.Sprintf("Replaced %s: %s, %d bytes (was %s).", p.Display(), plural(tools.LineCount(content), "line"), len(content), plural(tools.LineCount(old), "line")))
		r.Details = details
		return r, nil
	}
	made := missingDirs(c.Env.FS, p)
	if len(made) > 0 {
		if err := c.Env.FS.MkdirAll(made[len(made)-1], 0o755); err != nil {
			return tools.Errorf("cannot create the directories of %s: %s. Nothing was changed.", p.Display(), writeFailure(p, err)), nil
		}
	}
	c.DiagnosticsBefore(ctx, p, false)
	if err := c.Env.FS.CreateFile(p, content, 0o644, func() error { return tools.MayCommit(ctx) }); err != nil {
		// A write that did not happen leaves no directories behind either
		// (-32800 means nothing changed); one something else has put a
		// file in meanwhile is not empty, and stays.
		for i := len(made) - 1; i >= 0; i-- {
			c.Env.FS.Remove(made[i])
		}
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return tools.Result{}, cmp.Or(ctx.Err(), err)
		}
		if errors.Is(err, fs.ErrExist) {
			return c.Errorf("%s appeared while writing; {{read}} it, then {{write}} again.", p.Display()), nil
		}
		return tools.Errorf("cannot create %s: %s. Nothing was changed.", p.Display(), writeFailure(p, err)), nil
	}
	c.Env.Guard.Wrote(p, content)
	details := changeDetails("create", p, nil, content, diff)
	details["oldHash"], details["newHash"] = hashes()
	c.Reporter.Details(details)
	r := tools.Text(fmt.Sprintf("Created %s: %s, %d bytes.", p.Display(), plural(tools.LineCount(content), "line"), len(content)))
	r.Details = details
	return r, nil
}

// writeCheck is a write that passed its checks: whether the file exists,
// the content it replaces (nil for a new file) and its mode.
type writeCheck struct {
	exists bool
	old    []byte
	mode   fs.FileMode
}

// checkWrite runs every check of a write of p that changes nothing: the
// content fits, a file it replaces may be written, was read, is not stale
// and differs from the content.
func checkWrite(c *tools.Call, p ops.Path, inEditor bool, in writeInput) (writeCheck, *tools.Result) {
	refuse := func(r tools.Result) (writeCheck, *tools.Result) { return writeCheck{}, &r }
	if asked, ok := ops.TakenVariant(in.Path, p); ok {
		// The name asked for does not exist: writing the variant would
		// replace a file the model did not name, and creating the name
		// would put a look-alike beside it.
		// Quoted by hand: %q would escape U+00A0 and U+202F, and the name
		// must pass back as printed.
		return refuse(c.Errorf("\"%s\" does not exist, and \"%s\" differs from it only in spaces, quotes or Unicode form. Nothing was written: to replace that file, {{read}} it and {{write}} to its exact name \"%s\"; to make a new file, choose a name that does not look like it.", asked, p.Display(), p.Display()))
	}
	if r := tooBigToChange(p, "write", int64(len(in.Content)), true, c.Names()); r != nil {
		return writeCheck{}, r
	}
	if inEditor {
		old, err := c.Env.Guard.CheckRead(p)
		if err != nil {
			return refuse(guardRefusal(err, c.Names()))
		}
		if bytes.Equal(old, []byte(in.Content)) {
			return refuse(tools.Errorf("no change: %s already has exactly this content.", p.Display()))
		}
		if r := refuseCopiedContent(p, old, in.Content, c.Names()); r != nil {
			return writeCheck{}, r
		}
		return writeCheck{exists: true, old: old}, nil
	}
	fi, err := c.Env.FS.Stat(p)
	switch {
	case err == nil && fi.IsDir():
		return refuse(tools.Errorf("%s is a directory; give a file path.", p.Display()))
	case err == nil:
		if r := refuseWriteProtected(p, fi, c.Names()); r != nil {
			return writeCheck{}, r
		}
		if r := tooBigToChange(p, "write", fi.Size(), false, c.Names()); r != nil {
			return writeCheck{}, r
		}
		old, err := c.Env.Guard.CheckRead(p)
		if err != nil {
			return refuse(guardRefusal(err, c.Names()))
		}
		old = diskBase(c, p, old)
		if bytes.Equal(old, []byte(in.Content)) {
			return refuse(tools.Errorf("no change: %s already has exactly this content.", p.Display()))
		}
		if r := refuseCopiedContent(p, old, in.Content, c.Names()); r != nil {
			return writeCheck{}, r
		}
		return writeCheck{exists: true, old: old, mode: fi.Mode().Perm()}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return refuse(tools.Errorf("cannot write %s: %v", p.Display(), err))
	}
	if r := refuseCopiedContent(p, nil, in.Content, c.Names()); r != nil {
		return writeCheck{}, r
	}
	return writeCheck{}, nil
}

// planWrite is write's Check: the checks of runWrite without the lock,
// and the change it would make as the preview.
func planWrite(_ context.Context, c *tools.Call, in writeInput) (tools.Plan, *tools.Result) {
	p, inEditor, refusal := targetForChange(c, in.Path, "writing")
	if refusal != nil {
		return tools.Plan{}, refusal
	}
	ch, refusal := checkWrite(c, p, inEditor, in)
	if refusal != nil {
		return tools.Plan{}, refusal
	}
	if !ch.exists {
		return tools.Plan{Preview: ChangeDetails("create", p, nil, []byte(in.Content))}, nil
	}
	return tools.Plan{Preview: ChangeDetails("write", p, ch.old, []byte(in.Content))}, nil
}

// missingDirs returns the directories above p that do not exist yet,
// outermost first: what creating p creates along with it.
func missingDirs(fsys ops.Files, p ops.Path) []ops.Path {
	var missing []ops.Path
	for d := path.Dir(p.Rel); d != "."; d = path.Dir(d) {
		q := p
		q.Rel = d
		if _, err := fsys.Lstat(q); err == nil {
			break
		}
		missing = append(missing, q)
	}
	slices.Reverse(missing)
	return missing
}

// replaceInEditor is write for a file open in an editor that takes edits:
// the document's whole text is replaced in the editor.
// diff compares old and content; hashes waits for its hashes.
func replaceInEditor(ctx context.Context, c *tools.Call, p ops.Path, old, content []byte, diff textedit.Diff, hashes func() (string, string)) (tools.Result, error) {
	c.DiagnosticsBefore(ctx, p, true)
	saved, refusal, err := applyInEditor(ctx, c, p, old, content, "agentls: write "+p.Display())
	if refusal != nil || err != nil {
		return derefResult(refusal), err
	}
	details := changeDetails("write", p, old, content, diff)
	details["oldHash"], details["newHash"] = hashes()
	details["inEditor"], details["saved"] = true, saved
	c.Reporter.Details(details)
	r := tools.Text(fmt.Sprintf("Replaced %s%s: %s, %d bytes (was %s).", p.Display(), inEditorNote(saved, c.Names()), plural(tools.LineCount(content), "line"), len(content), plural(tools.LineCount(old), "line")))
	r.Details = details
	return r, nil
}
