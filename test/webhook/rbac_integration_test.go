//go:build integration

package webhook

import (
	"context"
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestHubRoleRefuses shows that the hub's identity, bound to its generated roles, can do nothing
// outside them: no Secrets, no cluster-admin binding, no role with more than it holds, no other
// webhook configuration, no impersonation. (RBAC cannot say "only namespaces the hub made": the
// hub's own code keeps to those, see internal/hub/registration/owned.go.)
func TestHubRoleRefuses(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	cfg := env.HubIdentity(t, "")
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	adm := env.Hub.Client

	other := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "wh-someone-elses"}}
	if _, err := adm.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = adm.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), other.Name, metav1.DeleteOptions{})
	})
	// Should an escalation below succeed, undo it.
	t.Cleanup(func() {
		_ = adm.RbacV1().ClusterRoleBindings().Delete(context.Background(), "wh-hub-escalates", metav1.DeleteOptions{})
		_ = adm.RbacV1().ClusterRoles().Delete(context.Background(), "wh-hub-escalates", metav1.DeleteOptions{})
		_ = adm.CoreV1().Pods("default").Delete(context.Background(), "wh-hub-pod", metav1.DeleteOptions{})
	})
	// The hub's service account, by the name HubIdentity gives it.
	self := func() rbacv1.Subject {
		r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: r.Status.UserInfo.Username}
	}()

	cases := map[string]func(ctx context.Context) error{
		"get a Secret in kube-system": func(ctx context.Context) error {
			_, err := cs.CoreV1().Secrets("kube-system").Get(ctx, "anything", metav1.GetOptions{})
			return err
		},
		"list Secrets in every namespace": func(ctx context.Context) error {
			_, err := cs.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
			return err
		},
		"bind cluster-admin to itself": func(ctx context.Context) error {
			_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "wh-hub-escalates"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects:   []rbacv1.Subject{self},
			}, metav1.CreateOptions{})
			return err
		},
		"make a role that reads Secrets": func(ctx context.Context) error {
			_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
				ObjectMeta: metav1.ObjectMeta{Name: "wh-hub-escalates"},
				Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}},
			}, metav1.CreateOptions{})
			return err
		},
		"read another webhook configuration": func(ctx context.Context) error {
			_, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, other.Name, metav1.GetOptions{})
			return err
		},
		"delete another webhook configuration": func(ctx context.Context) error {
			return cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, other.Name, metav1.DeleteOptions{})
		},
		"impersonate an administrator": func(ctx context.Context) error {
			imp := rest.CopyConfig(cfg)
			imp.Impersonate = rest.ImpersonationConfig{UserName: "admin", Groups: []string{"system:masters"}}
			c, err := kubernetes.NewForConfig(imp)
			if err != nil {
				return err
			}
			_, err = c.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
			return err
		},
		"create a Pod": func(ctx context.Context) error {
			_, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "wh-hub-pod"},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			}, metav1.CreateOptions{})
			return err
		},
	}
	for name, do := range cases {
		t.Run(name, func(t *testing.T) {
			if err := do(ctx); !apierrors.IsForbidden(err) {
				t.Errorf("the hub's identity may %s: got %v, want Forbidden", name, err)
			}
		})
	}

	// And it may do its job, or the refusals above would prove nothing.
	c, err := client.New(cfg, client.Options{Scheme: admin(t, env).Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, &clusterv1beta2.ManagedClusterSetList{}); err != nil {
		t.Errorf("the hub's identity listing ManagedClusterSets: %v", err)
	}
}

// TestHubLabelsDefaultSet: the hub puts a cluster without a set in the default set, which the
// webhook allows only to whoever may join it, the hub's own identity included.
func TestHubLabelsDefaultSet(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	adm := admin(t, env)
	mc := cluster("wh-default-set", nil, false)
	if err := adm.Create(context.Background(), mc); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, adm, mc)
	testenv.WaitFor(t, wait, "the hub to label the cluster into the default set", func(ctx context.Context) (bool, string, error) {
		err := adm.Get(ctx, client.ObjectKeyFromObject(mc), mc)
		return mc.Labels[clusterv1beta2.ClusterSetLabel] == "default", fmt.Sprintf("labels %v", mc.Labels), err
	})
}
