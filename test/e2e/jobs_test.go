package e2e

// Background jobs through the real binary: a server started in the
// background answers a foreground command, its log is read, it is killed
// and its port is free; the editor is told (jobs/changed, the job tools in
// tools/listChanged, the job's latest line as tools/progress).

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

func TestABackgroundServerIsReadKilledAndItsPortFreed(t *testing.T) {
	slow(t)
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"index.txt": "served by the job\n"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	start := c.CallTool(ctx, "bash", map[string]any{"command": fmt.Sprintf("python3 -u -m http.server %d --bind 127.0.0.1", port), "run_in_background": true})
	if start.IsError || start.Details["job"] != "job-1" || start.Details["status"] != "running" {
		t.Fatalf("start: %s %v", start.Text(), start.Details)
	}
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/listChanged" }); !ok {
		t.Error("no tools/listChanged when the job tools became active")
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	names := fmt.Sprint(list.Tools)
	if !strings.Contains(names, "bash_output") || !strings.Contains(names, "bash_kill") {
		t.Errorf("tools/list after a job started: %s", names)
	}
	if !strings.Contains(start.Text(), "Serving HTTP") {
		if r := c.CallTool(ctx, "bash_output", map[string]any{"job": "job-1", "wait": 10, "filter": "Serving HTTP"}); !strings.Contains(r.Text(), "Serving HTTP") {
			t.Fatalf("server not up: %s", r.Text())
		}
	}
	fetch := c.CallTool(ctx, "bash", map[string]any{"command": fmt.Sprintf("curl -fsS http://127.0.0.1:%d/index.txt || python3 -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.1:%d/index.txt').read().decode())\"", port, port)})
	if fetch.IsError || !strings.Contains(fetch.Text(), "served by the job") {
		t.Fatalf("foreground fetch: %s", fetch.Text())
	}
	logLine := c.CallTool(ctx, "bash_output", map[string]any{"job": "job-1", "wait": 10, "filter": "GET /index.txt"})
	if !strings.Contains(logLine.Text(), `"GET /index.txt HTTP/1.1" 200`) || logLine.Details["status"] != "running" {
		t.Fatalf("request log line: %s", logLine.Text())
	}
	// The latest line also streams as progress of the starting call.
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
		var p struct{ CallID, Job, Output string }
		json.Unmarshal(n.Params, &p)
		return n.Method == "tools/progress" && p.Job == "job-1" && p.CallID == start.CallID && strings.Contains(p.Output, "GET /index.txt")
	}); !ok {
		t.Errorf("no tools/progress with the job's latest line for call %s", start.CallID)
	}
	kill := c.CallTool(ctx, "bash_kill", map[string]any{"job": "job-1"})
	if !strings.Contains(kill.Text(), "killed by SIGTERM") || kill.Details["status"] != "killed by SIGTERM" {
		t.Fatalf("kill: %s", kill.Text())
	}
	ln, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("port %d still taken after bash_kill: %v", port, err)
	}
	ln.Close()
	var statuses []string
	for _, n := range c.Notes("jobs/changed") {
		var ev struct{ Job, Status, Command string }
		json.Unmarshal(n.Params, &ev)
		if ev.Job != "job-1" || !strings.Contains(ev.Command, "http.server") {
			t.Errorf("jobs/changed %s", n.Params)
		}
		statuses = append(statuses, ev.Status)
	}
	if strings.Join(statuses, ",") != "running,killed by SIGTERM" {
		t.Errorf("jobs/changed statuses %q", statuses)
	}
}

// The editor's job list: jobs/list, jobs/output (which leaves the model's
// unread lines unread) and jobs/kill.
func TestTheEditorListsReadsAndKillsJobs(t *testing.T) {
	slow(t)
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": "a\n"})
	start := c.CallTool(ctx, "bash", map[string]any{"command": "echo early; sleep 1.3; echo late; sleep 30", "run_in_background": true})
	if start.Details["job"] != "job-1" {
		t.Fatalf("%s", start.Text())
	}
	var list struct {
		Jobs []struct {
			Job     string `json:"job"`
			Command string `json:"command"`
			Status  string `json:"status"`
			Running bool   `json:"running"`
		} `json:"jobs"`
	}
	if err := c.Call(ctx, "jobs/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Jobs) != 1 || list.Jobs[0].Job != "job-1" || !list.Jobs[0].Running || list.Jobs[0].Status != "running" || !strings.Contains(list.Jobs[0].Command, "echo late") {
		t.Fatalf("jobs/list: %+v", list)
	}
	var out struct {
		Output string `json:"output"`
		From   int    `json:"from"`
		To     int    `json:"to"`
	}
	if !waitUntil(10*time.Second, func() bool {
		c.Call(ctx, "jobs/output", map[string]any{"job": "job-1"}, &out)
		return strings.Contains(out.Output, "late")
	}) || out.Output != "early\nlate" || out.From != 1 || out.To != 2 {
		t.Fatalf("jobs/output: %+v", out)
	}
	if r := c.CallTool(ctx, "bash_output", map[string]any{"job": "job-1"}); !strings.HasPrefix(r.Text(), "late\n") {
		t.Errorf("the editor's read took the model's unread line: %s", r.Text())
	}
	var killed struct {
		Status string `json:"status"`
	}
	if err := c.Call(ctx, "jobs/kill", map[string]any{"job": "job-1"}, &killed); err != nil || killed.Status != "killed by SIGTERM" {
		t.Fatalf("jobs/kill: %v %+v", err, killed)
	}
	if err := c.Call(ctx, "jobs/output", map[string]any{"job": "job-7"}, &out); err == nil || !strings.Contains(err.Error(), "known jobs: job-1") {
		t.Errorf("unknown job: %v", err)
	}
}
