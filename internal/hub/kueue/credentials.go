package kueue

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/kueueworker"
	"github.com/flotilla/flotilla/internal/hub/delivery"
)

// Timings of the credentials controller.
const (
	// TokenPoll is how often the hub looks for a token its agent has not reported yet.
	TokenPoll = 2 * time.Second
	// TokenResync is how often the hub looks at a reported token again, for the next one: the
	// agent reports it well before the last expires (kueueworker.RefreshFraction).
	TokenResync = time.Minute
	// SpecHashAnnotation on the hub's ManifestWork is the SHA-256 of the spec it wrote.
	SpecHashAnnotation = "kueue.flotilla.io/spec-hash"
)

// CredentialsReconciler keeps the MultiKueue credentials of each cluster that has a MultiKueueCluster of
// the hub's (package kueueworker says what they are): the work that delivers the worker's
// ServiceAccount and rules, the token Secret its agent writes and the Role that lets it, the
// built-in add-on that makes the agent do so, and the kubeconfig Secret composed from the token.
// It removes them all when the cluster has no MultiKueueCluster of the hub's any more.
type CredentialsReconciler struct {
	// Client reads from the manager's cache and writes.
	Client client.Client
	// SecretReader reads Secrets in the Kueue namespace from the API server (the hub caches no
	// Secrets); the manager's APIReader when nil.
	SecretReader client.Reader
	// Namespace is Kueue's; DefaultNamespace when "".
	Namespace string
	// Resync is how often a reported token is read again (TokenResync when zero).
	Resync time.Duration
	// Source is the credentials' path: SourceClusterProfile unless SourceSecret.
	Source Source
}

var _ reconcile.Reconciler = (*CredentialsReconciler)(nil)

// SetupWithManager registers the controller. Its requests are named after clusters.
func (c *CredentialsReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.SecretReader == nil {
		c.SecretReader = mgr.GetAPIReader()
	}
	if c.Resync == 0 {
		c.Resync = TokenResync
	}
	byNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("kueue-credentials").
		For(&kueuev1beta2.MultiKueueCluster{}).
		Watches(&clusterv1.ManagedCluster{}, &handler.EnqueueRequestForObject{}).
		// A namespace's phase is in the rule of package delivery; its name is the cluster's.
		Watches(&corev1.Namespace{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(delivery.Changed)).
		Watches(&workv1.ManifestWork{}, byNamespace, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetName() == kueueworker.WorkName
		}))).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, byNamespace, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetName() == kueueworker.AddOnName || o.GetName() == authv1beta1.AddOnName
		}))).
		Watches(&authv1beta1.ManagedServiceAccount{}, byNamespace, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetName() == kueueworker.ManagedServiceAccount
		}))).
		Complete(c)
}

// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=authentication.open-cluster-management.io,resources=managedserviceaccounts,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// Secrets in the Kueue namespace (the token Secrets, the kubeconfigs): get, create, update, patch
// and delete there only, granted by the installer's Role (docs/kueue.md), not by the ClusterRole.

// Reconcile brings one cluster's MultiKueue credentials up to date.
func (c *CredentialsReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cluster := req.Name
	mkc := &kueuev1beta2.MultiKueueCluster{}
	err := c.Client.Get(ctx, client.ObjectKey{Name: cluster}, mkc)
	if client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, err
	}
	if err != nil || !managed(mkc) || !mkc.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, c.remove(ctx, cluster)
	}
	owner := metav1.OwnerReference{APIVersion: kueuev1beta2.GroupVersion.String(), Kind: "MultiKueueCluster",
		Name: mkc.Name, UID: mkc.UID, BlockOwnerDeletion: ptr.To(false)}
	if c.Source != SourceSecret {
		return reconcile.Result{}, c.reconcileProfile(ctx, cluster, owner)
	}
	return c.reconcileSecret(ctx, cluster, owner)
}

// reconcileSecret keeps cluster's credentials on the Secret path: the work with its
// ServiceAccount and rules, the token Secret and its Role, the add-on that reports the token, and
// the kubeconfig composed from it.
func (c *CredentialsReconciler) reconcileSecret(ctx context.Context, cluster string, owner metav1.OwnerReference) (reconcile.Result, error) {
	if err := c.removeProfilePath(ctx, cluster); err != nil {
		return reconcile.Result{}, err
	}
	// A kubeconfig Secret the hub did not write is the user's credentials for the cluster: used as
	// they are, with none of the hub's beside them.
	users := &corev1.Secret{}
	switch err := c.SecretReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: SecretName(cluster)}, users); {
	case client.IgnoreNotFound(err) != nil:
		return reconcile.Result{}, c.secretErr("reading", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: SecretName(cluster)}}, err)
	case err != nil: // none yet
	case !managed(users):
		return reconcile.Result{}, c.remove(ctx, cluster)
	case !markedAs(users, CredentialKubeconfig, cluster) && wasTokenName(cluster):
		// The hub's, but not marked as this cluster's kubeconfig, and named as another cluster's
		// token Secret was before issue 19, which that cluster's agent could rewrite. It is not
		// used: the hub deletes it and composes anew.
		ctrl.LoggerFrom(ctx).Info("deleting a kubeconfig Secret of the hub's that is not marked as the cluster's",
			"secret", client.ObjectKeyFromObject(users), "cluster", cluster)
		if _, err := c.deleteIfOurs(ctx, c.SecretReader, users); err != nil {
			return reconcile.Result{}, err
		}
	case !markedAs(users, CredentialKubeconfig, cluster):
		// The hub's, written before issue 19 under a name no agent could write: marked as it
		// stands, so that MultiKueue keeps it until the next token.
		if err := c.mark(ctx, users, CredentialKubeconfig, cluster); err != nil {
			return reconcile.Result{}, err
		}
	}
	// A cluster the hub does not accept, that is being deleted, or whose namespace terminates gets
	// no credentials: its agent is no longer trusted with a token, and its namespace is being
	// emptied, which a work or add-on made anew here would undo on every pass of the cleanup.
	// What the hub made for it goes, as for a cluster that is no worker any more; the
	// AdmissionCheck's Active condition says why (Reconciler).
	switch why, err := delivery.Check(ctx, c.Client, cluster); {
	case err != nil:
		return reconcile.Result{}, err
	case why != nil:
		ctrl.LoggerFrom(ctx).V(1).Info("no MultiKueue credentials for the cluster", "cluster", cluster, "reason", why.Reason)
		return reconcile.Result{}, c.remove(ctx, cluster)
	}
	mc := &clusterv1.ManagedCluster{}
	if err := c.Client.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err) // deleted since: its event comes back here
	}
	if err := c.ensureWork(ctx, cluster, kueueworker.Manifests(), owner); err != nil {
		return reconcile.Result{}, err
	}
	if err := c.ensureTokenAccess(ctx, cluster, owner); err != nil {
		return reconcile.Result{}, err
	}
	if err := c.ensureAddOn(ctx, cluster, owner); err != nil {
		return reconcile.Result{}, err
	}
	reported, err := c.compose(ctx, mc, owner)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !reported {
		return reconcile.Result{RequeueAfter: TokenPoll}, nil
	}
	return reconcile.Result{RequeueAfter: c.Resync}, nil
}

// reconcileProfile keeps cluster's credentials on the ClusterProfile path: the work with the
// rules, bound to the ServiceAccount of the ManagedServiceAccount kueueworker.ManagedServiceAccount,
// that ManagedServiceAccount, and the managed-serviceaccount add-on that serves it. What the
// Secret path made for the cluster goes. A ManagedServiceAccount of that name the hub did not make
// is the user's: the plugin hands Kueue its token as it is, and the hub delivers nothing for the
// cluster (the user grants its ServiceAccount what MultiKueue needs).
func (c *CredentialsReconciler) reconcileProfile(ctx context.Context, cluster string, owner metav1.OwnerReference) error {
	switch why, err := delivery.Check(ctx, c.Client, cluster); {
	case err != nil:
		return err
	case why != nil:
		ctrl.LoggerFrom(ctx).V(1).Info("no MultiKueue credentials for the cluster", "cluster", cluster, "reason", why.Reason)
		return c.remove(ctx, cluster)
	}
	if err := c.removeSecretPath(ctx, cluster); err != nil {
		return err
	}
	users := &authv1beta1.ManagedServiceAccount{}
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: kueueworker.ManagedServiceAccount}, users); err == nil && !managed(users) {
		return c.remove(ctx, cluster)
	} else if client.IgnoreNotFound(err) != nil {
		return err
	}
	if err := c.ensureWork(ctx, cluster, kueueworker.ProfileManifests(), owner); err != nil {
		return err
	}
	if err := c.ensureServiceAccount(ctx, cluster, owner); err != nil {
		return err
	}
	return c.ensureServiceAccountAddOn(ctx, cluster)
}

// ensureServiceAccount makes the ManagedServiceAccount whose token Kueue gets, with tokens of
// kueueworker.Lifetime.
func (c *CredentialsReconciler) ensureServiceAccount(ctx context.Context, cluster string, owner metav1.OwnerReference) error {
	want := &authv1beta1.ManagedServiceAccount{ObjectMeta: hubMeta(cluster, kueueworker.ManagedServiceAccount, owner),
		Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{
			Enabled: true, Validity: metav1.Duration{Duration: kueueworker.Lifetime}}}}
	return c.apply(ctx, want, func(got client.Object) bool {
		m := got.(*authv1beta1.ManagedServiceAccount)
		if m.Spec.Rotation.Validity == want.Spec.Rotation.Validity {
			return false
		}
		m.Spec.Rotation = want.Spec.Rotation
		return true
	})
}

// ensureServiceAccountAddOn enables the managed-serviceaccount add-on on the cluster unless it is.
// It has no owner: switching the add-on off deletes every ServiceAccount it made there, the
// users' too, so it goes only in removeProfilePath, when no other ManagedServiceAccount is left.
// One the user enabled serves as well, and is left as it is.
func (c *CredentialsReconciler) ensureServiceAccountAddOn(ctx context.Context, cluster string) error {
	want := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: authv1beta1.AddOnName,
		Labels: map[string]string{ManagedLabel: ManagedValue}}}
	err := c.Client.Get(ctx, client.ObjectKeyFromObject(want), &addonv1alpha1.ManagedClusterAddOn{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	if err := c.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("enabling add-on %s on cluster %s: %w", authv1beta1.AddOnName, cluster, err)
	}
	return nil
}

// hubMeta is the metadata of an object the controller makes for cluster's credentials.
func hubMeta(namespace, name string, owner metav1.OwnerReference) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{ManagedLabel: ManagedValue},
		OwnerReferences: []metav1.OwnerReference{owner}}
}

// ensureWork puts objs, the worker's rules (and on the Secret path its ServiceAccount), in the
// ManifestWork kueueworker.WorkName.
func (c *CredentialsReconciler) ensureWork(ctx context.Context, cluster string, objs []runtime.Object, owner metav1.OwnerReference) error {
	var manifests []workv1.Manifest
	for _, o := range objs {
		manifests = append(manifests, workv1.Manifest{RawExtension: rawOf(o)})
	}
	want := &workv1.ManifestWork{ObjectMeta: hubMeta(cluster, kueueworker.WorkName, owner),
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: manifests}}}
	// The API server hands manifests back re-encoded: the hash of what the hub wrote tells a
	// changed spec from an unchanged one.
	hash := specHash(want.Spec)
	want.Annotations = map[string]string{SpecHashAnnotation: hash}
	return c.apply(ctx, want, func(got client.Object) bool {
		w := got.(*workv1.ManifestWork)
		if w.Annotations[SpecHashAnnotation] == hash {
			return false
		}
		w.Spec = want.Spec
		if w.Annotations == nil {
			w.Annotations = map[string]string{}
		}
		w.Annotations[SpecHashAnnotation] = hash
		return true
	})
}

// ensureTokenAccess makes the empty token Secret in the Kueue namespace and the Role and
// RoleBinding that let the cluster's agents read and update it, and nothing else.
func (c *CredentialsReconciler) ensureTokenAccess(ctx context.Context, cluster string, owner metav1.OwnerReference) error {
	if err := c.removeLegacyToken(ctx, cluster); err != nil {
		return err
	}
	name := kueueworker.TokenSecret(cluster)
	if err := c.createSecret(ctx, &corev1.Secret{ObjectMeta: secretMeta(c.Namespace, name, CredentialToken, cluster, owner),
		Type: corev1.SecretTypeOpaque}); err != nil {
		return err
	}
	role := &rbacv1.Role{ObjectMeta: hubMeta(c.Namespace, kueueworker.TokenRole(cluster), owner), Rules: tokenRules(cluster)}
	if err := c.apply(ctx, role, func(got client.Object) bool {
		r := got.(*rbacv1.Role)
		if equalJSON(r.Rules, role.Rules) {
			return false
		}
		r.Rules = role.Rules
		return true
	}); err != nil {
		return err
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: hubMeta(c.Namespace, kueueworker.TokenRole(cluster), owner),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: agentsOf(cluster)}
	return c.apply(ctx, rb, func(got client.Object) bool {
		b := got.(*rbacv1.RoleBinding)
		if equalJSON(b.Subjects, rb.Subjects) {
			return false
		}
		b.Subjects = rb.Subjects // the role reference cannot change
		return true
	})
}

// tokenRules are the rules of cluster's token Role: read and update its token Secret, no other
// Secret, and neither create nor delete it.
func tokenRules(cluster string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"},
		ResourceNames: []string{kueueworker.TokenSecret(cluster)}, Verbs: []string{"get", "update", "patch"}}}
}

// ensureAddOn switches the built-in add-on on for the cluster, saying where the token goes.
func (c *CredentialsReconciler) ensureAddOn(ctx context.Context, cluster string, owner metav1.OwnerReference) error {
	where := c.Namespace + "/" + kueueworker.TokenSecret(cluster)
	want := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: hubMeta(cluster, kueueworker.AddOnName, owner)}
	want.Annotations = map[string]string{kueueworker.TokenSecretAnnotation: where}
	return c.apply(ctx, want, func(got client.Object) bool {
		if got.GetAnnotations()[kueueworker.TokenSecretAnnotation] == where {
			return false
		}
		a := got.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[kueueworker.TokenSecretAnnotation] = where
		got.SetAnnotations(a)
		return true
	})
}

// compose writes the kubeconfig Secret from the token the agent reported, and says whether
// there was one.
func (c *CredentialsReconciler) compose(ctx context.Context, mc *clusterv1.ManagedCluster, owner metav1.OwnerReference) (bool, error) {
	ts := &corev1.Secret{}
	if err := c.SecretReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: kueueworker.TokenSecret(mc.Name)}, ts); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if !markedAs(ts, CredentialToken, mc.Name) {
		ctrl.LoggerFrom(ctx).Info("the token Secret is not the hub's token Secret of this cluster; not using it",
			"secret", client.ObjectKeyFromObject(ts), "cluster", mc.Name, "labels", ts.Labels)
		return false, nil
	}
	tok, err := kueueworker.FromSecret(ts)
	if err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("no usable token reported yet", "secret", client.ObjectKeyFromObject(ts), "reason", err.Error())
		return false, nil
	}
	server, ca := endpoint(mc, tok)
	data, err := kueueworker.Kubeconfig(mc.Name, server, ca, tok.Token)
	if err != nil {
		return false, fmt.Errorf("composing the kubeconfig of cluster %s: %w", mc.Name, err)
	}
	want := &corev1.Secret{ObjectMeta: secretMeta(c.Namespace, SecretName(mc.Name), CredentialKubeconfig, mc.Name, owner), Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{kueuev1beta2.MultiKueueConfigSecretKey: data}}
	return true, c.writeSecret(ctx, want)
}

// endpoint is where MultiKueue reaches the cluster: the first of the ManagedCluster's
// spec.managedClusterClientConfigs (OCM's field, which an administrator may set), else the
// address and CA the cluster's agent reaches it at.
func endpoint(mc *clusterv1.ManagedCluster, tok kueueworker.Token) (string, []byte) {
	for _, cc := range mc.Spec.ManagedClusterClientConfigs {
		if cc.URL != "" {
			return cc.URL, cc.CABundle
		}
	}
	return tok.Server, tok.CA
}

// agentsOf is the group of cluster's agents.
func agentsOf(cluster string) []rbacv1.Subject {
	return []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: agentGroup(cluster)}}
}
