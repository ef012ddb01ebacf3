//go:build integration

package registration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	hubreg "github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/kubeconfig"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

var metav1GetOptions = metav1.GetOptions{}

func condition(mc *clusterv1.ManagedCluster, t string) string {
	if c := meta.FindStatusCondition(mc.Status.Conditions, t); c != nil {
		return string(c.Status)
	}
	return "missing"
}

func clusterCSRs(t *testing.T, env *testenv.Env, cluster string) []certificatesv1.CertificateSigningRequest {
	t.Helper()
	l, err := env.Hub.Client.CertificatesV1().CertificateSigningRequests().List(context.Background(),
		metav1.ListOptions{LabelSelector: clusteridentity.ClusterNameLabel + "=" + cluster})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func TestJoinAcceptHeartbeatRestartRotateDeny(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	stopHub := startHub(t, env)
	c := hubClient(t, env)
	ctx := context.Background()
	bootstrap := bootstrapConfig(t, env)
	const cluster = "spoke-1"
	clk := &offsetClock{}
	agentOpts := agentreg.Options{
		ClusterName: cluster, AgentID: "agent-1", Bootstrap: bootstrap, Spoke: env.Spokes[0].RESTConfig(),
		LeaseDurationSeconds: 1, CertificateLifetime: 10 * time.Minute, Clock: clk,
		ExternalServerURLs: []string{env.Spokes[0].RESTConfig().Host},
	}
	// Agents belong to the whole test, not to the step that starts them.
	outer := t
	stop := runAgent(outer, agentOpts)

	t.Run("the agent registers and waits", func(t *testing.T) {
		testenv.WaitFor(t, 30*time.Second, "ManagedCluster and a certificate request from the agent", func(ctx context.Context) (bool, string, error) {
			mc := &clusterv1.ManagedCluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
				return false, "", client.IgnoreNotFound(err)
			}
			n := len(clusterCSRs(t, env, cluster))
			return n == 1, fmt.Sprintf("%d requests", n), nil
		})
		// The addresses it was given, with the spoke's CA, as OCM's klusterlet writes them.
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			t.Fatal(err)
		}
		ca, err := kubeconfig.CA(env.Spokes[0].RESTConfig())
		if err != nil {
			t.Fatal(err)
		}
		want := []clusterv1.ClientConfig{{URL: env.Spokes[0].RESTConfig().Host, CABundle: ca}}
		if diff := cmp.Diff(want, mc.Spec.ManagedClusterClientConfigs); diff != "" {
			t.Errorf("spec.managedClusterClientConfigs (-want +got):\n%s", diff)
		}
		// Neither approved nor accepted: no credentials, not joined.
		time.Sleep(time.Second)
		if _, err := env.Spokes[0].Client.CoreV1().Secrets(agentreg.DefaultNamespace).Get(ctx, agentreg.DefaultSecretName, metav1GetOptions); !apierrors.IsNotFound(err) {
			t.Errorf("the agent stored credentials before approval (err=%v)", err)
		}
	})

	t.Run("the bootstrap identity can only register", func(t *testing.T) {
		cs, err := kubernetes.NewForConfig(bootstrap)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("bootstrap identity listing secrets: err = %v, want Forbidden", err)
		}
		bc, err := client.New(bootstrap, client.Options{Scheme: scheme.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		mc := &clusterv1.ManagedCluster{}
		if err := bc.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			t.Fatalf("bootstrap identity reading the ManagedCluster it created: %v", err)
		}
		mc.Spec.HubAcceptsClient = true
		if err := bc.Update(ctx, mc); !apierrors.IsForbidden(err) {
			t.Errorf("bootstrap identity accepting its own cluster: err = %v, want Forbidden", err)
		}
	})

	t.Run("accept: approved, accepted, joined, available, heartbeating", func(t *testing.T) {
		res, err := hubreg.Accept(ctx, c, env.Hub.Client, cluster, hubreg.AcceptOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Approved()) != 1 {
			t.Errorf("Accept approved %v, want the one pending request", res.Approved())
		}
		testenv.WaitFor(t, 60*time.Second, "the cluster to be accepted, joined and available", func(ctx context.Context) (bool, string, error) {
			mc := &clusterv1.ManagedCluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
				return false, "", err
			}
			state := fmt.Sprintf("accepted=%s joined=%s available=%s", condition(mc, clusterv1.ManagedClusterConditionHubAccepted),
				condition(mc, clusterv1.ManagedClusterConditionJoined), condition(mc, clusterv1.ManagedClusterConditionAvailable))
			return state == "accepted=True joined=True available=True", state, nil
		})
		before := leaseRenewTime(t, c, cluster)
		testenv.WaitFor(t, 10*time.Second, "the lease to be renewed", func(ctx context.Context) (bool, string, error) {
			now := leaseRenewTime(t, c, cluster)
			return now.After(before), now.String(), nil
		})
	})

	t.Run("the agent reaches only its own namespace", func(t *testing.T) {
		ac, err := client.New(agentConfig(t, env.Spokes[0].Client), client.Options{Scheme: scheme.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		if err := ac.List(ctx, &workv1.ManifestWorkList{}, client.InNamespace(cluster)); err != nil {
			t.Errorf("agent listing works in its own namespace: %v", err)
		}
		// Another cluster's namespace, whether or not it exists yet.
		if err := ac.List(ctx, &workv1.ManifestWorkList{}, client.InNamespace("spoke-2")); !apierrors.IsForbidden(err) {
			t.Errorf("agent listing works in spoke-2's namespace: err = %v, want Forbidden", err)
		}
		if err := ac.List(ctx, &corev1.SecretList{}, client.InNamespace(cluster)); !apierrors.IsForbidden(err) {
			t.Errorf("agent listing secrets in its own namespace: err = %v, want Forbidden", err)
		}
		other := &clusterv1.ManagedCluster{}
		if err := ac.Get(ctx, client.ObjectKey{Name: "spoke-2"}, other); !apierrors.IsForbidden(err) {
			t.Errorf("agent reading another ManagedCluster: err = %v, want Forbidden", err)
		}
	})

	t.Run("a restarted agent does not register again", func(t *testing.T) {
		stop()
		n := len(clusterCSRs(t, env, cluster))
		stop = runAgent(outer, agentOpts)
		before := leaseRenewTime(t, c, cluster)
		testenv.WaitFor(t, 10*time.Second, "the restarted agent to renew the lease", func(ctx context.Context) (bool, string, error) {
			now := leaseRenewTime(t, c, cluster)
			return now.After(before), now.String(), nil
		})
		if got := len(clusterCSRs(t, env, cluster)); got != n {
			t.Errorf("the restarted agent made %d new certificate requests", got-n)
		}
	})

	t.Run("the certificate is renewed before it expires", func(t *testing.T) {
		old := agentConfig(t, env.Spokes[0].Client).CertData
		clk.offset.Store(int64(9 * time.Minute)) // past 80% of the 10-minute lifetime
		testenv.WaitFor(t, 60*time.Second, "a renewed certificate in the agent's Secret", func(ctx context.Context) (bool, string, error) {
			return string(agentConfig(t, env.Spokes[0].Client).CertData) != string(old), "same certificate", nil
		})
		clk.offset.Store(0)
		// Renewals are requested by the agent itself and approved by the hub, not by an administrator.
		renewals := 0
		for _, csr := range clusterCSRs(t, env, cluster) {
			if csr.Spec.Username != clusteridentity.User(cluster, "agent-1") {
				continue
			}
			renewals++
			for _, cond := range csr.Status.Conditions {
				if cond.Type == certificatesv1.CertificateApproved && cond.Reason != "AutoApprovedRenewal" {
					t.Errorf("renewal %s approved with reason %q, want the hub's AutoApprovedRenewal", csr.Name, cond.Reason)
				}
			}
		}
		if renewals == 0 {
			t.Errorf("no certificate request made with the agent's own identity")
		}
		// The clock went back 9 minutes, so a renewal shows as a change, not as a later time.
		before := leaseRenewTime(t, c, cluster)
		testenv.WaitFor(t, 10*time.Second, "the lease to be renewed with the new certificate", func(ctx context.Context) (bool, string, error) {
			now := leaseRenewTime(t, c, cluster)
			return !now.Equal(before), now.String(), nil
		})
	})

	t.Run("a hub restart loses nothing, and the new hub acts", func(t *testing.T) {
		// ClockSynced follows the agent's lease times, which the clock tests above moved: the
		// snapshot is taken once the hub sees the clocks in step again.
		testenv.WaitFor(t, 30*time.Second, "the hub to see the clocks in step (ClockSynced=True)", func(ctx context.Context) (bool, string, error) {
			mc := &clusterv1.ManagedCluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
				return false, "", err
			}
			cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionClockSynced)
			return cond != nil && cond.Status == metav1.ConditionTrue, fmt.Sprintf("%v", cond), nil
		})
		before := snapshot(t, c, cluster)
		stopHub()
		// Deleted by mistake while no hub runs: only the new hub's controllers can bring it back.
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: clusteridentity.RoleName(cluster)}}
		if err := c.Delete(ctx, rb); err != nil {
			t.Fatal(err)
		}
		stopHub = startHub(outer, env)
		testenv.WaitFor(t, 30*time.Second, "the new hub to recreate the agent's RoleBinding", func(ctx context.Context) (bool, string, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb)
			return err == nil, fmt.Sprintf("get: %v", err), client.IgnoreNotFound(err)
		})
		lease := leaseRenewTime(t, c, cluster)
		testenv.WaitFor(t, 10*time.Second, "the lease to be renewed after the hub restart", func(ctx context.Context) (bool, string, error) {
			now := leaseRenewTime(t, c, cluster)
			return !now.Equal(lease), now.String(), nil
		})
		time.Sleep(2 * time.Second) // the new hub reconciles every cluster once
		after := snapshot(t, c, cluster)
		if after["rolebinding"] == before["rolebinding"] {
			t.Errorf("the RoleBinding has its old UID %s: it was not recreated", before["rolebinding"])
		}
		delete(before, "rolebinding")
		delete(after, "rolebinding")
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("what the hub manages for the cluster changed across a restart (-before +after):\n%s", diff)
		}
	})

	t.Run("a denied cluster's credentials stop working", func(t *testing.T) {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(mc.DeepCopy())
		mc.Spec.HubAcceptsClient = false
		if err := c.Patch(ctx, mc, patch); err != nil {
			t.Fatal(err)
		}
		ac, err := client.New(agentConfig(t, env.Spokes[0].Client), client.Options{Scheme: scheme.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 30*time.Second, "the denied agent to lose its namespace access", func(ctx context.Context) (bool, string, error) {
			err := ac.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.ManagedClusterLeaseName}, &coordinationv1.Lease{})
			return apierrors.IsForbidden(err), fmt.Sprintf("get lease: %v", err), nil
		})
		testenv.WaitFor(t, 60*time.Second, "the cluster namespace to be deleted", func(ctx context.Context) (bool, string, error) {
			err := c.Get(ctx, client.ObjectKey{Name: cluster}, &corev1.Namespace{})
			return apierrors.IsNotFound(err), fmt.Sprintf("get namespace: %v", err), nil
		})
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			t.Fatal(err)
		}
		if got := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted); got == nil || got.Reason != hubreg.ReasonDenied {
			t.Errorf("HubAcceptedManagedCluster after denial = %+v, want reason %s", got, hubreg.ReasonDenied)
		}
	})
}

// snapshot is what the hub keeps for a cluster, by identity and content: its acceptance, its
// conditions' states, the RBAC objects and the namespace, with their UIDs (a recreated object
// would show as a change).
func snapshot(t *testing.T, c client.Client, cluster string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		t.Fatal(err)
	}
	out["accepted"] = fmt.Sprint(mc.Spec.HubAcceptsClient)
	for _, cond := range mc.Status.Conditions {
		out["condition "+cond.Type] = string(cond.Status) + " " + cond.Reason
	}
	objs := map[string]client.Object{
		"namespace":          &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}},
		"clusterrole":        &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: clusteridentity.ClusterRoleName(cluster)}},
		"clusterrolebinding": &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: clusteridentity.ClusterRoleName(cluster)}},
		"role":               &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: clusteridentity.RoleName(cluster)}},
		"rolebinding":        &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: clusteridentity.RoleName(cluster)}},
		"lease":              &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: clusterv1.ManagedClusterLeaseName}},
	}
	for what, o := range objs {
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatalf("reading the %s: %v", what, err)
		}
		out[what] = string(o.GetUID())
	}
	return out
}

// waitLeaseRenewed waits until the cluster's lease exists and its agent has renewed it: Available
// can come before the hub has made the lease, on a busy machine.
func waitLeaseRenewed(t *testing.T, c client.Client, cluster string) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, "the agent to renew its lease", func(ctx context.Context) (bool, string, error) {
		l := &coordinationv1.Lease{}
		err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.ManagedClusterLeaseName}, l)
		if err != nil {
			return false, err.Error(), client.IgnoreNotFound(err)
		}
		return l.Spec.RenewTime != nil, "lease not renewed yet", nil
	})
}

func leaseRenewTime(t *testing.T, c client.Client, cluster string) time.Time {
	t.Helper()
	l := &coordinationv1.Lease{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: clusterv1.ManagedClusterLeaseName}, l); err != nil {
		t.Fatalf("reading the lease: %v", err)
	}
	return l.Spec.RenewTime.Time
}
