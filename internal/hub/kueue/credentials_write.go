package kueue

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/contract/kueueworker"
)

func agentGroup(cluster string) string { return clusteridentity.Group(cluster) }

// rawOf is o as a ManifestWork carries it.
func rawOf(o runtime.Object) runtime.RawExtension {
	data, err := json.Marshal(o)
	if err != nil {
		panic(fmt.Sprintf("marshaling %T: %v", o, err)) // only typed API objects come here
	}
	return runtime.RawExtension{Raw: data}
}

// specHash is the SHA-256 of v's JSON.
func specHash(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshaling %T: %v", v, err))
	}
	return fmt.Sprintf("%x", sha256.Sum256(data))
}

// equalJSON says whether a and b serialize alike.
func equalJSON(a, b any) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && bytes.Equal(ja, jb)
}

// apply creates want, or, when it exists and is the hub's, gives it want's owner and lets mutate
// bring it in line (mutate says whether it changed anything). An object of that name that is not
// the hub's is left alone: the cluster's credentials then stay pending, and the log says why.
func (c *CredentialsReconciler) apply(ctx context.Context, want client.Object, mutate func(client.Object) bool) error {
	kind := reflect.TypeOf(want).Elem().Name()
	got := want.DeepCopyObject().(client.Object)
	err := c.Client.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		if err := c.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s/%s: %w", kind, want.GetNamespace(), want.GetName(), err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !managed(got) {
		ctrl.LoggerFrom(ctx).Info("an object the MultiKueue credentials need is not the hub's; leaving it alone",
			"kind", kind, "object", client.ObjectKeyFromObject(got), "label", ManagedLabel+"="+ManagedValue)
		return nil
	}
	changed := mutate(got)
	if !equalJSON(got.GetOwnerReferences(), want.GetOwnerReferences()) {
		got.SetOwnerReferences(want.GetOwnerReferences())
		changed = true
	}
	if !changed {
		return nil
	}
	if err := c.Client.Update(ctx, got); err != nil {
		return fmt.Errorf("updating %s %s/%s: %w", kind, got.GetNamespace(), got.GetName(), err)
	}
	return nil
}

// secretErr explains an error writing or reading a Secret in the Kueue namespace.
func (c *CredentialsReconciler) secretErr(what string, s *corev1.Secret, err error) error {
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("%s Secret %s/%s: the hub may not: grant it get, create, update, patch and delete on secrets in namespace %s with a Role (docs/kueue.md): %w",
			what, s.Namespace, s.Name, c.Namespace, err)
	}
	return fmt.Errorf("%s Secret %s/%s: %w", what, s.Namespace, s.Name, err)
}

// createSecret creates s unless a Secret of its name exists.
func (c *CredentialsReconciler) createSecret(ctx context.Context, s *corev1.Secret) error {
	err := c.SecretReader.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{})
	if apierrors.IsNotFound(err) {
		err = c.Client.Create(ctx, s)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err != nil {
			return c.secretErr("creating", s, err)
		}
		return nil
	}
	if err != nil {
		return c.secretErr("reading", s, err)
	}
	return nil
}

// writeSecret creates want, or updates the hub's Secret of its name when its data or owner
// differ. A Secret of that name that is not the hub's is the user's: left as it is, and used.
func (c *CredentialsReconciler) writeSecret(ctx context.Context, want *corev1.Secret) error {
	got := &corev1.Secret{}
	err := c.SecretReader.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		if err := c.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return c.secretErr("creating", want, err)
		}
		return nil
	}
	if err != nil {
		return c.secretErr("reading", want, err)
	}
	if !managed(got) {
		return nil
	}
	if equalJSON(got.Data, want.Data) && equalJSON(got.OwnerReferences, want.OwnerReferences) && equalJSON(got.Labels, want.Labels) {
		return nil
	}
	got.Data, got.OwnerReferences, got.Labels = want.Data, want.OwnerReferences, want.Labels
	if err := c.Client.Update(ctx, got); err != nil {
		return c.secretErr("updating", got, err)
	}
	return nil
}

// remove deletes what the hub made for cluster's credentials on either path.
func (c *CredentialsReconciler) remove(ctx context.Context, cluster string) error {
	if _, err := c.deleteIfOurs(ctx, c.Client, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: kueueworker.WorkName}}); err != nil {
		return err
	}
	if err := c.removeSecretPath(ctx, cluster); err != nil {
		return err
	}
	return c.removeProfilePath(ctx, cluster)
}

// removeSecretPath deletes what the Secret path made for cluster but the work. It looks at its
// cached objects first: the Secrets go (by the hub, or by the garbage collector with their
// MultiKueueCluster) only when the Role made with them is there, so that clusters that never
// were workers cost no reads of Secrets.
func (c *CredentialsReconciler) removeSecretPath(ctx context.Context, cluster string) error {
	if err := c.removeLegacyToken(ctx, cluster); err != nil {
		return err
	}
	cached := []client.Object{
		&addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: kueueworker.AddOnName}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: kueueworker.TokenRole(cluster)}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: kueueworker.TokenRole(cluster)}},
	}
	hadRole := false
	for _, o := range cached {
		found, err := c.deleteIfOurs(ctx, c.Client, o)
		if err != nil {
			return err
		}
		if _, ok := o.(*rbacv1.Role); ok {
			hadRole = found
		}
	}
	if !hadRole {
		return nil
	}
	for _, name := range []string{SecretName(cluster), kueueworker.TokenSecret(cluster)} {
		_, err := c.deleteIfOurs(ctx, c.SecretReader, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: name}})
		if apierrors.IsForbidden(err) {
			// Moved to the ClusterProfile path, the hub may hold no Secrets any more: the garbage
			// collector removes them with the MultiKueueCluster that owns them.
			ctrl.LoggerFrom(ctx).Info("leaving a Secret of the Secret path to the garbage collector: the hub may not delete Secrets here",
				"secret", c.Namespace+"/"+name, "cluster", cluster)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// removeProfilePath deletes the hub's ManagedServiceAccount of cluster (its ServiceAccount, and
// with it every token, goes on the cluster) and then the managed-serviceaccount add-on the hub
// enabled, once no ManagedServiceAccount is left in the namespace: switching it off deletes every
// ServiceAccount it made there.
func (c *CredentialsReconciler) removeProfilePath(ctx context.Context, cluster string) error {
	if _, err := c.deleteIfOurs(ctx, c.Client, &authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: kueueworker.ManagedServiceAccount}}); err != nil {
		return err
	}
	// remove runs for every cluster's events: the namespace is listed only when the hub's add-on
	// is there to switch off.
	addOn := &addonv1alpha1.ManagedClusterAddOn{}
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: authv1beta1.AddOnName}, addOn); err != nil || !managed(addOn) {
		return client.IgnoreNotFound(err)
	}
	l := &authv1beta1.ManagedServiceAccountList{}
	if err := c.Client.List(ctx, l, client.InNamespace(cluster)); err != nil {
		return err
	}
	for i := range l.Items {
		if l.Items[i].Name != kueueworker.ManagedServiceAccount || !managed(&l.Items[i]) {
			return nil // someone else's still needs the add-on
		}
	}
	uid := addOn.GetUID()
	if err := c.Client.Delete(ctx, addOn, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("switching off add-on %s on cluster %s, no longer a MultiKueue worker: %w", authv1beta1.AddOnName, cluster, err)
	}
	return nil
}

// deleteIfOurs deletes o when it exists and is the hub's, and says whether it was.
func (c *CredentialsReconciler) deleteIfOurs(ctx context.Context, r client.Reader, o client.Object) (bool, error) {
	key := client.ObjectKeyFromObject(o)
	if err := r.Get(ctx, key, o); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if !managed(o) {
		return false, nil
	}
	uid := o.GetUID()
	if err := c.Client.Delete(ctx, o, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return true, fmt.Errorf("deleting %s %s, no longer a MultiKueue worker's: %w", reflect.TypeOf(o).Elem().Name(), key, err)
	}
	return true, nil
}

// removeLegacyToken deletes the token Secret of the name of before issue 19
// (legacyTokenSecret) when cluster's token Role of the hub's still lets its agent write it. That
// Secret may also be the kubeconfig of the cluster named token-<cluster>, which the agent could
// rewrite: it goes before the Role changes (so that a failure is retried with the Role as it
// was), and the hub composes that kubeconfig anew. Only a Secret with ManagedLabel is deleted;
// one without is someone else's. The check costs one read of the cache.
func (c *CredentialsReconciler) removeLegacyToken(ctx context.Context, cluster string) error {
	role := &rbacv1.Role{}
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: kueueworker.TokenRole(cluster)}, role); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !managed(role) || !grantsSecret(role.Rules, legacyTokenSecret(cluster)) {
		return nil
	}
	legacy := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: legacyTokenSecret(cluster)}}
	if _, err := c.deleteIfOurs(ctx, c.SecretReader, legacy); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("removed the token Secret of the name before issue 19, if it was the hub's",
		"secret", client.ObjectKeyFromObject(legacy), "cluster", cluster)
	return nil
}

// grantsSecret says whether rules name the Secret name.
func grantsSecret(rules []rbacv1.PolicyRule, name string) bool {
	for _, r := range rules {
		if slices.Contains(r.Resources, "secrets") && slices.Contains(r.ResourceNames, name) {
			return true
		}
	}
	return false
}

// mark labels the hub's Secret s as cluster's credential of kind.
func (c *CredentialsReconciler) mark(ctx context.Context, s *corev1.Secret, kind, cluster string) error {
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Labels[CredentialLabel], s.Labels[ClusterLabel] = kind, cluster
	if err := c.Client.Update(ctx, s); err != nil {
		return c.secretErr("marking", s, err)
	}
	return nil
}
