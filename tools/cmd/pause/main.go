// Command pause is the sandbox ("infra") container of the local fleet's real nodes: it holds a
// pod's namespaces open and does nothing else, as registry.k8s.io/pause does (which cannot be
// pulled here). It exits 0 on SIGTERM or SIGINT, and as PID 1 of a pod sharing its process
// namespace it reaps the zombies other containers leave.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
