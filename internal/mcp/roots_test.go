package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/session"
)

// startWithRoots runs a Server whose session starts on launch (the --root or
// working directory a client's roots replace) and connects a client that
// declares roots on the newest version where roots are not deprecated.
func startWithRoots(t *testing.T, launch string, roots ...string) (*sdk.Client, *sdk.ClientSession) {
	t.Helper()
	// Sized for the client below ("test", a host not in the table), as
	// agentls mcp sizes a session for the host that connects.
	sess, err := session.New(session.Options{Folders: []ops.FolderSpec{{Path: launch}}, AuditDir: "-", NoUpstream: true, Log: slog.New(slog.DiscardHandler), HostCap: HostOf("test").Cap})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	srv := New(Options{Session: sess, Version: "test", Log: slog.New(slog.DiscardHandler)})
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	for _, r := range roots {
		client.AddRoots(&sdk.Root{URI: "file://" + r, Name: filepath.Base(r)})
	}
	cs, err := client.Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		sess.Close()
	})
	return client, cs
}

func readCall(t *testing.T, cs *sdk.ClientSession, path string) (bool, string) {
	t.Helper()
	r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"path": path}})
	if err != nil {
		t.Fatalf("read %s: protocol error %v", path, err)
	}
	return !r.IsError, textOf(r)
}

// One stale root among good ones used to drop them all and leave the
// workspace on the launch directory: the good roots are kept, the stale ones
// named once, and once none is usable every call fails naming the roots,
// never reading the launch directory or the earlier roots.
func TestStaleRootIsSkippedAndNoneUsableFailsClosed(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	launch, good := filepath.Join(base, "launch"), filepath.Join(base, "good")
	missing, file := filepath.Join(base, "missing"), filepath.Join(base, "file.txt")
	for _, d := range []string{launch, good} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, body := range map[string]string{filepath.Join(launch, "l.txt"): "launch dir\n", filepath.Join(good, "g.txt"): "good root\n", file: "a file\n"} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	client, cs := startWithRoots(t, launch, good, missing)

	ok, text := readCall(t, cs, "g.txt")
	if !ok || !strings.Contains(text, "good root") {
		t.Fatalf("read in the good root: ok=%v %q", ok, text)
	}
	if !strings.Contains(text, missing) || !strings.Contains(text, "does not exist") {
		t.Errorf("first result does not name the skipped root %s: %q", missing, text)
	}
	if ok, text := readCall(t, cs, "g.txt"); !ok || strings.Contains(text, missing) {
		t.Errorf("second result: ok=%v, the notice must come once: %q", ok, text)
	}
	if ok, text := readCall(t, cs, filepath.Join(launch, "l.txt")); ok {
		t.Errorf("the launch directory was read beside the client's roots: %q", text)
	}

	// Now no root is usable: a missing one and a file.
	client.AddRoots(&sdk.Root{URI: "file://" + file, Name: "file"})
	client.RemoveRoots("file://" + good)
	deadline := time.Now().Add(5 * time.Second)
	for {
		ok, text = readCall(t, cs, filepath.Join(good, "g.txt"))
		if !ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ok {
		t.Fatalf("with no usable root the earlier root was still read: %q", text)
	}
	for _, want := range []string{"No workspace folder", missing, file, "not a directory"} {
		if !strings.Contains(text, want) {
			t.Errorf("refusal lacks %q: %q", want, text)
		}
	}
	for _, p := range []string{filepath.Join(launch, "l.txt"), "l.txt", "/etc/hostname"} {
		if ok, text := readCall(t, cs, p); ok || !strings.Contains(text, "No workspace folder") {
			t.Errorf("read %s with no usable root: ok=%v %q", p, ok, text)
		}
	}
	r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ls", Arguments: map[string]any{}})
	if err != nil || !r.IsError || !strings.Contains(textOf(r), missing) {
		t.Errorf("ls with no usable root: err=%v %+v", err, r)
	}
}

// A client that declares the roots capability and never answers roots/list
// (or answers it with an error) used to get, after the wait, the launch
// folder as its workspace: every call now fails saying the roots were
// declared but not listed, and the launch folder is never read.
func TestDeclaredRootsNeverListedFailsClosed(t *testing.T) {
	for _, answer := range []string{"never", "error"} {
		t.Run(answer, func(t *testing.T) {
			launch := t.TempDir()
			if err := os.WriteFile(filepath.Join(launch, "l.txt"), []byte("launch dir\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			st, ct := sdk.NewInMemoryTransports()
			srv := New(Options{Version: "test", Log: slog.New(slog.DiscardHandler), RootsWait: 300 * time.Millisecond,
				Open: func(Host) (*session.Session, error) { return openDir(launch) }})
			done := make(chan error, 1)
			go func() { done <- srv.Run(ctx, st) }()
			conn, err := ct.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				conn.Close()
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Run: %v", err)
				}
			}()
			id := func(n float64) jsonrpc.ID { i, _ := jsonrpc.MakeID(n); return i }
			conn.Write(ctx, &jsonrpc.Request{ID: id(1), Method: "initialize", Params: json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"raw","version":"1"}}`)})
			conn.Read(ctx)
			conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)})
			conn.Write(ctx, &jsonrpc.Request{ID: id(2), Method: "tools/call", Params: json.RawMessage(`{"name":"read","arguments":{"path":"l.txt"}}`)})
			readCtx, stop := context.WithTimeout(ctx, 5*time.Second)
			defer stop()
			for {
				m, err := conn.Read(readCtx)
				if err != nil {
					t.Fatalf("no answer to the call: %v", err)
				}
				if r, ok := m.(*jsonrpc.Request); ok && r.Method == "roots/list" && answer == "error" {
					conn.Write(ctx, &jsonrpc.Response{ID: r.ID, Error: &jsonrpc.Error{Code: -32601, Message: "roots are not available"}})
				}
				r, ok := m.(*jsonrpc.Response)
				if !ok || r.ID != id(2) {
					continue
				}
				var res struct {
					IsError bool `json:"isError"`
					Content []struct{ Text string }
				}
				if r.Error != nil || json.Unmarshal(r.Result, &res) != nil {
					t.Fatalf("call answered with a protocol error: %v %s", r.Error, r.Result)
				}
				text := ""
				for _, c := range res.Content {
					text += c.Text
				}
				if !res.IsError || strings.Contains(text, "launch dir") {
					t.Fatalf("the launch folder was used: isError=%v %q", res.IsError, text)
				}
				for _, want := range []string{"declared the roots capability but did not list its roots", "roots/list"} {
					if !strings.Contains(text, want) {
						t.Errorf("refusal lacks %q: %q", want, text)
					}
				}
				if answer == "error" && !strings.Contains(text, "roots are not available") {
					t.Errorf("refusal does not say what roots/list gave: %q", text)
				}
				return
			}
		})
	}
}

// The wait for a client's roots starts once the session is open: a
// workspace slower to open than the wait must not make a client that
// answers roots/list at once look as if it never did.
func TestRootsWaitStartsWhenTheSessionIsOpen(t *testing.T) {
	launch, root := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "r.txt"), []byte("client root\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	srv := New(Options{Version: "test", Log: slog.New(slog.DiscardHandler), RootsWait: 200 * time.Millisecond,
		Open: func(Host) (*session.Session, error) {
			time.Sleep(600 * time.Millisecond) // a big workspace
			return openDir(launch)
		}})
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	client.AddRoots(&sdk.Root{URI: "file://" + root, Name: "root"})
	cs, err := client.Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cs.Close()
		cancel()
		<-done
	}()
	if ok, text := readCall(t, cs, "r.txt"); !ok || !strings.Contains(text, "client root") {
		t.Fatalf("read in the client's root after a slow open: ok=%v %q", ok, text)
	}
}

// The skipped-roots notice rides inside the result's budget: a result
// filled up to the host's cap stays within it with the notice counted,
// and the notice still reaches the model exactly once (in that result or,
// cut from it, in the next).
func TestSkippedRootsNoticeStaysWithinTheHostCap(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good, missing := filepath.Join(base, "good"), filepath.Join(base, "missing")
	if err := os.Mkdir(good, 0o755); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat(strings.Repeat("x", 99)+"\n", 1000) // 100 KB, over the cap
	if err := os.WriteFile(filepath.Join(good, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(good, "small.txt"), []byte("small\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, cs := startWithRoots(t, good, good, missing)
	seen := 0
	for _, name := range []string{"big.txt", "small.txt", "small.txt"} {
		r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"path": name, "limit": 2000}})
		if err != nil {
			t.Fatal(err)
		}
		text := textOf(r)
		if len(text) > UnknownHostBytes {
			t.Errorf("read %s: %d bytes, over the %d-byte cap of this host", name, len(text), UnknownHostBytes)
		}
		seen += strings.Count(text, "roots skipped")
	}
	if seen != 1 {
		t.Errorf("the skipped-roots notice reached the model %d times, want once", seen)
	}
}
