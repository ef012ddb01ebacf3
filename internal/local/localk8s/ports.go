package localk8s

import (
	"fmt"
	"net"
	"sync"
)

// ports hands out free loopback ports. The kernel picks a free port when we listen on port 0; we
// close the listener and remember the port so that this program never hands it out twice. Another
// program can still take it before our process binds it; starts that fail with "address already
// in use" are retried with new ports.
var ports = struct {
	sync.Mutex
	given map[int]bool
}{given: map[int]bool{}}

// freePort is a variable so that a test can hand out a busy port.
var freePort = kernelFreePort

func kernelFreePort() (int, error) {
	ports.Lock()
	defer ports.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("finding a free loopback port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if !ports.given[port] {
			ports.given[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("finding a free loopback port: 100 tries gave only ports already handed out")
}

func freePorts(n int) ([]int, error) {
	out := make([]int, n)
	for i := range out {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// FreePorts hands out n free loopback ports for programs that run beside the fleet.
func FreePorts(n int) ([]int, error) { return freePorts(n) }
