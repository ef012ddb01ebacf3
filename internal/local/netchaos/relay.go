package netchaos

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// dialTimeout bounds a relay's connection to its target.
const dialTimeout = 10 * time.Second

// Relay accepts TCP connections on a loopback port and copies their bytes to and from its
// target. It reads nothing of what it copies.
type Relay struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// NewRelay listens on a free port of 127.0.0.1 and relays every connection to target
// ("host:port") until Close.
func NewRelay(target string) (*Relay, error) {
	if _, _, err := net.SplitHostPort(target); err != nil {
		return nil, fmt.Errorf("netchaos: relay target %q: %w (want host:port)", target, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netchaos: relay to %s: %w", target, err)
	}
	r := &Relay{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	r.wg.Add(1)
	go r.serve()
	return r, nil
}

// Addr is the relay's address, 127.0.0.1:port.
func (r *Relay) Addr() string { return r.ln.Addr().String() }

// Port is the relay's port on 127.0.0.1.
func (r *Relay) Port() int { return r.ln.Addr().(*net.TCPAddr).Port }

// Target is the address the relay copies to.
func (r *Relay) Target() string { return r.target }

// Close stops accepting, closes every relayed connection and waits for the relay's goroutines.
func (r *Relay) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	err := r.ln.Close()
	for c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
	return err
}

func (r *Relay) serve() {
	defer r.wg.Done()
	for {
		in, err := r.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A temporary failure (too many files): try again shortly.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !r.track(in) {
			return
		}
		r.wg.Add(1)
		go r.pipe(in)
	}
}

// track remembers c for Close; it closes c and returns false once the relay is closed.
func (r *Relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		_ = c.Close()
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *Relay) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	_ = c.Close()
}

// pipe copies between in and a new connection to the target until either side ends, then
// closes both.
func (r *Relay) pipe(in net.Conn) {
	defer r.wg.Done()
	defer r.untrack(in)
	out, err := net.DialTimeout("tcp", r.target, dialTimeout)
	if err != nil {
		return
	}
	if !r.track(out) {
		return
	}
	defer r.untrack(out)
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go cp(out, in)
	go cp(in, out)
	<-done
	// One side ended: end the other, whose copy then returns too.
	_ = in.Close()
	_ = out.Close()
	<-done
}
