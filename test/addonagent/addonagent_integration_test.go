//go:build integration

package addonagent

import (
	"context"
	"crypto/x509/pkix"
	"fmt"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/addon"
	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/hub/addonregistration"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

var kubeClient = []addonv1alpha1.RegistrationConfig{{SignerName: addonv1alpha1.KubeAPIServerClientSignerName}}

func TestAddOnAgent(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	spokes := joinAll(t, env)
	hub := env.HubClient(t)
	east, west := spokes[0], spokes[1]
	const scorer = "scorer"

	// Each cluster's scorer add-on may read ConfigMaps in its cluster's namespace on the hub, by
	// a RoleBinding to its cluster's add-on group (what hubPermissions will grant).
	for _, j := range spokes {
		grantConfigMapReader(t, env, j.Name, clusteridentity.AddOnClusterGroup(j.Name, scorer))
	}
	eastNS, westNS := env.Namespace(t, east.Spoke), env.Namespace(t, west.Spoke)
	newAddOn(t, hub, east.Name, scorer, eastNS, addonv1alpha1.ManagedClusterAddOnStatus{Registrations: kubeClient})
	newAddOn(t, hub, west.Name, scorer, westNS, addonv1alpha1.ManagedClusterAddOnStatus{Registrations: kubeClient})

	t.Run("a KubeClient registration gets its hub kubeconfig, which can do what RBAC grants in its namespace only", func(t *testing.T) {
		secret := waitSecret(t, east.Spoke, eastNS, "scorer-hub-kubeconfig", nil)
		if got := string(secret.Data[addon.ClusterNameKey]); got != east.Name {
			t.Errorf("cluster-name = %q, want %q", got, east.Name)
		}
		for _, k := range []string{addon.KubeconfigKey, addon.TLSCertKey, addon.TLSKeyKey} {
			if len(secret.Data[k]) == 0 {
				t.Errorf("Secret %s/scorer-hub-kubeconfig has no %s", eastNS, k)
			}
		}
		cs := addOnClient(t, secret)
		if _, err := cs.CoreV1().ConfigMaps(east.Name).List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Errorf("the add-on identity may not list ConfigMaps in its cluster's namespace %s: %v", east.Name, err)
		}
		_, err := cs.CoreV1().ConfigMaps(west.Name).List(context.Background(), metav1.ListOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("listing ConfigMaps in another cluster's namespace %s: err = %v, want Forbidden", west.Name, err)
		}
		if _, err := cs.CoreV1().Secrets(east.Name).List(context.Background(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("listing Secrets, which nothing grants, in its own namespace: err = %v, want Forbidden", err)
		}
		waitCondition(t, hub, east.Name, scorer, addon.ConditionClusterCertificateRotated, metav1.ConditionTrue, addon.ReasonClientCertificateUpdated, 30*time.Second)
		approved := 0
		for _, c := range addOnCSRs(t, env, east.Name, scorer) {
			for _, cond := range c.Status.Conditions {
				if cond.Type == certificatesv1.CertificateApproved && cond.Reason == addonregistration.ApprovedReason {
					approved++
				}
			}
		}
		if approved == 0 {
			t.Errorf("no add-on request of %s approved with reason %s", east.Name, addonregistration.ApprovedReason)
		}
	})

	t.Run("a request for another cluster's add-on identity is not approved", func(t *testing.T) {
		waitSecret(t, west.Spoke, westNS, "scorer-hub-kubeconfig", nil)
		agent := east.Reg.Hub().Current()
		ctx := context.Background()
		request := func(cluster string) *agentreg.PendingRequest {
			p, err := agentreg.FileRequest(ctx, agent.Kube, agentreg.CertificateRequest{
				GenerateName: "addon-probe-",
				Labels:       map[string]string{clusteridentity.ClusterNameLabel: cluster, clusteridentity.AddOnNameLabel: scorer},
				Subject:      pkix.Name{CommonName: clusteridentity.AddOnUser(cluster, scorer, "probe"), Organization: clusteridentity.AddOnGroups(cluster, scorer)},
				SignerName:   certificatesv1.KubeAPIServerClientSignerName,
			}, time.Now(), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		// East's agent asks for west's scorer identity (west has the registration), then for
		// its own: the second is approved, the first stays undecided.
		wrong := request(west.Name)
		right := request(east.Name)
		testenv.WaitFor(t, 30*time.Second, "approval of "+right.Name, func(ctx context.Context) (bool, string, error) {
			return csrApproved(t, env, right.Name), "pending", nil
		})
		time.Sleep(time.Second)
		c, err := env.Hub.Client.CertificatesV1().CertificateSigningRequests().Get(ctx, wrong.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Status.Conditions) > 0 || len(c.Status.Certificate) > 0 {
			t.Errorf("request %s for %s's add-on identity, filed by %s's agent, was decided: %+v", wrong.Name, west.Name, east.Name, c.Status.Conditions)
		}
	})

	t.Run("rotation keeps a working kubeconfig", func(t *testing.T) {
		before := waitSecret(t, west.Spoke, westNS, "scorer-hub-kubeconfig", nil)
		// Past 80% of the 10 minute certificate: the agent renews it.
		west.Clock.offset.Store(int64(8*time.Minute + 30*time.Second))
		after := waitSecret(t, west.Spoke, westNS, "scorer-hub-kubeconfig", func(s *corev1.Secret) bool {
			return string(s.Data[addon.TLSCertKey]) != string(before.Data[addon.TLSCertKey])
		})
		west.Clock.offset.Store(0)
		if string(after.Data[addon.TLSKeyKey]) == string(before.Data[addon.TLSKeyKey]) {
			t.Error("the renewed certificate has the old key")
		}
		if _, err := addOnClient(t, after).CoreV1().ConfigMaps(west.Name).List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Errorf("the renewed kubeconfig may not list ConfigMaps in %s: %v", west.Name, err)
		}
		waitCondition(t, hub, west.Name, scorer, addon.ConditionClusterCertificateRotated, metav1.ConditionTrue, addon.ReasonClientCertificateUpdated, 30*time.Second)
	})

	t.Run("a registration removed takes its Secret away", func(t *testing.T) {
		mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: west.Name, Name: scorer}}
		setStatus(t, hub, mca, func(s *addonv1alpha1.ManagedClusterAddOnStatus) { s.Registrations = nil })
		testenv.WaitFor(t, 30*time.Second, "Secret "+westNS+"/scorer-hub-kubeconfig deleted", func(ctx context.Context) (bool, string, error) {
			_, err := west.Spoke.Client.CoreV1().Secrets(westNS).Get(ctx, "scorer-hub-kubeconfig", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprintf("err=%v", err), client.IgnoreNotFound(err)
		})
	})

	t.Run("Lease health: renewed is Available, stopped turns Unknown within the window", func(t *testing.T) {
		ns := env.Namespace(t, east.Spoke)
		newAddOn(t, hub, east.Name, "pulse", ns, addonv1alpha1.ManagedClusterAddOnStatus{})
		waitCondition(t, hub, east.Name, "pulse", addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionUnknown, addon.ReasonLeaseNotFound, 30*time.Second)

		stop := renewLease(t, east.Spoke, ns, "pulse", 300*time.Millisecond)
		waitCondition(t, hub, east.Name, "pulse", addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionTrue, addon.ReasonLeaseUpdated, 30*time.Second)
		stop()
		stopped := time.Now()
		// The window is 5 lease durations of 1 s; the agent reads the Lease again when it ends.
		waitCondition(t, hub, east.Name, "pulse", addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionUnknown, addon.ReasonLeaseStopped, 20*time.Second)
		if d := time.Since(stopped); d < 4*time.Second {
			t.Errorf("Unknown %s after the last renewal, before the 5 s window ended", d)
		}
	})

	t.Run("Customized health leaves Available to the add-on", func(t *testing.T) {
		ns := env.Namespace(t, east.Spoke)
		mca := newAddOn(t, hub, east.Name, "custom", ns, addonv1alpha1.ManagedClusterAddOnStatus{
			HealthCheck: addonv1alpha1.HealthCheck{Mode: addonv1alpha1.HealthCheckModeCustomized},
		})
		setStatus(t, hub, mca, func(s *addonv1alpha1.ManagedClusterAddOnStatus) {
			s.Conditions = []metav1.Condition{{
				Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: metav1.ConditionFalse,
				Reason: "ProbeUnavailable", Message: "set by the add-on", LastTransitionTime: metav1.Now(),
			}}
		})
		// No Lease: in Lease mode the agent would say Unknown within a second.
		time.Sleep(3 * time.Second)
		waitCondition(t, hub, east.Name, "custom", addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionFalse, "ProbeUnavailable", time.Second)
	})
}

// grantConfigMapReader lets group read ConfigMaps in namespace ns on the hub.
func grantConfigMapReader(t *testing.T, env *testenv.Env, ns, group string) {
	t.Helper()
	ctx := context.Background()
	rbac := env.Hub.Client.RbacV1()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scorer-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
	}
	if _, err := rbac.Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scorer-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: group}},
	}
	if _, err := rbac.RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// waitSecret waits for the Secret on the spoke, and for ok if given, and returns it.
func waitSecret(t *testing.T, c *testenv.Cluster, ns, name string, ok func(*corev1.Secret) bool) *corev1.Secret {
	t.Helper()
	var s *corev1.Secret
	testenv.WaitFor(t, 60*time.Second, "Secret "+ns+"/"+name+" on "+c.Name, func(ctx context.Context) (bool, string, error) {
		got, err := c.Client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), client.IgnoreNotFound(err)
		}
		s = got
		return ok == nil || ok(got), "not yet as wanted", nil
	})
	return s
}

// addOnClient is a client with the hub kubeconfig of an add-on's Secret.
func addOnClient(t *testing.T, s *corev1.Secret) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[addon.KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func addOnCSRs(t *testing.T, env *testenv.Env, cluster, addonName string) []certificatesv1.CertificateSigningRequest {
	t.Helper()
	l, err := env.Hub.Client.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{
		LabelSelector: clusteridentity.ClusterNameLabel + "=" + cluster + "," + clusteridentity.AddOnNameLabel + "=" + addonName,
	})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func csrApproved(t *testing.T, env *testenv.Env, name string) bool {
	t.Helper()
	c, err := env.Hub.Client.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cond := range c.Status.Conditions {
		if cond.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}

// renewLease plays an add-on's agent: it creates the Lease and renews it every period until
// stop.
func renewLease(t *testing.T, c *testenv.Cluster, ns, name string, period time.Duration) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	leases := c.Client.CoordinationV1().Leases(ns)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}
	if _, err := leases.Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(period):
			}
			l, err := leases.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			_, _ = leases.Update(ctx, l, metav1.UpdateOptions{})
		}
	}()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}
