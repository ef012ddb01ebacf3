package localk8s

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"time"
)

// Etcd is a running single-member etcd on loopback.
type Etcd struct {
	// URL is the client URL API servers connect to.
	URL     string
	Process *Process
	spec    processSpec
}

// EtcdOptions configures StartEtcd.
type EtcdOptions struct {
	Name     string // used in process names and messages
	Dir      string // data and log folder
	Binaries Binaries
	Detach   bool
}

// StartEtcd starts etcd and waits until it reports healthy.
func StartEtcd(ctx context.Context, opts EtcdOptions) (*Etcd, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		ps, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		clientURL := fmt.Sprintf("http://127.0.0.1:%d", ps[0])
		peerURL := fmt.Sprintf("http://127.0.0.1:%d", ps[1])
		logPath := filepath.Join(opts.Dir, "etcd.log")
		spec := processSpec{
			name:   opts.Name,
			binary: opts.Binaries.Path(EtcdBin),
			args: []string{
				"--name=default",
				"--data-dir=" + filepath.Join(opts.Dir, "data"),
				"--listen-client-urls=" + clientURL,
				"--advertise-client-urls=" + clientURL,
				"--listen-peer-urls=" + peerURL,
				"--initial-advertise-peer-urls=" + peerURL,
				"--initial-cluster=default=" + peerURL,
				// Local fleets are disposable: skipping fsync makes every write an order of
				// magnitude cheaper, and losing data on a machine crash costs nothing.
				"--unsafe-no-fsync",
				"--log-level=warn",
			},
			logPath: logPath,
			detach:  opts.Detach,
		}
		p, err := startProcess(spec)
		if err != nil {
			return nil, err
		}
		err = waitReady(ctx, p, 30*time.Second, func(ctx context.Context) error {
			return httpOK(ctx, http.DefaultClient, clientURL+"/health")
		})
		if err == nil {
			return &Etcd{URL: clientURL, Process: p, spec: spec}, nil
		}
		p.Stop(2 * time.Second)
		lastErr = err
		if !errAddrInUse(logPath) {
			break
		}
	}
	return nil, lastErr
}

// Stop stops etcd; stop every API server that uses it first.
func (e *Etcd) Stop() { e.Process.Stop(10 * time.Second) }

// Start starts a stopped etcd again with the arguments it first ran with: the same URLs and data,
// so what it stored carries over. It returns when etcd reports healthy; it fails if etcd is
// running, or if another program took its ports meanwhile.
func (e *Etcd) Start(ctx context.Context) error {
	if exited, _ := e.Process.Exited(); !exited {
		return fmt.Errorf("%s is running (pid %d); stop it first", e.spec.name, e.Process.PID())
	}
	p, err := startProcess(e.spec)
	if err != nil {
		return err
	}
	e.Process = p
	if err := waitReady(ctx, p, 30*time.Second, func(ctx context.Context) error { return httpOK(ctx, http.DefaultClient, e.URL+"/health") }); err != nil {
		p.Stop(2 * time.Second)
		return fmt.Errorf("starting %s again: %w", e.spec.name, err)
	}
	return nil
}

func httpOK(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
