package registration

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/hub/csrs"
)

// BootstrapUser is the user name the API server gives the bootstrap identity: the requester of
// every first certificate request of an agent that joined with `flotilla init`'s kubeconfig.
var BootstrapUser = "system:serviceaccount:" + BootstrapNamespace + ":" + BootstrapServiceAccount

// AcceptOptions says whose certificate requests Accept approves.
type AcceptOptions struct {
	// Requesters are the user names whose first requests may be approved; empty means
	// BootstrapUser. A request filed by anyone else, an accepted agent of another cluster for
	// one, is never approved: approving it would hand that requester the cluster's identity.
	Requesters []string
	Clock      clock.PassiveClock
}

// What Accept did with a request, as RequestDecision.Outcome says it.
const (
	OutcomeApproved         = "approved"
	OutcomeApprovedBefore   = "approved before"
	OutcomeDeniedBefore     = "denied before"
	OutcomeNotApproved      = "not approved"
	OutcomeOlderNotApproved = "not approved: older"
)

// RequestDecision is one of the cluster's certificate requests and what Accept did with it.
type RequestDecision struct {
	Name      string
	Requester string
	Created   time.Time
	Outcome   string
	// Why explains an outcome other than approved.
	Why string
}

// AcceptResult says what Accept did.
type AcceptResult struct {
	// Requests lists every request labeled with the cluster, newest first.
	Requests []RequestDecision
	// AlreadyAccepted is true when spec.hubAcceptsClient was already true.
	AlreadyAccepted bool
}

// Approved names the requests Accept approved (at most one).
func (r AcceptResult) Approved() []string { return r.names(OutcomeApproved) }

// PreviouslyApproved is true when one of the cluster's requests had been approved before.
func (r AcceptResult) PreviouslyApproved() bool { return len(r.names(OutcomeApprovedBefore)) > 0 }

func (r AcceptResult) names(outcome string) []string {
	var out []string
	for _, d := range r.Requests {
		if d.Outcome == outcome {
			out = append(out, d.Name)
		}
	}
	return out
}

// Accept does what an administrator does to admit a cluster, with the administrator's own
// permissions: it approves the cluster's newest pending certificate request filed by a trusted
// requester (the bootstrap identity) that asks for exactly an agent identity of this cluster, and
// sets spec.hubAcceptsClient. Both are needed; the hub's controllers then grant the agent its
// access. Older pending requests stay pending: an agent waits only for its newest.
func Accept(ctx context.Context, c client.Client, cs kubernetes.Interface, cluster string, opts AcceptOptions) (AcceptResult, error) {
	var res AcceptResult
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	requesters := opts.Requesters
	if len(requesters) == 0 {
		requesters = []string{BootstrapUser}
	}
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		return res, fmt.Errorf("cluster %s: %w (has its agent started? it creates the ManagedCluster)", cluster, err)
	}
	csrs, err := cs.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{
		LabelSelector: clusteridentity.ClusterNameLabel + "=" + cluster,
	})
	if err != nil {
		return res, fmt.Errorf("listing certificate requests of cluster %s: %w", cluster, err)
	}
	items := csrs.Items
	slices.SortFunc(items, func(a, b certificatesv1.CertificateSigningRequest) int {
		return cmp.Or(b.CreationTimestamp.Compare(a.CreationTimestamp.Time), cmp.Compare(b.Name, a.Name))
	})
	var newest *certificatesv1.CertificateSigningRequest
	for i := range items {
		csr := &items[i]
		d := RequestDecision{Name: csr.Name, Requester: csr.Spec.Username, Created: csr.CreationTimestamp.Time}
		d.Outcome, d.Why = judgeFirstRequest(csr, cluster, requesters)
		if d.Outcome == OutcomeApproved {
			if newest != nil {
				d.Outcome, d.Why = OutcomeOlderNotApproved, "request "+newest.Name+" is newer"
			} else {
				newest = csr
			}
		}
		res.Requests = append(res.Requests, d)
	}
	if newest != nil {
		if err := approve(ctx, cs, newest, "HubAdminAccepted", "approved with cluster "+cluster+" by flotilla accept", opts.Clock); err != nil {
			return res, err
		}
	}
	if mc.Spec.HubAcceptsClient {
		res.AlreadyAccepted = true
		return res, nil
	}
	patch := client.MergeFrom(mc.DeepCopy())
	mc.Spec.HubAcceptsClient = true
	if err := c.Patch(ctx, mc, patch); err != nil {
		return res, fmt.Errorf("accepting cluster %s: %w", cluster, err)
	}
	return res, nil
}

// judgeFirstRequest says whether csr, labeled with cluster, may be approved as the cluster's
// first certificate: OutcomeApproved when it may, another outcome and why when not.
func judgeFirstRequest(csr *certificatesv1.CertificateSigningRequest, cluster string, requesters []string) (outcome, why string) {
	switch {
	case csrs.HasCondition(csr, certificatesv1.CertificateApproved):
		return OutcomeApprovedBefore, ""
	case csrs.HasCondition(csr, certificatesv1.CertificateDenied):
		return OutcomeDeniedBefore, ""
	}
	got, _, err := agentRequest(csr)
	switch {
	case err != nil:
		return OutcomeNotApproved, "not an agent's request: " + err.Error()
	case got != cluster:
		return OutcomeNotApproved, fmt.Sprintf("asks for an identity of cluster %q, not %q", got, cluster)
	case isRenewal(csr):
		return OutcomeNotApproved, "a renewal filed by the agent itself: the hub approves it while the cluster is accepted"
	case !slices.Contains(requesters, csr.Spec.Username):
		return OutcomeNotApproved, fmt.Sprintf("filed by %q, not by the bootstrap identity %v; "+
			"approve it by hand (kubectl certificate approve) only if you know who that is", csr.Spec.Username, requesters)
	}
	return OutcomeApproved, ""
}
