package registration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	testHub    = "https://127.0.0.1:6443"
	testSpoke  = "https://127.0.0.1:7443"
	testSecret = DefaultNamespace + "/" + DefaultSecretName
)

// failed wraps err as the agent does when step fails with identity id.
func failed(id identity, step string, err error) error {
	server := testHub
	if id == spokeIdentity {
		server = testSpoke
	}
	return &stepError{Step: step, Identity: id, Server: server, Cluster: "gpu-east", Secret: testSecret, Err: err}
}

// urlErr is an error as client-go's HTTP client returns it.
func urlErr(err error) error {
	return &url.Error{Op: "Post", URL: testHub + "/apis/cluster.open-cluster-management.io/v1/managedclusters", Err: err}
}

// webhookCallErr is the error an API server returns when it cannot call the hub's
// ManagedCluster webhook, which fails closed.
func webhookCallErr(reason string) error {
	return apierrors.NewInternalError(fmt.Errorf(`failed calling webhook "managedclusters.hub.flotilla.io": failed to call webhook: %s`, reason))
}

func TestExplain(t *testing.T) {
	unknownCA := urlErr(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}})
	refused := urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})
	managedClusters := schema.GroupResource{Group: "cluster.open-cluster-management.io", Resource: "managedclusters"}
	forbidden := apierrors.NewForbidden(managedClusters, "gpu-east", errors.New(`User "system:serviceaccount:x:y" cannot create resource`))
	tests := map[string]struct {
		err  error
		want string
	}{
		"bootstrap kubeconfig of another hub": {
			err: failed(bootstrapIdentity, "create ManagedCluster gpu-east", unknownCA),
			want: "the bootstrap kubeconfig's server https://127.0.0.1:6443 presents a certificate not signed by its CA: " +
				"is it the kubeconfig of this hub? `flotilla init` on the hub prints the right one",
		},
		"unknown authority flattened to text by a library": {
			err: failed(bootstrapIdentity, "create ManagedCluster gpu-east", fmt.Errorf("failed to get API group resources: %v", unknownCA)),
			want: "the bootstrap kubeconfig's server https://127.0.0.1:6443 presents a certificate not signed by its CA: " +
				"is it the kubeconfig of this hub? `flotilla init` on the hub prints the right one",
		},
		"a reinstalled hub": {
			err: failed(agentIdentity, "read ManagedCluster gpu-east", unknownCA),
			want: "the hub https://127.0.0.1:6443 presents a certificate not signed by the CA in the agent's hub kubeconfig " +
				"(Secret open-cluster-management-agent/hub-kubeconfig-secret on the spoke): was the hub reinstalled? " +
				"Delete the Secret and restart the agent to register again",
		},
		"spoke kubeconfig of another cluster": {
			err:  failed(spokeIdentity, "create the agent namespace open-cluster-management-agent", unknownCA),
			want: "the spoke kubeconfig's server https://127.0.0.1:7443 presents a certificate not signed by its CA: is --kubeconfig the kubeconfig of this cluster?",
		},
		"server certificate for another name": {
			err: failed(bootstrapIdentity, "create ManagedCluster gpu-east", urlErr(x509.HostnameError{
				Certificate: &x509.Certificate{DNSNames: []string{"hub.example.com"}}, Host: "hub.internal",
			})),
			want: "the TLS handshake with the hub https://127.0.0.1:6443 failed (x509: certificate is valid for hub.example.com, not hub.internal): " +
				"check the server address and the CA in the bootstrap kubeconfig",
		},
		"hub down": {
			err: failed(bootstrapIdentity, "create ManagedCluster gpu-east", refused),
			want: "cannot reach the hub https://127.0.0.1:6443 (connection refused) to create ManagedCluster gpu-east: " +
				"is the hub running, and is https://127.0.0.1:6443 the address this agent reaches it at?",
		},
		"hub name unknown": {
			err: failed(agentIdentity, "renew Lease gpu-east/managed-cluster-lease", urlErr(&net.OpError{Op: "dial", Net: "tcp",
				Err: &net.DNSError{Err: "no such host", Name: "hub.example.com", IsNotFound: true}})),
			want: "cannot reach the hub https://127.0.0.1:6443 (no such host) to renew Lease gpu-east/managed-cluster-lease: " +
				"is the hub running, and is https://127.0.0.1:6443 the address this agent reaches it at?",
		},
		"spoke down": {
			err:  failed(spokeIdentity, "list nodes", refused),
			want: "cannot reach the spoke's API server https://127.0.0.1:7443 (connection refused) to list nodes: is it running?",
		},
		"bootstrap token expired, revoked or for another hub": {
			err: failed(bootstrapIdentity, "create ManagedCluster gpu-east", apierrors.NewUnauthorized("Unauthorized")),
			want: "the bootstrap token was refused (401): it expired or was revoked, or https://127.0.0.1:6443 is not the hub that issued it; " +
				"make a new one with `flotilla init` on the hub",
		},
		"401 flattened to text by a library": {
			err: failed(bootstrapIdentity, "create ManagedCluster gpu-east",
				errors.New("failed to get server groups: the server has asked for the client to provide credentials")),
			want: "the bootstrap token was refused (401): it expired or was revoked, or https://127.0.0.1:6443 is not the hub that issued it; " +
				"make a new one with `flotilla init` on the hub",
		},
		"agent certificate refused": {
			err: failed(agentIdentity, "read ManagedCluster gpu-east", apierrors.NewUnauthorized("Unauthorized")),
			want: "the hub https://127.0.0.1:6443 refused the agent's client certificate from Secret open-cluster-management-agent/hub-kubeconfig-secret " +
				"on the spoke (401): it expired or the hub's CA changed; the agent registers again with the bootstrap kubeconfig; " +
				"approve it with `flotilla accept gpu-east` on the hub",
		},
		"spoke credentials refused": {
			err:  failed(spokeIdentity, "read Secret "+testSecret, apierrors.NewUnauthorized("Unauthorized")),
			want: "the spoke's API server https://127.0.0.1:7443 refused the spoke kubeconfig's credentials (401): they expired or were revoked",
		},
		"bootstrap identity without its role": {
			err: failed(bootstrapIdentity, "create ManagedCluster gpu-east", forbidden),
			want: "the bootstrap identity may not create ManagedCluster gpu-east (403): is the bootstrap kubeconfig the one `flotilla init` made " +
				"for the hub https://127.0.0.1:6443? `flotilla init` also restores the bootstrap role",
		},
		"cluster denied": {
			err: failed(agentIdentity, "renew Lease gpu-east/managed-cluster-lease", forbidden),
			want: "the agent's hub identity may not renew Lease gpu-east/managed-cluster-lease (403): the hub has not accepted cluster gpu-east, " +
				"has denied it, or is still granting access after accepting it; accept it with `flotilla accept gpu-east` on the hub",
		},
		"spoke identity without rights": {
			err: failed(spokeIdentity, "create the agent namespace open-cluster-management-agent", forbidden),
			want: "the spoke kubeconfig's identity may not create the agent namespace open-cluster-management-agent (403): " +
				"the agent needs to manage its namespace and Secret and to read nodes and ClusterClaims on the spoke",
		},
		"not a Flotilla hub": {
			err: failed(bootstrapIdentity, "create ManagedCluster gpu-east", &meta.NoKindMatchError{
				GroupKind: schema.GroupKind{Group: "cluster.open-cluster-management.io", Kind: "ManagedCluster"}, SearchedVersions: []string{"v1"},
			}),
			want: "the hub https://127.0.0.1:6443 does not serve ManagedCluster.cluster.open-cluster-management.io: is it a Flotilla hub? " +
				"`flotilla init` installs the APIs",
		},
		"certificate request denied": {
			err: failed(bootstrapIdentity, "request a hub client certificate", &csrDeniedError{Name: "gpu-east-x7k2p", Type: "Denied", Message: "not ours"}),
			want: "certificate request gpu-east-x7k2p of cluster gpu-east was denied (not ours): the agent asks again; " +
				"approve it with `flotilla accept gpu-east` on the hub",
		},
		"pending certificate request deleted": {
			err: failed(bootstrapIdentity, "wait for certificate request gpu-east-x7k2p", &csrGoneError{Name: "gpu-east-x7k2p"}),
			want: "certificate request gpu-east-x7k2p of cluster gpu-east was deleted before it was signed: the agent asks again; " +
				"approve it with `flotilla accept gpu-east` on the hub",
		},
		"pending renewal deleted": {
			err: failed(agentIdentity, "wait for renewal request gpu-east-x7k2p", &csrGoneError{Name: "gpu-east-x7k2p"}),
			want: "certificate request gpu-east-x7k2p of cluster gpu-east was deleted before it was signed: the agent asks again; " +
				"the hub approves the renewals of accepted clusters by itself",
		},
		"first request not approved in time": {
			err: failed(bootstrapIdentity, "wait for certificate request gpu-east-x7k2p", &approvalTimeoutError{Name: "gpu-east-x7k2p", Timeout: 10 * time.Minute}),
			want: "certificate request gpu-east-x7k2p of cluster gpu-east was not signed within 10m0s: the agent asks again; " +
				"approve it with `flotilla accept gpu-east` on the hub",
		},
		"renewal not approved in time": {
			err: failed(agentIdentity, "wait for renewal request gpu-east-x7k2p", &approvalTimeoutError{Name: "gpu-east-x7k2p", Timeout: 5 * time.Minute}),
			want: "the hub did not sign renewal request gpu-east-x7k2p of cluster gpu-east within 5m0s: the agent asks again and keeps its current certificate meanwhile; " +
				"is `flotilla hub` running? It approves the renewals of accepted clusters",
		},
		"hub webhook down": {
			err: failed(bootstrapIdentity, "create ManagedCluster gpu-east", webhookCallErr(
				`Post "https://127.0.0.1:40123/validate-managedcluster?timeout=10s": dial tcp 127.0.0.1:40123: connect: connection refused`)),
			want: "the hub https://127.0.0.1:6443 refused to create ManagedCluster gpu-east: the hub's admission webhook managedclusters.hub.flotilla.io " +
				"does not answer (connection refused): start `flotilla hub`, which serves it, and check its logs, or the ValidatingWebhookConfiguration flotilla-hub",
		},
		"hub webhook with a certificate the API server does not trust": {
			err: failed(bootstrapIdentity, "create ManagedCluster gpu-east", webhookCallErr(
				`Post "https://127.0.0.1:40123/validate-managedcluster?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority`)),
			want: "the hub https://127.0.0.1:6443 refused to create ManagedCluster gpu-east: the hub's admission webhook managedclusters.hub.flotilla.io " +
				"presents a certificate the hub's API server does not trust: start `flotilla hub`, which serves it, and check its logs, or the ValidatingWebhookConfiguration flotilla-hub",
		},
		"hub webhook too slow": {
			err: failed(bootstrapIdentity, "create ManagedCluster gpu-east", webhookCallErr(
				`Post "https://127.0.0.1:40123/validate-managedcluster?timeout=10s": context deadline exceeded`)),
			want: "the hub https://127.0.0.1:6443 refused to create ManagedCluster gpu-east: the hub's admission webhook managedclusters.hub.flotilla.io " +
				"did not answer in time: start `flotilla hub`, which serves it, and check its logs, or the ValidatingWebhookConfiguration flotilla-hub",
		},
		"hub webhook denies": {
			err: failed(bootstrapIdentity, "create ManagedCluster gpu-east", &apierrors.StatusError{ErrStatus: metav1.Status{
				Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden,
				Message: `admission webhook "managedclusters.hub.flotilla.io" denied the request: only the hub sets taint cluster.open-cluster-management.io/unreachable`,
			}}),
			want: "the hub https://127.0.0.1:6443 refused to create ManagedCluster gpu-east: the hub's admission webhook managedclusters.hub.flotilla.io " +
				"denied it: only the hub sets taint cluster.open-cluster-management.io/unreachable",
		},
		"certificate expired before renewal": {
			err: failed(agentIdentity, "renew the hub client certificate", &certificateExpiredError{NotAfter: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}),
			want: "the agent's hub certificate (Secret open-cluster-management-agent/hub-kubeconfig-secret on the spoke) expired at 2030-01-02T03:04:05Z " +
				"before it could be renewed: the agent registers again with the bootstrap kubeconfig; approve it with `flotilla accept gpu-east` on the hub",
		},
		"hub overloaded": {
			err:  failed(agentIdentity, "update the status of ManagedCluster gpu-east", apierrors.NewServiceUnavailable("etcd is slow")),
			want: "the hub https://127.0.0.1:6443 answered 503 ServiceUnavailable to update the status of ManagedCluster gpu-east: it may be starting or overloaded; the agent tries again",
		},
		"no answer in time": {
			err:  failed(spokeIdentity, "list nodes", fmt.Errorf("waiting: %w", context.DeadlineExceeded)),
			want: "the spoke's API server https://127.0.0.1:7443 did not answer in time to list nodes: it may be overloaded or the network slow",
		},
		"anything else": {
			err:  failed(bootstrapIdentity, "read the hub's CA", fmt.Errorf("reading the hub CA /etc/hub/ca.crt: %w", os.ErrPermission)),
			want: "could not read the hub's CA at https://127.0.0.1:6443 with the bootstrap kubeconfig: permission denied",
		},
		"not from a step": {
			err:  errors.New("something odd"),
			want: "something odd",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, explain(tc.err)); diff != "" {
				t.Errorf("explain(%v) (-want +got):\n%s", tc.err, diff)
			}
		})
	}
}

func TestExplainWebhookFailure(t *testing.T) {
	tests := map[string]struct {
		err  error
		want string
	}{
		"webhook down": {
			err: fmt.Errorf("accepting cluster gpu-east: %w", webhookCallErr(
				`Post "https://127.0.0.1:40123/validate-managedcluster?timeout=10s": dial tcp 127.0.0.1:40123: connect: connection refused`)),
			want: "the hub's admission webhook managedclusters.hub.flotilla.io does not answer (connection refused): start `flotilla hub`, which serves it, " +
				"and check its logs, or the ValidatingWebhookConfiguration flotilla-hub",
		},
		"webhook address unknown": {
			err: webhookCallErr(`Post "https://hub.internal:9443/validate-managedcluster?timeout=10s": dial tcp: lookup hub.internal: no such host`),
			want: "the hub's admission webhook managedclusters.hub.flotilla.io cannot be found (no such host): start `flotilla hub`, which serves it, " +
				"and check its logs, or the ValidatingWebhookConfiguration flotilla-hub",
		},
		"webhook answers nonsense": {
			err: webhookCallErr(`received invalid webhook response: expected response.uid="x", got ""`),
			want: "the hub's admission webhook managedclusters.hub.flotilla.io could not be called (received invalid webhook response: expected response.uid=\"x\", got \"\"): " +
				"start `flotilla hub`, which serves it, and check its logs, or the ValidatingWebhookConfiguration flotilla-hub",
		},
		"the hub itself down": {
			err:  urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}),
			want: "",
		},
		"another internal error": {err: apierrors.NewInternalError(errors.New("etcd is slow")), want: ""},
		"nil":                    {err: nil, want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ExplainWebhookFailure(tc.err)); diff != "" {
				t.Errorf("ExplainWebhookFailure(%v) (-want +got):\n%s", tc.err, diff)
			}
		})
	}
}
