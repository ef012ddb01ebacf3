package addon

import (
	"context"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/kubeconfig"
)

// regKey names one registration: an add-on and a signer (an add-on registers each signer once).
type regKey struct{ AddOn, Signer string }

func (k regKey) String() string { return k.AddOn + " (signer " + k.Signer + ")" }

// target is where a registration's credentials go and what they are for.
type target struct {
	Namespace, Secret string
	Subject           pkix.Name
}

func (t target) secretRef() string { return t.Namespace + "/" + t.Secret }

// phase is where a registration is between rounds.
type phase int

const (
	// phaseSecret: its Secret decides: a usable certificate serves until it is due for renewal;
	// otherwise a certificate is requested.
	phaseSecret phase = iota
	// phaseRequested: a certificate request is pending on the hub (regState.pending).
	phaseRequested
	// phaseIssued: a certificate was issued and waits to be stored (regState.issued), for
	// example until its namespace exists.
	phaseIssued
	// phaseStored: a new certificate was stored; its rotation is to be reported
	// (regState.rotated) on the ManagedClusterAddOn.
	phaseStored
)

// regState is what the agent remembers of one registration between rounds.
type regState struct {
	target target
	phase  phase
	// pending is the certificate request waited on in phaseRequested.
	pending *registration.PendingRequest
	// issued is the Secret data with the new certificate in phaseIssued.
	issued map[string][]byte
	// rotated is the condition to report in phaseStored.
	rotated metav1.Condition
	// backoff spaces the rounds of a registration that fails; lastErr is its last failure, so
	// that a request that keeps failing the same way is logged once.
	backoff *wait.Backoff
	lastErr string
}

// secretSeen is a registration's Secret as this round read (or stored) it.
type secretSeen struct {
	// Read: the Secret was read this round; Secret is nil when there is none.
	Read   bool
	Secret *corev1.Secret
}

func (s secretSeen) data() map[string][]byte {
	if s.Secret == nil {
		return nil
	}
	return s.Secret.Data
}

// stepKind is what a round does next for one registration.
type stepKind int

const (
	// stepCheckRequest asks the hub whether the pending request was issued.
	stepCheckRequest stepKind = iota
	// stepReadSecret reads the Secret, which the next decision needs.
	stepReadSecret
	// stepDropIssued forgets an issued certificate that expired before it could be stored.
	stepDropIssued
	// stepStore stores the issued certificate in the Secret.
	stepStore
	// stepReport reports the stored certificate's rotation on the ManagedClusterAddOn.
	stepReport
	// stepRefresh stores Data: the certificate serves, and the rest of the Secret follows the
	// hub's address and CA.
	stepRefresh
	// stepRequest requests a certificate, for Why.
	stepRequest
	// stepWait has nothing to do until After.
	stepWait
)

// step is the decision of next: what to do, and with what.
type step struct {
	Kind  stepKind
	After time.Duration
	Why   string
	Data  map[string][]byte
}

// secretTemplate says what a registration's Secret holds besides its certificate and key: the
// signer, the cluster and the hub's address and CA.
type secretTemplate struct {
	Signer, Cluster string
	Hub             hubEndpoint
}

// next decides what to do for a registration in state st whose Secret is as seen, at now. It
// reads no API: the caller performs the step, moves st on, and asks again until a step waits.
func next(st *regState, seen secretSeen, tmpl secretTemplate, now time.Time) (step, error) {
	if st.phase == phaseRequested {
		return step{Kind: stepCheckRequest}, nil
	}
	if !seen.Read {
		return step{Kind: stepReadSecret}, nil
	}
	switch st.phase {
	case phaseIssued:
		if _, why := usableCertificate(st.issued, st.target.Subject, now); why != "" {
			return step{Kind: stepDropIssued, Why: why}, nil
		}
		return step{Kind: stepStore, Data: st.issued}, nil
	case phaseStored:
		return step{Kind: stepReport}, nil
	}
	have := seen.data()
	cert, why := usableCertificate(have, st.target.Subject, now)
	if cert == nil {
		return step{Kind: stepRequest, Why: why}, nil
	}
	want, err := secretData(tmpl.Signer, tmpl.Cluster, tmpl.Hub, have[TLSCertKey], have[TLSKeyKey])
	if err != nil {
		return step{}, err
	}
	if _, changed := withData(have, want); changed {
		return step{Kind: stepRefresh, Data: want}, nil
	}
	renew := registration.RenewAt(cert)
	if now.Before(renew) {
		return step{Kind: stepWait, After: renew.Sub(now)}, nil
	}
	return step{Kind: stepRequest, Why: "the certificate is due for renewal since " + renew.UTC().Format(time.RFC3339)}, nil
}

// credentialsLoop keeps the credentials of every registration of the cluster's add-ons. One
// round looks at each registration once: waits on its request, stores what was issued, or
// decides from its Secret whether to request a certificate. A registration that fails waits
// its own backoff; the others go on.
type credentialsLoop struct {
	a      *Agent
	states map[regKey]*regState
	// retryAt is when each failed registration is looked at again.
	retryAt map[regKey]time.Time
}

// wanted is a registration of an add-on on the hub, as this round sees it.
type wanted struct {
	mca    *addonv1alpha1.ManagedClusterAddOn
	reg    addonv1alpha1.RegistrationConfig
	target target
}

// registrations lists what the add-ons ask for. An add-on being deleted keeps what it has (its
// agent may need its hub credentials to clean up), as in OCM.
func (l *credentialsLoop) registrations(mcas []addonv1alpha1.ManagedClusterAddOn) (map[regKey]wanted, map[string]bool) {
	a := l.a
	out, deleting := map[regKey]wanted{}, map[string]bool{}
	for i := range mcas {
		mca := &mcas[i]
		if !mca.DeletionTimestamp.IsZero() {
			deleting[mca.Name] = true
			continue
		}
		for _, reg := range mca.Status.Registrations {
			out[regKey{mca.Name, reg.SignerName}] = wanted{mca: mca, reg: reg, target: target{
				Namespace: InstallNamespace(mca),
				Secret:    SecretName(mca.Name, reg.SignerName),
				Subject:   Subject(a.opts.ClusterName, mca.Name, a.opts.AgentID, reg),
			}}
		}
	}
	return out, deleting
}

func (l *credentialsLoop) step(ctx context.Context) (time.Duration, error) {
	a := l.a
	v := a.view.Get()
	if v == nil {
		return idle, nil
	}
	mcas, err := a.addOns(ctx, v)
	if err != nil {
		return 0, err
	}
	want, deleting := l.registrations(mcas)
	if l.retryAt == nil {
		l.retryAt = map[regKey]time.Time{}
	}
	var errs []error
	// A registration removed, or its add-on gone: its Secret goes, as OCM's agent removes it.
	for k, st := range l.states {
		if _, ok := want[k]; ok || deleting[k.AddOn] {
			continue
		}
		if err := l.deleteSecret(ctx, st.target); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(l.states, k)
		delete(l.retryAt, k)
	}
	now := a.opts.Clock.Now()
	next := a.opts.Resync
	keys := slices.SortedFunc(maps.Keys(want), func(x, y regKey) int { return strings.Compare(x.String(), y.String()) })
	for _, k := range keys {
		w := want[k]
		if at, ok := l.retryAt[k]; ok && now.Before(at) {
			next = min(next, at.Sub(now))
			continue
		}
		st := l.states[k]
		if st != nil && !sameTarget(st.target, w.target) {
			// The install namespace or subject changed: start over, and remove the old Secret.
			if st.target.secretRef() != w.target.secretRef() {
				if err := l.deleteSecret(ctx, st.target); err != nil {
					errs = append(errs, err)
				}
			}
			st = nil
		}
		if st == nil {
			st = &regState{target: w.target}
			l.states[k] = st
		}
		d, err := l.sync(ctx, v, k, w, st)
		if errors.Is(err, errNamespaceMissing) {
			if wait, ok := l.waitForNamespace(k, st, err); ok {
				next = min(next, wait)
				continue
			}
		}
		if err != nil {
			if err.Error() != st.lastErr {
				st.lastErr = err.Error()
				a.opts.Log.Error(err, "add-on credentials", "cluster", a.opts.ClusterName, "addon", k.AddOn, "signer", k.Signer)
			}
			if st.backoff == nil {
				st.backoff = &wait.Backoff{Duration: a.opts.InitialBackoff, Factor: 2, Jitter: 0.1, Steps: 1 << 30, Cap: a.opts.Resync}
			}
			d = st.backoff.Step()
			l.retryAt[k] = now.Add(d)
		} else {
			st.backoff, st.lastErr = nil, ""
			delete(l.retryAt, k)
		}
		next = min(next, d)
	}
	return next, errors.Join(errs...)
}

// waitForNamespace handles a registration whose Secret cannot be stored because its namespace
// does not exist yet (err): with the spoke's namespaces watched, it waits for the namespace, with
// no backoff, and the watch wakes the loop the moment the namespace is created (an add-on's
// ManifestWork creates it, or the add-on's deployment does). It returns how long the loop may
// wait, and false when the namespaces are not watched (then the registration backs off).
func (l *credentialsLoop) waitForNamespace(k regKey, st *regState, err error) (time.Duration, bool) {
	a, ns := l.a, st.target.Namespace
	if _, known := a.namespaces.exists(ns); !known {
		return 0, false
	}
	a.namespaces.wait(ns)
	st.backoff = nil
	delete(l.retryAt, k)
	if err.Error() != st.lastErr {
		st.lastErr = err.Error()
		a.opts.Log.Info("add-on credentials wait for their namespace on the spoke", "cluster", a.opts.ClusterName,
			"addon", k.AddOn, "signer", k.Signer, "namespace", ns, "secret", st.target.secretRef())
	}
	// Created between the failed write and wait: the watch has seen it and will not wake us.
	if exists, _ := a.namespaces.exists(ns); exists {
		return a.opts.Poll, true
	}
	return a.opts.Resync, true
}

func sameTarget(x, y target) bool {
	return x.Namespace == y.Namespace && x.Secret == y.Secret && sameSubject(x.Subject, y.Subject)
}

// maxSteps bounds the steps of one round: a round performs each step at most once.
const maxSteps = 8

// sync does one round for a registration: it performs the steps next decides until one waits,
// and says when the next round is due.
func (l *credentialsLoop) sync(ctx context.Context, v *view, k regKey, w wanted, st *regState) (time.Duration, error) {
	a := l.a
	now := a.opts.Clock.Now()
	hub, err := endpointOf(v.hub)
	if err != nil {
		return 0, err
	}
	tmpl := secretTemplate{Signer: k.Signer, Cluster: a.opts.ClusterName, Hub: hub}
	// fail reports a failed rotation on the add-on with message, as OCM's agent does, and returns err.
	fail := func(err error, message string) (time.Duration, error) {
		return 0, errors.Join(err, a.setCondition(ctx, v.hub.Client, w.mca, rotationFailed(message)))
	}
	var seen secretSeen
	for range maxSteps {
		s, err := next(st, seen, tmpl, now)
		if err != nil {
			return 0, err
		}
		switch s.Kind {
		case stepCheckRequest:
			issued, err := registration.CheckRequest(ctx, v.hub.Kube, st.pending, now)
			switch {
			case err != nil && registration.EndsWait(err):
				st.phase, st.pending = phaseSecret, nil
				return fail(err, "the certificate request ended: "+err.Error())
			case err != nil:
				return a.opts.Poll, err
			case issued == nil:
				return a.opts.Poll, nil
			}
			data, err := issuedData(k, st.pending, issued, tmpl, st.target.Subject, now)
			st.phase, st.pending = phaseSecret, nil
			if err != nil {
				return fail(err, err.Error())
			}
			st.phase, st.issued = phaseIssued, data
		case stepReadSecret:
			secret, err := l.readSecret(ctx, st.target)
			if err != nil {
				return 0, err
			}
			seen = secretSeen{Read: true, Secret: secret}
		case stepDropIssued:
			// Issued while its namespace did not exist, and expired since: ask again.
			a.opts.Log.Info("dropping an add-on certificate that was never stored", "cluster", a.opts.ClusterName, "addon", k.AddOn, "reason", s.Why)
			st.phase, st.issued = phaseSecret, nil
		case stepStore:
			stored, err := l.store(ctx, k, st, seen.Secret, s.Data)
			if err != nil {
				return 0, err
			}
			seen = secretSeen{Read: true, Secret: stored}
		case stepReport:
			if err := a.setCondition(ctx, v.hub.Client, w.mca, st.rotated); err != nil {
				return 0, err
			}
			st.phase = phaseSecret
		case stepRefresh:
			stored, err := l.saveSecret(ctx, st.target, seen.Secret, s.Data)
			if err != nil {
				return 0, err
			}
			seen = secretSeen{Read: true, Secret: stored}
		case stepRequest:
			if err := l.request(ctx, v, k, st, s.Why, now); err != nil {
				return fail(err, err.Error())
			}
			return a.opts.Poll, nil
		case stepWait:
			return s.After, nil
		}
	}
	return 0, fmt.Errorf("add-on %s: no decision after %d steps in phase %d (a bug: please report it)", k, maxSteps, st.phase)
}

// store stores st's issued certificate (data) in the Secret (have), moves st to phaseStored with
// the rotation to report, and returns the Secret as stored.
func (l *credentialsLoop) store(ctx context.Context, k regKey, st *regState, have *corev1.Secret, data map[string][]byte) (*corev1.Secret, error) {
	stored, err := l.saveSecret(ctx, st.target, have, data)
	if err != nil {
		return nil, err
	}
	st.phase, st.issued = phaseSecret, nil
	cert, err := registration.ParseCertificate(data[TLSCertKey])
	if err != nil {
		return nil, err
	}
	l.a.opts.Log.Info("stored a new add-on certificate", "cluster", l.a.opts.ClusterName, "addon", k.AddOn,
		"signer", k.Signer, "secret", st.target.secretRef(), "expires", cert.NotAfter)
	st.phase, st.rotated = phaseStored, metav1.Condition{
		Type: ConditionClusterCertificateRotated, Status: metav1.ConditionTrue, Reason: ReasonClientCertificateUpdated,
		Message: fmt.Sprintf("client certificate rotated starting from %s to %s",
			cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339)),
	}
	return stored, nil
}

// request files a certificate request for registration k, for why, and moves st to
// phaseRequested.
func (l *credentialsLoop) request(ctx context.Context, v *view, k regKey, st *regState, why string, now time.Time) error {
	a := l.a
	a.opts.Log.Info("requesting a certificate for an add-on", "cluster", a.opts.ClusterName, "addon", k.AddOn,
		"signer", k.Signer, "user", st.target.Subject.CommonName, "reason", why)
	p, err := registration.FileRequest(ctx, v.hub.Kube, registration.CertificateRequest{
		GenerateName: "addon-" + a.opts.ClusterName + "-" + k.AddOn + "-",
		Labels: map[string]string{
			clusteridentity.ClusterNameLabel: a.opts.ClusterName,
			clusteridentity.AddOnNameLabel:   k.AddOn,
		},
		Subject:    st.target.Subject,
		DNSNames:   []string{clusteridentity.AddOnDNSName(k.AddOn)},
		SignerName: k.Signer,
		Lifetime:   a.opts.CertificateLifetime,
	}, now, a.opts.ApprovalTimeout)
	if err != nil {
		return fmt.Errorf("requesting a certificate for add-on %s: %w", k, err)
	}
	st.phase, st.pending = phaseRequested, p
	return nil
}

func rotationFailed(message string) metav1.Condition {
	return metav1.Condition{
		Type: ConditionClusterCertificateRotated, Status: metav1.ConditionFalse,
		Reason: ReasonClientCertificateUpdateFailed, Message: message,
	}
}

// issuedData is the Secret data for a certificate issued for registration k's request p, checked
// against subject.
func issuedData(k regKey, p *registration.PendingRequest, issued []byte, tmpl secretTemplate, subject pkix.Name, now time.Time) (map[string][]byte, error) {
	keyPEM, err := p.KeyPEM()
	if err != nil {
		return nil, err
	}
	if _, why := usableCertificate(map[string][]byte{TLSCertKey: issued, TLSKeyKey: keyPEM}, subject, now); why != "" {
		return nil, fmt.Errorf("certificate request %s for add-on %s: %s", p.Name, k, why)
	}
	return secretData(tmpl.Signer, tmpl.Cluster, tmpl.Hub, issued, keyPEM)
}

// endpointOf is the hub's address and CA, from the agent's own hub credentials.
func endpointOf(h *registration.HubClients) (hubEndpoint, error) {
	ca, err := kubeconfig.CA(h.Config)
	if err != nil {
		return hubEndpoint{}, err
	}
	return hubEndpoint{Host: h.Config.Host, CA: ca}, nil
}

func (l *credentialsLoop) readSecret(ctx context.Context, t target) (*corev1.Secret, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	s, err := l.a.spoke.CoreV1().Secrets(t.Namespace).Get(ctx, t.Secret, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading Secret %s on the spoke: %w%s", t.secretRef(), err, forbiddenHint(err, t.Namespace))
	}
	return s, nil
}

// forbiddenHint says, after a refusal of a Secret in ns, how the agent is let keep Secrets there.
func forbiddenHint(err error, ns string) string {
	if !apierrors.IsForbidden(err) {
		return ""
	}
	return fmt.Sprintf(" (the agent keeps Secrets only in its own namespace, %s and the add-on install namespaces its chart lists: "+
		"add %s to the flotilla-agent chart's addOnInstallNamespaces and upgrade it, or bind the agent a Role with Secrets in %s)",
		DefaultInstallNamespace, ns, ns)
}

// saveSecret stores data in the Secret (have is its current state, nil if there is none) and
// returns the Secret as stored.
func (l *credentialsLoop) saveSecret(ctx context.Context, t target, have *corev1.Secret, data map[string][]byte) (*corev1.Secret, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	secrets := l.a.spoke.CoreV1().Secrets(t.Namespace)
	var stored *corev1.Secret
	var err error
	if have == nil {
		stored, err = secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Secret}, Data: data}, metav1.CreateOptions{})
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("storing Secret %s on the spoke: %w: %s (the add-on's ManifestWork or deployment creates it; "+
				"the agent creates only %s, unless run with --disable-default-addon-namespace)", t.secretRef(), errNamespaceMissing, t.Namespace, DefaultInstallNamespace)
		}
	} else {
		updated := have.DeepCopy()
		updated.Data, _ = withData(have.Data, data)
		stored, err = secrets.Update(ctx, updated, metav1.UpdateOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("storing Secret %s on the spoke: %w%s", t.secretRef(), err, forbiddenHint(err, t.Namespace))
	}
	return stored, nil
}

func (l *credentialsLoop) deleteSecret(ctx context.Context, t target) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	err := l.a.spoke.CoreV1().Secrets(t.Namespace).Delete(ctx, t.Secret, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Secret %s on the spoke, whose registration is gone: %w", t.secretRef(), err)
	}
	return nil
}
