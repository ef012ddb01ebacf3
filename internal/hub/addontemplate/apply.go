package addontemplate

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/core/conditions"
	"github.com/flotilla/flotilla/internal/hub/addon"
)

// refusedError is an object the hub will not write because it did not make it; retrying does
// not help until a user removes it.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

// RenderedHashAnnotation on an add-on's ManifestWork is the SHA-256 of the spec the hub rendered:
// the work is written again only when it changes (or the annotation does).
const RenderedHashAnnotation = "addon.flotilla.io/rendered-spec-hash"

// desiredWork is the agent's ManifestWork: OCM's name, labels and configuration hashes, owned
// (controller reference) by the add-on.
func desiredWork(mca *addonv1alpha1.ManagedClusterAddOn, r *Rendered) (*workv1.ManifestWork, error) {
	hashes := map[string]string{}
	for _, c := range mca.Status.ConfigReferences {
		if c.DesiredConfig != nil {
			hashes[addon.ConfigHashKey(c.ConfigGroupResource, c.DesiredConfig.ConfigReferent)] = c.DesiredConfig.SpecHash
		}
	}
	raw, err := json.Marshal(hashes)
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(r.Spec)
	if err != nil {
		return nil, err
	}
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{
			Name: WorkName(mca.Name), Namespace: mca.Namespace,
			// OCM's label, and the one the hub's progressing controller reads.
			Labels: map[string]string{AddonLabel: mca.Name, addon.AddonLabel: mca.Name, TemplateLabel: r.Template},
			Annotations: map[string]string{addon.ConfigSpecHashAnnotation: string(raw),
				RenderedHashAnnotation: fmt.Sprintf("%x", sha256.Sum256(spec))},
			OwnerReferences: []metav1.OwnerReference{ownerRef(mca)},
		},
		Spec: r.Spec,
	}, nil
}

// applyWork creates or updates the agent's ManifestWork and returns it as the API server has
// it. A ManifestWork of that name that the hub did not make for this add-on is left alone
// (*refusedError).
func (r *Reconciler) applyWork(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, rendered *Rendered) (*workv1.ManifestWork, error) {
	want, err := desiredWork(mca, rendered)
	if err != nil {
		return nil, err
	}
	got := &workv1.ManifestWork{}
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		return want, r.Client.Create(ctx, want)
	}
	if err != nil {
		return nil, err
	}
	if !madeFor(got, mca) {
		return nil, &refusedError{fmt.Sprintf("ManifestWork %s/%s exists and was not made by the hub for this add-on: delete or rename it", got.Namespace, got.Name)}
	}
	// The rendering's hash, not the spec, says whether to write: the API server adds defaults.
	if subset(want.Labels, got.Labels) && subset(want.Annotations, got.Annotations) {
		return got, nil
	}
	upd := got.DeepCopy()
	upd.Spec = want.Spec
	upd.Labels, upd.Annotations = merged(got.Labels, want.Labels), merged(got.Annotations, want.Annotations)
	return upd, r.Client.Update(ctx, upd)
}

func subset(want, got map[string]string) bool {
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			return false
		}
	}
	return true
}

func merged(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

// removeWork deletes the agent's ManifestWork if the hub made it for mca from a template (its
// controller reference and template label: another add-on manager may name its work alike).
func (r *Reconciler) removeWork(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn) error {
	w := &workv1.ManifestWork{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: mca.Namespace, Name: WorkName(mca.Name)}, w)
	if _, fromTemplate := w.Labels[TemplateLabel]; err != nil || !madeFor(w, mca) || !fromTemplate {
		return client.IgnoreNotFound(err)
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, w, client.Preconditions{UID: &w.UID}))
}

// applyBindings makes the RoleBindings of the template's hubPermissions and removes those the
// hub made for mca that are no longer asked for. It reads as the hub and writes as the binder
// (Reconciler.Binder). Problems the user must fix (a role that does
// not exist, a binding the hub did not make) are returned, each naming its field.
func (r *Reconciler) applyBindings(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, tmpl *addonv1alpha1.AddOnTemplate) ([]string, error) {
	var problems []string
	var errs []error
	keep := map[client.ObjectKey]bool{}
	for _, b := range hubBindings(mca, tmpl) {
		want := b.Binding
		keep[client.ObjectKeyFromObject(want)] = true
		if p, err := r.roleExists(ctx, want); err != nil || p != "" {
			errs = append(errs, err)
			if p != "" {
				problems = append(problems, b.Field+": "+p)
			}
			continue
		}
		got := &rbacv1.RoleBinding{}
		err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), got)
		switch {
		case apierrors.IsNotFound(err):
			err := r.binder().Create(ctx, want)
			if apierrors.IsForbidden(err) {
				problems = append(problems, b.Field+": "+r.refusedBinding(want, err))
				continue
			}
			errs = append(errs, err)
		case err != nil:
			errs = append(errs, err)
		case !madeFor(got, mca):
			problems = append(problems, fmt.Sprintf("%s: RoleBinding %s/%s exists and was not made by the hub for this add-on: delete or rename it", b.Field, got.Namespace, got.Name))
		case got.RoleRef != want.RoleRef:
			// The role of a binding cannot change: a new one replaces it.
			err := r.binder().Delete(ctx, got, client.Preconditions{UID: &got.UID})
			if apierrors.IsForbidden(err) {
				problems = append(problems, b.Field+": "+r.refusedBinding(got, err))
				continue
			}
			errs = append(errs, client.IgnoreNotFound(err))
			if err := r.binder().Create(ctx, want); apierrors.IsForbidden(err) {
				problems = append(problems, b.Field+": "+r.refusedBinding(want, err))
			} else {
				errs = append(errs, err)
			}
		case !equality.Semantic.DeepEqual(got.Subjects, want.Subjects) || !equality.Semantic.DeepEqual(got.Labels, want.Labels) ||
			!equality.Semantic.DeepEqual(got.OwnerReferences, want.OwnerReferences):
			upd := got.DeepCopy()
			upd.Subjects, upd.Labels, upd.OwnerReferences = want.Subjects, want.Labels, want.OwnerReferences
			// An update is checked as a creation: whoever writes it must hold the role too.
			if err := r.binder().Update(ctx, upd); apierrors.IsForbidden(err) {
				problems = append(problems, b.Field+": "+r.refusedBinding(upd, err))
			} else {
				errs = append(errs, err)
			}
		}
	}
	errs = append(errs, r.removeBindings(ctx, mca.Namespace, mca.Name, keep))
	return problems, errors.Join(errs...)
}

// mayNotBind explains a binding the API server refused: the hub holds neither the role's
// permissions nor bind on it, and it is not given bind on every role (docs/addons.md).
func mayNotBind(b *rbacv1.RoleBinding) string {
	res, where := "clusterroles", ""
	if b.RoleRef.Kind == "Role" {
		res, where = "roles", " in namespace "+b.Namespace
	}
	return fmt.Sprintf("the hub may not bind %s %s: it holds neither its permissions nor bind on it; grant the hub's identity verb bind on %s %q%s, or name another role",
		b.RoleRef.Kind, b.RoleRef.Name, res, b.RoleRef.Name, where)
}

// roleExists says what is wrong with the role a binding refers to, "" when it exists.
func (r *Reconciler) roleExists(ctx context.Context, b *rbacv1.RoleBinding) (string, error) {
	ref := b.RoleRef
	var obj client.Object
	key := client.ObjectKey{Name: ref.Name}
	switch ref.Kind {
	case "ClusterRole":
		obj = &rbacv1.ClusterRole{}
	case "Role":
		obj, key.Namespace = &rbacv1.Role{}, b.Namespace
	default:
		return fmt.Sprintf("roleRef kind %q is neither ClusterRole nor Role", ref.Kind), nil
	}
	err := r.Client.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		where := ""
		if key.Namespace != "" {
			where = " in namespace " + key.Namespace
		}
		return fmt.Sprintf("%s %s does not exist on the hub%s: create it, or name an existing one", ref.Kind, ref.Name, where), nil
	}
	return "", err
}

// removeBindings deletes the RoleBindings the hub made for the add-on of that cluster and name,
// except those in keep (nil: all), as the binder. Bindings carry the cluster and add-on labels wherever they
// are; those in the cluster's namespace are also removed by the garbage collector.
func (r *Reconciler) removeBindings(ctx context.Context, cluster, name string, keep map[client.ObjectKey]bool) error {
	l := &rbacv1.RoleBindingList{}
	if err := r.Client.List(ctx, l, client.MatchingLabels{ClusterLabel: cluster, AddonLabel: name}); err != nil {
		return err
	}
	var errs []error
	for i := range l.Items {
		b := &l.Items[i]
		if b.Labels[OwnerLabel] == "" || keep[client.ObjectKeyFromObject(b)] {
			continue
		}
		err := r.binder().Delete(ctx, b, client.Preconditions{UID: &b.UID})
		if apierrors.IsForbidden(err) {
			err = fmt.Errorf("removing RoleBinding %s/%s: %s", b.Namespace, b.Name, r.refusedBinding(b, err))
		}
		errs = append(errs, client.IgnoreNotFound(err))
	}
	return errors.Join(errs...)
}

func joinProblems(p []string) string { return strings.Join(p, "; ") }

// ownedConditions are the conditions of a ManagedClusterAddOn's status this controller sets.
var ownedConditions = []string{addonv1alpha1.ManagedClusterAddOnManifestApplied, addonv1alpha1.ManagedClusterAddOnConditionAvailable,
	addonv1alpha1.ManagedClusterAddOnRegistrationApplied}

// writeStatus writes st as mca's status when it differs (conditions without their transition
// times), with the Progressing condition that follows from it (addon.Progress) when the add-on
// has a ClusterManagementAddOn: one write where the progressing controller would follow with
// its own.
//
// mca comes from the cache, which may not hold yet the status another controller (or this one,
// a moment ago) wrote: a write that conflicts puts this controller's part of st (ownedConditions,
// registrations, namespace, health check) on the add-on as the API server has it now and tries
// again, rather than failing the reconcile into the queue's back-off (with 48 workers at 1,000
// clusters, a few hundred such retries a run).
func (r *Reconciler) writeStatus(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, st *addonv1alpha1.ManagedClusterAddOnStatus) error {
	return addon.RetryStatusOnConflict(ctx, r.reader(), mca, func(m *addonv1alpha1.ManagedClusterAddOn) error {
		if m == mca {
			return r.writeStatusOnce(ctx, m, st)
		}
		return r.writeStatusOnce(ctx, m, ownPart(st, m.Status))
	})
}

func (r *Reconciler) reader() client.Reader {
	if r.Reader != nil {
		return r.Reader
	}
	return r.Client
}

// ownPart is base with this controller's part of st.
func ownPart(st *addonv1alpha1.ManagedClusterAddOnStatus, base addonv1alpha1.ManagedClusterAddOnStatus) *addonv1alpha1.ManagedClusterAddOnStatus {
	out := base.DeepCopy()
	for _, t := range ownedConditions {
		if c := meta.FindStatusCondition(st.Conditions, t); c != nil {
			meta.SetStatusCondition(&out.Conditions, *c)
		} else {
			meta.RemoveStatusCondition(&out.Conditions, t)
		}
	}
	out.Registrations, out.Namespace, out.HealthCheck = st.Registrations, st.Namespace, st.HealthCheck
	return out
}

// writeStatusOnce is one try of writeStatus.
func (r *Reconciler) writeStatusOnce(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, st *addonv1alpha1.ManagedClusterAddOnStatus) error {
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Name: mca.Name}, cma); {
	case err == nil:
		next, err := addon.Progress(ctx, r.Client, cma, mca, *st, metav1.NewTime(r.Clock.Now()))
		if err != nil {
			return err
		}
		st = &next
	case !apierrors.IsNotFound(err):
		return err
	}
	old := mca.Status
	if conditions.Equal(old.Conditions, st.Conditions) && equality.Semantic.DeepEqual(old.Registrations, st.Registrations) &&
		old.Namespace == st.Namespace && old.HealthCheck == st.HealthCheck && equality.Semantic.DeepEqual(old.ConfigReferences, st.ConfigReferences) {
		return nil
	}
	m := mca.DeepCopy()
	m.Status = *st
	return client.IgnoreNotFound(r.Client.Status().Update(ctx, m))
}
