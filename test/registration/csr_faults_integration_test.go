//go:build integration

package registration

import (
	"context"
	"fmt"
	"github.com/flotilla/flotilla/internal/logtest"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	hubreg "github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// Certificate requests that go wrong: a renewal the hub never approves, a pending request someone
// deletes. These tests run their agents on spoke-3, each with a namespace of its own for the
// agent's Secret.

// TestRenewalNeverApprovedKeepsTheLease stops the hub, so that nothing approves the agent's
// renewal: the agent goes on renewing its lease with the current certificate while it waits, asks
// again when its bounded wait ends, and takes the renewed certificate once the hub is back.
func TestRenewalNeverApprovedKeepsTheLease(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 3, CRDs: true})
	stopHub := startHub(t, env)
	c := hubClient(t, env)
	ctx := context.Background()
	spoke := env.Spokes[2]
	const cluster, agentID = "spoke-3-renewal", "agent-renewal"
	clk := &offsetClock{}
	logs := &logtest.Recorder{Echo: true}
	ns := env.Namespace(t, spoke)
	runAgent(t, agentreg.Options{
		ClusterName: cluster, AgentID: agentID, Bootstrap: bootstrapConfig(t, env), Spoke: spoke.RESTConfig(),
		Namespace: ns, LeaseDurationSeconds: 1, CertificateLifetime: 10 * time.Minute, Clock: clk,
		RenewalApprovalTimeout: 3 * time.Second, InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second,
		Log: logs.Logger(t, funcr.Options{Verbosity: 1}),
	})
	testenv.WaitFor(t, 30*time.Second, "a certificate request from the agent", func(context.Context) (bool, string, error) {
		n := len(clusterCSRs(t, env, cluster))
		return n == 1, fmt.Sprintf("%d requests", n), nil
	})
	if _, err := hubreg.Accept(ctx, c, env.Hub.Client, cluster, hubreg.AcceptOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCluster(t, c, cluster, 60*time.Second, "Available=True without hub taints", available)
	waitLeaseRenewed(t, c, cluster)

	stopHub()
	// Past 80% of the certificate's lifetime, with a minute and a half before it expires.
	clk.offset.Store(int64(8*time.Minute + 30*time.Second))
	testenv.WaitFor(t, 30*time.Second, "a renewal request", func(context.Context) (bool, string, error) {
		n := len(agentRenewals(t, env, cluster, agentID))
		return n == 1, fmt.Sprintf("%d renewal requests", n), nil
	})

	// The renewal waits; the lease goes on. (The agent stamps renewals with its clock, minutes
	// ahead: what counts is that the time changes.)
	last, changes := leaseRenewTime(t, c, cluster), 0
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if now := leaseRenewTime(t, c, cluster); !now.Equal(last) {
			changes, last = changes+1, now
		}
	}
	if got := agentRenewals(t, env, cluster, agentID); len(got) != 1 || csrDecided(got[0]) {
		t.Fatalf("renewal requests %v, want the one pending", csrNames(got))
	}
	if changes < 2 {
		t.Errorf("the lease was renewed %d times in 2.5s while the renewal waited, want about one a second", changes)
	}

	// The bounded wait ends and the agent asks again, saying why.
	testenv.WaitFor(t, 30*time.Second, "a second renewal request after the first one's wait ended", func(context.Context) (bool, string, error) {
		n := len(agentRenewals(t, env, cluster, agentID))
		return n >= 2, fmt.Sprintf("%d renewal requests", n), nil
	})
	first := agentRenewals(t, env, cluster, agentID)[0].Name
	if got := logs.Failures("the hub did not sign renewal request " + first + " of cluster " + cluster + " within 3s"); len(got) == 0 {
		t.Errorf("no explained failure for the renewal not signed in time; last log entries:\n%s", logs.Last(5))
	}

	// The hub comes back and approves the pending renewal.
	old := storedCertificate(t, spoke, ns)
	startHub(t, env)
	testenv.WaitFor(t, 60*time.Second, "a renewed certificate in the agent's Secret", func(ctx context.Context) (bool, string, error) {
		return string(storedCertificate(t, spoke, ns)) != string(old), "same certificate", nil
	})
	clk.offset.Store(0)
	waitCluster(t, c, cluster, 30*time.Second, "Available=True without hub taints", available)
}

// TestDeletedRequestIsReportedAndAskedAgain deletes the agent's pending certificate request: the
// agent says so, asks again after its backoff, and joins once the new request is approved.
func TestDeletedRequestIsReportedAndAskedAgain(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 3, CRDs: true})
	startHub(t, env)
	c := hubClient(t, env)
	ctx := context.Background()
	spoke := env.Spokes[2]
	const cluster = "spoke-3-csr-deleted"
	logs := &logtest.Recorder{Echo: true}
	runAgent(t, agentreg.Options{
		ClusterName: cluster, AgentID: "agent-deleted", Bootstrap: bootstrapConfig(t, env), Spoke: spoke.RESTConfig(),
		Namespace: env.Namespace(t, spoke), LeaseDurationSeconds: 1, InitialBackoff: 500 * time.Millisecond, MaxBackoff: time.Second,
		Log: logs.Logger(t, funcr.Options{Verbosity: 1}),
	})
	var first string
	testenv.WaitFor(t, 30*time.Second, "a certificate request from the agent", func(context.Context) (bool, string, error) {
		csrs := clusterCSRs(t, env, cluster)
		if len(csrs) == 1 {
			first = csrs[0].Name
		}
		return len(csrs) == 1, fmt.Sprintf("%d requests", len(csrs)), nil
	})
	if err := env.Hub.Client.CertificatesV1().CertificateSigningRequests().Delete(ctx, first, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "certificate request " + first + " of cluster " + cluster + " was deleted before it was signed: the agent asks again; " +
		"approve it with `flotilla accept " + cluster + "` on the hub"
	testenv.WaitFor(t, 30*time.Second, "the deletion explained in the log and a new request", func(context.Context) (bool, string, error) {
		csrs := clusterCSRs(t, env, cluster)
		explained := len(logs.Failures(want)) > 0
		return explained && len(csrs) == 1 && csrs[0].Name != first,
			fmt.Sprintf("explained=%v, requests %v; last log entries:\n%s", explained, csrNames(csrs), logs.Last(3)), nil
	})
	if e := logs.Failures(want)[0]; e["retryIn"] == nil || e["loop"] != "clientcert" {
		t.Errorf("the deletion was logged without the delay or the loop: %v", e)
	}
	if _, err := hubreg.Accept(ctx, c, env.Hub.Client, cluster, hubreg.AcceptOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCluster(t, c, cluster, 60*time.Second, "Available=True without hub taints", available)
}

// agentRenewals are the cluster's certificate requests made by agent itself.
func agentRenewals(t *testing.T, env *testenv.Env, cluster, agent string) []certificatesv1.CertificateSigningRequest {
	t.Helper()
	var out []certificatesv1.CertificateSigningRequest
	for _, csr := range clusterCSRs(t, env, cluster) {
		if csr.Spec.Username == clusteridentity.User(cluster, agent) {
			out = append(out, csr)
		}
	}
	slices.SortFunc(out, func(a, b certificatesv1.CertificateSigningRequest) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	return out
}

func csrDecided(csr certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied {
			return true
		}
	}
	return false
}

func csrNames(csrs []certificatesv1.CertificateSigningRequest) []string {
	var out []string
	for _, c := range csrs {
		out = append(out, c.Name)
	}
	return out
}

// storedCertificate is the client certificate in the hub kubeconfig the agent stored in namespace
// ns of the spoke.
func storedCertificate(t *testing.T, spoke *testenv.Cluster, ns string) []byte {
	t.Helper()
	s, err := spoke.Client.CoreV1().Secrets(ns).Get(context.Background(), agentreg.DefaultSecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the agent's hub kubeconfig Secret: %v", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[agentreg.KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	return cfg.CertData
}
