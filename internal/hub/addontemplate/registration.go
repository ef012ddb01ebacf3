package addontemplate

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

// AgentName is the name of a template add-on's agent in its identity (OCM's: <addon>-agent).
func AgentName(addon string) string { return addon + "-agent" }

// Registrations are the registrations of a template add-on's agent on a cluster, as OCM's template
// agent makes them (in the template's order, one per signer): KubeClient asks for the
// kube-apiserver client signer with the add-on's default identity; CustomSigner for its signer,
// with its subject or else the same default identity.
func Registrations(cluster, addon string, t *addonv1alpha1.AddOnTemplate) []addonv1alpha1.RegistrationConfig {
	def := func() *addonv1alpha1.Subject {
		return &addonv1alpha1.Subject{User: clusteridentity.AddOnUser(cluster, addon, AgentName(addon)),
			Groups: clusteridentity.AddOnGroups(cluster, addon)}
	}
	var out []addonv1alpha1.RegistrationConfig
	has := func(signer string) bool {
		return slices.ContainsFunc(out, func(r addonv1alpha1.RegistrationConfig) bool { return r.SignerName == signer })
	}
	for _, r := range t.Spec.Registration {
		switch {
		case r.Type == addonv1alpha1.RegistrationTypeKubeClient && !has(addonv1alpha1.KubeAPIServerClientSignerName):
			out = append(out, addonv1alpha1.RegistrationConfig{SignerName: addonv1alpha1.KubeAPIServerClientSignerName, Subject: def()})
		case r.Type == addonv1alpha1.RegistrationTypeCustomSigner && r.CustomSigner != nil && !has(r.CustomSigner.SignerName):
			s := def()
			if r.CustomSigner.Subject != nil {
				s = r.CustomSigner.Subject.DeepCopy()
			}
			out = append(out, addonv1alpha1.RegistrationConfig{SignerName: r.CustomSigner.SignerName, Subject: s})
		}
	}
	return out
}

// Labels of the RoleBindings the hub makes for hubPermissions. AddonLabel and TemplateLabel are
// OCM's; OwnerLabel is Flotilla's mark that the hub made it for one ManagedClusterAddOn (its UID):
// a binding without it is never updated or deleted.
const (
	AddonLabel    = "open-cluster-management.io/addon-name"
	TemplateLabel = "open-cluster-management.io/addon-template-name"
	ClusterLabel  = "addon.flotilla.io/cluster"
	OwnerLabel    = "addon.flotilla.io/owner-uid"
)

// binding is one RoleBinding a template's hubPermissions ask for, and the field that asks.
type binding struct {
	Field   string
	Binding *rbacv1.RoleBinding
}

// hubBindings are the RoleBindings mca's agent gets for the template's KubeClient hubPermissions:
// CurrentCluster binds the ClusterRole in the cluster's namespace, SingleNamespace binds the
// role in its namespace, each to the group system:open-cluster-management:cluster:<c>:addon:<a>.
//
// OCM names every binding open-cluster-management:<addon>:<kind>:agent, so that two permissions
// of one kind, or two clusters' SingleNamespace permissions in one namespace, overwrite each
// other; here the name also holds the role and, for SingleNamespace, the cluster (BindingName). Bindings in
// the cluster's namespace are owned by the ManagedClusterAddOn (the garbage collector removes
// them with it); the others carry its labels and are removed by the hub.
// BindingName names the RoleBinding, in namespace ns, of add-on addon's agent on cluster for
// ref: open-cluster-management:<addon>:<kind>:<role>:agent in the cluster's own namespace, and
// open-cluster-management:<addon>:cluster.<cluster>:<kind>:<role>:agent elsewhere. The add-on's
// and the cluster's names hold no ':' and the kind none, so the parts can be told apart however
// many ':' the role's name holds; and "cluster.<cluster>" is no kind. (It was "<cluster>", so the
// binding of a cluster named clusterrole to Role "writer", put in another cluster's namespace,
// was named as that cluster's binding to ClusterRole "role:writer".)
func BindingName(addon, cluster, ns string, ref rbacv1.RoleRef) string {
	kind := strings.ToLower(ref.Kind)
	if ns == cluster {
		return "open-cluster-management:" + addon + ":" + kind + ":" + ref.Name + ":agent"
	}
	return "open-cluster-management:" + addon + ":cluster." + cluster + ":" + kind + ":" + ref.Name + ":agent"
}

func hubBindings(mca *addonv1alpha1.ManagedClusterAddOn, t *addonv1alpha1.AddOnTemplate) []binding {
	var out []binding
	for i, r := range t.Spec.Registration {
		if r.Type != addonv1alpha1.RegistrationTypeKubeClient || r.KubeClient == nil {
			continue
		}
		for j, p := range r.KubeClient.HubPermissions {
			field := fmt.Sprintf("spec.registration[%d].kubeClient.hubPermissions[%d]", i, j)
			var ns string
			var ref rbacv1.RoleRef
			switch {
			case p.Type == addonv1alpha1.HubPermissionsBindingCurrentCluster && p.CurrentCluster != nil:
				ns, ref = mca.Namespace, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: p.CurrentCluster.ClusterRoleName}
				field += ".currentCluster.clusterRoleName"
			case p.Type == addonv1alpha1.HubPermissionsBindingSingleNamespace && p.SingleNamespace != nil:
				ns, ref = p.SingleNamespace.Namespace, p.SingleNamespace.RoleRef
				if ref.APIGroup == "" {
					ref.APIGroup = rbacv1.GroupName
				}
				field += ".singleNamespace.roleRef"
			default:
				continue
			}
			name := BindingName(mca.Name, mca.Namespace, ns, ref)
			b := &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
					AddonLabel: mca.Name, TemplateLabel: "", ClusterLabel: mca.Namespace, OwnerLabel: string(mca.UID)}},
				RoleRef: ref,
				Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName,
					Name: clusteridentity.AddOnClusterGroup(mca.Namespace, mca.Name)}},
			}
			if ns == mca.Namespace {
				b.OwnerReferences = []metav1.OwnerReference{ownerRef(mca)}
			}
			if !slices.ContainsFunc(out, func(o binding) bool {
				return o.Binding.Namespace == ns && o.Binding.Name == name
			}) {
				out = append(out, binding{Field: field, Binding: b})
			}
		}
	}
	return out
}

// ownerRef is a controller reference to mca.
func ownerRef(mca *addonv1alpha1.ManagedClusterAddOn) metav1.OwnerReference {
	return *metav1.NewControllerRef(mca, addonv1alpha1.GroupVersion.WithKind("ManagedClusterAddOn"))
}

// madeFor says whether the hub made obj for mca: its controller reference names mca's UID, or
// (for objects outside the cluster's namespace, where there can be no owner reference) its
// owner label does, or names an earlier ManagedClusterAddOn of the same add-on and cluster that
// was deleted while the hub was not running.
func madeFor(obj metav1.Object, mca *addonv1alpha1.ManagedClusterAddOn) bool {
	if c := metav1.GetControllerOf(obj); c != nil {
		return c.UID == mca.UID
	}
	l := obj.GetLabels()
	return l[OwnerLabel] != "" && l[AddonLabel] == mca.Name && l[ClusterLabel] == mca.Namespace
}
