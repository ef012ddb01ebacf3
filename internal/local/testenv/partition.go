package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/hub/csrs"
	"github.com/flotilla/flotilla/internal/kubeconfig"
	"github.com/flotilla/flotilla/internal/local/netchaos"
)

// Link is a spoke's own network path to and from the hub, which a test may cut and heal as a
// real partition would (internal/local/netchaos). The spoke's agent reaches the hub's API server only
// through HubRelay; the hub side (its controllers, MultiKueue) reaches the spoke's API server
// through SpokeRelay, since the ManagedCluster's spec.managedClusterClientConfigs names it. The
// test's own clients (Env.Hub, Env.Spokes) go around the link and keep working while it is cut.
type Link struct {
	Spoke string
	// HubRelay listens on 127.0.0.1:HubPort() and relays to the hub's API server.
	HubRelay *netchaos.Relay
	// SpokeRelay listens on 127.0.0.1:SpokePort() and relays to the spoke's API server.
	SpokeRelay *netchaos.Relay

	partition *netchaos.Partition
	spoke     *rest.Config
}

// NewLink makes spoke's link, not cut, and closes it when the test ends. It fails the test, saying
// what to install or that it needs root, if this machine cannot cut ports (netchaos.Check).
func (e *Env) NewLink(t testing.TB, spoke *Cluster) *Link {
	t.Helper()
	l := &Link{Spoke: spoke.Name, spoke: spoke.RESTConfig()}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("closing the link of %s: %v", spoke.Name, err)
		}
	})
	var err error
	for _, r := range []struct {
		relay  **netchaos.Relay
		server string
	}{{&l.HubRelay, e.Hub.Server}, {&l.SpokeRelay, spoke.Server}} {
		u, perr := url.Parse(r.server)
		if perr != nil {
			t.Fatalf("link of %s: server %q: %v", spoke.Name, r.server, perr)
		}
		if *r.relay, err = netchaos.NewRelay(u.Host); err != nil {
			t.Fatalf("link of %s: %v", spoke.Name, err)
		}
	}
	if l.partition, err = netchaos.NewPartition(l.HubPort(), l.SpokePort()); err != nil {
		t.Fatalf("link of %s: %v", spoke.Name, err)
	}
	return l
}

// HubPort is the port of 127.0.0.1 the spoke's agent reaches the hub at.
func (l *Link) HubPort() int { return l.HubRelay.Port() }

// SpokePort is the port of 127.0.0.1 the hub side reaches the spoke at.
func (l *Link) SpokePort() int { return l.SpokeRelay.Port() }

// HubURL is the hub's API server through the link, for the spoke's agent.
func (l *Link) HubURL() string { return "https://127.0.0.1:" + strconv.Itoa(l.HubPort()) }

// SpokeURL is the spoke's API server through the link, for the hub side.
func (l *Link) SpokeURL() string { return "https://127.0.0.1:" + strconv.Itoa(l.SpokePort()) }

// SpokeConfig is the spoke's administrator configuration through the link: what the hub side
// sees of the spoke.
func (l *Link) SpokeConfig() *rest.Config {
	cfg := rest.CopyConfig(l.spoke)
	cfg.Host = l.SpokeURL()
	return cfg
}

// spokeCA is the CA the spoke's API server certificate is signed by.
func (l *Link) spokeCA() ([]byte, error) { return kubeconfig.CA(l.spoke) }

// Cut partitions the spoke from the hub: every packet to or from HubPort and SpokePort is
// dropped, so established connections hang and new ones time out. It fails the test if iptables
// does.
func (l *Link) Cut(t testing.TB) {
	t.Helper()
	if err := l.partition.Cut(); err != nil {
		t.Fatalf("cutting the link of %s: %v", l.Spoke, err)
	}
}

// Heal removes the rules Cut added: connections resume and new ones can be made.
func (l *Link) Heal(t testing.TB) {
	t.Helper()
	if err := l.partition.Heal(); err != nil {
		t.Fatalf("healing the link of %s: %v", l.Spoke, err)
	}
}

// Close heals the link (removing its iptables chain) and stops its relays. NewLink calls it when
// the test ends.
func (l *Link) Close() error {
	var errs []error
	if l.partition != nil {
		errs = append(errs, l.partition.Heal())
	}
	for _, r := range []*netchaos.Relay{l.HubRelay, l.SpokeRelay} {
		if r != nil {
			errs = append(errs, r.Close())
		}
	}
	return errors.Join(errs...)
}

// setClientConfig makes cluster's ManagedCluster name the link's SpokeURL, with the spoke's CA,
// as the first of spec.managedClusterClientConfigs: where the hub side reaches the spoke.
func (l *Link) setClientConfig(ctx context.Context, hub client.Client, cluster string) error {
	ca, err := l.spokeCA()
	if err != nil {
		return fmt.Errorf("link of %s: %w", l.Spoke, err)
	}
	mc := &clusterv1.ManagedCluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		return fmt.Errorf("link of %s: %w", l.Spoke, err)
	}
	patch := client.MergeFrom(mc.DeepCopy())
	mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: l.SpokeURL(), CABundle: ca}}
	if err := hub.Patch(ctx, mc, patch); err != nil {
		return fmt.Errorf("link of %s: setting ManagedCluster %s spec.managedClusterClientConfigs: %w", l.Spoke, cluster, err)
	}
	return nil
}

// forgetHubCredentials deletes the hub credentials an agent stored on spoke.
func forgetHubCredentials(t *testing.T, spoke *Cluster) {
	t.Helper()
	err := spoke.Client.CoreV1().Secrets(agentreg.DefaultNamespace).Delete(context.Background(), agentreg.DefaultSecretName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting the hub credentials stored on %s: %v", spoke.Name, err)
	}
}

// pending counts the requests neither approved nor denied.
// madeSince counts the requests created at since or later.
func madeSince(items []certificatesv1.CertificateSigningRequest, since time.Time) int {
	n := 0
	for i := range items {
		if !items[i].CreationTimestamp.Time.Before(since.Truncate(time.Second)) {
			n++
		}
	}
	return n
}

func pending(items []certificatesv1.CertificateSigningRequest) int {
	n := 0
	for i := range items {
		if !csrs.HasCondition(&items[i], certificatesv1.CertificateApproved) && !csrs.HasCondition(&items[i], certificatesv1.CertificateDenied) {
			n++
		}
	}
	return n
}
