package sandbox

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agentls/agentls/internal/sandbox/launcher"
)

// SeatbeltProfile is the macOS sandbox-exec profile of a policy: reads
// everywhere but the denied paths, writes only in the writable paths
// (minus the read-only ones), network only to the proxy's port on
// loopback (proxyPort 0: no network). It is generated and unit-tested on
// every platform; only macOS can run it.
func SeatbeltProfile(pol launcher.Policy, proxyPort int) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(deny default)\n")
	b.WriteString("(allow process-exec)\n(allow process-fork)\n(allow signal (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read)\n(allow mach-lookup)\n(allow ipc-posix-shm)\n(allow file-ioctl)\n")
	b.WriteString("(allow file-read*)\n")
	deny := append(append([]string(nil), pol.DenyDirs...), pol.DenyFiles...)
	if len(deny) > 0 {
		b.WriteString("(deny file-read*\n")
		for _, d := range deny {
			fmt.Fprintf(&b, "  (subpath %s)\n", sbQuote(d))
		}
		b.WriteString(")\n")
	}
	b.WriteString("(allow file-write*\n")
	for _, w := range pol.Write {
		fmt.Fprintf(&b, "  (subpath %s)\n", sbQuote(w))
	}
	for _, d := range devFileNames() {
		fmt.Fprintf(&b, "  (literal %s)\n", sbQuote(d))
	}
	b.WriteString(")\n")
	ro := append(append([]string(nil), pol.ReadOnly...), pol.Pin...)
	if len(ro) > 0 {
		// Pins are writable on Linux; on macOS the .git directory itself
		// cannot be renamed or removed: unlink and rename of its name are
		// denied, its contents stay writable.
		b.WriteString("(deny file-write*\n")
		for _, d := range pol.ReadOnly {
			fmt.Fprintf(&b, "  (subpath %s)\n", sbQuote(d))
		}
		b.WriteString(")\n")
		if len(pol.Pin) > 0 {
			b.WriteString("(deny file-write-unlink\n")
			for _, d := range pol.Pin {
				fmt.Fprintf(&b, "  (literal %s)\n", sbQuote(d))
			}
			b.WriteString(")\n")
		}
	}
	if proxyPort > 0 {
		fmt.Fprintf(&b, "(allow network-outbound (remote ip \"localhost:%d\"))\n", proxyPort)
	}
	return b.String()
}

func devFileNames() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper", "/dev/stdout", "/dev/stderr"}
}

// sbQuote quotes s as a Seatbelt (SBPL) string literal.
func sbQuote(s string) string { return strconv.Quote(s) }
