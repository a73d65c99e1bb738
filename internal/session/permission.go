package session

import (
	"cmp"
	"context"
	"os"
	"strings"

	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/policy"
	"github.com/agentls/agentls/internal/sandbox"
	"github.com/agentls/agentls/internal/shell"
	"github.com/agentls/agentls/internal/tools"
)

// permission adapts the policy gate to the executor's permission step: it
// describes a prepared call as a policy.Request (real paths, the parsed
// command) and, when the verdict is "ask", attaches a preview of what the
// call would do (the diff of an edit or write, computed but not applied).
type permission struct {
	gate *policy.Gate
	// fresh reads the settings again when a file changed (freshPolicy, over a settings.Stamp).
	fresh func()
	// mask hides secrets in what the question shows (arguments, preview):
	// like details, it carries file and command text.
	mask func(any) any
	// hostApproves: the client's host confirms each call itself (an MCP
	// host), so a call only agentls's default mode would ask about runs.
	hostApproves bool
	// sandbox, when enabled with autoAllowBashIfSandboxed, lets sandboxed
	// bash commands run without asking (sandboxAllows).
	sandbox *sandbox.Sandbox
}

func (p *permission) Check(ctx context.Context, pr *tools.Prepared) tools.Decision {
	st := p.decide(ctx, pr)
	if st.final != nil {
		return *st.final
	}
	if pr.Approved {
		// The client asked its user about this very call (tools/prepare);
		// deny rules and the mode were evaluated again just now.
		return tools.Decision{Allow: true, Reason: "approved by the user through the client (tools/prepare)", Rule: "user", Asked: true, Answer: policy.AllowOnce}
	}
	out, err := p.gate.Check(ctx, st.req, st.cr)
	if err != nil {
		return tools.Decision{Reason: "cancelled while waiting for the user's approval; nothing was changed.", Rule: out.Rule}
	}
	d := tools.Decision{Allow: out.Allowed, Reason: out.Reason, Rule: out.Rule}
	if out.Asked {
		d.Asked, d.Answer = true, out.Answer
	}
	return d
}

// Prepare implements tools.Preparer: the decision Check would reach and
// the question it would ask, without asking.
func (p *permission) Prepare(ctx context.Context, pr *tools.Prepared) tools.Preparation {
	st := p.decide(ctx, pr)
	if f := st.final; f != nil {
		switch {
		case f.Refusal != nil:
			return tools.Preparation{Decision: "fail", Error: f.Refusal.TextOf()}
		case f.Allow:
			return tools.Preparation{Decision: "allow", Reason: f.Reason}
		case f.Rule == "path":
			return tools.Preparation{Decision: "fail", Error: f.Reason}
		}
		return tools.Preparation{Decision: "deny", Reason: f.Reason}
	}
	return tools.Preparation{Decision: "ask", Title: st.cr.Title, Message: st.cr.Message, Preview: st.cr.Preview, Reason: st.cr.Reason}
}

// stage is how far the permission step gets without asking: a final
// decision, or the question to ask.
type stage struct {
	final *tools.Decision
	req   policy.Request
	cr    policy.ConfirmRequest
}

// decide evaluates pr: allow and deny are final; a call that would be
// asked about is first checked (a call that would fail is refused
// without a question), then left to the host when only agentls's
// defaults ask and the host approves calls itself; otherwise the
// question, rendered and masked.
func (p *permission) decide(ctx context.Context, pr *tools.Prepared) stage {
	if p.fresh != nil {
		p.fresh()
	}
	req, refused := p.request(pr)
	req.Names = mention.FromContext(ctx)
	final := func(d tools.Decision) stage { return stage{final: &d, req: req} }
	if pr.Tool.Source == "core" && pr.Tool.Name == "bash" && p.sandbox.ModeOf(req.Command) == sandbox.Refused {
		// Nothing to ask about: the command could not run anyway.
		return final(tools.Decision{Reason: p.sandbox.Refusal(), Rule: "sandbox:failIfUnavailable"})
	}
	v := p.gate.Config.Evaluate(req)
	switch v.Decision {
	case policy.Allow:
		return final(tools.Decision{Allow: true, Reason: v.Reason, Rule: v.Rule})
	case policy.Deny:
		return final(tools.Decision{Reason: v.Reason, Rule: v.Rule})
	}
	if refused != nil {
		// Nothing to approve: the tool would refuse the path anyway (it
		// climbs out, resolves outside, runs through a file), so the
		// model gets that reason instead of the user a question.
		return final(tools.Decision{Reason: refused.Error(), Rule: "path"})
	}
	if p.hostApproves && v.Rule == "mode:"+policy.ModeDefault {
		return final(tools.Decision{Allow: true, Reason: "left to the MCP host's approval (agentls's default mode)", Rule: "host"})
	}
	if d, ok := p.sandboxAllows(pr, req, v); ok {
		return final(d)
	}
	plan, fail := pr.Check(ctx)
	if fail != nil {
		return final(tools.Decision{Refusal: fail, Rule: v.Rule})
	}
	cr := policy.ConfirmRequest{CallID: pr.Call.ID, Tool: pr.Tool.Name, Arguments: pr.Args, Reason: v.Reason, Rule: v.Rule}
	cr.Preview = plan.Preview
	if cr.Preview == nil {
		cr.Preview = p.preview(pr, req)
	}
	if p.mask != nil {
		cr.Arguments, _ = p.mask(map[string]any(cr.Arguments)).(map[string]any)
		if cr.Preview != nil {
			cr.Preview, _ = p.mask(cr.Preview).(map[string]any)
		}
	}
	cr.Title, cr.Message = policy.Render(cr)
	if p.mask != nil {
		cr.Title, _ = p.mask(cr.Title).(string)
		cr.Message, _ = p.mask(cr.Message).(string)
	}
	return stage{req: req, cr: cr}
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

// preview is the question's preview of a call whose tool plans none
// (edit and write plan their diff in their Check): a bash command with
// its cwd and classification.
func (p *permission) preview(pr *tools.Prepared, req policy.Request) map[string]any {
	if pr.Tool.Source != "core" || pr.Tool.Name != "bash" {
		return nil
	}
	out := map[string]any{"kind": "command", "command": req.Command, "readOnly": req.ReadOnly, "destructive": req.Destructive}
	if req.Shell != nil {
		out["reasons"] = req.Shell.Reasons
	}
	cwd, _ := pr.Args["cwd"].(string)
	if rp, err := pr.Call.Resolve(cmp.Or(cwd, ".")); err == nil {
		out["cwd"] = rp.Display()
	}
	return out
}
