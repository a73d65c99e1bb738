package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Blocked is what the sandbox stopped in one run, read from the errors
// the command printed (EACCES, EPERM, EROFS, unreachable network) and
// from the proxy's refusals.
type Blocked struct {
	Messages []string // "blocked by the sandbox: write to /etc/hosts is outside the workspace"
}

var (
	denialRE = regexp.MustCompile(`(?i)(permission denied|read-only file system|operation not permitted|errno 13|errno 30|errno 1\b|EACCES|EROFS|EPERM)`)
	netRE    = regexp.MustCompile(`(?i)(network is unreachable|could not resolve host|temporary failure in name resolution|name or service not known|no address associated|getaddrinfo|ENETUNREACH|EAI_AGAIN|connection refused|ECONNREFUSED|failed to connect)`)
	quotedRE = regexp.MustCompile(`['"‘’“”` + "`" + `]([^'"‘’“”` + "`" + `]+)['"‘’“”` + "`" + `]`)
)

// Explain reads the command's output (the cleaned tail) and says what the
// sandbox blocked; dir is the command's working directory.
func (r *Run) Explain(output, dir string) Blocked {
	var b Blocked
	add := func(m string) {
		if !slices.Contains(b.Messages, m) {
			b.Messages = append(b.Messages, m)
		}
	}
	if r.proxy != nil {
		for _, h := range r.proxy.Refused() {
			add(fmt.Sprintf("blocked by the sandbox: the network proxy refused %s, which is not in sandbox.network.allowedDomains (allowed: %s)", h, strings.Join(r.proxy.allowed, ", ")))
		}
	}
	netNoted := false
	for _, line := range strings.Split(output, "\n") {
		if len(b.Messages) >= 5 {
			break
		}
		if netRE.MatchString(line) && !netNoted {
			netNoted = true
			if r.proxy == nil {
				add("network is off in the sandbox (its own network namespace, loopback only: not even the host's 127.0.0.1 is reachable); allowed domains: none. Ask the user to add the host to sandbox.network.allowedDomains, or to add the command to sandbox.excludedCommands")
			} else {
				add(fmt.Sprintf("network in the sandbox goes only through its proxy (HTTP_PROXY/HTTPS_PROXY), to the allowed domains: %s", strings.Join(r.proxy.allowed, ", ")))
			}
			continue
		}
		if !denialRE.MatchString(line) {
			continue
		}
		if m := r.classify(line, dir); m != "" {
			add(m)
		}
	}
	return b
}

// classify names what a denial line was about, or "" when the path it
// names is not one the sandbox holds (a plain permission problem).
func (r *Run) classify(line, dir string) string {
	low := strings.ToLower(line)
	if strings.Contains(low, "unshare") || strings.Contains(low, "mount") || strings.Contains(low, "ptrace") || strings.Contains(low, "setuid") {
		return "blocked by the sandbox: namespaces, mounts, ptrace of processes outside and privilege changes are not permitted inside it"
	}
	loc := denialRE.FindStringIndex(line)
	before, after := line[:loc[0]], line[loc[1]:]
	// Most likely first: a quoted path after the error (Python's
	// "Permission denied: '/x'"), then the subject just before it
	// ("bash: line 1: FILE: Permission denied", "touch: cannot touch 'FILE'").
	var cands []string
	for _, m := range quotedRE.FindAllStringSubmatch(after, -1) {
		cands = append(cands, m[1])
	}
	subject := strings.TrimRight(before, ": ")
	if i := strings.LastIndex(subject, ": "); i >= 0 {
		subject = subject[i+2:]
	}
	if q := quotedRE.FindAllStringSubmatch(subject, -1); len(q) > 0 {
		for i := len(q) - 1; i >= 0; i-- {
			cands = append(cands, q[i][1])
		}
	} else if subject != "" && !strings.ContainsAny(subject, " \t") {
		cands = append(cands, subject)
	}
	for _, c := range cands {
		p := c
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if m := r.why(filepath.Clean(p)); m != "" {
			return m
		}
	}
	return ""
}

// why says why p is held, or "".
func (r *Run) why(p string) string {
	for _, d := range append(slices.Clone(r.pol.DenyDirs), r.pol.DenyFiles...) {
		if within(p, d) {
			return fmt.Sprintf("blocked by the sandbox: %s cannot be read (sandbox.filesystem.denyRead, or a Read deny rule, covers %s)", p, d)
		}
	}
	for _, d := range r.pol.ReadOnly {
		if within(p, d) {
			return fmt.Sprintf("blocked by the sandbox: %s is read-only in the sandbox (%s stays read-only: git hooks and config, agentls's settings and paths under deny rules cannot be changed by a command)", p, d)
		}
	}
	// Reads are allowed everywhere else: a path agentls itself can read
	// (or that does not exist yet) was denied for a write; one agentls
	// cannot read either is a plain permission problem, not the sandbox.
	if f, err := os.Open(p); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if !r.writable(p) {
		return fmt.Sprintf("blocked by the sandbox: write to %s is outside the workspace (writable: the workspace folders, $TMPDIR and sandbox.filesystem.allowWrite)", p)
	}
	return ""
}
