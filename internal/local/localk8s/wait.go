package localk8s

import (
	"context"
	"fmt"
	"time"
)

// waitReady polls check until it returns nil, the process exits (an error with its log tail), or
// the timeout passes (an error with check's last complaint and the log tail). Each check runs
// beside a watch on the process, so a check stuck on a port another program holds cannot hide
// that our process has exited.
func waitReady(ctx context.Context, p *Process, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		result := make(chan error, 1)
		checkCtx, cancelCheck := context.WithTimeout(ctx, 2*time.Second)
		go func() { result <- check(checkCtx) }()
		select {
		case last = <-result:
			cancelCheck()
		case <-p.Done():
			cancelCheck()
			return p.ExitError()
		}
		if last == nil {
			return nil
		}
		select {
		case <-p.Done():
			return p.ExitError()
		case <-ctx.Done():
			return fmt.Errorf("%s did not become ready within %s (last check: %v); last lines of %s:\n%s",
				p.Name, timeout, last, p.LogPath, LogTail(p.LogPath, 20))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
