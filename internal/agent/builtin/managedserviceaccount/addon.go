package managedserviceaccount

import (
	"context"
	"errors"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
	"github.com/flotilla/flotilla/internal/kubeconfig"
)

// Name is the add-on's name, OCM's.
var Name = builtinaddon.ManagedServiceAccount.Name

// Defaults of AddOn's settings.
const (
	// DefaultNamespace is where the ServiceAccounts are made: OCM's add-on install namespace.
	DefaultNamespace = addonv1alpha1.DefaultAgentInstallNamespace
	// DefaultResync is how often everything is looked at without a change on the hub.
	DefaultResync = 5 * time.Minute
	// retry is how soon a ManagedServiceAccount that could not be served is tried again.
	retry = 5 * time.Second
)

// Reasons of condition TokenReported.
const (
	ReasonTokenReported          = "TokenReported"
	ReasonServiceAccountNotOwned = "ServiceAccountNotOwned"
	ReasonSecretNotReady         = "SecretNotReady"
	// Reasons of condition SecretCreated.
	ReasonSecretCreated     = "SecretCreated"
	ReasonSecretConflict    = "SecretConflict"
	ReasonTokenReportFailed = "TokenReportFailed"
)

// AddOn is the managed-serviceaccount built-in add-on.
type AddOn struct {
	// Namespace is DefaultNamespace when empty; Resync DefaultResync when zero.
	Namespace string
	Resync    time.Duration
}

var _ builtin.AddOn = AddOn{}

// Name implements builtin.AddOn.
func (AddOn) Name() string { return Name }

func (a AddOn) namespace() string {
	if a.Namespace != "" {
		return a.Namespace
	}
	return DefaultNamespace
}

// Run implements builtin.AddOn: it syncs on every change of the cluster's ManagedServiceAccounts
// and when the next token is due.
func (a AddOn) Run(ctx context.Context, env builtin.Env) error {
	// Each new ManagedServiceAccount costs four requests to the hub and three to the cluster: the
	// agent gives built-in add-ons its busy clients' rate (registration.DefaultQPS), without which
	// client-go's 5 a second served fewer than two a second (bench-msa).
	kube, err := kubernetes.NewForConfig(env.Spoke)
	if err != nil {
		return err
	}
	watcher, err := client.NewWithWatch(env.HubConfig, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	ca, err := kubeconfig.CA(env.Spoke)
	if err != nil {
		return err
	}
	changed := make(chan struct{}, 1)
	go builtin.Watch(ctx, env.Clock, env.Log, watcher, &authv1beta1.ManagedServiceAccountList{}, changed, client.InNamespace(env.ClusterName))
	fresh := map[types.UID]time.Time{}
	var nextFull time.Time
	for {
		// A change on the hub serves what changed; every Resync, everything is checked again
		// (a ServiceAccount deleted on the cluster, a Secret emptied on the hub).
		now := env.Clock.Now()
		full := !now.Before(nextFull)
		if full {
			nextFull = now.Add(builtin.OrDefault(a.Resync, DefaultResync))
		}
		wait, err := a.sync(ctx, env, kube, ca, fresh, full)
		if err != nil {
			env.Log.Error(err, "serving ManagedServiceAccounts; trying again", "after", retry)
			wait = retry
		}
		wait = min(wait, nextFull.Sub(now))
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-env.Clock.After(wait):
		}
	}
}

// sync serves the cluster's ManagedServiceAccounts, removes the ServiceAccounts of those that are
// gone, and says how soon to sync again. fresh holds, per ManagedServiceAccount, until when its
// token needs nothing, as the last serve found; unless full, those are not read again, so that a
// change costs the requests of what changed, not of every ManagedServiceAccount.
func (a AddOn) sync(ctx context.Context, env builtin.Env, kube kubernetes.Interface, ca []byte, fresh map[types.UID]time.Time, full bool) (time.Duration, error) {
	var list authv1beta1.ManagedServiceAccountList
	if err := env.Hub.List(ctx, &list, client.InNamespace(env.ClusterName)); err != nil {
		return 0, fmt.Errorf("listing the ManagedServiceAccounts of cluster %s on the hub: %w", env.ClusterName, err)
	}
	if full {
		if err := a.ensureNamespace(ctx, kube); err != nil {
			return 0, err
		}
	}
	now := env.Clock.Now()
	wait := builtin.OrDefault(a.Resync, DefaultResync)
	want := map[string]bool{}
	listed := map[types.UID]bool{}
	var errs []error
	for i := range list.Items {
		m := &list.Items[i]
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		want[m.Name], listed[m.UID] = true, true
		if until, ok := fresh[m.UID]; ok && !full && now.Before(until) &&
			meta.IsStatusConditionTrue(m.Status.Conditions, authv1beta1.ConditionTypeTokenReported) {
			wait = min(wait, until.Sub(now))
			continue
		}
		w, ok, err := a.serve(ctx, env, kube, ca, m)
		errs = append(errs, err)
		delete(fresh, m.UID)
		if ok {
			fresh[m.UID] = now.Add(w)
		}
		wait = min(wait, max(w, 0))
	}
	gone := false
	for uid := range fresh {
		if !listed[uid] {
			delete(fresh, uid)
			gone = true
		}
	}
	if full || gone {
		errs = append(errs, a.removeUnwanted(ctx, env, kube, want))
	}
	return wait, errors.Join(errs...)
}

func (a AddOn) ensureNamespace(ctx context.Context, kube kubernetes.Interface) error {
	_, err := kube.CoreV1().Namespaces().Get(ctx, a.namespace(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.namespace()}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("making namespace %s for managed ServiceAccounts: %w", a.namespace(), err)
	}
	return nil
}

// removeUnwanted deletes the ServiceAccounts this add-on made whose ManagedServiceAccount is
// gone (all of them when want is empty), and with them their tokens.
func (a AddOn) removeUnwanted(ctx context.Context, env builtin.Env, kube kubernetes.Interface, want map[string]bool) error {
	sas, err := kube.CoreV1().ServiceAccounts(a.namespace()).List(ctx, metav1.ListOptions{LabelSelector: authv1beta1.LabelIsManagedServiceAccount + "=true"})
	if err != nil {
		return fmt.Errorf("listing managed ServiceAccounts in %s: %w", a.namespace(), err)
	}
	var errs []error
	for _, sa := range sas.Items {
		if want[sa.Name] {
			continue
		}
		env.Log.Info("deleting the ServiceAccount of a ManagedServiceAccount that is gone", "serviceAccount", a.namespace()+"/"+sa.Name)
		err := kube.CoreV1().ServiceAccounts(a.namespace()).Delete(ctx, sa.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &sa.UID}})
		errs = append(errs, client.IgnoreNotFound(err))
	}
	return errors.Join(errs...)
}

// serve brings m's Secret, ServiceAccount, token and status up to date and says when m next
// needs it, and whether its token is reported and good until then.
func (a AddOn) serve(ctx context.Context, env builtin.Env, kube kubernetes.Interface, ca []byte, m *authv1beta1.ManagedServiceAccount) (time.Duration, bool, error) {
	now := env.Clock.Now()
	secret, created, err := tokenSecret(ctx, env, m)
	if err != nil {
		return retry, false, a.report(ctx, env, m, nil, created, failed(ReasonSecretNotReady, err.Error()))
	}
	sa, problem, err := a.serviceAccount(ctx, kube, m.Name)
	if err != nil {
		return retry, false, a.report(ctx, env, m, nil, created, failed(ReasonTokenReportFailed, err.Error()))
	}
	if problem != "" {
		return retry, false, a.report(ctx, env, m, nil, created, failed(ReasonServiceAccountNotOwned, problem))
	}
	due, refreshAt, why := next(m, secret, sa, now)
	if !due {
		return refreshAt.Sub(now), true, a.report(ctx, env, m, nil, created, reported(a.namespace(), m.Name, env.ClusterName))
	}
	validity := m.Spec.Rotation.Validity.Duration
	if validity <= 0 {
		validity, _ = time.ParseDuration(authv1beta1.DefaultValidity)
	}
	seconds := int64(validity.Seconds())
	tr, err := kube.CoreV1().ServiceAccounts(a.namespace()).CreateToken(ctx, m.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return retry, false, a.report(ctx, env, m, nil, created, failed(ReasonTokenReportFailed, fmt.Sprintf(
			"requesting a token of ServiceAccount %s/%s on cluster %s: %v", a.namespace(), m.Name, env.ClusterName, err)))
	}
	upd := secret.DeepCopy()
	upd.Data = map[string][]byte{corev1.ServiceAccountTokenKey: []byte(tr.Status.Token), corev1.ServiceAccountRootCAKey: ca}
	if upd.Annotations == nil {
		upd.Annotations = map[string]string{}
	}
	upd.Annotations[ServiceAccountUIDAnnotation] = string(sa)
	if err := env.Hub.Update(ctx, upd); err != nil {
		return retry, false, a.report(ctx, env, m, nil, created, failed(ReasonTokenReportFailed, fmt.Sprintf(
			"writing the token to Secret %s/%s on the hub: %v", upd.Namespace, upd.Name, err)))
	}
	env.Log.Info("reported a token", "managedServiceAccount", m.Namespace+"/"+m.Name, "why", why, "expires", tr.Status.ExpirationTimestamp.Time)
	issued := &authv1beta1.ManagedServiceAccountStatus{ExpirationTimestamp: &tr.Status.ExpirationTimestamp,
		TokenSecretRef: &authv1beta1.SecretRef{Name: m.Name, LastRefreshTimestamp: metav1.NewTime(now)}}
	_, refreshAt, _ = next(&authv1beta1.ManagedServiceAccount{Status: *issued}, upd, sa, now)
	return refreshAt.Sub(now), true, a.report(ctx, env, m, issued, created, reported(a.namespace(), m.Name, env.ClusterName))
}

// serviceAccount returns the UID of the ServiceAccount name, making it when it is missing. A
// ServiceAccount of that name that this add-on did not make is a problem: issuing tokens of it
// would hand its rights to whoever may create ManagedServiceAccounts on the hub.
func (a AddOn) serviceAccount(ctx context.Context, kube kubernetes.Interface, name string) (types.UID, string, error) {
	sas := kube.CoreV1().ServiceAccounts(a.namespace())
	sa, err := sas.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		sa, err = sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: a.namespace(), Name: name,
			Labels: map[string]string{authv1beta1.LabelIsManagedServiceAccount: "true"}}}, metav1.CreateOptions{})
	}
	if err != nil {
		return "", "", fmt.Errorf("making ServiceAccount %s/%s: %w", a.namespace(), name, err)
	}
	if sa.Labels[authv1beta1.LabelIsManagedServiceAccount] != "true" {
		return "", fmt.Sprintf("ServiceAccount %s/%s exists on the cluster and was not made for a ManagedServiceAccount (no label %s=true); "+
			"no token of it is issued: give the ManagedServiceAccount another name, or delete that ServiceAccount on the cluster",
			a.namespace(), name, authv1beta1.LabelIsManagedServiceAccount), nil
	}
	return sa.UID, "", nil
}

// tokenSecret returns m's token Secret on the hub, making it when it is missing (OCM's label, and
// m as its owner, so that it goes with m), with the SecretCreated condition to report. A Secret
// of that name that was not made for m is left alone: an error, and the condition says so.
func tokenSecret(ctx context.Context, env builtin.Env, m *authv1beta1.ManagedServiceAccount) (*corev1.Secret, metav1.Condition, error) {
	key := client.ObjectKey{Namespace: m.Namespace, Name: m.Name}
	s := &corev1.Secret{}
	err := env.Hub.Get(ctx, key, s)
	if apierrors.IsNotFound(err) {
		s = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name,
			Labels: map[string]string{authv1beta1.LabelIsManagedServiceAccount: "true"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: authv1beta1.GroupVersion.String(), Kind: "ManagedServiceAccount",
				Name: m.Name, UID: m.UID, Controller: ptr.To(true)}}},
			Type: corev1.SecretTypeOpaque}
		err = env.Hub.Create(ctx, s)
	}
	if err != nil {
		return nil, secretCondition(metav1.ConditionFalse, ReasonSecretNotReady, fmt.Sprintf(
				"cannot read or make Secret %s on the hub (the hub binds ClusterRole flotilla-managed-serviceaccount-agent for this cluster's agents in the namespace): %v", key, err)),
			fmt.Errorf("the token Secret %s on the hub: %w", key, err)
	}
	if !m.OwnsTokenSecret(s) {
		msg := fmt.Sprintf("Secret %s exists on the hub and was not made for this ManagedServiceAccount (label %s=true and an owner reference to it); "+
			"it is left alone and no token is written: delete or rename that Secret, or give the ManagedServiceAccount another name",
			key, authv1beta1.LabelIsManagedServiceAccount)
		return nil, secretCondition(metav1.ConditionFalse, ReasonSecretConflict, msg), errors.New(msg)
	}
	return s, secretCondition(metav1.ConditionTrue, ReasonSecretCreated, fmt.Sprintf("Secret %s holds the token", key)), nil
}

func secretCondition(status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: authv1beta1.ConditionTypeSecretCreated, Status: status, Reason: reason, Message: msg}
}

func failed(reason, msg string) metav1.Condition {
	return metav1.Condition{Type: authv1beta1.ConditionTypeTokenReported, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
}

func reported(ns, name, cluster string) metav1.Condition {
	return metav1.Condition{Type: authv1beta1.ConditionTypeTokenReported, Status: metav1.ConditionTrue, Reason: ReasonTokenReported,
		Message: fmt.Sprintf("a token of ServiceAccount %s/%s on cluster %s", ns, name, cluster)}
}

// report writes conds and, when a token was issued, its expiry and Secret reference into m's
// status, when that changes anything. A condition with no type is skipped.
func (a AddOn) report(ctx context.Context, env builtin.Env, m *authv1beta1.ManagedServiceAccount, issued *authv1beta1.ManagedServiceAccountStatus, conds ...metav1.Condition) error {
	upd := m.DeepCopy()
	changed := issued != nil
	for _, c := range conds {
		if c.Type == "" {
			continue
		}
		if cur := meta.FindStatusCondition(m.Status.Conditions, c.Type); cur == nil || cur.Status != c.Status || cur.Reason != c.Reason || cur.Message != c.Message {
			changed = true
		}
		c.LastTransitionTime = metav1.NewTime(env.Clock.Now())
		meta.SetStatusCondition(&upd.Status.Conditions, c)
	}
	if issued != nil {
		upd.Status.ExpirationTimestamp, upd.Status.TokenSecretRef = issued.ExpirationTimestamp, issued.TokenSecretRef
	}
	if !changed {
		return nil
	}
	return client.IgnoreNotFound(env.Hub.Status().Patch(ctx, upd, client.MergeFromWithOptions(m, client.MergeFromWithOptimisticLock{})))
}

// Cleanup implements builtin.AddOn: the add-on switched off, every ServiceAccount it made goes,
// and with them their tokens. The hub's Secrets go with their ManagedServiceAccounts.
func (a AddOn) Cleanup(ctx context.Context, env builtin.Env) error {
	kube, err := kubernetes.NewForConfig(env.Spoke)
	if err != nil {
		return err
	}
	return a.removeUnwanted(ctx, env, kube, nil)
}
