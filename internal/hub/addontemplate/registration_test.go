package addontemplate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

func TestRegistrations(t *testing.T) {
	def := &addonv1alpha1.Subject{User: "system:open-cluster-management:cluster:spoke-1:addon:gpu:agent:gpu-agent",
		Groups: []string{"system:open-cluster-management:cluster:spoke-1:addon:gpu", "system:open-cluster-management:addon:gpu", "system:authenticated"}}
	custom := func(subject *addonv1alpha1.Subject) addonv1alpha1.RegistrationSpec {
		return addonv1alpha1.RegistrationSpec{Type: addonv1alpha1.RegistrationTypeCustomSigner,
			CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{SignerName: "example.com/gpu", Subject: subject}}
	}
	cases := map[string]struct {
		reg  []addonv1alpha1.RegistrationSpec
		want []addonv1alpha1.RegistrationConfig
	}{
		"none": {},
		"kube client once": {reg: append(kubeClient, kubeClient...),
			want: []addonv1alpha1.RegistrationConfig{{SignerName: "kubernetes.io/kube-apiserver-client", Subject: def}}},
		"custom signer, default subject": {reg: []addonv1alpha1.RegistrationSpec{custom(nil)},
			want: []addonv1alpha1.RegistrationConfig{{SignerName: "example.com/gpu", Subject: def}}},
		"custom signer, own subject": {reg: []addonv1alpha1.RegistrationSpec{kubeClient[0], custom(&addonv1alpha1.Subject{User: "metrics", OrganizationUnits: []string{"ou"}})},
			want: []addonv1alpha1.RegistrationConfig{{SignerName: "kubernetes.io/kube-apiserver-client", Subject: def},
				{SignerName: "example.com/gpu", Subject: &addonv1alpha1.Subject{User: "metrics", OrganizationUnits: []string{"ou"}}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Registrations("spoke-1", "gpu", templateOf(tc.reg))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBindings(t *testing.T) {
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: "spoke-1", UID: "u1"}}
	reg := []addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeKubeClient, KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{
		HubPermissions: []addonv1alpha1.HubPermissionConfig{
			{Type: addonv1alpha1.HubPermissionsBindingCurrentCluster, CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: "gpu-reader"}},
			{Type: addonv1alpha1.HubPermissionsBindingSingleNamespace, SingleNamespace: &addonv1alpha1.SingleNamespaceBindingConfig{
				Namespace: "gpu-data", RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "writer"}}},
		}}}}
	labels := map[string]string{AddonLabel: "gpu", TemplateLabel: "", ClusterLabel: "spoke-1", OwnerLabel: "u1"}
	subjects := []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: "system:open-cluster-management:cluster:spoke-1:addon:gpu"}}
	want := []binding{
		{Field: "spec.registration[0].kubeClient.hubPermissions[0].currentCluster.clusterRoleName", Binding: &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:gpu:clusterrole:gpu-reader:agent", Namespace: "spoke-1", Labels: labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "addon.open-cluster-management.io/v1alpha1", Kind: "ManagedClusterAddOn",
					Name: "gpu", UID: "u1", Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "gpu-reader"},
			Subjects: subjects}},
		{Field: "spec.registration[0].kubeClient.hubPermissions[1].singleNamespace.roleRef", Binding: &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:gpu:cluster.spoke-1:role:writer:agent", Namespace: "gpu-data", Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "writer"},
			Subjects:   subjects}},
	}
	if diff := cmp.Diff(want, hubBindings(mca, templateOf(reg)), cmp.AllowUnexported(binding{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }
