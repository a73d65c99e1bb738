package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/agentls/agentls/internal/sandbox/launcher"
)

// minABI is the oldest Landlock ABI the sandbox runs on: ABI 2 lets a
// file move between directories (refer), which builds need.
const minABI = 2

// LauncherSuffix names the small launcher binary after the agentls binary
// it serves: /usr/local/bin/agentls runs /usr/local/bin/agentls-sandbox.
const LauncherSuffix = "-sandbox"

// wrap turns cmd (shell -c command) into the launcher running it.
func wrap(cmd *exec.Cmd, exe string, pol launcher.Policy) error {
	js, err := pol.Encode()
	if err != nil {
		return err
	}
	shellPath := cmd.Path
	args := append([]string{"agentls", launcher.Command, js, shellPath}, cmd.Args[1:]...)
	cmd.Path = exe
	cmd.Args = args
	attr := cmd.SysProcAttr
	if attr == nil {
		attr = &syscall.SysProcAttr{}
		cmd.SysProcAttr = attr
	}
	uid, gid := os.Getuid(), os.Getgid()
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	if uid != 0 {
		// The launcher needs these in its namespaces for the mounts and
		// the loopback; it drops every capability before the shell runs.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
	}
	return nil
}

// launchers are the binaries that can launch a command, best first: the
// small agentls-sandbox next to the agentls binary (it starts in a
// fraction of agentls's time), then agentls itself.
func (sb *Sandbox) launchers() []string {
	self, bin := sb.opts.Exe, sb.opts.Exe
	if self == "" {
		self = "/proc/self/exe"
		bin, _ = os.Executable()
	}
	var out []string
	if bin != "" {
		small := filepath.Join(filepath.Dir(bin), filepath.Base(bin)+LauncherSuffix)
		if fi, err := os.Stat(small); err == nil && fi.Mode().IsRegular() {
			out = append(out, small)
		}
	}
	return append(out, self)
}

// probe checks, once per session, that commands can run sandboxed here,
// and picks the launcher: the first of launchers that runs a trial
// command. A small launcher that fails (of another build, say) is passed
// over for agentls itself.
func probe(sb *Sandbox) probeResult {
	if why := os.Getenv(UnavailableEnv); why != "" {
		return probeResult{err: why + " (" + UnavailableEnv + " is set)"}
	}
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < minABI {
		if err == nil {
			err = fmt.Errorf("ABI %d, older than %d", abi, minABI)
		}
		return probeResult{err: fmt.Sprintf("the kernel offers no usable Landlock (%v)", err)}
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		return probeResult{err: "no sh on PATH to try the sandbox with"}
	}
	var why string
	for _, exe := range sb.launchers() {
		if why = tryLauncher(sb, exe, sh); why == "" {
			return probeResult{mechanism: "landlock ABI " + strconv.Itoa(abi) + " + user/mount/network namespaces", exe: exe}
		}
	}
	return probeResult{err: "a trial command could not run sandboxed (" + why + "); unprivileged user namespaces may be off"}
}

// tryLauncher runs a trial command through exe; "" means it ran.
func tryLauncher(sb *Sandbox, exe, sh string) string {
	r := sb.prepareProbe(exe)
	defer r.Close()
	cmd := exec.Command(sh, "-c", "exit 0")
	cmd.Dir = sb.tmp
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.Wrap(cmd); err != nil {
		return err.Error()
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return msg
	}
	return ""
}
