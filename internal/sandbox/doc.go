// Package sandbox owns the operating-system confinement of bash commands:
// the sandbox settings (Settings), the policy a command runs under (what
// it may write, what it may not read, whether it has a network), the
// choice of the launcher that applies that policy to itself in the child
// and then executes the shell (Linux: user, mount and network namespaces,
// Landlock, PR_SET_NO_NEW_PRIVS; package launcher, run as the small
// agentls-sandbox beside agentls or as `agentls __sandbox`), the
// filtering proxy for allowed domains, the macOS Seatbelt profile, and
// the explanation of what the sandbox blocked, read from a command's
// output.
//
// The permission engine (internal/policy) parses the settings; the bash
// tool asks Sandbox.Prepare for the wrapper of each command it starts
// (internal/proc runs it through Spec.Wrap), so process groups, the
// subreaper, streaming, spill and timeouts work as unsandboxed.
package sandbox
