package registration

// Failures, and what the agent says about them.
//
// The agent gives up on nothing: a hub that is down, a bootstrap token not yet replaced, a
// cluster not yet accepted are all states an administrator fixes while the agent waits, so Run
// logs each failure and tries again after a backoff. What it logs must then say what failed and
// what would fix it, because that log line is all an administrator sees. Every step that talks to
// an API server wraps its error in a stepError naming the step, the credentials it used and the
// server, and explain, a pure function, turns that into one sentence.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/flotilla/flotilla/internal/contract/wellknown"
)

// identity is the set of credentials a step used.
type identity int

const (
	// spokeIdentity is the spoke kubeconfig (--kubeconfig, or the in-cluster configuration).
	spokeIdentity identity = iota
	// bootstrapIdentity is the bootstrap kubeconfig `flotilla init` printed on the hub.
	bootstrapIdentity
	// agentIdentity is the agent's own hub client certificate, kept in a Secret on the spoke.
	agentIdentity
)

// stepError is a failed step of registration or heartbeat.
type stepError struct {
	// Step says what the agent was doing, as a verb phrase that follows "may not":
	// "create ManagedCluster gpu-east".
	Step     string
	Identity identity
	// Server is the URL of the API server the step talked to.
	Server string
	// Cluster is the agent's cluster name, for fixes that name it.
	Cluster string
	// Secret is namespace/name of the Secret on the spoke that holds the agent's hub kubeconfig.
	Secret string
	Err    error
}

func (e *stepError) Error() string {
	return fmt.Sprintf("%s at %s with %s: %v", e.Step, e.Server, e.credentials(), e.Err)
}

func (e *stepError) Unwrap() error { return e.Err }

// credentials names the credentials the step used, as a reader would look for them.
func (e *stepError) credentials() string {
	switch e.Identity {
	case bootstrapIdentity:
		return "the bootstrap kubeconfig"
	case agentIdentity:
		return "the hub kubeconfig in Secret " + e.Secret + " on the spoke"
	default:
		return "the spoke kubeconfig"
	}
}

// server names the API server the step talked to.
func (e *stepError) server() string {
	if e.Identity == spokeIdentity {
		return "the spoke's API server " + e.Server
	}
	return "the hub " + e.Server
}

// approval says who approves the step's certificate requests.
func (e *stepError) approval() string {
	if e.Identity == agentIdentity {
		return "the hub approves the renewals of accepted clusters by itself"
	}
	return "approve it with `flotilla accept " + e.Cluster + "` on the hub"
}

// csrDeniedError is a certificate request that an administrator denied or the signer failed.
type csrDeniedError struct {
	Name    string
	Type    string // Denied or Failed
	Message string
}

func (e *csrDeniedError) Error() string {
	return fmt.Sprintf("certificate request %s was %s: %s", e.Name, e.Type, e.Message)
}

// csrGoneError is a certificate request deleted while the agent waited for it.
type csrGoneError struct {
	Name string
}

func (e *csrGoneError) Error() string {
	return fmt.Sprintf("certificate request %s was deleted before it was signed", e.Name)
}

// approvalTimeoutError is a certificate request not signed within the agent's bounded wait.
type approvalTimeoutError struct {
	Name    string
	Timeout time.Duration
	// LastErr is the last error reading the request, if the last attempt failed.
	LastErr error
}

func (e *approvalTimeoutError) Error() string {
	s := fmt.Sprintf("certificate request %s was not signed within %s", e.Name, e.Timeout)
	if e.LastErr != nil {
		s += fmt.Sprintf(" (last error reading it: %v)", e.LastErr)
	}
	return s
}

// certificateExpiredError is the agent's hub certificate expiring before it could be renewed.
type certificateExpiredError struct {
	NotAfter time.Time
}

func (e *certificateExpiredError) Error() string {
	return "the hub client certificate expired at " + e.NotAfter.UTC().Format(time.RFC3339)
}

// explain says in one sentence what failed and what would fix it. It recognizes failures by their
// type where the client libraries keep it, and by their text where a library has flattened it.
func explain(err error) string {
	if err == nil {
		return ""
	}
	var se *stepError
	if !errors.As(err, &se) {
		return err.Error() // every failure of the agent's steps is a stepError
	}
	if why := ExplainWebhookFailure(err); why != "" {
		return fmt.Sprintf("the hub %s refused to %s: %s", se.Server, se.Step, why)
	}
	if why := explainRequest(err, se); why != "" {
		return why
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("%s did not answer in time to %s: it may be overloaded or the network slow", se.server(), se.Step)
	}
	if why := unreachable(err); why != "" {
		if se.Identity == spokeIdentity {
			return fmt.Sprintf("cannot reach %s (%s) to %s: is it running?", se.server(), why, se.Step)
		}
		return fmt.Sprintf("cannot reach %s (%s) to %s: is the hub running, and is %s the address this agent reaches it at?", se.server(), why, se.Step, se.Server)
	}
	if why := explainAnswer(err, se); why != "" {
		return why
	}
	return fmt.Sprintf("could not %s at %s with %s: %s", se.Step, se.Server, se.credentials(), rootCause(err))
}

// explainRequest explains a failure of the certificate request or of the TLS handshake, and
// returns "" for any other.
func explainRequest(err error, se *stepError) string {
	var denied *csrDeniedError
	var gone *csrGoneError
	var timeout *approvalTimeoutError
	var expired *certificateExpiredError
	switch {
	case errors.As(err, &denied):
		return fmt.Sprintf("certificate request %s of cluster %s was %s (%s): the agent asks again; %s",
			denied.Name, se.Cluster, strings.ToLower(denied.Type), denied.Message, se.approval())
	case errors.As(err, &gone):
		return fmt.Sprintf("certificate request %s of cluster %s was deleted before it was signed: the agent asks again; %s",
			gone.Name, se.Cluster, se.approval())
	case errors.As(err, &timeout) && se.Identity == agentIdentity:
		return fmt.Sprintf("the hub did not sign renewal request %s of cluster %s within %s: the agent asks again and keeps its current certificate meanwhile; "+
			"is `flotilla hub` running? It approves the renewals of accepted clusters", timeout.Name, se.Cluster, timeout.Timeout)
	case errors.As(err, &timeout):
		return fmt.Sprintf("certificate request %s of cluster %s was not signed within %s: the agent asks again; approve it with `flotilla accept %s` on the hub",
			timeout.Name, se.Cluster, timeout.Timeout, se.Cluster)
	case errors.As(err, &expired):
		return fmt.Sprintf("the agent's hub certificate (Secret %s on the spoke) expired at %s before it could be renewed: the agent registers again with the bootstrap kubeconfig; approve it with `flotilla accept %s` on the hub",
			se.Secret, expired.NotAfter.UTC().Format(time.RFC3339), se.Cluster)
	case unknownAuthority(err):
		switch se.Identity {
		case bootstrapIdentity:
			return fmt.Sprintf("the bootstrap kubeconfig's server %s presents a certificate not signed by its CA: is it the kubeconfig of this hub? `flotilla init` on the hub prints the right one", se.Server)
		case agentIdentity:
			return fmt.Sprintf("the hub %s presents a certificate not signed by the CA in the agent's hub kubeconfig (Secret %s on the spoke): was the hub reinstalled? Delete the Secret and restart the agent to register again", se.Server, se.Secret)
		default:
			return fmt.Sprintf("the spoke kubeconfig's server %s presents a certificate not signed by its CA: is --kubeconfig the kubeconfig of this cluster?", se.Server)
		}
	case tlsFailure(err):
		return fmt.Sprintf("the TLS handshake with %s failed (%s): check the server address and the CA in %s", se.server(), rootCause(err), se.credentials())
	}
	return ""
}

// explainAnswer explains a server's refusal or trouble answering, and returns "" for any other
// failure.
func explainAnswer(err error, se *stepError) string {
	var noKind *meta.NoKindMatchError
	switch {
	case unauthorized(err):
		switch se.Identity {
		case bootstrapIdentity:
			return fmt.Sprintf("the bootstrap token was refused (401): it expired or was revoked, or %s is not the hub that issued it; make a new one with `flotilla init` on the hub", se.Server)
		case agentIdentity:
			return fmt.Sprintf("the hub %s refused the agent's client certificate from Secret %s on the spoke (401): it expired or the hub's CA changed; "+
				"the agent registers again with the bootstrap kubeconfig; approve it with `flotilla accept %s` on the hub", se.Server, se.Secret, se.Cluster)
		default:
			return fmt.Sprintf("%s refused the spoke kubeconfig's credentials (401): they expired or were revoked", se.server())
		}
	case apierrors.IsForbidden(err):
		switch se.Identity {
		case bootstrapIdentity:
			return fmt.Sprintf("the bootstrap identity may not %s (403): is the bootstrap kubeconfig the one `flotilla init` made for the hub %s? `flotilla init` also restores the bootstrap role", se.Step, se.Server)
		case agentIdentity:
			return fmt.Sprintf("the agent's hub identity may not %s (403): the hub has not accepted cluster %s, has denied it, or is still granting access after accepting it; accept it with `flotilla accept %s` on the hub", se.Step, se.Cluster, se.Cluster)
		default:
			return fmt.Sprintf("the spoke kubeconfig's identity may not %s (403): the agent needs to manage its namespace and Secret and to read nodes and ClusterClaims on the spoke", se.Step)
		}
	case errors.As(err, &noKind) || meta.IsNoMatchError(err):
		kind := "ManagedClusters"
		if noKind != nil {
			kind = noKind.GroupKind.String()
		}
		return fmt.Sprintf("%s does not serve %s: is it a Flotilla hub? `flotilla init` installs the APIs", se.server(), kind)
	case serverTrouble(err):
		return fmt.Sprintf("%s answered %d %s to %s: it may be starting or overloaded; the agent tries again", se.server(), statusCode(err), apierrors.ReasonForError(err), se.Step)
	}
	return ""
}

// unknownAuthority reports a server certificate not signed by the CA the client trusts.
func unknownAuthority(err error) bool {
	var ua x509.UnknownAuthorityError
	var uap *x509.UnknownAuthorityError
	return errors.As(err, &ua) || errors.As(err, &uap) || strings.Contains(err.Error(), "certificate signed by unknown authority")
}

// tlsFailure reports any other failure to verify the server: a certificate for another name,
// an expired certificate, or a handshake the server broke off.
func tlsFailure(err error) bool {
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var alert tls.AlertError
	if errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify) || errors.As(err, &alert) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "x509: ") || strings.Contains(s, "tls: ")
}

// unreachable says briefly why a server could not be reached, or "" if it was.
func unreachable(err error) string {
	var dns *net.DNSError
	var netErr net.Error
	s := err.Error()
	switch {
	case errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(s, "connection refused"):
		return "connection refused"
	case errors.As(err, &dns) || strings.Contains(s, "no such host"):
		return "no such host"
	case errors.Is(err, syscall.ECONNRESET) || strings.Contains(s, "connection reset"):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) || strings.Contains(s, "no route to host"):
		return "no route to host"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timed out"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection closed"
	}
	return ""
}

// unauthorized reports a 401: the server did not accept the credentials.
func unauthorized(err error) bool {
	return apierrors.IsUnauthorized(err) || strings.Contains(err.Error(), "the server has asked for the client to provide credentials")
}

// serverTrouble reports an answer that says the server could not serve the request now.
func serverTrouble(err error) bool {
	return apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err) || apierrors.IsInternalError(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsUnexpectedServerError(err)
}

func statusCode(err error) int32 {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Code
	}
	return 0
}

// rootCause is the innermost error's text, without the step and URL the wrappers add.
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// hubWebhookConfiguration is the ValidatingWebhookConfiguration the hub keeps.
const hubWebhookConfiguration = wellknown.HubWebhookConfiguration

// ExplainWebhookFailure says what went wrong when the hub's API server refused a write because of
// an admission webhook, and what would fix it; it returns "" for any other error. The webhook
// either could not be called (the hub's webhooks fail closed, so a hub that is not running blocks
// the writes they check: creating or accepting ManagedClusters, binding sets) or denied the write.
// The agent's log and `flotilla accept` both use it.
func ExplainWebhookFailure(err error) string {
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) {
		return ""
	}
	msg := status.Status().Message
	if name, reason, ok := cutQuoted(msg, "failed calling webhook "); ok {
		return fmt.Sprintf("the hub's admission webhook %s %s: start `flotilla hub`, which serves it, and check its logs, or the ValidatingWebhookConfiguration %s",
			name, webhookCallFailure(reason), hubWebhookConfiguration)
	}
	if name, reason, ok := cutQuoted(msg, "admission webhook "); ok {
		return fmt.Sprintf("the hub's admission webhook %s denied it%s", name, strings.TrimPrefix(reason, " denied the request"))
	}
	return ""
}

// cutQuoted finds prefix followed by a quoted name in s and returns the name and what follows it.
func cutQuoted(s, prefix string) (name, rest string, ok bool) {
	_, after, ok := strings.Cut(s, prefix+`"`)
	if !ok {
		return "", "", false
	}
	name, rest, ok = strings.Cut(after, `"`)
	return name, rest, ok
}

// webhookCallFailure says why the API server could not call a webhook, from the reason it gives.
func webhookCallFailure(reason string) string {
	switch {
	case strings.Contains(reason, "connection refused"):
		return "does not answer (connection refused)"
	case strings.Contains(reason, "no such host"):
		return "cannot be found (no such host)"
	case strings.Contains(reason, "x509: ") || strings.Contains(reason, "tls: "):
		return "presents a certificate the hub's API server does not trust"
	case strings.Contains(reason, "deadline exceeded") || strings.Contains(reason, "Client.Timeout") || strings.Contains(reason, "i/o timeout"):
		return "did not answer in time"
	}
	return "could not be called (" + strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(reason, ":")), "failed to call webhook: ") + ")"
}
