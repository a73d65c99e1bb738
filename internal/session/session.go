package session

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/secrets"
	"github.com/agentls/agentls/internal/spill"
	"github.com/agentls/agentls/internal/tools"
)

// Options configure a session.
type Options struct {
	Folders []ops.FolderSpec
	Log     *slog.Logger
	// TestTools registers tools that exist only for tests (e.g. one that
	// blocks until cancelled). Enabled by AGENTLS_TEST_TOOLS=1.
	TestTools bool
}

// Session is one workspace's tools, ready to run calls.
type Session struct {
	FS       ops.FS
	Registry *tools.Registry
	Executor *tools.Executor
	Env      *tools.Env
	Log      *slog.Logger
}

// New opens the folders and builds the registry and executor.
func New(opts Options) (*Session, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(opts.Folders) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("no workspace folder given and no working directory: %w", err)
		}
		opts.Folders = []ops.FolderSpec{{Path: wd}}
	}
	fsys, err := ops.NewLocal(opts.Folders)
	if err != nil {
		return nil, err
	}
	for _, f := range fsys.Folders() {
		if n := fsys.CleanTemp(f); n > 0 {
			log.Info("removed temp files left by an interrupted write", "folder", f.Root, "count", n)
		}
	}
	guard := editguard.New(fsys)
	env := &tools.Env{FS: fsys, Log: log, Stamps: guard, Guard: guard}
	// Spill files live outside the workspace (under the user cache dir) and
	// are an extra read-only root, so read can open them.
	if sp, err := spill.Open(fsys.Folders()[0].Root); err != nil {
		log.Warn("no spill directory: cut output will not be saved", "err", err)
	} else if err := fsys.AddReadOnlyRoot(sp.Path()); err != nil {
		log.Warn("spill directory not readable", "err", err)
		sp.Close()
	} else {
		env.SpillDir = sp
	}
	reg := tools.NewRegistry()
	reg.MustRegister(tools.Builtins()...)
	if opts.TestTools {
		reg.MustRegister(tools.TestTools()...)
	}
	exec := &tools.Executor{Registry: reg, Env: env, Log: log, Masker: secrets.New(os.Environ())}
	if env.SpillDir != nil {
		exec.Spill = env.SpillDir
	}
	return &Session{FS: fsys, Registry: reg, Executor: exec, Env: env, Log: log}, nil
}

// SetFolders replaces the workspace folders.
func (s *Session) SetFolders(specs []ops.FolderSpec) error {
	return s.FS.SetFolders(specs)
}

// Close kills what commands left running, removes spill files and
// releases the roots.
func (s *Session) Close() error {
	err := s.FS.Close()
	if s.Env.SpillDir != nil {
		s.Env.SpillDir.Close()
	}
	return err
}
