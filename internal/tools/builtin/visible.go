package builtin

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentls/agentls/internal/ignore"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/tools"
)

// Results never show files the permission rules forbid reading: a denied
// file does not appear in a listing or a match.

// visibleIn is the one predicate ls, find and grep filter through, inside
// their walk and before anything is counted against a limit: whether the
// permission rules let the path rel of folder f appear. content says the
// path's content is shown (grep: ReadAllowed, which also hides ask rules'
// and likely-secret files), else only its name (ls, find: ListAllowed).
// nil when no rules filter.
func visibleIn(e *tools.Env, f *ops.Folder, content bool) func(rel string) bool {
	if e.Visible == nil {
		return nil
	}
	return func(rel string) bool {
		abs := filepath.Join(f.Root, filepath.FromSlash(rel))
		if content {
			return e.Visible.ReadAllowed(rel, abs)
		}
		return e.Visible.ListAllowed(rel, abs)
	}
}

// refusedNames is search.Engine.RefusedNames for grep: the permission
// rules' own (policy.Config.ReadRefusedNames), or nil when the filter
// cannot say, and grep then walks itself.
func refusedNames(e *tools.Env) func() ([]string, bool) {
	if n, ok := e.Visible.(interface{ ReadRefusedNames() ([]string, bool) }); ok {
		return n.ReadRefusedNames
	}
	return nil
}

func listAllowed(e *tools.Env, f *ops.Folder, rel string) bool {
	if e.Visible == nil {
		return true
	}
	return e.Visible.ListAllowed(rel, filepath.Join(f.Root, filepath.FromSlash(rel)))
}

// hideDeniedTarget keeps a symlink entry ("l@ -> t") in dir from naming a
// target inside the folder that a Read deny rule hides from listings.
func hideDeniedTarget(e *tools.Env, f *ops.Folder, dir, entry string) string {
	i := strings.Index(entry, "@ -> ")
	if i < 0 || e.Visible == nil {
		return entry
	}
	target := entry[i+len("@ -> "):]
	rel := path.Join(dir, target)
	if path.IsAbs(target) {
		r, err := filepath.Rel(f.Root, filepath.FromSlash(target))
		if err != nil {
			return entry
		}
		rel = filepath.ToSlash(r)
	}
	if rel == ".." || strings.HasPrefix(rel, "../") || listAllowed(e, f, rel) {
		return entry
	}
	return entry[:i] + "@ -> (target hidden by a permission rule)"
}

// workspaceFolders are the folders a search without a path covers: the
// workspace folders, not the read-only roots (spill files).
func workspaceFolders(fsys ops.Workspace) []*ops.Folder {
	var out []*ops.Folder
	for _, f := range fsys.Folders() {
		if !f.ReadOnly {
			out = append(out, f)
		}
	}
	return out
}

// searchPlan is what a search without a path walks: every workspace
// folder's share (ops.Shares), so each file once, in the folder a path to
// it resolves to; a folder whose directory is gone is left out and
// returned in gone (one created anew at its path is opened again, see
// Env.refresh).
func searchPlan(env *tools.Env) (plan []ops.Share, gone []*ops.Folder) {
	for _, sh := range ops.Shares(workspaceFolders(env.FS)) {
		switch {
		case sh.Covered:
		case refresh(env, sh.Folder) == ops.FolderGone:
			gone = append(gone, sh.Folder)
		default:
			plan = append(plan, sh)
		}
	}
	return plan, gone
}

// refresh checks that f's directory is still at its path (ops.FS.Refresh,
// one stat; read, ls, edit, write, grep and find ask on every call) and
// tells the session when f was opened again there, so its watchers and
// settings follow.
func refresh(e *tools.Env, f *ops.Folder) ops.FolderState {
	st := e.FS.Refresh(f)
	if st == ops.FolderReopened && e.Folders != nil {
		e.Folders.Reopened(f)
	}
	return st
}

// beyondFirst reports whether a search of the whole workspace must walk
// more than the first folder, whole.
func beyondFirst(plan []ops.Share, gone []*ops.Folder) bool {
	return len(gone) > 0 || len(plan) > 1 || len(plan) == 1 && (!plan[0].Folder.Primary || len(plan[0].Skip) > 0)
}

// folderOf is the workspace folder a model-written path names before it
// is resolved: the first folder for a relative path, else the folder
// whose root holds it lexically; nil when none does.
func folderOf(fsys ops.Workspace, input string) *ops.Folder {
	folders := workspaceFolders(fsys)
	if !filepath.IsAbs(input) {
		if len(folders) > 0 {
			return folders[0]
		}
		return nil
	}
	for _, f := range folders {
		if _, in := ops.Within(f.Root, filepath.Clean(input)); in {
			return f
		}
	}
	return nil
}

// folderGone says that p's workspace folder is gone and what to do.
func folderGone(p ops.Path) string {
	return fmt.Sprintf("its workspace folder %s no longer exists. Once a directory is there again, the next call opens it.", p.Folder.Root)
}

// goneNote names the folders a whole-workspace search could not walk.
func goneNote(gone []*ops.Folder) string {
	var b strings.Builder
	for _, f := range gone {
		fmt.Fprintf(&b, "\n[Workspace folder %s no longer exists; it was not searched.]", f.Root)
	}
	return b.String()
}

// displayedFolder finds the folder of a path as a tool output names it
// (ops.Path.Display): relative to the first folder, or absolute inside
// another. It returns nil when no folder holds it.
func displayedFolder(fsys ops.Workspace, shown string) (*ops.Folder, string) {
	folders := fsys.Folders()
	if !path.IsAbs(shown) {
		for _, f := range folders {
			if f.Primary {
				return f, path.Clean(shown)
			}
		}
		return nil, ""
	}
	for _, f := range folders {
		if rel, ok := ops.Within(f.Root, filepath.FromSlash(shown)); ok {
			return f, rel
		}
	}
	return nil, ""
}

// unreadableNote says what a search walked past unread (grep, find), with
// the names the permission rules let the model see; "" when nothing.
func unreadableNote(e *tools.Env, u ignore.Unreadable) string {
	if u.Count == 0 {
		return ""
	}
	var names []string
	for _, p := range u.Paths {
		if len(names) == ignore.UnreadableNamed {
			break
		}
		if f, rel := displayedFolder(e.FS, p); f != nil && listAllowed(e, f, rel) {
			names = append(names, p)
		}
	}
	list := strings.Join(names, ", ")
	if more := u.Count - len(names); more > 0 && len(names) > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	if list != "" {
		list = ": " + list
	}
	return fmt.Sprintf("\n[Not searched: %s could not be read (%s)%s.]", plural(u.Count, "path"), u.Reason, list)
}
