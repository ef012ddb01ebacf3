package registration

import (
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/api/scheme"
)

// shared is a value some loops write and others read at every round, with a signal when it
// changes. Values are never modified once stored: a writer stores a new one.
type shared[T any] struct {
	mu      sync.Mutex
	v       T
	changed chan struct{}
}

// Shared is a holder that loops of other agents use the same way (the add-on agent's view of
// its ManagedClusterAddOns).
type Shared[T any] = shared[T]

// Get returns the current value.
func (s *shared[T]) Get() T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.v
}

// Set stores v and wakes the loops waiting on Changed.
func (s *shared[T]) Set(v T) { s.store(v, true) }

func (s *shared[T]) store(v T, notify bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.v = v
	if notify && s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// Changed returns a channel that closes at the next Set.
func (s *shared[T]) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// HubClients reach the hub with the agent's own client certificate.
type HubClients struct {
	Config *rest.Config
	Client client.Client
	Kube   kubernetes.Interface
	// NotAfter is when the certificate expires.
	NotAfter time.Time
	creds    *credentials
}

func newHubClients(creds *credentials) (*HubClients, error) {
	cfg, err := creds.restConfig()
	if err != nil {
		return nil, err
	}
	// Every client made with the agent's hub credentials (its loops and the built-in add-ons')
	// has the agent's rate, not client-go's 5 requests a second.
	cfg.QPS, cfg.Burst = DefaultQPS, DefaultBurst
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &HubClients{Config: cfg, Client: c, Kube: kube, NotAfter: creds.cert.NotAfter, creds: creds}, nil
}

// HubAccess holds the agent's current hub credentials for every loop that talks to the hub with
// them. Loops read Current at each round, so a renewed certificate takes effect at their next
// request; Current is nil while the agent has none (it is registering). The client certificate
// loop alone sets them.
type HubAccess struct {
	current shared[*HubClients]
	mu      sync.Mutex
	// refused is the hub's refusal (401) of refusedClients, while they are current.
	refused        error
	refusedClients *HubClients
}

// Current returns the credentials in use, or nil.
func (h *HubAccess) Current() *HubClients { return h.current.Get() }

// Changed returns a channel that closes when the credentials change or are refused.
func (h *HubAccess) Changed() <-chan struct{} { return h.current.Changed() }

// Refused tells the client certificate loop that the hub answered 401 Unauthorized to c: if c
// are still the current credentials, the agent registers again with the bootstrap kubeconfig.
func (h *HubAccess) Refused(c *HubClients, err error) {
	if c == nil || h.Current() != c {
		return // credentials replaced since
	}
	h.mu.Lock()
	h.refused, h.refusedClients = err, c
	h.mu.Unlock()
	h.current.store(c, true)
}

// refusal returns why the hub refused c, or nil.
func (h *HubAccess) refusal(c *HubClients) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c == nil || h.refusedClients != c {
		return nil
	}
	return h.refused
}

func (h *HubAccess) set(c *HubClients) {
	h.mu.Lock()
	h.refused, h.refusedClients = nil, nil
	h.mu.Unlock()
	h.current.Set(c)
}

// Credentials gives the registration agent's current hub credentials and says when they change
// (HubAccess); the work and add-on agents follow them.
type Credentials interface {
	Current() *HubClients
	Changed() <-chan struct{}
}
