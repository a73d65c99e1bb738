package sandbox

import (
	"context"
	"syscall"

	"fmt"
	"github.com/agentls/agentls/internal/proc"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// attempt is one try to get out of the sandbox; escaped looks at the
// world after the command (files outside, the output, a server's log).
type attempt struct {
	name    string
	command string
	escaped func(output string) bool
}

// TestEscapeAttemptsAllFail runs every attempt sandboxed and counts them:
// at least 60, none may succeed.
func TestEscapeAttemptsAllFail(t *testing.T) {
	if testing.Short() {
		t.Skip("runs over 60 escape attempts, seconds in all")
	}
	f := newFixture(t, Settings{})
	requireActive(t, f)
	attempts, victimEnded := escapeAttempts(t, f)
	if len(attempts) < 60 {
		t.Fatalf("the escape suite has %d attempts, fewer than 60", len(attempts))
	}
	escaped := 0
	for _, a := range attempts {
		t.Run(a.name, func(t *testing.T) {
			res, _ := f.run(t, a.command)
			t.Logf("exit %d: %s", res.ExitCode, res.Output)
			if a.escaped(res.Output) {
				escaped++
				t.Errorf("ESCAPED: %s\ncommand: %s\noutput:\n%s", a.name, a.command, res.Output)
			}
		})
	}
	t.Logf("%d escape attempts, %d succeeded", len(attempts), escaped)
	if victimEnded() {
		t.Errorf("the process outside was ended by a sandboxed command")
	}
}

// escapeAttempts builds the suite over f: a TCP server on the host, a
// process outside to trace and signal, and the attempts.
func escapeAttempts(t *testing.T, f *fixture) ([]attempt, func() bool) {
	// A server on the host's loopback, and one on every host address: with
	// the network off, neither is reachable.
	var accepted atomic.Int64
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() { // ends when ln closes
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			fmt.Fprintln(c, "ESCAPED-NET")
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	hostIP := "127.0.0.1"
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil && !ip.IP.IsLoopback() {
				hostIP = ip.IP.String()
				break
			}
		}
	}
	// A process outside the sandbox, to trace, signal and look into.
	victim := exec.Command("sleep", "60")
	victim.Env = append(os.Environ(), "VICTIM_MARK="+f.secret)
	must(t, victim.Start())
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	vpid := victim.Process.Pid

	out, ws, home, secret := f.out, f.ws, f.home, f.secret
	rel, _ := filepath.Rel(ws, out)
	created := func(name string) func(string) bool {
		return func(string) bool { return exists(filepath.Join(out, name)) }
	}
	unchanged := func(p string) func(string) bool {
		return func(string) bool { return content(p) != "original\n" }
	}
	printed := func(marker string) func(string) bool {
		return func(o string) bool { return contains(o, marker) }
	}
	leaked := printed(secret)
	netUsed := func(o string) bool { return accepted.Load() > 0 || contains(o, "ESCAPED-NET") }
	hook := filepath.Join(ws, ".git", "hooks", "pre-commit")
	gitConfig := content(filepath.Join(ws, ".git", "config"))
	gitConfigChanged := func(string) bool { return content(filepath.Join(ws, ".git", "config")) != gitConfig }
	settings := filepath.Join(ws, ".agentls", "settings.json")
	settingsChanged := func(string) bool { return content(settings) != "{}\n" }
	hookPlanted := func(string) bool {
		if exists(hook) {
			return true
		}
		// Any hook anywhere git would run one from.
		m, _ := filepath.Glob(filepath.Join(ws, "*", "hooks", "pre-commit"))
		m2, _ := filepath.Glob(filepath.Join(ws, ".git*", "hooks", "*"))
		for _, p := range append(m, m2...) {
			if !strings.HasSuffix(p, ".sample") {
				return true
			}
		}
		return false
	}
	gitDirMoved := func(string) bool {
		fi, err := os.Lstat(filepath.Join(ws, ".git", "objects"))
		return err != nil || !fi.IsDir() || exists(filepath.Join(ws, ".git-moved"))
	}
	py := "python3"
	if _, err := exec.LookPath("python3"); err != nil {
		py = "false"
	}

	attempts := []attempt{
		// Writes outside the workspace.
		{"absolute path", `echo x > "$OUT/w1"`, created("w1")},
		{"dot-dot path", `echo x > ` + rel + `/w2`, created("w2")},
		{"symlink to a directory outside", `ln -s "$OUT" link3 && echo x > link3/w3`, created("w3")},
		{"symlink to a file outside", `ln -s "$OUT/existing" link4 && echo x >> link4`, unchanged(filepath.Join(out, "existing"))},
		{"hard link of a file outside", `ln "$OUT/existing" hard5; echo x >> hard5`, unchanged(filepath.Join(out, "existing"))},
		{"rename out", `echo x > r6 && mv r6 "$OUT/w6"`, created("w6")},
		{"cp out", `cp file "$OUT/w7"`, created("w7")},
		{"tee", `echo x | tee "$OUT/w8"`, created("w8")},
		{"python one-liner", py + ` -c 'open("` + out + `/w9","w").write("x")'`, created("w9")},
		{"perl one-liner", `perl -e 'open(F, ">", "` + out + `/w10") or die $!; print F "x"'`, created("w10")},
		{"a child of a child", `bash -c "bash -c 'echo x > $OUT/w11'"`, created("w11")},
		{"after cd /", `cd / && echo x > ` + strings.TrimPrefix(out, "/") + `/w12`, created("w12")},
		{"touch", `touch "$OUT/w13"`, created("w13")},
		{"mkdir", `mkdir "$OUT/w14"`, created("w14")},
		{"dd", `dd if=/dev/zero of="$OUT/w15" bs=1 count=1`, created("w15")},
		{"truncate a file outside", `: > "$OUT/existing"`, unchanged(filepath.Join(out, "existing"))},
		{"remove a file outside", `rm -f "$OUT/existing2"`, func(string) bool { return !exists(filepath.Join(out, "existing2")) }},
		{"system file", `echo x >> /etc/hosts; echo x > /etc/agentls-escape`, func(string) bool { return exists("/etc/agentls-escape") }},
		{"a daemon that outlives the command", `setsid sh -c 'sleep 0.3; echo x > "$OUT/w19"' > /dev/null 2>&1 & sleep 0.6`, created("w19")},
		{"sed -i outside", `sed -i s/original/changed/ "$OUT/existing"`, unchanged(filepath.Join(out, "existing"))},
		{"through /proc/self/root", `echo x > /proc/self/root` + out + `/w21`, created("w21")},
		{"through /proc/self/cwd", `cd "$OUT" && echo x > /proc/self/cwd/w22`, created("w22")},
		{"descriptor opened by exec", `exec 3> "$OUT/w23"; echo x >&3`, created("w23")},
		{"git init outside", `git init -q "$OUT/w24"`, created("w24")},
		{"install", `install -m 644 file "$OUT/w25"`, created("w25")},
		{"tar extract outside", `tar -cf "$TMPDIR/a.tar" file && tar -C "$OUT" -xf "$TMPDIR/a.tar"`, created("file")},
		{"mkfifo", `mkfifo "$OUT/w27"`, created("w27")},
		{"symlink created outside", `ln -s /etc/passwd "$OUT/w28"`, created("w28")},
		{"home directory", `echo x > "$HOME/w29"`, func(string) bool { return exists(filepath.Join(home, "w29")) }},
		{"above TMPDIR", `echo x > "$TMPDIR/../w30"`, func(string) bool { return exists(filepath.Join(filepath.Dir(f.sb.tmpDir()), "w30")) }},
		{"setuid copy of bash", `cp /bin/bash ./suidbash && chmod u+s ./suidbash && ./suidbash -p -c 'echo x > "$OUT/w31"'`, created("w31")},
		{"su", `su -c 'echo x > ` + out + `/w32' root < /dev/null`, created("w32")},
		{"unshare a user namespace", `unshare -r sh -c 'echo x > "$OUT/w33"'`, created("w33")},
		{"unshare and bind the outside in", `unshare -rm sh -c 'mount --bind "$OUT" "$WS" && echo x > "$WS/w34"'`, created("w34")},
		{"mv a directory out", `mkdir d35 && mv d35 "$OUT/w35"`, created("w35")},
		{"rsync-like cp -r", `mkdir -p d36 && cp -r d36 "$OUT/w36"`, created("w36")},

		// Reads of what is denied.
		{"read ~/.ssh/id_rsa", `cat "$HOME/.ssh/id_rsa"`, leaked},
		{"read ~/.aws", `cat "$HOME/.aws/credentials"`, leaked},
		{"read ~/.gnupg", `cat "$HOME/.gnupg/private-keys"`, leaked},
		{"read ~/.config/gcloud", `cat "$HOME/.config/gcloud/credentials.db"`, leaked},
		{"read ~/.netrc", `cat "$HOME/.netrc"`, leaked},
		{"read ~/.docker/config.json", `cat "$HOME/.docker/config.json"`, leaked},
		{"read a Read(...) denied file", `cat secret.env`, leaked},
		{"grep the home directory", `grep -r TOPSECRET "$HOME" 2>&1`, leaked},
		{"list ~/.ssh", `ls -la "$HOME/.ssh"`, printed("id_rsa")},
		{"symlink in the workspace to a secret", `ln -s "$HOME/.ssh/id_rsa" k41 && cat k41`, leaked},
		{"hard link of a secret", `ln "$HOME/.ssh/id_rsa" k42 && cat k42`, leaked},
		{"secret through /proc/self/root", `cat /proc/self/root` + home + `/.ssh/id_rsa`, leaked},
		{"python reads a secret", py + ` -c 'print(open("` + home + `/.aws/credentials").read())'`, leaked},
		{"cp a secret into the workspace", `cp "$HOME/.netrc" n45; cat n45`, leaked},
		{"tar a secret directory", `tar -C "$HOME" -cf - .ssh | tar -xOf -`, leaked},

		// The workspace's own protected places.
		{"plant .git/hooks/pre-commit", `printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`, hookPlanted},
		{"cp into .git/hooks", `cp file .git/hooks/pre-commit`, hookPlanted},
		{"replace .git/hooks", `mv .git/hooks .git/hooks-old; mkdir .git/hooks && echo x > .git/hooks/pre-commit`, hookPlanted},
		{"point core.hooksPath elsewhere", `mkdir -p myhooks && echo x > myhooks/pre-commit && git config core.hooksPath myhooks`, gitConfigChanged},
		{"rewrite .git/config", `echo '[core] hooksPath = /tmp' >> .git/config`, gitConfigChanged},
		{"rename .git away and recreate it", `mv .git .git-moved && git init -q . && echo x > .git/hooks/pre-commit`, func(o string) bool { return gitDirMoved(o) || hookPlanted(o) }},
		{"rewrite .agentls/settings.json", `echo '{"mode":"bypass"}' > .agentls/settings.json`, settingsChanged},
		{"replace .agentls", `rm -rf .agentls; mkdir .agentls; echo '{"mode":"bypass"}' > .agentls/settings.json`, settingsChanged},
		{"rename .agentls away", `mv .agentls agentls-old && mkdir .agentls && echo '{}x' > .agentls/settings.json`, settingsChanged},
		{"python rewrites the settings", py + ` -c 'open(".agentls/settings.json","w").write("{\"mode\":\"bypass\"}")'`, settingsChanged},
		{"unmount the read-only .agentls", `umount "$WS/.agentls" && echo '{"x":1}' > .agentls/settings.json`, settingsChanged},
		{"append to a file an Edit deny rule names", `echo x >> locked.txt`, unchanged(filepath.Join(ws, "locked.txt"))},
		{"replace a file an Edit deny rule names", `rm -f locked.txt; echo x > locked.txt`, unchanged(filepath.Join(ws, "locked.txt"))},
		{"rename a file an Edit deny rule names", `mv locked.txt moved.txt && echo x > locked.txt`, unchanged(filepath.Join(ws, "locked.txt"))},
		{"settings from a cwd inside .agentls", `cd .agentls && echo '{"x":2}' > settings.json`, settingsChanged},

		// The network.
		{"TCP to the host's 127.0.0.1", fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3`, port), netUsed},
		{"curl the host's 127.0.0.1", fmt.Sprintf(`curl -sS --max-time 5 http://127.0.0.1:%d/`, port), netUsed},
		{"TCP to the host's address", fmt.Sprintf(`exec 3<>/dev/tcp/%s/%d && cat <&3`, hostIP, port), netUsed},
		{"python socket to the host", fmt.Sprintf(`%s -c 'import socket; s=socket.create_connection(("127.0.0.1", %d), 3); print(s.recv(100))'`, py, port), netUsed},
		{"resolve a name", `getent hosts example.com && echo ESCAPED-DNS`, printed("ESCAPED-DNS")},
		{"fetch a name", `curl -sS --max-time 5 http://example.com/ && echo ESCAPED-FETCH`, printed("ESCAPED-FETCH")},
		{"enter the host's network namespace", fmt.Sprintf(`nsenter -t %d -n true && echo ESCAPED-NS`, vpid), printed("ESCAPED-NS")},

		// Other processes, privileges, mounts.
		{"ptrace a process outside", fmt.Sprintf(`%s -c 'import ctypes; l=ctypes.CDLL(None); print("ESCAPED-PTRACE" if l.ptrace(16, %d, 0, 0) == 0 else "denied")'`, py, vpid), printed("ESCAPED-PTRACE")},
		{"strace a process outside", fmt.Sprintf(`timeout 2 strace -p %d 2>&1 | grep -q nanosleep && echo ESCAPED-STRACE`, vpid), printed("ESCAPED-STRACE")},
		{"environment of a process outside", fmt.Sprintf(`cat /proc/%d/environ | tr '\0' '\n'`, vpid), leaked},
		{"root of a process outside", fmt.Sprintf(`cat /proc/%d/root%s/.ssh/id_rsa`, vpid, home), leaked},
		{"signal a process outside", fmt.Sprintf(`kill -0 %d && echo ESCAPED-SIGNAL`, vpid), printed("ESCAPED-SIGNAL")},
		{"signal agentls", `kill -0 $PPID 2>/dev/null && [ "$(cat /proc/$PPID/comm)" != bash ] && echo ESCAPED-PARENT`, printed("ESCAPED-PARENT")},
		{"mount a tmpfs", `mkdir -p m && mount -t tmpfs none m && echo ESCAPED-MOUNT`, printed("ESCAPED-MOUNT")},
		{"unshare and mount", `unshare -rm sh -c 'mount -t tmpfs none /mnt && echo ESCAPED-MOUNT2'`, printed("ESCAPED-MOUNT2")},
		{"bind the outside into the workspace", `mkdir -p b && mount --bind "$OUT" b && echo x > b/w80`, created("w80")},
	}
	return attempts, func() bool { return syscall.Kill(vpid, 0) != nil }
}

// TestEscapeDetectorsSeeUnsandboxedSuccess: run without the sandbox, the
// attempts that only touch the test's own directories do succeed, so each
// detector can tell an escape.
func TestEscapeDetectorsSeeUnsandboxedSuccess(t *testing.T) {
	f := newFixture(t, Settings{})
	attempts, _ := escapeAttempts(t, f)
	safe := map[string]bool{
		"absolute path": true, "dot-dot path": true, "symlink to a directory outside": true, "rename out": true, "cp out": true,
		"tee": true, "perl one-liner": true, "a child of a child": true, "touch": true, "mkdir": true, "after cd /": true,
		"read ~/.ssh/id_rsa": true, "read ~/.aws": true, "read ~/.netrc": true, "list ~/.ssh": true, "read a Read(...) denied file": true,
		"plant .git/hooks/pre-commit": true, "rewrite .agentls/settings.json": true, "rewrite .git/config": true,
		"TCP to the host's 127.0.0.1": true, "append to a file an Edit deny rule names": true, "environment of a process outside": true,
	}
	n := 0
	for _, a := range attempts {
		if !safe[a.name] {
			continue
		}
		n++
		env := append(proc.BaseEnv(os.Environ()), "HOME="+f.home, "WS="+f.ws, "OUT="+f.out)
		res, err := proc.Run(context.Background(), proc.Spec{Command: a.command, Dir: f.ws, Env: env, Timeout: 30e9})
		must(t, err)
		if !a.escaped(res.Output) {
			t.Errorf("%s: unsandboxed, the detector saw no success:\n%s", a.name, res.Output)
		}
	}
	if n != len(safe) {
		t.Fatalf("%d of the %d control attempts exist", n, len(safe))
	}
}
