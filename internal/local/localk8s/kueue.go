package localk8s

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	multiclusterv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/certs"
	"github.com/flotilla/flotilla/internal/contract/kueueworker"
	"github.com/flotilla/flotilla/internal/install"
)

// KueueVersion is the Kueue release tools/build-kueue.sh builds.
const KueueVersion = "v0.17.0"

// KueueBinDirEnv names the environment variable that points at the folder tools/build-kueue.sh
// printed; without it FindKueue looks in the user cache folder.
const KueueBinDirEnv = "FLOTILLA_KUEUE_BIN"

// Names in a Kueue folder (tools/build-kueue.sh).
const (
	KueueBin             = "kueue"
	KueueCRDDir          = "crds"
	KueueWebhooksFile    = "webhook-manifests.yaml"
	KueueNamespace       = "kueue-system"
	kueueMutatingName    = "kueue-mutating-webhook-configuration"
	kueueValidatingName  = "kueue-validating-webhook-configuration"
	kueueCertLifetime    = 10 * 365 * 24 * time.Hour
	kueueReadyTimeout    = 2 * time.Minute
	kueueStopGracePeriod = 5 * time.Second
)

// KueueBinaries is a folder written by tools/build-kueue.sh: the manager, its CRDs and its
// webhook configurations.
type KueueBinaries struct{ Dir string }

// Path is the path of one file of the folder.
func (b KueueBinaries) Path(name string) string { return filepath.Join(b.Dir, name) }

// Check reports what the folder lacks and how to build it.
func (b KueueBinaries) Check() error {
	var missing []string
	for _, name := range []string{KueueBin, KueueCRDDir, KueueWebhooksFile} {
		if _, err := os.Stat(b.Path(name)); err != nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the Kueue folder %s lacks %v: run `make k8s-bin` (tools/build-kueue.sh) to build it", b.Dir, missing)
	}
	return nil
}

// FindKueue locates the built Kueue manager: the folder named by $FLOTILLA_KUEUE_BIN, else the
// newest complete build of KueueVersion in the user cache folder tools/build-kueue.sh writes to.
func FindKueue() (KueueBinaries, error) {
	if dir := os.Getenv(KueueBinDirEnv); dir != "" {
		b := KueueBinaries{Dir: dir}
		return b, b.Check()
	}
	root := os.Getenv("FLOTILLA_CACHE_DIR")
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return KueueBinaries{}, fmt.Errorf("no Kueue build found: set %s to the folder tools/build-kueue.sh printed", KueueBinDirEnv)
		}
		root = filepath.Join(cache, "flotilla")
	}
	matches, _ := filepath.Glob(filepath.Join(root, "kueue-"+KueueVersion+"-*", "bin"))
	var best KueueBinaries
	var bestMod int64
	for _, m := range matches {
		b := KueueBinaries{Dir: m}
		st, err := os.Stat(b.Path(KueueBin))
		if b.Check() != nil || err != nil {
			continue
		}
		if mod := st.ModTime().UnixNano(); best.Dir == "" || mod > bestMod {
			best, bestMod = b, mod
		}
	}
	if best.Dir == "" {
		return KueueBinaries{}, fmt.Errorf("no Kueue %s build under %s: run `make k8s-bin` (tools/build-kueue.sh) or set %s",
			KueueVersion, root, KueueBinDirEnv)
	}
	return best, nil
}

// ReadKueueCRDs reads Kueue's CRDs (kueue.x-k8s.io_*.yaml) from dir: a Kueue folder's crds/ or
// the module's config/components/crd/bases.
func ReadKueueCRDs(dir string) ([]*apiextv1.CustomResourceDefinition, error) {
	return install.ReadCRDs(dir, "kueue.x-k8s.io_*.yaml")
}

// InstallKueueCRDs applies Kueue's CRDs from dir to the cluster cfg points at and waits until
// they are served.
func InstallKueueCRDs(ctx context.Context, cfg *rest.Config, dir string) error {
	crds, err := ReadKueueCRDs(dir)
	if err != nil {
		return err
	}
	if _, err := install.CRDs(ctx, cfg, crds, install.Options{}); err != nil {
		return fmt.Errorf("installing Kueue's CRDs: %w", err)
	}
	return nil
}

// KueueOptions configures StartKueue.
type KueueOptions struct {
	// Cluster is the cluster Kueue manages. Kueue runs with its admin kubeconfig (local fleets
	// only: a real installation has Kueue's own ServiceAccount and RBAC).
	Cluster  *Cluster
	Binaries KueueBinaries
	// Detach starts a manager that outlives this program (flotilla dev up).
	Detach bool
	// MultiKueue, when set, configures the manager as a MultiKueue manager (the hub's).
	MultiKueue *MultiKueueOptions
	// OnExit, when set (and not Detach), is called when the manager exits by itself, with how it
	// ended; when it returns true the manager is started again a second later, with the same
	// configuration and ports, as a Deployment's kubelet restarts a crashed container. Kueue
	// v0.17.0 can panic in its preemption (workload.Evict reads status.admission after a patch
	// that cleared it), which on a cluster costs a restart, not the whole Kueue.
	OnExit func(exit error) bool
}

// MultiKueueOptions are the settings of a MultiKueue manager cluster's Kueue.
type MultiKueueOptions struct {
	// DispatcherName is multiKueue.dispatcherName: Kueue's all-at-once when "", or
	// flotilla.io/placement-ranked to let the hub nominate workers.
	DispatcherName string
	// WorkerLostTimeout is multiKueue.workerLostTimeout: how long a workload admitted on a worker
	// that can no longer be reached keeps its place before it is queued again (Kueue's 15
	// minutes when zero).
	WorkerLostTimeout time.Duration
	// RemoteQPS and RemoteBurst rate-limit MultiKueue's client of each worker (the flags
	// tools/build-kueue.sh adds); client-go's 5 and 10, as released Kueue has them, when zero.
	RemoteQPS, RemoteBurst int
	// FairSharing turns on Kueue's fair sharing (its Configuration's fairSharing, with Kueue's
	// default preemption strategies): ClusterQueues of a cohort share what they borrow by their
	// fairSharing.weight, as FleetQueues (docs/queueing.md) expect.
	FairSharing bool
	// CredentialsPlugin, when set, turns on Kueue's MultiKueueClusterProfile gate and configures
	// the plugin as the credentials provider of ClusterProfiles' access provider of its name:
	// MultiKueueClusters that name a ClusterProfile (clusterSource.clusterProfileRef) then reach
	// their worker with what the plugin returns.
	CredentialsPlugin *CredentialsPlugin
}

// CredentialsPlugin is a KEP-5339 credentials plugin Kueue runs for a ClusterProfile access
// provider (multiKueue.clusterProfile.credentialsProviders in its Configuration).
type CredentialsPlugin struct {
	// Provider is the access provider's name in the ClusterProfiles.
	Provider string
	// Command and Args run the plugin; Env is added to Kueue's environment for it.
	Command string
	Args    []string
	Env     map[string]string
}

// HubPlugin is the credentials plugin of a local hub's Kueue: `flotilla credentials-plugin
// --managed-serviceaccount multikueue` (flotilla is the binary's path), reading the hub as hub's
// administrator, as Kueue itself does in a local fleet (a real installation gives Kueue's
// ServiceAccount read of those tokens instead; docs/kueue.md).
func HubPlugin(flotilla string, hub *Cluster) *CredentialsPlugin {
	return &CredentialsPlugin{Provider: multiclusterv1alpha1.AccessProviderName, Command: flotilla,
		Args: []string{"credentials-plugin", "--managed-serviceaccount", kueueworker.ManagedServiceAccount},
		Env:  map[string]string{"KUBECONFIG": hub.Kubeconfig}}
}

// Kueue is a running Kueue manager.
type Kueue struct {
	// Process is the manager as first started (a restart, KueueOptions.OnExit, runs another).
	Process *Process
	// Dir holds the configuration, certificates and the log (under <cluster>/kueue).
	Dir string
	// WebhookPort, HealthPort and MetricsPort are its loopback ports.
	WebhookPort, HealthPort, MetricsPort int

	mu      sync.Mutex
	current *Process
	stopped bool
}

// StartKueue installs Kueue's CRDs, namespace and webhook configurations on a cluster and starts
// its manager, returning when the manager is ready and its webhook server answers. On error it
// stops what it started.
func StartKueue(ctx context.Context, opts KueueOptions) (_ *Kueue, err error) {
	c := opts.Cluster
	if err := opts.Binaries.Check(); err != nil {
		return nil, err
	}
	k := &Kueue{Dir: filepath.Join(c.Dir, "kueue")}
	certDir := filepath.Join(k.Dir, "certs")
	if err := os.MkdirAll(certDir, 0o755); err != nil {
		return nil, fmt.Errorf("cluster %s: kueue: %w", c.Name, err)
	}
	if err := InstallKueueCRDs(ctx, c.Config, opts.Binaries.Path(KueueCRDDir)); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KueueNamespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("cluster %s: creating namespace %s: %w", c.Name, KueueNamespace, err)
	}
	caPEM, err := writeKueueServingCert(certDir)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: kueue: %w", c.Name, err)
	}
	p, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	k.WebhookPort, k.HealthPort, k.MetricsPort = p[0], p[1], p[2]
	configPath := filepath.Join(k.Dir, "config.yaml")
	if err := os.WriteFile(configPath, kueueConfig(k, certDir, opts.MultiKueue), 0o644); err != nil {
		return nil, fmt.Errorf("cluster %s: writing Kueue's configuration: %w", c.Name, err)
	}
	if err := applyKueueWebhooks(ctx, cs, opts.Binaries.Path(KueueWebhooksFile), k.WebhookPort, caPEM); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	spec := processSpec{
		name:   c.Name + "/" + KueueBin,
		binary: opts.Binaries.Path(KueueBin),
		args: append([]string{"--config=" + configPath, "--kubeconfig=" + c.Kubeconfig,
			"--metrics-cert-dir=" + certDir, "--zap-log-level=" + kueueLogLevel()}, remoteLimits(opts.MultiKueue)...),
		logPath: filepath.Join(c.Dir, "logs", KueueBin+".log"),
		detach:  opts.Detach,
	}
	k.Process, err = startProcess(spec)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	k.current = k.Process
	defer func() {
		if err != nil {
			k.Stop()
		}
	}()
	if err := waitReady(ctx, k.Process, kueueReadyTimeout, k.ready(caPEM)); err != nil {
		return nil, fmt.Errorf("cluster %s: kueue: %w", c.Name, err)
	}
	if opts.OnExit != nil && !opts.Detach {
		go k.restartOnExit(spec, opts.OnExit)
	}
	return k, nil
}

// restartOnExit starts the manager again each time it exits by itself and onExit agrees, until
// Stop.
func (k *Kueue) restartOnExit(spec processSpec, onExit func(error) bool) {
	for {
		k.mu.Lock()
		p := k.current
		k.mu.Unlock()
		<-p.Done()
		k.mu.Lock()
		stopped := k.stopped
		k.mu.Unlock()
		if stopped || !onExit(p.ExitError()) {
			return
		}
		time.Sleep(time.Second)
		np, err := startProcess(spec)
		k.mu.Lock()
		if err != nil || k.stopped {
			k.mu.Unlock()
			if np != nil {
				np.Stop(kueueStopGracePeriod)
			}
			return
		}
		k.current = np
		k.mu.Unlock()
	}
}

// Stop stops the manager (SIGTERM, then SIGKILL after a grace period), and restarts no more. Its
// webhook configurations stay, as on a cluster whose Kueue is down: Jobs are refused until it is
// back.
func (k *Kueue) Stop() {
	k.mu.Lock()
	k.stopped = true
	p := k.current
	k.mu.Unlock()
	if p != nil {
		p.Stop(kueueStopGracePeriod)
	}
}

// ready checks the manager's readiness endpoint and that its webhook server serves TLS with the
// certificate the webhook configurations trust.
func (k *Kueue) ready(caPEM []byte) func(context.Context) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(k.HealthPort)+"/readyz", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz: %s: %s", resp.Status, bytes.TrimSpace(body))
		}
		d := tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}}
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(k.WebhookPort)))
		if err != nil {
			return fmt.Errorf("webhook server: %w", err)
		}
		return conn.Close()
	}
}

// writeKueueServingCert writes a CA and a certificate for 127.0.0.1 (tls.crt, tls.key) that the
// webhook and metrics servers serve, and returns the CA in PEM for the webhooks' caBundle.
func writeKueueServingCert(dir string) ([]byte, error) {
	now := time.Now()
	ca, err := certs.NewCA("flotilla-kueue-ca", now, kueueCertLifetime)
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := ca.Issue(x509.Certificate{
		Subject:     pkix.Name{CommonName: "kueue-webhook"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:    []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, now, kueueCertLifetime)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), keyPEM, 0o600); err != nil {
		return nil, err
	}
	return ca.CertPEM(), nil
}

// kueueConfig is Kueue's Configuration (config.kueue.x-k8s.io/v1beta2) for a local manager, with
// client limits raised from Kueue's 20 requests a second (which would pace a MultiKueue manager
// dispatching many jobs), and multiKueue settings when mk is set: no
// leader election, no internal certificate management, every server on loopback, and the
// visibility server (which reads certificates from the fixed folder /visibility) off. The
// controllers' concurrency is that of Kueue's released manifests and chart
// (controller_manager_config.yaml): without it every controller has one worker, and one MultiKueue
// reconcile waiting on a worker cut off by a partition would hold up every other workload's.
func kueueConfig(k *Kueue, certDir string, mk *MultiKueueOptions) []byte {
	cfg := fmt.Appendf(nil, `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: %s
manageJobsWithoutQueueName: false
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %q
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: 127.0.0.1:%d
featureGates:
  VisibilityOnDemand: false%s
integrations:
  frameworks:
  - batch/job
clientConnection:
  qps: 200
  burst: 400
controller:
  groupKindConcurrency:
    Job.batch: 5
    Pod: 5
    Workload.kueue.x-k8s.io: 5
    LocalQueue.kueue.x-k8s.io: 1
    Cohort.kueue.x-k8s.io: 1
    ClusterQueue.kueue.x-k8s.io: 1
    ResourceFlavor.kueue.x-k8s.io: 1
`, KueueNamespace, k.WebhookPort, certDir, k.HealthPort, k.MetricsPort, gates(mk))
	if mk == nil {
		return cfg
	}
	if mk.FairSharing {
		cfg = append(cfg, "fairSharing:\n  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]\n"...)
	}
	cfg = append(cfg, "multiKueue:\n"...)
	if mk.DispatcherName != "" {
		cfg = fmt.Appendf(cfg, "  dispatcherName: %q\n", mk.DispatcherName)
	}
	if mk.WorkerLostTimeout > 0 {
		cfg = fmt.Appendf(cfg, "  workerLostTimeout: %s\n", mk.WorkerLostTimeout)
	}
	if p := mk.CredentialsPlugin; p != nil {
		cfg = fmt.Appendf(cfg, "  clusterProfile:\n    credentialsProviders:\n    - name: %q\n      execConfig:\n"+
			"        apiVersion: client.authentication.k8s.io/v1\n        command: %q\n        provideClusterInfo: true\n        interactiveMode: Never\n",
			p.Provider, p.Command)
		if len(p.Args) > 0 {
			cfg = append(cfg, "        args:\n"...)
			for _, a := range p.Args {
				cfg = fmt.Appendf(cfg, "        - %q\n", a)
			}
		}
		if len(p.Env) > 0 {
			cfg = append(cfg, "        env:\n"...)
			for _, k := range slices.Sorted(maps.Keys(p.Env)) {
				cfg = fmt.Appendf(cfg, "        - {name: %q, value: %q}\n", k, p.Env[k])
			}
		}
	}
	return cfg
}

// remoteLimits are the flags that raise MultiKueue's rate limit of its clients of the workers.
func remoteLimits(mk *MultiKueueOptions) []string {
	if mk == nil || mk.RemoteQPS <= 0 {
		return nil
	}
	burst := mk.RemoteBurst
	if burst <= 0 {
		burst = 2 * mk.RemoteQPS
	}
	return []string{fmt.Sprintf("--multikueue-remote-qps=%d", mk.RemoteQPS), fmt.Sprintf("--multikueue-remote-burst=%d", burst)}
}

// gates are the feature gates beyond VisibilityOnDemand. An external MultiKueue dispatcher
// writes status.nominatedClusterNames as its own field manager; Kueue, when a worker admits the
// workload, sets clusterName and clears the nominations in one write, which with server-side
// apply (Kueue's default) cannot remove another manager's field, so the API server refuses it
// ("clusterName and nominatedClusterNames are mutually exclusive"). WorkloadRequestUseMergePatch
// (alpha in v0.17.0) makes Kueue write merge patches, which can.
func gates(mk *MultiKueueOptions) string {
	g := ""
	if mk != nil && mk.DispatcherName != "" {
		g += "\n  WorkloadRequestUseMergePatch: true"
	}
	if mk != nil && mk.CredentialsPlugin != nil {
		g += "\n  MultiKueueClusterProfile: true"
	}
	return g
}

// kueueSystemSelector leaves kube-system and Kueue's namespace out of the Pod, Deployment and StatefulSet webhooks, as Kueue's
// own kustomization does.
var kueueSystemSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
	Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", KueueNamespace},
}}}

var kueueSelectedWebhooks = map[string]bool{
	"mpod.kb.io": true, "mdeployment.kb.io": true, "mstatefulset.kb.io": true,
	"vpod.kb.io": true, "vdeployment.kb.io": true, "vstatefulset.kb.io": true,
}

// applyKueueWebhooks creates or replaces Kueue's webhook configurations from the module's
// manifests, each service reference replaced by https://127.0.0.1:<port><path> and caBundle.
func applyKueueWebhooks(ctx context.Context, cs kubernetes.Interface, path string, port int, caPEM []byte) error {
	mutating, validating, err := readKueueWebhooks(path, port, caPEM)
	if err != nil {
		return err
	}
	mc := cs.AdmissionregistrationV1().MutatingWebhookConfigurations()
	if old, err := mc.Get(ctx, mutating.Name, metav1.GetOptions{}); err == nil {
		mutating.ResourceVersion = old.ResourceVersion
		_, err = mc.Update(ctx, mutating, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("updating %s: %w", mutating.Name, err)
		}
	} else if _, err := mc.Create(ctx, mutating, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating %s: %w", mutating.Name, err)
	}
	vc := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if old, err := vc.Get(ctx, validating.Name, metav1.GetOptions{}); err == nil {
		validating.ResourceVersion = old.ResourceVersion
		_, err = vc.Update(ctx, validating, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("updating %s: %w", validating.Name, err)
		}
	} else if _, err := vc.Create(ctx, validating, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating %s: %w", validating.Name, err)
	}
	return nil
}

// readKueueWebhooks reads the two webhook configurations of Kueue's
// config/components/webhook/manifests.yaml and points them at a local manager.
func readKueueWebhooks(path string, port int, caPEM []byte) (*admissionv1.MutatingWebhookConfiguration, *admissionv1.ValidatingWebhookConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading Kueue's webhooks: %w", err)
	}
	var mutating *admissionv1.MutatingWebhookConfiguration
	var validating *admissionv1.ValidatingWebhookConfiguration
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", path, err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", path, err)
		}
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			mutating = &admissionv1.MutatingWebhookConfiguration{}
			err = yaml.UnmarshalStrict(doc, mutating)
		case "ValidatingWebhookConfiguration":
			validating = &admissionv1.ValidatingWebhookConfiguration{}
			err = yaml.UnmarshalStrict(doc, validating)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", path, err)
		}
	}
	if mutating == nil || validating == nil {
		return nil, nil, fmt.Errorf("%s lacks a MutatingWebhookConfiguration or a ValidatingWebhookConfiguration", path)
	}
	local := func(name string, cc *admissionv1.WebhookClientConfig) (*metav1.LabelSelector, error) {
		if cc.Service == nil || cc.Service.Path == nil {
			return nil, fmt.Errorf("%s: webhook %s has no service path to point at the local manager", path, name)
		}
		cc.URL = ptr.To("https://127.0.0.1:" + strconv.Itoa(port) + *cc.Service.Path)
		cc.Service = nil
		cc.CABundle = caPEM
		if kueueSelectedWebhooks[name] {
			return kueueSystemSelector.DeepCopy(), nil
		}
		return nil, nil
	}
	mutating.Name = kueueMutatingName
	for i := range mutating.Webhooks {
		w := &mutating.Webhooks[i]
		sel, err := local(w.Name, &w.ClientConfig)
		if err != nil {
			return nil, nil, err
		}
		if sel != nil {
			w.NamespaceSelector = sel
		}
	}
	validating.Name = kueueValidatingName
	for i := range validating.Webhooks {
		w := &validating.Webhooks[i]
		sel, err := local(w.Name, &w.ClientConfig)
		if err != nil {
			return nil, nil, err
		}
		if sel != nil {
			w.NamespaceSelector = sel
		}
	}
	return mutating, validating, nil
}

// KueueLogLevelEnv names the environment variable that sets the Kueue managers' --zap-log-level
// (info when unset; a number such as 3 shows MultiKueue's reconciles, for debugging a fleet).
const KueueLogLevelEnv = "FLOTILLA_KUEUE_LOG_LEVEL"

func kueueLogLevel() string {
	if l := os.Getenv(KueueLogLevelEnv); l != "" {
		return l
	}
	return "info"
}
