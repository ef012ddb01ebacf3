package registration

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/kubeconfig"
)

// certAction is what the client certificate loop does next.
type certAction int

const (
	// certRegister: there are no credentials; reuse the stored ones or register.
	certRegister certAction = iota
	// certFallBack: the hub refused the credentials or they expired; drop them and register again.
	certFallBack
	// certWait: the credentials are good until their renewal time.
	certWait
	// certRenew: the renewal time has come.
	certRenew
)

// decideCert says what the client certificate loop does with creds at now: refused is the hub's
// 401 to them, if any. For certWait it also returns how long until the renewal; for certFallBack,
// why (a *certificateExpiredError when they expired).
func decideCert(creds *credentials, refused error, now time.Time) (certAction, time.Duration, error) {
	switch {
	case creds == nil:
		return certRegister, 0, nil
	case refused != nil:
		return certFallBack, 0, refused
	case !now.Before(creds.cert.NotAfter):
		return certFallBack, 0, &certificateExpiredError{NotAfter: creds.cert.NotAfter}
	case now.Before(creds.renewAt()):
		return certWait, creds.renewAt().Sub(now), nil
	}
	return certRenew, 0, nil
}

// certLoop keeps the agent's hub client certificate. It is the only loop that sets the agent's
// HubAccess; its state belongs to its goroutine.
type certLoop struct {
	a *Agent
	// skipStored is set after the hub refused the credentials in the Secret or they expired, so
	// that they are not loaded again; reason says why, for the log.
	skipStored bool
	reason     string
	// unsaved are credentials in use but not yet stored in the Secret.
	unsaved *credentials
}

func (l *certLoop) step(ctx context.Context) (time.Duration, error) {
	a := l.a
	if l.unsaved != nil {
		if err := l.save(ctx); err != nil {
			return 0, err
		}
	}
	cur := a.hub.Current()
	var creds *credentials
	if cur != nil {
		creds = cur.creds
	}
	action, wait, why := decideCert(creds, a.hub.refusal(cur), a.opts.Clock.Now())
	switch action {
	case certRegister:
		return l.register(ctx)
	case certFallBack:
		var expired *certificateExpiredError
		if errors.As(why, &expired) {
			why = a.agentErr(host(cur.Config), "renew the hub client certificate", why)
		}
		a.logFailure(why, "next", "registering again with the bootstrap kubeconfig")
		l.skipStored, l.reason = true, explain(why)
		a.hub.set(nil)
		return 0, nil
	case certWait:
		// Looking again every lease period notices a wall clock that jumped (a resumed virtual
		// machine, a corrected clock), which a timer, on the monotonic clock, would not.
		return min(wait, a.leasePeriod()), nil
	}
	return l.renew(ctx, cur)
}

// register reuses the credentials stored on the spoke, or registers with the bootstrap identity:
// it creates the ManagedCluster and a certificate request and waits for the certificate.
func (l *certLoop) register(ctx context.Context) (time.Duration, error) {
	a, o := l.a, l.a.opts
	if err := a.ensureNamespace(ctx); err != nil {
		return 0, err
	}
	reason := l.reason
	if !l.skipStored {
		lctx, cancel := context.WithTimeout(ctx, requestTimeout)
		creds, why, err := loadCredentials(lctx, a.spoke, o.Namespace, o.SecretName, o.ClusterName, o.Clock.Now())
		cancel()
		if err != nil {
			return 0, a.spokeErr("read Secret "+a.secret(), err)
		}
		if creds != nil {
			o.Log.Info("reusing stored hub credentials", "cluster", o.ClusterName, "expires", creds.cert.NotAfter)
			return 0, l.use(ctx, creds, false)
		}
		reason = why
	}
	o.Log.Info("registering with the hub", "cluster", o.ClusterName, "reason", reason)
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: o.ClusterName},
		Spec:       clusterv1.ManagedClusterSpec{LeaseDurationSeconds: o.LeaseDurationSeconds},
	}
	if len(o.ExternalServerURLs) > 0 {
		ca, err := kubeconfig.CA(o.Spoke)
		if err != nil {
			return 0, a.spokeErr("read the CA of the spoke's kubeconfig for spec.managedClusterClientConfigs", err)
		}
		mc.Spec.ManagedClusterClientConfigs = clientConfigs(o.ExternalServerURLs, ca)
	}
	cctx, cancel := context.WithTimeout(ctx, requestTimeout)
	err := a.bootstrap.Create(cctx, mc)
	cancel()
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, a.bootstrapErr("create ManagedCluster "+o.ClusterName, err)
	}
	hub, err := hubEndpoint(o.Bootstrap)
	if err != nil {
		return 0, a.bootstrapErr("read the hub's CA", err)
	}
	p, err := fileRequest(ctx, a.bootstrapKube, o.ClusterName, o.AgentID, o.CertificateLifetime, o.Clock.Now(), o.ApprovalTimeout)
	if err != nil {
		return 0, a.bootstrapErr("request a hub client certificate", err)
	}
	o.Log.Info("waiting for an administrator to approve the certificate request and accept the cluster (flotilla accept "+o.ClusterName+")",
		"cluster", o.ClusterName, "request", p.Name, "timeout", o.ApprovalTimeout.String())
	issued, err := l.await(ctx, a.bootstrapKube, p, func(err error) error {
		return a.bootstrapErr("wait for certificate request "+p.Name, err)
	}, nil)
	if timeout := (*approvalTimeoutError)(nil); errors.As(err, &timeout) {
		// Ask again at once: an administrator who accepts the cluster now approves what is pending.
		a.logFailure(err, "next", "a new certificate request")
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	creds, err := credentialsFor(p, issued, hub)
	if err != nil {
		return 0, a.bootstrapErr("use the certificate of request "+p.Name, err)
	}
	l.skipStored, l.reason = false, ""
	return 0, l.use(ctx, creds, true)
}

// renew asks for a new certificate with the agent's own identity, which the hub approves by
// itself, and waits for it up to RenewalApprovalTimeout. The current credentials stay in use
// meanwhile: every other loop goes on.
func (l *certLoop) renew(ctx context.Context, cur *HubClients) (time.Duration, error) {
	a, o := l.a, l.a.opts
	o.Log.Info("renewing the hub client certificate", "cluster", o.ClusterName, "expires", cur.NotAfter)
	hub, err := hubEndpoint(cur.Config)
	if err != nil {
		return 0, a.agentErr(host(cur.Config), "read the hub's CA", err)
	}
	p, err := fileRequest(ctx, cur.Kube, o.ClusterName, o.AgentID, o.CertificateLifetime, o.Clock.Now(), o.RenewalApprovalTimeout)
	if err != nil {
		return 0, a.hubErr(cur, "request a renewed hub client certificate", err)
	}
	issued, err := l.await(ctx, cur.Kube, p, func(err error) error {
		return a.hubErr(cur, "wait for renewal request "+p.Name, err)
	}, func() error { return a.hub.refusal(cur) })
	if err != nil {
		return 0, err
	}
	creds, err := credentialsFor(p, issued, hub)
	if err != nil {
		return 0, a.agentErr(host(cur.Config), "use the certificate of renewal request "+p.Name, err)
	}
	return 0, l.use(ctx, creds, true)
}

// await polls a pending request every Poll until CheckRequest ends the wait or abort returns an
// error. An error that leaves the request pending (a hub that does not answer) is logged when
// it first occurs, not at every poll.
func (l *certLoop) await(ctx context.Context, cs kubernetes.Interface, p *PendingRequest, wrap func(error) error, abort func() error) ([]byte, error) {
	a, o := l.a, l.a.opts
	last := ""
	for {
		if abort != nil {
			if err := abort(); err != nil {
				return nil, err
			}
		}
		issued, err := CheckRequest(ctx, cs, p, o.Clock.Now())
		switch {
		case issued != nil:
			return issued, nil
		case err != nil && (EndsWait(err) || ctx.Err() != nil):
			return nil, wrap(err)
		case err != nil && err.Error() != last:
			last = err.Error()
			a.logFailure(wrap(err), "next", "still waiting on request "+p.Name)
		case err == nil:
			last = ""
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-o.Clock.After(o.Poll):
		}
	}
}

// use makes creds the agent's hub credentials and, if save, stores them in the Secret.
func (l *certLoop) use(ctx context.Context, creds *credentials, save bool) error {
	a := l.a
	hc, err := newHubClients(creds)
	if err != nil {
		return a.agentErr(host(a.opts.Bootstrap), "use the hub kubeconfig", err)
	}
	a.hub.set(hc)
	if !save {
		return nil
	}
	l.unsaved = creds
	return l.save(ctx)
}

func (l *certLoop) save(ctx context.Context) error {
	a, o := l.a, l.a.opts
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if err := saveCredentials(ctx, a.spoke, o.Namespace, o.SecretName, o.ClusterName, o.AgentID, l.unsaved); err != nil {
		return a.spokeErr("store the hub kubeconfig in Secret "+a.secret(), err)
	}
	l.unsaved = nil
	return nil
}

// clientConfigs are the ManagedCluster's spec.managedClusterClientConfigs for urls, each trusting ca.
func clientConfigs(urls []string, ca []byte) []clusterv1.ClientConfig {
	out := make([]clusterv1.ClientConfig, 0, len(urls))
	for _, u := range urls {
		out = append(out, clusterv1.ClientConfig{URL: u, CABundle: ca})
	}
	return out
}
