package launcher

import (
	"io"
	"net"
	"os"
)

// runForwarder relays every connection accepted on fd 3 (127.0.0.1 in the
// command's network namespace) to the proxy's unix socket outside.
func runForwarder(args []string) int {
	if len(args) != 1 {
		return 2
	}
	ln, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		return 1
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return 0
		}
		go func() { // ends when either side closes; the process dies with the shell
			defer c.Close()
			up, err := net.Dial("unix", args[0])
			if err != nil {
				return
			}
			defer up.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
			go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
			<-done
		}()
	}
}
