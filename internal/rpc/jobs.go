package rpc

import (
	"context"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/internal/jobs"
)

// The editor's view of the background jobs (a status bar list, a
// :AgentlsJobs buffer): listing, output and kill for the user. Reading
// output here never marks it read, so the model's bash_output still gets
// every line it has not seen.

// jobOutputLines is the most lines jobs/output returns (its default).
const jobOutputLines = 2000

type jobParams struct {
	Job   string `json:"job"`
	Lines int    `json:"lines"`
}

type jobView struct {
	Job       string `json:"job"`
	Command   string `json:"command"`
	Status    string `json:"status"`
	Running   bool   `json:"running"`
	RuntimeMs int64  `json:"runtimeMs"`
}

func (s *Server) jobTable() (*jobs.Table, error) {
	sess := s.session()
	if sess == nil || sess.Jobs == nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "no session")
	}
	return sess.Jobs, nil
}

func (s *Server) mask(text string) string {
	if x := s.masker.Load(); x != nil {
		return x.MaskText(text)
	}
	return text
}

func (s *Server) jobsList() (any, error) {
	t, err := s.jobTable()
	if err != nil {
		return nil, err
	}
	out := []jobView{}
	for _, i := range t.List() {
		out = append(out, jobView{Job: i.ID, Command: s.mask(i.Command), Status: s.mask(i.Status), Running: i.Running, RuntimeMs: i.Runtime.Milliseconds()})
	}
	return map[string]any{"jobs": out}, nil
}

func (s *Server) findJob(raw []byte) (*jobs.Job, jobParams, error) {
	var p jobParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, p, err
	}
	t, err := s.jobTable()
	if err != nil {
		return nil, p, err
	}
	j, err := t.Get(p.Job)
	if err != nil {
		return nil, p, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%v", err)
	}
	return j, p, nil
}

func (s *Server) jobsOutput(raw []byte) (any, error) {
	j, p, err := s.findJob(raw)
	if err != nil {
		return nil, err
	}
	n := p.Lines
	if n <= 0 || n > jobOutputLines {
		n = jobOutputLines
	}
	o := j.Last(n)
	res := map[string]any{"job": j.ID, "command": s.mask(j.Command), "status": s.mask(o.Status), "running": o.Running,
		"runtimeMs": o.Runtime.Milliseconds(), "from": o.From, "to": o.To, "output": s.mask(strings.Join(o.Lines, "\n"))}
	if o.SpillPath != "" {
		res["spillPath"] = o.SpillPath
	}
	return res, nil
}

// jobKillWait bounds jobs/kill: the group's grace and SIGKILL, with room.
const jobKillWait = 10 * time.Second

func (s *Server) jobsKill(ctx context.Context, raw []byte) (any, error) {
	j, _, err := s.findJob(raw)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, jobKillWait)
	defer cancel()
	j.Kill(ctx)
	return map[string]any{"job": j.ID, "status": s.mask(j.Status())}, nil
}
