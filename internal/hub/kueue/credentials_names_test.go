package kueue

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/kueueworker"
)

var testOwner = metav1.OwnerReference{APIVersion: "kueue.x-k8s.io/v1beta2", Kind: "MultiKueueCluster", Name: "x", UID: "u"}

func hubLabels(extra ...string) map[string]string {
	l := map[string]string{ManagedLabel: ManagedValue}
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i]] = extra[i+1]
	}
	return l
}

func secret(name string, labels map[string]string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: name, Labels: labels}, Data: data}
}

// exists says whether the object of o's kind and key is there.
func exists(t *testing.T, c client.Client, o client.Object) bool {
	t.Helper()
	err := c.Get(context.Background(), client.ObjectKeyFromObject(o), o)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return err == nil
}

// TestTokenAccess pins what the hub grants cluster x's agents in the Kueue namespace: get, update
// and patch on exactly one Secret, x's token Secret, and nothing else; the Secret it makes for the
// token is marked as x's token.
func TestTokenAccess(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	cr := &CredentialsReconciler{Client: c, SecretReader: c, Namespace: DefaultNamespace, Source: SourceSecret}
	ctx := context.Background()
	if err := cr.ensureTokenAccess(ctx, "x", testOwner); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: DefaultNamespace, Name: "flotilla:multikueue-token:x"}, role); err != nil {
		t.Fatal(err)
	}
	wantRules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"},
		ResourceNames: []string{"multikueue-token.x"}, Verbs: []string{"get", "update", "patch"}}}
	if diff := cmp.Diff(wantRules, role.Rules); diff != "" {
		t.Errorf("token Role rules (-want +got):\n%s", diff)
	}
	rb := &rbacv1.RoleBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: DefaultNamespace, Name: "flotilla:multikueue-token:x"}, rb); err != nil {
		t.Fatal(err)
	}
	wantBinding := []any{rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "flotilla:multikueue-token:x"},
		[]rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:open-cluster-management:x"}}}
	if diff := cmp.Diff(wantBinding, []any{rb.RoleRef, rb.Subjects}); diff != "" {
		t.Errorf("token RoleBinding (-want +got):\n%s", diff)
	}
	ts := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: DefaultNamespace, Name: "multikueue-token.x"}, ts); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hubLabels(CredentialLabel, CredentialToken, ClusterLabel, "x"), ts.Labels); diff != "" {
		t.Errorf("token Secret labels (-want +got):\n%s", diff)
	}
}

// TestLegacyTokenSecret: before issue 19 cluster x's token Secret was multikueue-token-x, which
// is also the kubeconfig Secret of cluster token-x, and x's agent could rewrite it. When the hub
// finds x's token Role of then, it deletes that Secret if it made it (and only then) before the
// Role changes; once the Role is the new one, the Secret of that name is token-x's alone and kept.
func TestLegacyTokenSecret(t *testing.T) {
	oldRole := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: "flotilla:multikueue-token:x", Labels: hubLabels()},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"},
			ResourceNames: []string{"multikueue-token-x"}, Verbs: []string{"get", "update", "patch"}}}}
	newRole := oldRole.DeepCopy()
	newRole.Rules = tokenRules("x")
	evil := map[string][]byte{kueuev1beta2.MultiKueueConfigSecretKey: []byte("written by x's agent")}
	cases := map[string]struct {
		objs       []client.Object
		wantLegacy bool
	}{
		"the hub's old Secret goes": {
			objs: []client.Object{oldRole, secret("multikueue-token-x", hubLabels(), evil)},
		},
		"the hub's old Secret goes even when marked as token-x's kubeconfig, which x's agent could rewrite": {
			objs: []client.Object{oldRole, secret("multikueue-token-x", hubLabels(CredentialLabel, CredentialKubeconfig, ClusterLabel, "token-x"), evil)},
		},
		"a Secret of that name that is not the hub's stays": {
			objs:       []client.Object{oldRole, secret("multikueue-token-x", nil, evil)},
			wantLegacy: true,
		},
		"after the new Role, token-x's kubeconfig stays": {
			objs:       []client.Object{newRole, secret("multikueue-token-x", hubLabels(CredentialLabel, CredentialKubeconfig, ClusterLabel, "token-x"), nil)},
			wantLegacy: true,
		},
	}
	for name, tc := range cases {
		for _, step := range []string{"ensureTokenAccess", "remove"} {
			t.Run(name+"/"+step, func(t *testing.T) {
				c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(tc.objs...).Build()
				cr := &CredentialsReconciler{Client: c, SecretReader: c, Namespace: DefaultNamespace, Source: SourceSecret}
				var err error
				if step == "remove" {
					err = cr.remove(context.Background(), "x")
				} else {
					err = cr.ensureTokenAccess(context.Background(), "x", testOwner)
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := exists(t, c, secret("multikueue-token-x", nil, nil)); got != tc.wantLegacy {
					t.Errorf("Secret multikueue-token-x there: %v, want %v", got, tc.wantLegacy)
				}
			})
		}
	}
}

// TestKubeconfigMarks: a kubeconfig Secret the hub wrote is used, and kept, when it is marked as
// the cluster's kubeconfig. One that is the hub's but unmarked was written before issue 19: when
// the cluster is named token-<another>, the Secret had the name of that other cluster's token
// Secret, which its agent could rewrite, so the admission check does not count it and the
// credentials controller deletes it; under any other name only the hub could write it, so it is
// used and marked. A Secret without the hub's label is the user's.
func TestKubeconfigMarks(t *testing.T) {
	kc := map[string][]byte{kueuev1beta2.MultiKueueConfigSecretKey: []byte("kubeconfig")}
	cases := map[string]struct {
		cluster             string
		labels              map[string]string
		wantReady, wantKept bool
		wantLabels          map[string]string // when kept
	}{
		"marked as token-x's": {cluster: "token-x", labels: hubLabels(CredentialLabel, CredentialKubeconfig, ClusterLabel, "token-x"),
			wantReady: true, wantKept: true, wantLabels: hubLabels(CredentialLabel, CredentialKubeconfig, ClusterLabel, "token-x")},
		"the user's":                   {cluster: "token-x", wantReady: true, wantKept: true},
		"the hub's, unmarked":          {cluster: "token-x", labels: hubLabels()},
		"the hub's, marked as a token": {cluster: "token-x", labels: hubLabels(CredentialLabel, CredentialToken, ClusterLabel, "token-x")},
		"the hub's, another cluster's": {cluster: "token-x", labels: hubLabels(CredentialLabel, CredentialKubeconfig, ClusterLabel, "x")},
		"the hub's, unmarked, never a token's": {cluster: "gpu", labels: hubLabels(), wantReady: true, wantKept: true,
			wantLabels: hubLabels(CredentialLabel, CredentialKubeconfig, ClusterLabel, "gpu")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mkc := &kueuev1beta2.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: tc.cluster, Labels: hubLabels()}, Spec: ClusterSpec(tc.cluster, SourceSecret)}
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: tc.cluster}}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(mkc, mc, secret(SecretName(tc.cluster), tc.labels, kc)).Build()
			r := &Reconciler{Client: c, SecretReader: c, Namespace: DefaultNamespace, Source: SourceSecret}
			ready, err := r.secretReady(context.Background(), tc.cluster)
			if err != nil {
				t.Fatal(err)
			}
			if ready != tc.wantReady {
				t.Errorf("secretReady = %v, want %v", ready, tc.wantReady)
			}
			cr := &CredentialsReconciler{Client: c, SecretReader: c, Namespace: DefaultNamespace, Source: SourceSecret}
			if _, err := cr.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: tc.cluster}}); err != nil {
				t.Fatal(err)
			}
			got := secret(SecretName(tc.cluster), nil, nil)
			kept := exists(t, c, got)
			if kept != tc.wantKept {
				t.Errorf("Secret %s kept: %v, want %v", got.Name, kept, tc.wantKept)
			}
			if kept {
				if diff := cmp.Diff([]any{kc, tc.wantLabels}, []any{got.Data, got.Labels}); diff != "" {
					t.Errorf("Secret %s data and labels (-want +got):\n%s", got.Name, diff)
				}
			}
		})
	}
}

// TestComposeUsesOnlyMarkedToken: the hub composes a kubeconfig only from a token Secret it made
// and marked as that cluster's token, and marks the kubeconfig as the cluster's.
func TestComposeUsesOnlyMarkedToken(t *testing.T) {
	token := map[string][]byte{kueueworker.TokenKey: []byte("t"), kueueworker.CAKey: []byte("ca"), kueueworker.ServerKey: []byte("https://x:6443")}
	cases := map[string]struct {
		labels     map[string]string
		wantLabels map[string]string // of the kubeconfig Secret; nil when none is written
	}{
		"marked":               {labels: hubLabels(CredentialLabel, CredentialToken, ClusterLabel, "x"), wantLabels: hubLabels(CredentialLabel, CredentialKubeconfig, ClusterLabel, "x")},
		"unmarked":             {labels: hubLabels()},
		"not the hub's":        {labels: map[string]string{CredentialLabel: CredentialToken, ClusterLabel: "x"}},
		"another cluster's":    {labels: hubLabels(CredentialLabel, CredentialToken, ClusterLabel, "y")},
		"marked as kubeconfig": {labels: hubLabels(CredentialLabel, CredentialKubeconfig, ClusterLabel, "x")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(secret(kueueworker.TokenSecret("x"), tc.labels, token)).Build()
			cr := &CredentialsReconciler{Client: c, SecretReader: c, Namespace: DefaultNamespace, Source: SourceSecret}
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
			reported, err := cr.compose(context.Background(), mc, testOwner)
			if err != nil {
				t.Fatal(err)
			}
			if reported != (tc.wantLabels != nil) {
				t.Errorf("compose reported %v, want %v", reported, tc.wantLabels != nil)
			}
			got := secret(SecretName("x"), nil, nil)
			var gotLabels map[string]string
			if exists(t, c, got) {
				gotLabels = got.Labels
			}
			if diff := cmp.Diff(tc.wantLabels, gotLabels); diff != "" {
				t.Errorf("kubeconfig Secret labels (-want +got):\n%s", diff)
			}
		})
	}
}
