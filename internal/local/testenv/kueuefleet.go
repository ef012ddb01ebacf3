package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// KueueSecretsRole is the Role in the Kueue namespace that docs/kueue.md tells an installer to
// grant the hub: the kubeconfig Secrets it reads and composes for MultiKueue.
const KueueSecretsRole = "flotilla-hub-kueue-secrets"

// StartKueue runs Kueue's manager on every cluster of the fleet until the test ends: on the hub
// as a MultiKueue manager with mk, on the spokes as workers. It installs Kueue's CRDs on the hub
// first.
func (e *Env) StartKueue(t testing.TB, mk *localk8s.MultiKueueOptions) {
	t.Helper()
	e.InstallKueueCRDs(t)
	bins, err := localk8s.FindKueue()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, c := range e.Fleet.Clusters() {
		o := localk8s.KueueOptions{Cluster: c, Binaries: bins, OnExit: func(exit error) bool {
			// Said on standard error: the test that saw it may have ended.
			fmt.Fprintf(os.Stderr, "testenv: Kueue on %s exited by itself (%v); starting it again, as a kubelet restarts a crashed container (log %s)\n",
				c.Name, exit, filepath.Join(c.Dir, "logs", localk8s.KueueBin+".log"))
			return true
		}}
		if c == e.Hub.Cluster {
			o.MultiKueue = mk
		}
		k, err := localk8s.StartKueue(ctx, o)
		if err != nil {
			t.Fatalf("starting Kueue on %s: %v", c.Name, err)
		}
		t.Cleanup(k.Stop)
		t.Logf("Kueue on %s: log %s", c.Name, k.Process.LogPath)
	}
}

// KueuePlugin is the credentials plugin a hub's Kueue runs for the hub's ClusterProfiles
// (MultiKueueOptions.CredentialsPlugin; the hub's default kueue.SourceClusterProfile needs it):
// this module's flotilla binary, built once per test process, reading the hub as its
// administrator.
func (e *Env) KueuePlugin(t testing.TB) *localk8s.CredentialsPlugin {
	t.Helper()
	return localk8s.HubPlugin(FlotillaBinary(t), e.Hub.Cluster)
}

// StartKueueHub runs the hub with opts as its generated roles plus KueueSecretsRole in the Kueue
// namespace (made here), until the test ends. Kueue's CRDs must be installed first: the hub
// looks for them when it starts.
func (e *Env) StartKueueHub(t testing.TB, opts hub.Options) {
	t.Helper()
	ctx := context.Background()
	c := e.HubClient(t)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kueue.DefaultNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	Create(t, c, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: KueueSecretsRole, Namespace: kueue.DefaultNamespace},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"},
			Verbs: []string{"get", "create", "update", "patch", "delete"}}}})
	cfg := e.HubIdentity(t, "")
	BindToHub(t, c, cfg, kueue.DefaultNamespace, KueueSecretsRole)
	mgr, err := hub.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	RunUntilCleanup(t, mgr.Start)
}
