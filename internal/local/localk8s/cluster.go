package localk8s

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ClusterOptions configures StartCluster.
type ClusterOptions struct {
	// Name is the cluster's name: a DNS label such as "hub" or "gpu-east".
	Name string
	// Dir holds the cluster's certificates, kubeconfigs and logs. It is created if missing.
	Dir      string
	Binaries Binaries
	// EtcdURL is the etcd the API server stores its objects in, under the prefix /<Name>.
	EtcdURL string
	// Workloads adds kube-scheduler and kwok, so that Pods are scheduled onto simulated nodes and
	// run (spokes). Without it the cluster has an API server and a controller manager (the hub).
	Workloads bool
	// Scheduler adds kube-scheduler without kwok: for a cluster whose nodes are process-runtime
	// nodes (internal/local/procruntime), such as a hub that runs its own charts' pods.
	Scheduler bool
	// APIServerOnly starts the API server alone, without kube-controller-manager: for
	// benchmarks that measure an API server by itself.
	APIServerOnly bool
	// Detach starts processes that outlive this program (flotilla dev up).
	Detach bool
	// Address is the IP the API server binds to and serves at; 127.0.0.1 when empty. A cluster
	// with a real node (internal/local/realnode) serves at the host's end of the node's link, which
	// the node's kubelet and pods reach.
	Address string
	// Profiling serves the API server's /debug/pprof (to system:masters and whoever RBAC lets
	// read nonResourceURLs /debug/*): for benchmarks that name what the server spends its CPU
	// on. Off by default, as kube-apiserver's hardening guides set it.
	Profiling bool
}

const defaultAddress = "127.0.0.1"

func (o ClusterOptions) address() string {
	if o.Address == "" {
		return defaultAddress
	}
	return o.Address
}

// Cluster is a running control plane.
type Cluster struct {
	Name string
	Dir  string
	// Server is the API server's URL.
	Server string
	// Kubeconfig is the path of a kubeconfig for an administrator (system:masters).
	Kubeconfig string
	// Config is the administrator's client configuration.
	Config *rest.Config

	APIServer         *Process
	ControllerManager *Process
	Scheduler         *Process // nil without Workloads or Scheduler
	Kwok              *Process // nil without Workloads
	// Etcd is the etcd the API server stores in when StartFleet started it (shared by every
	// cluster unless FleetOptions.EtcdPerCluster); nil for a cluster StartCluster started alone.
	Etcd *Etcd

	// apiServerSpec is how the API server was started, for StartAPIServer.
	apiServerSpec *processSpec
	// pki issues the cluster's certificates; nil for a cluster found again from a state file.
	pki *pki
}

// WriteClientKubeconfig writes a kubeconfig with a client certificate for user in groups, issued
// by the cluster's CA: a real node's kubelet is system:node:<node> in system:nodes (which the
// Node authorizer and NodeRestriction admission hold to its own Node and pods), its kube-proxy
// system:kube-proxy (bound to system:node-proxier by RBAC's bootstrap policy).
func (c *Cluster) WriteClientKubeconfig(path, user string, groups ...string) error {
	if c.pki == nil {
		return fmt.Errorf("cluster %s: its certificate authority is not loaded (a cluster found again from a state file cannot issue credentials)", c.Name)
	}
	cert, key, err := c.pki.clientCert(user, groups...)
	if err != nil {
		return err
	}
	return writeKubeconfig(path, c.Name, c.Server, c.pki.caPEM(), cert, key)
}

// KubeletClientCertFile is the path of the client certificate the API server calls kubelets with.
func (c *Cluster) KubeletClientCertFile() string { return filepath.Join(c.Dir, kubeletClientCertFile) }

// CAFile is the path of the cluster's CA certificate, which signs its API server's serving
// certificate and every client certificate it accepts.
func (c *Cluster) CAFile() string { return filepath.Join(c.Dir, caCertFile) }

// AdminKubeconfigFile is the name of the admin kubeconfig in a cluster's folder.
const AdminKubeconfigFile = "admin.kubeconfig"

// StartCluster starts a control plane and returns when its API server is ready and its other
// components are running. On error it stops whatever it started.
func StartCluster(ctx context.Context, opts ClusterOptions) (_ *Cluster, err error) {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", opts.Name, err)
	}
	c := &Cluster{Name: opts.Name, Dir: opts.Dir, Kubeconfig: filepath.Join(opts.Dir, AdminKubeconfigFile)}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	pki, err := newPKI(opts.Dir, opts.Name)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: creating certificates: %w", opts.Name, err)
	}
	if err := pki.servingCert(opts.address()); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", opts.Name, err)
	}
	if err := pki.kubeletClientCert(); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", opts.Name, err)
	}
	c.pki = pki
	if err := c.startAPIServer(ctx, opts, pki); err != nil {
		return nil, err
	}
	if opts.APIServerOnly {
		return c, nil
	}

	// Each component has its own identity, as on a real cluster, so RBAC's bootstrap roles apply.
	kcmKubeconfig, err := c.componentKubeconfig(pki, "kube-controller-manager", "system:kube-controller-manager")
	if err != nil {
		return nil, err
	}
	c.ControllerManager, err = c.startComponent(opts, ControllerManagerBin, controllerManagerArgs(opts, kcmKubeconfig))
	if err != nil {
		return nil, err
	}
	if opts.Workloads || opts.Scheduler {
		schedKubeconfig, err := c.componentKubeconfig(pki, "kube-scheduler", "system:kube-scheduler")
		if err != nil {
			return nil, err
		}
		c.Scheduler, err = c.startComponent(opts, SchedulerBin, schedulerArgs(schedKubeconfig))
		if err != nil {
			return nil, err
		}
	}
	if opts.Workloads {
		// kwok writes node and pod status for every simulated kubelet: it needs an administrator.
		stages, err := writeKwokStages(opts.Binaries, c.Dir)
		if err != nil {
			return nil, err
		}
		c.Kwok, err = c.startComponent(opts, KwokBin, kwokArgs(c.Kubeconfig, stages))
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) startAPIServer(ctx context.Context, opts ClusterOptions, pki *pki) error {
	adminCert, adminKey, err := pki.clientCert("flotilla-admin", "system:masters")
	if err != nil {
		return err
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		c.Server = "https://" + net.JoinHostPort(opts.address(), strconv.Itoa(port))
		if err := writeKubeconfig(c.Kubeconfig, c.Name, c.Server, pki.caPEM(), adminCert, adminKey); err != nil {
			return err
		}
		if c.Config, err = RESTConfigFromKubeconfig(c.Kubeconfig); err != nil {
			return err
		}
		logPath := filepath.Join(opts.Dir, "logs", APIServerBin+".log")
		spec := processSpec{
			name:    opts.Name + "/" + APIServerBin,
			binary:  opts.Binaries.Path(APIServerBin),
			args:    apiServerArgs(opts, port),
			logPath: logPath,
			detach:  opts.Detach,
		}
		c.APIServer, err = startProcess(spec)
		if err != nil {
			return err
		}
		err = waitReady(ctx, c.APIServer, 90*time.Second, c.Ready)
		if err == nil {
			c.apiServerSpec = &spec
			return nil
		}
		c.APIServer.Stop(2 * time.Second)
		lastErr = fmt.Errorf("cluster %s: %w", opts.Name, err)
		if !errAddrInUse(logPath) {
			break
		}
	}
	return lastErr
}

func (c *Cluster) componentKubeconfig(pki *pki, component, user string) (string, error) {
	cert, key, err := pki.clientCert(user)
	if err != nil {
		return "", err
	}
	path := filepath.Join(c.Dir, component+".kubeconfig")
	return path, writeKubeconfig(path, c.Name, c.Server, pki.caPEM(), cert, key)
}

func (c *Cluster) startComponent(opts ClusterOptions, bin string, args []string) (*Process, error) {
	p, err := startProcess(processSpec{
		name:    opts.Name + "/" + bin,
		binary:  opts.Binaries.Path(bin),
		args:    args,
		logPath: filepath.Join(opts.Dir, "logs", bin+".log"),
		detach:  opts.Detach,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", opts.Name, err)
	}
	return p, nil
}

// StopAPIServer stops the API server and leaves the cluster's other processes running, as an
// outage of the API server alone would: they and every client retry until StartAPIServer. Until
// then Check reports the API server as exited.
func (c *Cluster) StopAPIServer() {
	if c.APIServer != nil {
		c.APIServer.Stop(5 * time.Second)
	}
}

// StartAPIServer starts a stopped API server again with the arguments it first ran with: the same
// address, certificates and etcd prefix, so clients, kubeconfigs and stored objects carry over. It
// returns when the API server is ready. It fails if the API server is running, if the cluster was
// not started by StartCluster in this program, or if another program took the port meanwhile. A
// restarted process of a detached cluster is not recorded in the fleet's state file.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	if c.apiServerSpec == nil {
		return fmt.Errorf("cluster %s: no API server started by this program to start again", c.Name)
	}
	if exited, _ := c.APIServer.Exited(); !exited {
		return fmt.Errorf("cluster %s: the API server is running (pid %d); stop it first", c.Name, c.APIServer.PID())
	}
	p, err := startProcess(*c.apiServerSpec)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	c.APIServer = p
	if err := waitReady(ctx, p, 90*time.Second, c.Ready); err != nil {
		p.Stop(2 * time.Second)
		if errAddrInUse(p.LogPath) {
			return fmt.Errorf("cluster %s: restarting the API server: another program took %s meanwhile: %w", c.Name, c.Server, err)
		}
		return fmt.Errorf("cluster %s: restarting the API server: %w", c.Name, err)
	}
	return nil
}

// Ready asks the API server's /readyz.
func (c *Cluster) Ready(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	_, err = cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err
}

// Processes lists the cluster's running components, API server first.
func (c *Cluster) Processes() []*Process {
	var out []*Process
	for _, p := range []*Process{c.APIServer, c.ControllerManager, c.Scheduler, c.Kwok} {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// Check reports every component that has exited, with the end of its log; nil when all run.
func (c *Cluster) Check() error {
	var errs []error
	for _, p := range c.Processes() {
		if err := p.ExitError(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Stop stops the controllers, then the API server, killing each after a grace period.
func (c *Cluster) Stop() {
	var wg sync.WaitGroup
	for _, p := range []*Process{c.Kwok, c.Scheduler, c.ControllerManager} {
		if p != nil {
			wg.Go(func() { p.Stop(5 * time.Second) })
		}
	}
	wg.Wait()
	if c.APIServer != nil {
		// kube-apiserver drains for 15 s and more on SIGTERM; a local cluster has nothing to drain.
		c.APIServer.Stop(5 * time.Second)
	}
}
