package session

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/overlay"
	"github.com/agentls/agentls/internal/policy"
	"github.com/agentls/agentls/internal/sandbox"
	"github.com/agentls/agentls/internal/shell"
	"github.com/agentls/agentls/internal/textedit"
	"github.com/agentls/agentls/internal/tools"
)

// permission adapts the policy gate to the executor's permission step: it
// describes a prepared call as a policy.Request (real paths, the parsed
// command) and, when the verdict is "ask", attaches a preview of what the
// call would do (the diff of an edit or write, computed but not applied).
type permission struct {
	gate *policy.Gate
	fsys ops.FS
	// buffers are the editor's open documents when edits of them go to the
	// editor: the preview diffs against the document, as the edit will.
	buffers *overlay.Store
	// fresh reads the settings again when a file changed (settingsfresh.go).
	fresh func()
	// mask hides secrets in what the question shows (arguments, preview):
	// like details, it carries file and command text.
	mask func(any) any
	// sandbox, when enabled with autoAllowBashIfSandboxed, lets sandboxed
	// bash commands run without asking (sandboxAllows).
	sandbox *sandbox.Sandbox
}

func (p *permission) Check(ctx context.Context, pr *tools.Prepared) tools.Decision {
	if p.fresh != nil {
		p.fresh()
	}
	req, refused := p.request(pr)
	if pr.Tool.Source == "core" && pr.Tool.Name == "bash" && p.sandbox.ModeOf(req.Command) == sandbox.Refused {
		// Nothing to ask about: the command could not run anyway.
		return tools.Decision{Reason: p.sandbox.Refusal(), Rule: "sandbox:failIfUnavailable"}
	}
	// Allow and deny are final without asking: return the verdict the gate
	// would return, without evaluating the rules a second time in it.
	switch v := p.gate.Config.Evaluate(req); v.Decision {
	case policy.Allow:
		return tools.Decision{Allow: true, Reason: v.Reason, Rule: v.Rule}
	case policy.Deny:
		return tools.Decision{Reason: v.Reason, Rule: v.Rule}
	case policy.Ask:
		if d, ok := p.sandboxAllows(pr, req, v); ok {
			return d
		}
	}
	if refused != nil {
		// Nothing to approve: the tool would refuse the path anyway (it
		// climbs out, resolves outside, runs through a file), so the
		// model gets that reason instead of the user a question.
		return tools.Decision{Reason: refused.Error(), Rule: "path"}
	}
	cr := policy.ConfirmRequest{CallID: pr.Call.ID, Tool: pr.Tool.Name, Arguments: pr.Args}
	cr.Preview = p.preview(pr, req)
	if p.mask != nil {
		cr.Arguments, _ = p.mask(map[string]any(cr.Arguments)).(map[string]any)
		if cr.Preview != nil {
			cr.Preview, _ = p.mask(cr.Preview).(map[string]any)
		}
	}
	out, err := p.gate.Check(ctx, req, cr)
	if err != nil {
		return tools.Decision{Reason: "cancelled while waiting for the user's approval; nothing was changed.", Rule: out.Rule}
	}
	d := tools.Decision{Allow: out.Allowed, Reason: out.Reason, Rule: out.Rule}
	if out.Asked {
		d.Asked, d.Answer = true, out.Answer
	}
	return d
}

// sandboxAllows is autoAllowBashIfSandboxed: a bash command that would be
// asked about runs without a question when it will run sandboxed, unless
// what asks is a rule the user wrote or a built-in ask the sandbox does not
// cover (agentls's own settings, secret files).
func (p *permission) sandboxAllows(pr *tools.Prepared, req policy.Request, v policy.Verdict) (tools.Decision, bool) {
	if pr.Tool.Source != "core" || pr.Tool.Name != "bash" || p.sandbox == nil {
		return tools.Decision{}, false
	}
	if !strings.HasPrefix(v.Rule, "mode:") && v.Rule != policy.BuiltinDestructive {
		return tools.Decision{}, false
	}
	if !p.sandbox.AutoAllows(req.Command) {
		return tools.Decision{}, false
	}
	pr.Call.RequireSandbox()
	return tools.Decision{Allow: true, Rule: "sandbox:autoAllowBashIfSandboxed", Reason: "allowed: runs in the sandbox (autoAllowBashIfSandboxed)"}, true
}

// pathTools name the argument holding the path they touch.
var pathTools = map[string]string{"read": "path", "edit": "path", "write": "path", "ls": "path", "grep": "path", "find": "path"}

// request describes pr to the policy; refused is the path error of a core
// file tool whose path cannot be resolved (the tool refuses it).
func (p *permission) request(pr *tools.Prepared) (req policy.Request, refused error) {
	req = policy.Request{
		Tool: pr.Tool.Name, Source: pr.Tool.Source,
		ReadOnly: pr.Labels.ReadOnly, Destructive: pr.Labels.Destructive,
		InWorkspace: true,
	}
	if pr.Tool.Source == "core" && pr.Tool.Name == "bash" {
		req.Command, _ = pr.Args["command"].(string)
		dir := p.cwd(pr)
		req.Cwd = dir
		a := shell.Analyze(req.Command, shell.Options{Exists: func(path string) bool {
			if !strings.HasPrefix(path, "/") && dir != "" {
				path = dir + "/" + path
			}
			_, err := os.Lstat(path)
			return err == nil
		}})
		req.Shell = &a
		req.ReadOnly, req.Destructive = a.ReadOnly, a.Destructive
		return req, nil
	}
	if pr.Tool.Source != "core" {
		return req, nil
	}
	arg, ok := pathTools[pr.Tool.Name]
	if !ok {
		return req, nil
	}
	in, _ := pr.Args[arg].(string)
	if in == "" {
		in = "."
	}
	rp, err := pr.Call.Resolve(in)
	if err != nil {
		// The tool refuses the path itself with the reason.
		req.InWorkspace = false
		return req, err
	}
	if rp.Folder.ReadOnly {
		req.InWorkspace = false
	}
	req.Paths = []policy.PathRef{{Rel: rp.Rel, Abs: rp.OS()}}
	return req, nil
}

func (p *permission) cwd(pr *tools.Prepared) string {
	in, _ := pr.Args["cwd"].(string)
	if in == "" {
		in = "."
	}
	rp, err := pr.Call.Resolve(in)
	if err != nil {
		return ""
	}
	return rp.OS()
}

// preview is what the user sees before deciding: the would-be diff of an
// edit or write, or the command and its classification.
func (p *permission) preview(pr *tools.Prepared, req policy.Request) map[string]any {
	switch pr.Tool.Name {
	case "bash":
		out := map[string]any{"kind": "command", "command": req.Command, "readOnly": req.ReadOnly, "destructive": req.Destructive}
		if req.Shell != nil {
			out["reasons"] = req.Shell.Reasons
		}
		return out
	case "edit", "write":
		in, _ := pr.Args["path"].(string)
		rp, err := pr.Call.Resolve(in)
		if err != nil {
			return nil
		}
		kind := pr.Tool.Name
		old, err := p.fsys.ReadFile(rp) // missing file: old is empty
		doc, open := p.buffers.Get(rp.OS())
		if open {
			old = doc.Text
		}
		var new []byte
		level := ""
		if pr.Tool.Name == "write" {
			s, _ := pr.Args["content"].(string)
			new = []byte(s)
			if errors.Is(err, fs.ErrNotExist) && !open {
				kind = "create" // as tools/details will say
			}
		} else {
			var edits []textedit.Edit
			list, _ := pr.Args["edits"].([]any)
			for _, e := range list {
				m, _ := e.(map[string]any)
				o, _ := m["oldText"].(string)
				n, _ := m["newText"].(string)
				all, _ := m["replaceAll"].(bool)
				edits = append(edits, textedit.Edit{OldText: o, NewText: n, ReplaceAll: all})
			}
			res, err := textedit.Apply(old, edits)
			if err != nil {
				return map[string]any{"kind": "edit", "path": rp.Display(), "error": err.Error()}
			}
			new, level = res.New, string(res.Level)
		}
		// The details the call would send, computed but not applied.
		d := tools.ChangeDetails(kind, rp, old, new)
		if level != "" {
			d["matchLevel"] = level
		}
		return d
	}
	return nil
}
