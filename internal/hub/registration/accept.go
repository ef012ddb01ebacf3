package registration

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/clusteridentity"
)

// AcceptResult says what Accept did.
type AcceptResult struct {
	// Approved names the certificate requests approved.
	Approved []string
	// AlreadyAccepted is true when spec.hubAcceptsClient was already true.
	AlreadyAccepted bool
	// PreviouslyApproved is true when one of the cluster's requests had been approved before.
	PreviouslyApproved bool
}

// Accept does what an administrator does to admit a cluster, with the administrator's own
// permissions: it approves the cluster's pending certificate requests and sets
// spec.hubAcceptsClient. Both are needed; the hub's controllers then grant the agent its access.
func Accept(ctx context.Context, c client.Client, cs kubernetes.Interface, cluster string, clk clock.PassiveClock) (AcceptResult, error) {
	var res AcceptResult
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
	for i := range csrs.Items {
		csr := &csrs.Items[i]
		if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
			continue
		}
		if decided(csr) {
			res.PreviouslyApproved = res.PreviouslyApproved || approved(csr)
			continue
		}
		got, _, err := clusteridentity.CheckRequest(csr.Spec.Request)
		if err != nil || got != cluster {
			continue // labeled for this cluster but asking for something else: leave it to a human
		}
		if err := approve(ctx, cs, csr, "HubAdminAccepted", "approved with cluster "+cluster+" by flotilla accept", clk); err != nil {
			return res, err
		}
		res.Approved = append(res.Approved, csr.Name)
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
