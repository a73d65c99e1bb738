package tools

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
)

type writeInput struct {
	Path    string `json:"path" jsonschema:"file to create or replace, relative to the workspace root"`
	Content string `json:"content" jsonschema:"the complete new content of the file"`
}

var writeDescription = fmt.Sprintf(`Create a file, or replace a whole file's content.

When to use: to create a new file, or to rewrite a file completely. To change part of a file use {{edit}} (it is safer and shows a smaller diff); do not use {{bash}} echo or cat with redirection.

Parameters: path (parent directories are created); content is the complete file content.

Output: one line saying whether the file was created or replaced, with its line count and size. Inside an editor whose language servers check the file, the errors and warnings that appeared with the change follow (up to %d) — fix them next.

Errors: replacing an existing file needs a read of it in this session and no change since (read it first); a new file is created exclusively, so a file that appeared meanwhile is not overwritten; a path that is a directory is refused; content over %d MiB, or replacing a file over %d MiB, is refused — write big files with {{bash}}, in parts.`, MaxDiagnostics, MaxChangeBytes>>20, MaxChangeBytes>>20)

// NewWrite returns the write tool.
func NewWrite() *Tool {
	return Define(Spec[writeInput]{
		Name:        "write",
		Description: writeDescription,
		Labels: func(in writeInput) Labels {
			return Labels{Key: "file:" + path.Clean(in.Path)}
		},
		Run: withDiagnostics(runWrite),
	})
}

func runWrite(ctx context.Context, c *Call, in writeInput) (Result, error) {
	p, inEditor, unlock, refusal, err := lockForChange(ctx, c, in.Path, "writing")
	if err != nil {
		return Result{}, err
	}
	if refusal != nil {
		return *refusal, nil
	}
	defer unlock()
	if r := tooBigToChange(p, "write", int64(len(in.Content)), true); r != nil {
		return *r, nil
	}
	content := []byte(in.Content)
	if inEditor {
		return replaceInEditor(ctx, c, p, content)
	}
	fi, err := c.Env.FS.Stat(p)
	switch {
	case err == nil && fi.IsDir():
		return Errorf("%s is a directory; give a file path.", p.Display()), nil
	case err == nil:
		if r := refuseWriteProtected(p, fi); r != nil {
			return *r, nil
		}
		if r := tooBigToChange(p, "write", fi.Size(), false); r != nil {
			return *r, nil
		}
		old, err := c.Env.Guard.CheckRead(p)
		if err != nil {
			return Errorf("%v", err), nil
		}
		old = diskBase(c, p, old)
		if bytes.Equal(old, content) {
			return Errorf("no change: %s already has exactly this content.", p.Display()), nil
		}
		if r := refuseCopiedContent(p, old, in.Content); r != nil {
			return *r, nil
		}
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		c.diagnosticsBefore(ctx, p, true)
		if r, err := commitWrite(ctx, c, p, old, content, fi.Mode().Perm()); r != nil || err != nil {
			return derefResult(r), err
		}
		details := ChangeDetails("write", p, old, content)
		c.Reporter.Details(details)
		r := Text(fmt.Sprintf("Replaced %s: %s, %d bytes (was %s).", p.Display(), plural(lineCount(content), "line"), len(content), plural(lineCount(old), "line")))
		r.Details = details
		return r, nil
	case !errors.Is(err, fs.ErrNotExist):
		return Errorf("cannot write %s: %v", p.Display(), err), nil
	}
	if r := refuseCopiedContent(p, nil, in.Content); r != nil {
		return *r, nil
	}
	made := missingDirs(c.Env.FS, p)
	if len(made) > 0 {
		if err := c.Env.FS.MkdirAll(made[len(made)-1], 0o755); err != nil {
			return Errorf("cannot create the directories of %s: %s. Nothing was changed.", p.Display(), writeFailure(p, err)), nil
		}
	}
	c.diagnosticsBefore(ctx, p, false)
	if err := c.Env.FS.CreateFile(p, content, 0o644, func() error { return mayCommit(ctx) }); err != nil {
		// A write that did not happen leaves no directories behind either
		// (-32800 means nothing changed); one something else has put a
		// file in meanwhile is not empty, and stays.
		for i := len(made) - 1; i >= 0; i-- {
			c.Env.FS.Remove(made[i])
		}
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return Result{}, cmp.Or(ctx.Err(), err)
		}
		if errors.Is(err, fs.ErrExist) {
			return Errorf("%s appeared while writing; read it, then write again.", p.Display()), nil
		}
		return Errorf("cannot create %s: %s. Nothing was changed.", p.Display(), writeFailure(p, err)), nil
	}
	c.Env.Guard.Wrote(p, content)
	details := ChangeDetails("create", p, nil, content)
	c.Reporter.Details(details)
	r := Text(fmt.Sprintf("Created %s: %s, %d bytes.", p.Display(), plural(lineCount(content), "line"), len(content)))
	r.Details = details
	return r, nil
}

// missingDirs returns the directories above p that do not exist yet,
// outermost first: what creating p creates along with it.
func missingDirs(fsys ops.FS, p ops.Path) []ops.Path {
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
func replaceInEditor(ctx context.Context, c *Call, p ops.Path, content []byte) (Result, error) {
	old, err := c.Env.Guard.CheckRead(p)
	if err != nil {
		return Errorf("%v", err), nil
	}
	if bytes.Equal(old, content) {
		return Errorf("no change: %s already has exactly this content.", p.Display()), nil
	}
	if r := refuseCopiedContent(p, old, string(content)); r != nil {
		return *r, nil
	}
	c.diagnosticsBefore(ctx, p, true)
	saved, refusal, err := applyInEditor(ctx, c, p, old, content, "agentls: write "+p.Display())
	if refusal != nil || err != nil {
		return derefResult(refusal), err
	}
	details := ChangeDetails("write", p, old, content)
	details["inEditor"], details["saved"] = true, saved
	c.Reporter.Details(details)
	r := Text(fmt.Sprintf("Replaced %s%s: %s, %d bytes (was %s).", p.Display(), inEditorNote(saved), plural(lineCount(content), "line"), len(content), plural(lineCount(old), "line")))
	r.Details = details
	return r, nil
}

func lineCount(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	n := bytes.Count(b, []byte("\n"))
	if b[len(b)-1] != '\n' {
		n++
	}
	return n
}
