//go:build integration

package registration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/hub"
	hubreg "github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestBootstrapIdentityCannotTakeOverNamespaces plays the bootstrap identity, which every joining
// agent holds, against a hub with its admission webhook: it may register clusters, but not under
// a name that would make the hub take over a namespace, and it may not accept them.
func TestBootstrapIdentityCannotTakeOverNamespaces(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	ctx := context.Background()
	c := hubClient(t, env)
	env.DeleteWebhookConfigurationAtEnd(t) // after the hub stops, so the package's other tests can write
	startHubWith(t, env, func(o *hub.Options) { o.WebhookAddress = "127.0.0.1:0" })
	bc, err := client.New(bootstrapConfig(t, env), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	team := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-trust"}}
	if err := c.Create(ctx, team); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), team) })
	create := func(name string, accepted bool) error {
		return bc.Create(ctx, &clusterv1.ManagedCluster{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: accepted},
		})
	}
	// The webhook is registered once the hub's server answers.
	testenv.WaitFor(t, 30*time.Second, "the webhook to refuse a cluster named after the bootstrap namespace", func(context.Context) (bool, string, error) {
		err := create(hubreg.BootstrapNamespace, false)
		return err != nil && strings.Contains(err.Error(), "is reserved"), fmt.Sprintf("create: %v", err), nil
	})
	cases := map[string]struct {
		name     string
		accepted bool
		want     string
	}{
		"the hub's own namespace":          {name: "open-cluster-management-hub", want: "is reserved"},
		"a team's namespace":               {name: team.Name, want: `namespace "team-trust" already exists and the hub did not make it`},
		"kube-system":                      {name: "kube-system", want: "is reserved"},
		"not a DNS label":                  {name: "gpu.east", want: "must be a DNS label"},
		"the group of every agent":         {name: "managed-clusters", want: "metadata.name managed-clusters, cluster and addon are reserved"},
		"the prefix of add-on agents":      {name: "cluster", want: "metadata.name managed-clusters, cluster and addon are reserved"},
		"the prefix of add-on groups":      {name: "addon", want: "metadata.name managed-clusters, cluster and addon are reserved"},
		"accepting a cluster it registers": {name: "self-accepted", accepted: true, want: "needs permission to update managedclusters/accept"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := create(tc.name, tc.accepted)
			if err == nil {
				_ = c.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: tc.name}})
				t.Fatalf("the bootstrap identity created ManagedCluster %q (accepted=%v); want a refusal", tc.name, tc.accepted)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "flotilla agent --cluster-name") && !tc.accepted {
				t.Errorf("refusal = %v, want it to contain %q and the fix", err, tc.want)
			}
		})
	}
	for _, ns := range []string{hubreg.BootstrapNamespace, team.Name, "kube-system"} {
		got := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKey{Name: ns}, got); err != nil || !got.DeletionTimestamp.IsZero() {
			t.Errorf("namespace %s after the attempts: err=%v deleting=%v; want it untouched", ns, err, got.DeletionTimestamp)
		}
	}
}

// TestHubNeverAdoptsOrDeletesANamespaceItDidNotMake covers what admission cannot: a namespace
// made after its cluster registered, or a hub that runs without its webhook. Accepting, denying
// and deleting such a cluster leaves the namespace as it was.
func TestHubNeverAdoptsOrDeletesANamespaceItDidNotMake(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	startHub(t, env) // no webhook: the controller is the last line
	ctx := context.Background()
	c := hubClient(t, env)
	const name = "team-late"
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	team := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "late"}}}
	if err := c.Create(ctx, team); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), team) })
	setAccepted := func(accepted bool) {
		t.Helper()
		if err := c.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(mc.DeepCopy())
		mc.Spec.HubAcceptsClient = accepted
		if err := c.Patch(ctx, mc, patch); err != nil {
			t.Fatal(err)
		}
	}
	untouched := func(t *testing.T) {
		t.Helper()
		got := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			t.Fatalf("the team's namespace: %v", err)
		}
		if !got.DeletionTimestamp.IsZero() || len(got.OwnerReferences) > 0 || len(got.Labels) != 2 /* team + kubernetes.io/metadata.name */ {
			t.Errorf("the team's namespace was touched: deleting=%v owners=%v labels=%v", got.DeletionTimestamp, got.OwnerReferences, got.Labels)
		}
	}

	setAccepted(true)
	testenv.WaitFor(t, 30*time.Second, "HubAcceptedManagedCluster=False saying the namespace is not the hub's", func(ctx context.Context) (bool, string, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
			return false, "", err
		}
		cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted)
		if cond == nil {
			return false, "no condition", nil
		}
		return cond.Status == metav1.ConditionFalse && cond.Reason == hubreg.ReasonNotOwned &&
			strings.Contains(cond.Message, "Namespace "+name+" exists and was not created by the hub"), cond.Message, nil
	})
	untouched(t)
	if len(mc.Finalizers) > 0 {
		t.Errorf("finalizers %v on a cluster the hub granted nothing: deleting it should cost nothing", mc.Finalizers)
	}

	setAccepted(false)
	time.Sleep(2 * time.Second) // the hub reconciles the denial; nothing of the namespace may change
	untouched(t)

	if err := c.Delete(ctx, mc); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "the ManagedCluster to be gone", func(ctx context.Context) (bool, string, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(mc), &clusterv1.ManagedCluster{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err), client.IgnoreNotFound(err)
	})
	untouched(t)
}

// TestCertificateApprovalTrustsOnlyTheRightRequester files requests that no approver may approve
// (planted by another cluster's agent, made by the bootstrap identity for an agent's name, sent
// to the wrong signer) beside ones that must be approved, and checks each.
func TestCertificateApprovalTrustsOnlyTheRightRequester(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	startHub(t, env)
	ctx := context.Background()
	c := hubClient(t, env)
	const attacker, victim = "trust-a", "trust-b"
	for _, name := range []string{attacker, victim} {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := c.Create(ctx, mc); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), mc) })
	}
	if _, err := hubreg.Accept(ctx, c, env.Hub.Client, attacker, hubreg.AcceptOptions{}); err != nil {
		t.Fatal(err)
	}
	attackerCS, err := kubernetes.NewForConfig(agentIdentity(t, env, attacker, "a1"))
	if err != nil {
		t.Fatal(err)
	}
	bootstrapCS, err := kubernetes.NewForConfig(bootstrapConfig(t, env))
	if err != nil {
		t.Fatal(err)
	}
	// The accepted agent may file requests, once the hub has granted it that.
	var planted *certificatesv1.CertificateSigningRequest
	testenv.WaitFor(t, 30*time.Second, "the accepted agent to be allowed to file a request", func(context.Context) (bool, string, error) {
		_, err := attackerCS.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) {
			return false, "", fmt.Errorf("an accepted agent listing every certificate request: err = %v, want Forbidden", err)
		}
		if !canCreateRequests(ctx, attackerCS) {
			return false, "not yet", nil
		}
		return true, "", nil
	})

	t.Run("a request planted by another cluster's agent is not approved by accept", func(t *testing.T) {
		real, _ := request{cluster: victim, agentID: "agent"}.file(t, bootstrapCS)
		// Planted later (creation times count in seconds), so an accept that ignored the requester
		// would take the planted request for the newest.
		time.Sleep(1100 * time.Millisecond)
		planted, _ = request{cluster: victim, agentID: "agent"}.file(t, attackerCS)
		res, err := hubreg.Accept(ctx, c, env.Hub.Client, victim, hubreg.AcceptOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Approved(); len(got) != 1 || got[0] != real.Name {
			t.Errorf("Accept approved %v, want only %s (the bootstrap identity's); decisions %+v", got, real.Name, res.Requests)
		}
		waitIssued(t, env.Hub.Client, real.Name)
		if approved(t, env.Hub.Client, planted.Name) {
			t.Errorf("the request planted by %s's agent was approved", attacker)
		}
	})

	t.Run("the renewal approver approves only an agent renewing itself", func(t *testing.T) {
		// Filed first, each of these is one the hub must never approve.
		never := map[string]string{}
		r, _ := request{cluster: attacker, agentID: "other-agent"}.file(t, bootstrapCS)
		never["made by the bootstrap identity for an agent's name"] = r.Name
		r, _ = request{cluster: victim, agentID: "a1", label: attacker}.file(t, attackerCS)
		never["an agent asking for another cluster's identity"] = r.Name
		r, _ = request{cluster: attacker, agentID: "a1", signer: "example.com/custom"}.file(t, attackerCS)
		never["sent to another signer"] = r.Name
		// Filed last, a true renewal: once it is approved, the hub has seen the others too.
		renewal, _ := request{cluster: attacker, agentID: "a1"}.file(t, attackerCS)
		waitIssued(t, env.Hub.Client, renewal.Name)
		for what, name := range never {
			if approved(t, env.Hub.Client, name) {
				t.Errorf("request %s (%s) was approved", name, what)
			}
		}
		if approved(t, env.Hub.Client, planted.Name) {
			t.Errorf("the planted request %s was approved after its cluster was accepted", planted.Name)
		}
	})
}

// canCreateRequests asks the API server whether cs's identity may file certificate requests.
func canCreateRequests(ctx context.Context, cs kubernetes.Interface) bool {
	return canI(ctx, cs, "create", "certificates.k8s.io", "certificatesigningrequests")
}

// canI asks the API server, with a SelfSubjectAccessReview, whether cs's identity may do verb on
// resource in group.
func canI(ctx context.Context, cs kubernetes.Interface, verb, group, resource string) bool {
	r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: verb, Group: group, Resource: resource,
		}},
	}, metav1.CreateOptions{})
	return err == nil && r.Status.Allowed
}
