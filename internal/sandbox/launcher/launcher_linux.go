package launcher

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Run is the launcher's body (args after Command: POLICY SHELL ARGS...).
// It returns only on failure, with the exit code; the message is on
// stderr, where the command's output goes.
func Run(args []string) int {
	if len(args) >= 1 && args[0] == forwarderCommand {
		return runForwarder(args[1:])
	}
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "agentls: the sandbox launcher is started by agentls itself")
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "agentls sandbox: %v; the command did not run\n", err)
		return 126
	}
	pol, err := Decode(args[0])
	if err != nil {
		return fail(err)
	}
	// no_new_privs, Landlock, capabilities and the exec below must happen
	// on one thread: the first three are per thread, and a forwarder's
	// parent-death signal follows the thread that started it.
	runtime.LockOSThread()
	env := os.Environ()
	if err := loopbackUp(); err != nil {
		return fail(fmt.Errorf("loopback: %w", err))
	}
	if pol.Proxy != "" {
		port, err := startForwarder(pol.Proxy)
		if err != nil {
			return fail(fmt.Errorf("proxy: %w", err))
		}
		u := "http://127.0.0.1:" + strconv.Itoa(port)
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"} {
			env = append(dropEnv(env, k), k+"="+u)
		}
		env = append(dropEnv(dropEnv(env, "NO_PROXY"), "no_proxy"), "NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1")
	}
	if err := applyMounts(pol); err != nil {
		return fail(err)
	}
	// The working directory was entered through a descriptor of agentls's
	// mount namespace, where the binds above do not exist: enter it again
	// by name here, and check it is the same directory. Fail closed.
	if err := reenter(pol.Dir); err != nil {
		return fail(fmt.Errorf("working directory: %w", err))
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("no_new_privs: %w", err))
	}
	if err := applyLandlock(pol); err != nil {
		return fail(fmt.Errorf("landlock: %w", err))
	}
	if err := dropCaps(); err != nil {
		return fail(fmt.Errorf("capabilities: %w", err))
	}
	shellPath := args[1]
	argv := append([]string{shellPath}, args[2:]...)
	err = syscall.Exec(shellPath, argv, env)
	return fail(fmt.Errorf("exec %s: %w", shellPath, err))
}

func dropEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, key+"=") {
			out = append(out, e)
		}
	}
	return out
}

// loopbackUp brings lo up in the new network namespace: the command gets
// 127.0.0.1 of its own, and nothing else.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("get flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("set up: %w", err)
	}
	return nil
}

// lockedFlags are the flags of the mount under p that a bind of it in a
// user namespace must keep (the kernel refuses to clear them).
func lockedFlags(p string) uintptr {
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return 0
	}
	var f uintptr
	for _, m := range []struct{ st, ms int64 }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if st.Flags&m.st != 0 {
			f |= uintptr(m.ms)
		}
	}
	return f
}

// applyMounts makes the mount namespace's changes: pins, read-only binds,
// and the covers over paths that must not be read. They stay: Landlock
// forbids a confined process to mount or unmount anything.
func applyMounts(pol Policy) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	bind := func(p string, ro bool) error {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", p, err)
		}
		if !ro {
			return nil
		}
		if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|lockedFlags(p), ""); err != nil {
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
		return nil
	}
	for _, p := range pol.Pin {
		if err := bind(p, false); err != nil {
			return err
		}
	}
	for _, p := range pol.ReadOnly {
		if err := bind(p, true); err != nil {
			return err
		}
	}
	for _, d := range pol.DenyDirs {
		if err := unix.Mount("agentls-denied", d, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=000,size=4k"); err != nil {
			return fmt.Errorf("cover %s: %w", d, err)
		}
	}
	if len(pol.DenyFiles) > 0 {
		f, err := os.OpenFile(pol.Blank, os.O_CREATE|os.O_RDONLY, 0)
		if err != nil {
			return fmt.Errorf("blank file: %w", err)
		}
		f.Close()
		if err := os.Chmod(pol.Blank, 0); err != nil {
			return fmt.Errorf("blank file: %w", err)
		}
		for _, p := range pol.DenyFiles {
			if err := unix.Mount(pol.Blank, p, "", unix.MS_BIND, ""); err != nil {
				return fmt.Errorf("cover %s: %w", p, err)
			}
			if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|lockedFlags(p), ""); err != nil {
				return fmt.Errorf("cover %s: %w", p, err)
			}
		}
	}
	return nil
}

// devices a command may write besides its allowed paths.
var devFiles = [...]string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

func applyLandlock(pol Policy) error {
	rules := []landlock.Rule{landlock.RODirs("/")}
	for _, w := range pol.Write {
		fi, err := os.Stat(w)
		switch {
		case err != nil:
			continue // an allowWrite path that does not exist
		case fi.IsDir():
			rules = append(rules, landlock.RWDirs(w).WithRefer())
		default:
			rules = append(rules, landlock.RWFiles(w))
		}
	}
	for _, d := range devFiles {
		rules = append(rules, landlock.RWFiles(d).IgnoreIfMissing().WithIoctlDev())
	}
	rules = append(rules, landlock.RWDirs("/dev/pts", "/dev/shm").IgnoreIfMissing())
	// Files only, and IPC scopes (signals, abstract sockets): the network
	// is confined by the namespace, where loopback must stay usable (a
	// test's local server, the proxy's bridge).
	cfg := landlock.Config{HandledAccessFS: landlock.V7.HandledAccessFS, Scoped: landlock.V7.Scoped}.BestEffort()
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return fmt.Errorf("the kernel enforces none of the rules")
	}
	defer unix.Close(fd)
	// On this locked thread only (no_new_privs is set on it): the exec
	// that follows leaves the process that thread alone, so the other Go
	// threads need not be stopped to be restricted too.
	return llsys.LandlockRestrictSelf(fd, flags)
}

// dropCaps leaves the shell no capability, even as uid 0 in its
// namespace: no ambient set, an empty bounding set, and root's exec
// privileges off for good.
func dropCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient: %w", err)
	}
	const secure = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 // NOROOT, NO_SETUID_FIXUP, KEEP_CAPS (locked), NO_CAP_AMBIENT_RAISE
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secure&^(1<<4), 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("bounding set: %w", err)
		}
	}
	return nil
}

// startForwarder listens on 127.0.0.1 in the namespace and starts the
// forwarder process, which outlives this exec as the shell's child and
// ends with it (it watches the shell's pid; see awaitExit).
func startForwarder(socket string) (int, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	f, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		return 0, err
	}
	defer f.Close()
	// The shell keeps this process's pid across the exec.
	c := exec.Command("/proc/self/exe", Command, forwarderCommand, socket, strconv.Itoa(os.Getpid()))
	c.Args[0] = "agentls"
	c.ExtraFiles = []*os.File{f}
	c.Env = []string{}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := c.Start(); err != nil {
		return 0, err
	}
	return port, nil
}

// reenter changes to dir by name, which must be the directory the
// launcher started in.
func reenter(dir string) error {
	if dir == "" {
		return fmt.Errorf("no working directory given")
	}
	var before, after unix.Stat_t
	if err := unix.Stat(".", &before); err != nil {
		return err
	}
	if err := unix.Chdir(dir); err != nil {
		return err
	}
	if err := unix.Stat(".", &after); err != nil {
		return err
	}
	if before.Dev != after.Dev || before.Ino != after.Ino {
		return fmt.Errorf("%s is no longer the directory the command was to start in", dir)
	}
	return nil
}
