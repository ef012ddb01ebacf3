package localk8s

import (
	"context"
	"fmt"
	"time"
)

// waitReady polls check every interval until it returns nil, the process exits (an error with
// its log tail), or the timeout passes (an error with check's last complaint and the log tail).
func waitReady(ctx context.Context, p *Process, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if err := check(ctx); err == nil {
			return nil
		} else {
			last = err
		}
		select {
		case <-p.Done():
			return p.ExitError()
		case <-ctx.Done():
			return fmt.Errorf("%s did not become ready within %s (last check: %v); last lines of %s:\n%s",
				p.Name, timeout, last, p.LogPath, LogTail(p.LogPath, 20))
		case <-tick.C:
		}
	}
}
