package registration

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/hub/csrs"
)

var agentA1 = clusteridentity.User("gpu-east", "a1")

func TestAgentRequestAndRenewal(t *testing.T) {
	cases := map[string]struct {
		csr         *certificatesv1.CertificateSigningRequest
		wantAgent   bool // agentRequest accepts it
		wantRenewal bool
	}{
		"the agent renewing itself": {
			csr:       makeCSR(t, "r", "gpu-east", "a1", agentA1, 0).obj(),
			wantAgent: true, wantRenewal: true,
		},
		"a first request by the bootstrap identity": {
			csr:       makeCSR(t, "r", "gpu-east", "a1", BootstrapUser, 0).obj(),
			wantAgent: true,
		},
		"another agent of the cluster asking for a1": {
			csr:       makeCSR(t, "r", "gpu-east", "a1", clusteridentity.User("gpu-east", "a2"), 0).obj(),
			wantAgent: true,
		},
		"an agent of another cluster": {
			csr:       makeCSR(t, "r", "gpu-east", "a1", clusteridentity.User("gpu-west", "a1"), 0).obj(),
			wantAgent: true,
		},
		"wrong signer": {
			csr: makeCSR(t, "r", "gpu-east", "a1", agentA1, 0).signer("example.com/anything").obj(),
		},
		"server auth usage": {
			csr: makeCSR(t, "r", "gpu-east", "a1", agentA1, 0).usages(certificatesv1.UsageClientAuth, certificatesv1.UsageServerAuth).obj(),
		},
		"no client auth usage": {
			csr: makeCSR(t, "r", "gpu-east", "a1", agentA1, 0).usages(certificatesv1.UsageDigitalSignature).obj(),
		},
		"subject alternative names": {
			csr: makeCSR(t, "r", "gpu-east", "a1", agentA1, 0).request(t, agentA1, clusteridentity.Groups("gpu-east"), []string{"hub.example.com"}).obj(),
		},
		"extra group system:masters": {
			csr: makeCSR(t, "r", "gpu-east", "a1", agentA1, 0).request(t, agentA1, append(clusteridentity.Groups("gpu-east"), "system:masters"), nil).obj(),
		},
		"not an agent's common name": {
			csr: makeCSR(t, "r", "gpu-east", "a1", "alice", 0).request(t, "alice", nil, nil).obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := agentRequest(tc.csr)
			if got := err == nil; got != tc.wantAgent {
				t.Errorf("agentRequest() error = %v, want an agent's request: %v", err, tc.wantAgent)
			}
			if got := isRenewal(tc.csr); got != tc.wantRenewal {
				t.Errorf("isRenewal() = %v, want %v", got, tc.wantRenewal)
			}
		})
	}
}

func TestRenewalReconciler(t *testing.T) {
	cases := map[string]struct {
		cluster      *apitest.ClusterWrapper
		csr          *csrWrapper
		wantApproved bool
	}{
		"accepted cluster, agent renews itself": {
			cluster: makeCluster("gpu-east").Accepted(), csr: makeCSR(t, "r", "gpu-east", "a1", agentA1, 0), wantApproved: true,
		},
		"cluster not accepted": {
			cluster: makeCluster("gpu-east"), csr: makeCSR(t, "r", "gpu-east", "a1", agentA1, 0),
		},
		"cluster being deleted": {
			cluster: makeCluster("gpu-east").Accepted().Finalizer(CleanupFinalizer).Deleting(t0), csr: makeCSR(t, "r", "gpu-east", "a1", agentA1, 0),
		},
		"no such cluster": {
			cluster: makeCluster("gpu-west").Accepted(), csr: makeCSR(t, "r", "gpu-east", "a1", agentA1, 0),
		},
		"first request by the bootstrap identity waits for an administrator": {
			cluster: makeCluster("gpu-east").Accepted(), csr: makeCSR(t, "r", "gpu-east", "a1", BootstrapUser, 0),
		},
		"an accepted agent of another cluster asking for this one": {
			cluster: makeCluster("gpu-east").Accepted(), csr: makeCSR(t, "r", "gpu-east", "a1", clusteridentity.User("gpu-west", "a1"), 0),
		},
		"wrong signer": {
			cluster: makeCluster("gpu-east").Accepted(), csr: makeCSR(t, "r", "gpu-east", "a1", agentA1, 0).signer("kubernetes.io/kubelet-serving"),
		},
		"an add-on agent of an accepted cluster named cluster": {
			cluster: makeCluster("cluster").Accepted(),
			csr: makeCSR(t, "r", "cluster", "a1", clusteridentity.AddOnUser("gpu-east", "scorer", "a1"), 0).
				request(t, clusteridentity.AddOnUser("gpu-east", "scorer", "a1"), clusteridentity.Groups("cluster"), nil),
		},
		"already denied": {
			cluster: makeCluster("gpu-east").Accepted(), csr: makeCSR(t, "r", "gpu-east", "a1", agentA1, 0).condition(certificatesv1.CertificateDenied),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			csr := tc.csr.obj()
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(tc.cluster.Obj(), csr).Build()
			cs := kubefake.NewClientset(csr)
			r := &RenewalReconciler{Client: c, Certificates: cs, Clock: clocktesting.NewFakePassiveClock(t0)}
			if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: csr.Name}}); err != nil {
				t.Fatal(err)
			}
			got, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), csr.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if approved := csrs.HasCondition(got, certificatesv1.CertificateApproved); approved != tc.wantApproved {
				t.Errorf("approved = %v, want %v (conditions %+v)", approved, tc.wantApproved, got.Status.Conditions)
			}
		})
	}
}

// A renewal filed while its cluster was not accepted comes back when the cluster changes.
func TestRenewalPendingRequestsOfCluster(t *testing.T) {
	objs := []client.Object{
		makeCSR(t, "pending", "gpu-east", "a1", agentA1, 0).obj(),
		makeCSR(t, "approved", "gpu-east", "a1", agentA1, 0).condition(certificatesv1.CertificateApproved).obj(),
		makeCSR(t, "other-cluster", "gpu-west", "a1", clusteridentity.User("gpu-west", "a1"), 0).obj(),
	}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
	r := &RenewalReconciler{Client: c}
	got := r.pendingRequestsOf(context.Background(), makeCluster("gpu-east").Obj())
	want := []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "pending"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// The renewal approver gives no certificate to an add-on agent, nor to an agent of a cluster whose
// name is reserved (clusteridentity.ReservedClusterNames), and says why.
func TestRenewalRefusesReservedIdentities(t *testing.T) {
	addOnUser := clusteridentity.AddOnUser("gpu-east", "scorer", "a1")
	notAnAgent := func(cn string) string {
		return `common name "` + cn + `" is not system:open-cluster-management:<cluster>:<agent> with a cluster name other than managed-clusters, cluster, addon`
	}
	cases := map[string]struct {
		csr  *certificatesv1.CertificateSigningRequest
		want string // the reason it is no renewal; "" for a renewal
	}{
		"the agent renewing itself": {csr: makeCSR(t, "r", "gpu-east", "a1", agentA1, 0).obj()},
		// Its user name reads as an agent "gpu-east:addon:scorer:agent:a1" of cluster "cluster".
		"an add-on agent asking for its own name with the groups of cluster cluster": {
			csr: makeCSR(t, "r", "cluster", "a1", addOnUser, 0).request(t, addOnUser, clusteridentity.Groups("cluster"), nil).obj(),
			want: `filed by "system:open-cluster-management:cluster:gpu-east:addon:scorer:agent:a1", the agent of add-on scorer on ` +
				`cluster gpu-east: only a cluster's agent renews with its own identity`,
		},
		"an add-on agent asking for a cluster agent's identity": {
			csr: makeCSR(t, "r", "gpu-east", "a1", addOnUser, 0).obj(),
			want: `filed by "system:open-cluster-management:cluster:gpu-east:addon:scorer:agent:a1", the agent of add-on scorer on ` +
				`cluster gpu-east: only a cluster's agent renews with its own identity`,
		},
		"an agent of cluster managed-clusters": {
			csr:  makeCSR(t, "r", "managed-clusters", "a1", clusteridentity.User("managed-clusters", "a1"), 0).obj(),
			want: notAnAgent("system:open-cluster-management:managed-clusters:a1"),
		},
		"an agent of cluster cluster": {
			csr:  makeCSR(t, "r", "cluster", "a1", clusteridentity.User("cluster", "a1"), 0).obj(),
			want: notAnAgent("system:open-cluster-management:cluster:a1"),
		},
		"an agent of cluster addon": {
			csr:  makeCSR(t, "r", "addon", "a1", clusteridentity.User("addon", "a1"), 0).obj(),
			want: notAnAgent("system:open-cluster-management:addon:a1"),
		},
		"another agent of the cluster": {
			csr:  makeCSR(t, "r", "gpu-east", "a1", clusteridentity.User("gpu-east", "a2"), 0).obj(),
			want: `filed by "system:open-cluster-management:gpu-east:a2", not by system:open-cluster-management:gpu-east:a1 itself`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := renewal(tc.csr)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("why not a renewal (-want +got):\n%s", diff)
			}
		})
	}
}
