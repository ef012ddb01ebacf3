//go:build integration

package registration

import (
	"context"
	"fmt"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestApprovedButNotAcceptedCanOnlyReadItsCluster plays an agent whose certificate request was
// approved while its cluster was not accepted: it holds a valid certificate, yet may do nothing
// but read its own ManagedCluster.
func TestApprovedButNotAcceptedCanOnlyReadItsCluster(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	startHub(t, env)
	ctx := context.Background()
	const cluster = "unaccepted"
	bc, err := client.New(bootstrapConfig(t, env), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := bc.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = hubClient(t, env).Delete(context.Background(), &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}})
	})

	// The agent's request, approved by an administrator without accepting the cluster.
	cfg := agentIdentity(t, env, cluster, "a")
	ac, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}

	mc := &clusterv1.ManagedCluster{}
	testenv.WaitFor(t, 30*time.Second, "the hub to let the agent read its own ManagedCluster", func(ctx context.Context) (bool, string, error) {
		err := ac.Get(ctx, client.ObjectKey{Name: cluster}, mc)
		return err == nil, fmt.Sprintf("get: %v", err), nil
	})
	mc.Spec.HubAcceptsClient = true
	checks := map[string]error{
		"accept itself":               ac.Update(ctx, mc),
		"write its status":            ac.Status().Update(ctx, mc),
		"read another cluster":        ac.Get(ctx, client.ObjectKey{Name: "spoke-1"}, &clusterv1.ManagedCluster{}),
		"list works in its namespace": ac.List(ctx, &workv1.ManifestWorkList{}, client.InNamespace(cluster)),
		"request a certificate": ac.Create(ctx, &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{GenerateName: cluster + "-"},
			Spec: certificatesv1.CertificateSigningRequestSpec{
				Request:    []byte("not looked at: the request is refused before"),
				SignerName: certificatesv1.KubeAPIServerClientSignerName,
				Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
			},
		}),
	}
	for what, err := range checks {
		if !apierrors.IsForbidden(err) {
			t.Errorf("an unaccepted agent tried to %s: err = %v, want Forbidden", what, err)
		}
	}
}
