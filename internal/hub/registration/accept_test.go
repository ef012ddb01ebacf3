package registration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/hub/csrs"
)

func TestAccept(t *testing.T) {
	planter := clusteridentity.User("gpu-west", "a1") // an accepted agent of another cluster
	type outcome struct{ Name, Requester, Outcome string }
	cases := map[string]struct {
		cluster      *apitest.ClusterWrapper
		csrs         []*csrWrapper
		opts         AcceptOptions
		want         []outcome // newest first
		wantApproved []string
		wantAccepted bool
	}{
		"one request from the bootstrap identity": {
			cluster:      makeCluster("gpu-east"),
			csrs:         []*csrWrapper{makeCSR(t, "boot", "gpu-east", "a1", BootstrapUser, 0)},
			want:         []outcome{{"boot", BootstrapUser, OutcomeApproved}},
			wantApproved: []string{"boot"},
		},
		"a request planted by another cluster's agent is never approved": {
			cluster: makeCluster("gpu-east"),
			csrs: []*csrWrapper{
				makeCSR(t, "boot", "gpu-east", "a1", BootstrapUser, 0),
				makeCSR(t, "planted", "gpu-east", "evil", planter, time.Minute),
			},
			want: []outcome{
				{"planted", planter, OutcomeNotApproved},
				{"boot", BootstrapUser, OutcomeApproved},
			},
			wantApproved: []string{"boot"},
		},
		"only a planted request": {
			cluster:      makeCluster("gpu-east"),
			csrs:         []*csrWrapper{makeCSR(t, "planted", "gpu-east", "evil", planter, 0)},
			want:         []outcome{{"planted", planter, OutcomeNotApproved}},
			wantApproved: nil,
		},
		"several from the bootstrap identity: the newest only": {
			cluster: makeCluster("gpu-east"),
			csrs: []*csrWrapper{
				makeCSR(t, "old", "gpu-east", "a1", BootstrapUser, 0),
				makeCSR(t, "new", "gpu-east", "a1", BootstrapUser, 2*time.Minute),
				makeCSR(t, "middle", "gpu-east", "a1", BootstrapUser, time.Minute),
			},
			want: []outcome{
				{"new", BootstrapUser, OutcomeApproved},
				{"middle", BootstrapUser, OutcomeOlderNotApproved},
				{"old", BootstrapUser, OutcomeOlderNotApproved},
			},
			wantApproved: []string{"new"},
		},
		"labeled for the cluster but asking for another": {
			cluster: makeCluster("gpu-east"),
			csrs: []*csrWrapper{
				makeCSR(t, "mislabeled", "gpu-east", "a1", BootstrapUser, 0).request(t, clusteridentity.User("gpu-west", "a1"), clusteridentity.Groups("gpu-west"), nil),
			},
			want: []outcome{{"mislabeled", BootstrapUser, OutcomeNotApproved}},
		},
		"wrong signer": {
			cluster: makeCluster("gpu-east"),
			csrs:    []*csrWrapper{makeCSR(t, "kubelet", "gpu-east", "a1", BootstrapUser, 0).signer("kubernetes.io/kubelet-serving")},
			want:    []outcome{{"kubelet", BootstrapUser, OutcomeNotApproved}},
		},
		"a renewal by the agent is left to the hub": {
			cluster: makeCluster("gpu-east"),
			csrs:    []*csrWrapper{makeCSR(t, "renew", "gpu-east", "a1", agentA1, 0)},
			want:    []outcome{{"renew", agentA1, OutcomeNotApproved}},
		},
		"approved before, already accepted": {
			cluster:      makeCluster("gpu-east").Accepted(),
			csrs:         []*csrWrapper{makeCSR(t, "boot", "gpu-east", "a1", BootstrapUser, 0).condition(certificatesv1.CertificateApproved)},
			want:         []outcome{{"boot", BootstrapUser, OutcomeApprovedBefore}},
			wantAccepted: true,
		},
		"denied before stays denied": {
			cluster: makeCluster("gpu-east"),
			csrs:    []*csrWrapper{makeCSR(t, "boot", "gpu-east", "a1", BootstrapUser, 0).condition(certificatesv1.CertificateDenied)},
			want:    []outcome{{"boot", BootstrapUser, OutcomeDeniedBefore}},
		},
		"another trusted requester": {
			cluster:      makeCluster("gpu-east"),
			csrs:         []*csrWrapper{makeCSR(t, "boot", "gpu-east", "a1", "system:serviceaccount:ops:joiner", 0)},
			opts:         AcceptOptions{Requesters: []string{"system:serviceaccount:ops:joiner"}},
			want:         []outcome{{"boot", "system:serviceaccount:ops:joiner", OutcomeApproved}},
			wantApproved: []string{"boot"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var objs []runtime.Object
			for _, w := range tc.csrs {
				objs = append(objs, w.obj())
			}
			cs := kubefake.NewClientset(objs...)
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(tc.cluster.Obj()).Build()
			tc.opts.Clock = clocktesting.NewFakePassiveClock(t0)
			res, err := Accept(context.Background(), c, cs, "gpu-east", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []outcome
			for _, d := range res.Requests {
				got = append(got, outcome{d.Name, d.Requester, d.Outcome})
				if d.Outcome != OutcomeApproved && d.Outcome != OutcomeApprovedBefore && d.Outcome != OutcomeDeniedBefore && d.Why == "" {
					t.Errorf("request %s: outcome %q without a reason", d.Name, d.Outcome)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantApproved, res.Approved()); diff != "" {
				t.Errorf("Approved() (-want +got):\n%s", diff)
			}
			// What the server holds agrees with what Accept says it did.
			var approvedOnServer []string
			for _, w := range tc.csrs {
				got, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), w.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if csrs.HasCondition(got, certificatesv1.CertificateApproved) && !csrs.HasCondition(w.obj(), certificatesv1.CertificateApproved) {
					approvedOnServer = append(approvedOnServer, got.Name)
				}
			}
			if diff := cmp.Diff(tc.wantApproved, approvedOnServer); diff != "" {
				t.Errorf("approved on the server (-want +got):\n%s", diff)
			}
			if res.AlreadyAccepted != tc.wantAccepted {
				t.Errorf("AlreadyAccepted = %v, want %v", res.AlreadyAccepted, tc.wantAccepted)
			}
			mc := &clusterv1.ManagedCluster{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: "gpu-east"}, mc); err != nil {
				t.Fatal(err)
			}
			if !mc.Spec.HubAcceptsClient {
				t.Error("spec.hubAcceptsClient is false after Accept")
			}
		})
	}
}

func TestAcceptUnknownCluster(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	_, err := Accept(context.Background(), c, kubefake.NewClientset(), "nope", AcceptOptions{})
	if err == nil || !strings.Contains(err.Error(), "has its agent started") {
		t.Errorf("Accept() of a missing cluster: err = %v, want one saying the agent creates it", err)
	}
}
