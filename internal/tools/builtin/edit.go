package builtin

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/textedit"
	"github.com/agentls/agentls/internal/tools"
)

type editItem struct {
	OldText    string `json:"oldText" jsonschema:"exact text to replace, as it is in the file (small but unique; include a line of context when it repeats)"`
	NewText    string `json:"newText" jsonschema:"replacement text"`
	ReplaceAll bool   `json:"replaceAll,omitzero" jsonschema:"replace every occurrence instead of requiring a unique match"`
}

type editInput struct {
	Path   string     `json:"path" jsonschema:"file to edit, relative to the workspace root; it must have been read in this session"`
	Edits  []editItem `json:"edits" jsonschema:"replacements, each matched against the original file; all apply or none"`
	DryRun bool       `json:"dryRun,omitzero" jsonschema:"compute and return the diff without writing"`
}

var editDescription = fmt.Sprintf(`Edit a file by replacing exact text. Every edit's oldText is matched against the original file (not after earlier edits), must match exactly once unless replaceAll is set, and edits must not overlap; all edits apply or none does.

When to use: to change part of an existing file. Read the file first (edit refuses files you have not read in this session, or that changed since you read them). To create a file or replace all of it use {{write}}; do not use {{bash}} sed.

Parameters: path; edits: [{oldText, newText, replaceAll?}]; dryRun returns the diff without writing. Keep oldText small but unique. Matching tolerates, in this order, different line endings, trailing whitespace, typographic quotes/dashes/non-breaking spaces, and indentation (the new text is re-indented); the level used is reported. Only the matched lines change: line endings, BOM, final newline and file mode are kept.

Output: one line naming the file, the number of replacements and the lines changed, plus a numbered snippet when fuzzy matching was used. Inside an editor whose language servers check the file, the errors and warnings that appeared with the change follow (up to %d) — fix them next.

Errors: no match shows the closest region with line numbers and visible whitespace — read the file again and retry; several matches list their line numbers (up to %d) — add context or set replaceAll; a stale file says what changed — read it again; a file over %d MiB is refused (edit holds it in memory several times) — change it with {{bash}} (sed -i) instead.`, tools.MaxDiagnostics, textedit.MaxListedOccurrences, MaxChangeBytes>>20)

// MaxChangeBytes bounds the files edit and write change (the old content
// and the new, each): both hold a file in memory several times (original,
// result, diff), so a bigger one is refused with a way around it rather
// than risking the process.
const MaxChangeBytes = 64 << 20

// tooBigToChange refuses a change of p whose old or new content is size
// bytes, over MaxChangeBytes; nil when it is within.
func tooBigToChange(p ops.Path, tool string, size int64, isContent bool, names mention.Prefix) *tools.Result {
	if size <= MaxChangeBytes {
		return nil
	}
	what := p.Display()
	if isContent {
		what = "the content for " + what
	}
	r := tools.ErrorIn(names, "%s is %d bytes (%s); %s changes files of up to %d MiB (it holds them in memory), so nothing was changed. Use {{bash}} instead (sed -i for a replacement, split or a script to rewrite it in parts).", what, size, humanBytes(size), names.Of(tool), MaxChangeBytes>>20)
	return &r
}

// NewEdit returns the edit tool.
func NewEdit() *tools.Tool {
	return tools.Define(tools.Spec[editInput]{
		Name:        "edit",
		Title:       "Edit file",
		Description: editDescription,
		Labels: func(in editInput) tools.Labels {
			return tools.Labels{ReadOnly: in.DryRun, ConcurrencySafe: in.DryRun, Key: "file:" + strings.TrimPrefix(in.Path, "./")}
		},
		PrepareRaw: wrapLegacyEdit,
		Tweak: func(s map[string]any) {
			prop(s, "edits")["minItems"] = 1.0
		},
		Run:   tools.WithDiagnostics(runEdit),
		Check: planEdit,
	})
}

// wrapLegacyEdit turns {path, oldText, newText} (and other agents' names for
// them) into {path, edits: [{…}]}.
func wrapLegacyEdit(args map[string]any, n *tools.Normalization) {
	if _, ok := args["edits"]; ok {
		return
	}
	item := map[string]any{}
	for _, k := range []string{"oldText", "old_string", "oldString", "old_str", "old_text", "newText", "new_string", "newString", "new_str", "new_text", "replaceAll", "replace_all"} {
		if v, ok := args[k]; ok {
			item[k] = v
			delete(args, k)
		}
	}
	if len(item) > 0 {
		args["edits"] = []any{item}
		n.Add("wrapped the single edit into edits")
	}
}

func runEdit(ctx context.Context, c *tools.Call, in editInput) (tools.Result, error) {
	p, inEditor, unlock, refusal, err := lockForChange(ctx, c, in.Path, "editing")
	if err != nil {
		return tools.Result{}, err
	}
	if refusal != nil {
		return *refusal, nil
	}
	defer unlock()
	ch, refusal := checkEdit(c, p, inEditor, in)
	if refusal != nil {
		return *refusal, nil
	}
	old, res, mode := ch.old, ch.res, ch.mode
	diff := textedit.Compare(old, res.New)
	// Hashing both texts is the slowest part of describing a change of
	// megabytes: it runs while the diff is rendered and the file is
	// written and synced (the fsync leaves the CPU idle).
	hashes := diff.HashesLater()
	defer hashes()
	details := changeDetails("edit", p, old, res.New, diff)
	details["matchLevel"] = string(res.Level)
	details["replacements"] = len(res.Replacements)
	if in.DryRun {
		details["dryRun"] = true
		details["oldHash"], details["newHash"] = hashes()
		r := tools.Text(fmt.Sprintf("Dry run: %s would get %s, %s (nothing written).\n%s", p.Display(), plural(res.Count, "replacement"), lineSpans(res.Replacements), details["unifiedDiff"]))
		r.Details = details
		return r, nil
	}
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	// The file may change while the editor answers: commitWrite and
	// applyInEditor check it again at the last moment.
	c.DiagnosticsBefore(ctx, p, true)
	where := ""
	if inEditor {
		saved, r, err := applyInEditor(ctx, c, p, old, res.New, "agentls: edit "+p.Display())
		if r != nil || err != nil {
			return derefResult(r), err
		}
		details["inEditor"], details["saved"] = true, saved
		where = inEditorNote(saved, c.Names())
	} else {
		if r, err := commitWrite(ctx, c, p, old, res.New, mode); r != nil || err != nil {
			return derefResult(r), err
		}
	}
	details["oldHash"], details["newHash"] = hashes()
	c.Reporter.Details(details)
	text := fmt.Sprintf("Edited %s%s: %s, %s.", p.Display(), where, plural(res.Count, "replacement"), lineSpans(res.Replacements))
	if res.Level != textedit.LevelExact {
		text += fmt.Sprintf(" Matched at level %q (not exact); the changed lines now read:\n%s", res.Level, snippet(res.New, res.Replacements))
	}
	r := tools.Text(text)
	r.Details = details
	return r, nil
}

// editCheck is an edit that passed its checks: the file's content it
// matched against, the result and the file's mode.
type editCheck struct {
	old  []byte
	res  textedit.Result
	mode fs.FileMode
}

// checkEdit runs every check of an edit of p that changes nothing: the
// file exists and may be written, was read and is not stale, and every
// edit matches. Run under the file's lock it is the edit's own check;
// without, planEdit's.
func checkEdit(c *tools.Call, p ops.Path, inEditor bool, in editInput) (editCheck, *tools.Result) {
	refuse := func(r tools.Result) (editCheck, *tools.Result) { return editCheck{}, &r }
	var mode fs.FileMode
	if !inEditor {
		fi, err := c.Env.FS.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				if s := didYouMean(c.Env, p, suggestFiles); s != "" {
					return refuse(c.Errorf("%s does not exist.%s To create a new file, use {{write}}.", p.Display(), s))
				}
				return refuse(c.Errorf("%s does not exist; use {{write}} to create it.", p.Display()))
			}
			return refuse(tools.Errorf("cannot edit %s: %v", p.Display(), err))
		}
		if fi.IsDir() {
			return refuse(c.Errorf("%s is a directory; {{edit}} changes files.", p.Display()))
		}
		mode = fi.Mode().Perm()
		if r := refuseWriteProtected(p, fi, c.Names()); r != nil {
			return editCheck{}, r
		}
		if r := tooBigToChange(p, "edit", fi.Size(), false, c.Names()); r != nil {
			return editCheck{}, r
		}
	}
	old, err := c.Env.Guard.CheckRead(p)
	if err != nil {
		return refuse(guardRefusal(err, c.Names()))
	}
	if r := tooBigToChange(p, "edit", int64(len(old)), false, c.Names()); r != nil {
		return editCheck{}, r
	}
	if !inEditor {
		old = diskBase(c, p, old)
	}
	if bytes.HasPrefix(old, []byte{0xFF, 0xFE}) || bytes.HasPrefix(old, []byte{0xFE, 0xFF}) {
		return refuse(c.Errorf("%s is UTF-16 encoded, and {{edit}} matches UTF-8 text only; nothing was changed. Rewrite the whole file with {{write}} (it is then saved as UTF-8), or convert it first with {{bash}} (iconv -f UTF-16 -t UTF-8).", p.Display()))
	}
	edits := make([]textedit.Edit, len(in.Edits))
	for i, e := range in.Edits {
		edits[i] = textedit.Edit{OldText: e.OldText, NewText: e.NewText, ReplaceAll: e.ReplaceAll}
	}
	if r := refuseCopiedPlaceholders(p, old, edits, c.Names()); r != nil {
		return editCheck{}, r
	}
	res, err := textedit.Apply(old, edits)
	if err != nil {
		var me *textedit.MatchError
		if errors.As(err, &me) {
			return refuse(tools.Errorf("%s", missMessage(c, p, old, edits, me)))
		}
		return refuse(tools.Errorf("edit %s: %v", p.Display(), err))
	}
	return editCheck{old: old, res: res, mode: mode}, nil
}

// planEdit is edit's Check: the checks of runEdit without the lock, and
// the change it would make as the preview.
func planEdit(_ context.Context, c *tools.Call, in editInput) (tools.Plan, *tools.Result) {
	p, inEditor, refusal := targetForChange(c, in.Path, "editing")
	if refusal != nil {
		return tools.Plan{}, refusal
	}
	ch, refusal := checkEdit(c, p, inEditor, in)
	if refusal != nil {
		return tools.Plan{}, refusal
	}
	d := ChangeDetails("edit", p, ch.old, ch.res.New)
	d["matchLevel"] = string(ch.res.Level)
	return tools.Plan{Preview: d}, nil
}

// lockForChange resolves path for edit or write (verb: "editing",
// "writing") and takes the file's write lock, held until unlock. A refusal
// (outside the writable folders, unsaved in the editor) is the result for
// the model, with the lock already given back; inEditor says the change
// goes to the editor's open document.
func lockForChange(ctx context.Context, c *tools.Call, path, verb string) (p ops.Path, inEditor bool, unlock func(), refusal *tools.Result, err error) {
	p, refusal = checkTarget(c, path, verb)
	if refusal != nil {
		return p, false, nil, refusal, nil
	}
	if unlock, err = c.Env.Guard.Lock(ctx, p); err != nil {
		return p, false, nil, nil, err
	}
	_, inEditor, unsaved := editorDoc(c, p)
	if unsaved != nil {
		unlock()
		return p, false, nil, unsaved, nil
	}
	return p, inEditor, unlock, nil, nil
}

// targetForChange is lockForChange without the lock, for a Check.
func targetForChange(c *tools.Call, path, verb string) (p ops.Path, inEditor bool, refusal *tools.Result) {
	if p, refusal = checkTarget(c, path, verb); refusal != nil {
		return p, false, refusal
	}
	_, inEditor, unsaved := editorDoc(c, p)
	return p, inEditor, unsaved
}

// checkTarget resolves path for a change and refuses one that cannot be
// made there (outside the writable folders, the folder gone).
func checkTarget(c *tools.Call, path, verb string) (p ops.Path, refusal *tools.Result) {
	refuse := func(r tools.Result) (ops.Path, *tools.Result) { return p, &r }
	var err error
	if p, err = c.Resolve(path); err != nil {
		// A folder whose path is now a symlink resolves elsewhere: say
		// the folder is gone rather than that the path leaves it.
		if f := folderOf(c.Env.FS, path); f != nil && refresh(c.Env, f) == ops.FolderGone {
			return refuse(tools.Errorf("cannot change %s: %s Nothing was changed.", path, folderGone(ops.Path{Folder: f})))
		}
		return refuse(tools.Errorf("%v", err))
	}
	if r := refuseReadOnly(p); r != nil {
		return p, r
	}
	if refresh(c.Env, p.Folder) == ops.FolderGone {
		return refuse(tools.Errorf("cannot change %s: %s Nothing was changed.", p.Display(), folderGone(p)))
	}
	if c.Env.Guard == nil {
		return refuse(tools.Errorf("%s is not available in this session.", verb))
	}
	return p, nil
}

// commitWrite replaces p, which held old, with new: only if p still holds
// old when the new content is ready to take its place and the call may
// still commit (not cancelled). A refusal is a result; a cancellation the
// context's error.
func commitWrite(ctx context.Context, c *tools.Call, p ops.Path, old, new []byte, mode fs.FileMode) (*tools.Result, error) {
	err := c.Env.FS.ReplaceFile(p, new, mode, old, func() error { return tools.MayCommit(ctx) })
	if err != nil {
		switch {
		case errors.Is(err, ops.ErrChanged):
			r := tools.Errorf("%v", editguard.ChangedWhileEditing(p))
			return &r, nil
		case ctx.Err() != nil || errors.Is(err, context.Canceled):
			return nil, cmp.Or(ctx.Err(), err)
		}
		r := tools.Errorf("cannot write %s: %s. Nothing was changed.", p.Display(), writeFailure(p, err))
		return &r, nil
	}
	c.Env.Guard.Wrote(p, new)
	return nil, nil
}

// writeFailure says why the file system refused to replace or create p,
// in the model's terms: a write goes to a temporary file beside p, then
// is renamed over it, so a refusal is often the directory's. The raw
// error (with the temporary file's name) is left to the log.
func writeFailure(p ops.Path, err error) string {
	dir := path.Dir(p.Display())
	if dir == "." {
		dir = "(the workspace folder)"
	}
	switch {
	case errors.Is(err, syscall.EROFS):
		return "it is on a read-only file system"
	case errors.Is(err, syscall.ENOSPC):
		return "the disk is full"
	case errors.Is(err, syscall.EDQUOT):
		return "the disk quota is used up"
	case errors.Is(err, syscall.EFBIG):
		return "the file would be larger than this process may write (a file size limit, ulimit -f)"
	case errors.Is(err, syscall.EPERM):
		return fmt.Sprintf("the operation is not permitted (the file or its directory %s may be immutable or append-only: lsattr shows it)", dir)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("permission denied: its directory %s is not writable by this process (a write creates a temporary file there, then renames it over the file)", dir)
	}
	return errReason(err)
}

// errReason is an OS error's reason without the operation and path it
// names (which may be a temporary file's).
func errReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}

// refuseWriteProtected answers a change of a file whose owner may not
// write it (chmod a-w), or which this process may not write (another
// user's): the atomic rename needs only the directory's permission and
// would replace it anyway, but the mode says it is not ours to change.
func refuseWriteProtected(p ops.Path, fi fs.FileInfo, names mention.Prefix) *tools.Result {
	mode := fi.Mode().Perm()
	var r tools.Result
	switch {
	case mode&0o200 == 0:
		r = tools.ErrorIn(names, "%s is write-protected (mode %04o); nothing was changed. If it should change, make it writable first ({{bash}}: chmod u+w %s).", p.Display(), mode, shellQuote(p.Display()))
	case !ops.MayWrite(fi):
		r = tools.Errorf("%s is not writable by this process: it belongs to another user (mode %04o); nothing was changed. Leave it, or ask the user to change its owner or permissions.", p.Display(), mode)
	default:
		return nil
	}
	return &r
}

// guardRefusal is the result of a call the edit guard refused (not read,
// stale), its tool names as the client's model sees them.
func guardRefusal(err error, names mention.Prefix) tools.Result {
	if nr, ok := errors.AsType[*editguard.NotReadError](err); ok {
		return tools.Errorf("%s", nr.Message(names))
	}
	return tools.Errorf("%v", err)
}

// refuseReadOnly answers a change of a file outside the workspace's
// writable folders (a spill file) before any work is done.
func refuseReadOnly(p ops.Path) *tools.Result {
	if p.Folder == nil || !p.Folder.ReadOnly {
		return nil
	}
	r := tools.Errorf("%s is read-only: it is saved command output (a spill file), not a workspace file. To keep part of it, write that part to a file in the workspace.", p.Display())
	return &r
}

// ChangeDetails is the tools/details payload of a file change (the
// permission step shows the same as a tools/confirm preview).
func ChangeDetails(kind string, p ops.Path, old, new []byte) map[string]any {
	d := textedit.Compare(old, new)
	details := changeDetails(kind, p, old, new, d)
	details["oldHash"], details["newHash"] = d.Hashes()
	return details
}

// changeDetails is ChangeDetails without oldHash and newHash, for a
// caller that hashes while it writes (textedit.Diff.HashesLater); d is
// the comparison of old and new.
func changeDetails(kind string, p ops.Path, old, new []byte, d textedit.Diff) map[string]any {
	edits := d.TextEdits()
	var diff string
	if kind == "create" {
		diff = textedit.CreationDiff(p.Display(), new)
	} else {
		diff = d.Unified(p.Display())
	}
	if keys, ok := changeKeyRanges(old, new); ok {
		// The masker sees a key whole only when its BEGIN line is in the
		// same string; these lines are masked by where they are.
		diff, edits = keys.diff(diff), keys.edits(edits)
	}
	list := make([]any, len(edits))
	for i, e := range edits {
		list[i] = map[string]any{
			"range": map[string]any{
				"start": map[string]any{"line": e.Range.Start.Line, "character": e.Range.Start.Character},
				"end":   map[string]any{"line": e.Range.End.Line, "character": e.Range.End.Character},
			},
			"newText": e.NewText,
		}
	}
	return map[string]any{
		"kind":             kind,
		"uri":              tools.PathURI(p.OS()),
		"path":             p.Display(),
		"unifiedDiff":      diff,
		"edits":            list,
		"firstChangedLine": d.FirstChangedLine(),
		// docs/protocol.md's details of edit and write carry it; a write
		// matches nothing (edit sets the level its match used).
		"matchLevel": "none",
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// lineSpans renders "lines 10-12 and 40": the new file's changed lines,
// where the model finds them when it reads the file again.
func lineSpans(rs []textedit.Replacement) string {
	spans := make([][2]int, 0, len(rs))
	for _, r := range rs {
		spans = append(spans, [2]int{r.NewStartLine, r.NewEndLine})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var parts []string
	for i, s := range spans {
		if i > 0 && s == spans[i-1] {
			continue // two replacements on one line: name the line once
		}
		if s[1] > s[0] {
			parts = append(parts, fmt.Sprintf("%d-%d", s[0], s[1]))
		} else {
			parts = append(parts, fmt.Sprint(s[0]))
		}
	}
	word := "line "
	if len(parts) > 1 || strings.Contains(strings.Join(parts, ""), "-") {
		word = "lines "
	}
	if len(parts) > 1 {
		return word + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return word + strings.Join(parts, "")
}

// snippetMaxLines bounds the numbered snippet shown after a fuzzy match.
const snippetMaxLines = 12

// snippet shows, numbered like read, the new file's lines that fuzzy
// matches changed (exact ones need no second look), at most
// snippetMaxLines in all; "…" separates regions.
func snippet(new []byte, rs []textedit.Replacement) string {
	lines := strings.Split(string(new), "\n")
	var b strings.Builder
	shown, last := 0, 0
	for _, r := range rs {
		if r.Level == textedit.LevelExact {
			continue
		}
		start := max(r.NewStartLine, last+1)
		if last > 0 && start > last+1 {
			b.WriteString("     …\n")
		}
		for i := start; i <= r.NewEndLine && i <= len(lines) && shown < snippetMaxLines; i++ {
			fmt.Fprintf(&b, "%6d→%s\n", i, strings.TrimSuffix(lines[i-1], "\r"))
			shown++
			last = i
		}
		if shown == snippetMaxLines {
			break
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
