//go:build integration

package work

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/agent/work"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// testBadInput: an unknown kind or an invalid field fails only that manifest, with the API server's message.
func testBadInput(t *testing.T, env *testEnv) {
	one, hub := env.clusters[0], env.hub
	spokeNamespace(t, one.Spoke.Client, "bad")
	unknown := obj{"apiVersion": "example.com/v1", "kind": "Nope", "metadata": obj{"name": "x", "namespace": "bad"}}
	createWork(t, hub, newWork(one.Name, "bad", manifests(t,
		configMap("bad", "good", nil), unknown, deployment("bad", "invalid", -1), configMap("bad", "good-too", nil))))
	w := waitWork(t, hub, one.Name, "bad", "every manifest reported", func(w *workv1.ManifestWork) bool {
		return len(w.Status.ResourceStatus.Manifests) == 4
	})
	for i, want := range []struct {
		status  metav1.ConditionStatus
		message string
	}{
		{metav1.ConditionTrue, ""},
		{metav1.ConditionFalse, `no matches for kind "Nope" in version "example.com/v1"`},
		{metav1.ConditionFalse, "spec.replicas: Invalid value: -1"},
		{metav1.ConditionTrue, ""},
	} {
		c := manifestCondition(w, i, workv1.ManifestApplied)
		if c == nil || c.Status != want.status || !strings.Contains(c.Message, want.message) {
			t.Errorf("manifest %d: Applied = %+v, want %s with a message containing %q", i, c, want.status, want.message)
		}
	}
	for _, name := range []string{"good", "good-too"} {
		if _, err := getCM(t, one, "bad", name); err != nil {
			t.Errorf("ConfigMap %s beside the bad manifests: %v", name, err)
		}
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("work Applied = %+v, want False", c)
	}
}

// testConflicts: an object of another work or another field manager is a conflict naming it.
func testConflicts(t *testing.T, env *testEnv) {
	one, hub, ctx := env.clusters[0], env.hub, context.Background()
	spokeNamespace(t, one.Spoke.Client, "conflict")
	createWork(t, hub, newWork(one.Name, "first", manifests(t, configMap("conflict", "contested", map[string]string{"v": "1"}))))
	waitWork(t, hub, one.Name, "first", "applied", allApplied)
	createWork(t, hub, newWork(one.Name, "second", manifests(t, configMap("conflict", "contested", map[string]string{"v": "2"}))))
	waitWork(t, hub, one.Name, "second", "a conflict with work first", func(w *workv1.ManifestWork) bool {
		c := manifestCondition(w, 0, workv1.ManifestApplied)
		return c != nil && c.Reason == work.ReasonConflictWithWork && strings.Contains(c.Message, `ManifestWork first`)
	})
	if cm, err := getCM(t, one, "conflict", "contested"); err != nil || cm.Object["data"].(map[string]any)["v"] != "1" {
		t.Errorf("contested ConfigMap = %v (err %v), want first's v=1 kept", cm, err)
	}

	// Another field manager owns data.k; server-side apply without force does not take it.
	theirs := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ssa","namespace":"conflict"},"data":{"k":"theirs"}}`)
	if _, err := one.Dyn.Resource(cmGVR).Namespace("conflict").Patch(ctx, "ssa", types.ApplyPatchType, theirs, metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	w := newWork(one.Name, "ssa", manifests(t, configMap("conflict", "ssa", map[string]string{"k": "ours"})))
	w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
		ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: "conflict", Name: "ssa"},
		UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply},
	}}
	createWork(t, hub, w)
	waitWork(t, hub, one.Name, "ssa", "a conflict with manager someone-else", func(w *workv1.ManifestWork) bool {
		c := manifestCondition(w, 0, workv1.ManifestApplied)
		return c != nil && c.Reason == work.ReasonConflictWithFieldManager && strings.Contains(c.Message, "someone-else")
	})
	// With force, the work takes the field.
	testenv.Update(t, hub, w, func() {
		w.Spec.ManifestConfigs[0].UpdateStrategy.ServerSideApply = &workv1.ServerSideApplyConfig{Force: true}
	})
	waitWork(t, hub, one.Name, "ssa", "applied with force", allApplied)
	if cm, err := getCM(t, one, "conflict", "ssa"); err != nil || cm.Object["data"].(map[string]any)["k"] != "ours" {
		t.Errorf("ConfigMap ssa = %v (err %v), want k=ours", cm, err)
	}
}

// testExecutor: an executor cannot create what it may not create.
func testExecutor(t *testing.T, env *testEnv) {
	one, hub, ctx := env.clusters[0], env.hub, context.Background()
	spokeNamespace(t, one.Spoke.Client, "exec")
	rbac := one.Spoke.Client.RbacV1()
	if _, err := rbac.Roles("exec").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "limited"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "update", "patch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.RoleBindings("exec").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "limited"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "limited"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "exec", Name: "limited"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := obj{"apiVersion": "v1", "kind": "Secret", "metadata": obj{"name": "s", "namespace": "exec"}, "stringData": obj{"k": "v"}}
	w := newWork(one.Name, "exec", manifests(t, configMap("exec", "allowed", nil), secret))
	w.Spec.Executor = &workv1.ManifestWorkExecutor{Subject: &workv1.ManifestWorkExecutorSubject{
		Type: workv1.ExecutorSubjectTypeServiceAccount, ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: "exec", Name: "limited"}}}
	createWork(t, hub, w)
	got := waitWork(t, hub, one.Name, "exec", "both manifests reported", func(w *workv1.ManifestWork) bool {
		return len(w.Status.ResourceStatus.Manifests) == 2
	})
	if c := manifestCondition(got, 0, workv1.ManifestApplied); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("ConfigMap the executor may create: Applied = %+v, want True", c)
	}
	c := manifestCondition(got, 1, workv1.ManifestApplied)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, `"system:serviceaccount:exec:limited" cannot create resource "secrets"`) {
		t.Errorf("Secret the executor may not create: Applied = %+v, want False and forbidden for the executor", c)
	}
	if _, err := one.Spoke.Client.CoreV1().Secrets("exec").Get(ctx, "s", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Secret exists on the spoke (err=%v)", err)
	}
}

// testOtherCluster: an agent cannot read another cluster's works, write their status, or delete
// them (it may delete works of its own namespace, for ttlSecondsAfterFinished).
func testOtherCluster(t *testing.T, env *testEnv) {
	one, hub, ctx := env.clusters[0], env.hub, context.Background()
	c := one.Reg.Hub().Current().Client
	other := env.clusters[1].Name
	if err := c.List(ctx, &workv1.ManifestWorkList{}, client.InNamespace(other)); !apierrors.IsForbidden(err) {
		t.Errorf("%s's agent listing %s's works: err = %v, want Forbidden", one.Name, other, err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: other, Name: "app"}, &workv1.ManifestWork{}); !apierrors.IsForbidden(err) {
		t.Errorf("%s's agent reading %s's work: err = %v, want Forbidden", one.Name, other, err)
	}
	w := &workv1.ManifestWork{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: other, Name: "app"}, w); err != nil {
		t.Fatal(err)
	}
	w.Status.Conditions = nil
	if err := c.Status().Update(ctx, w); !apierrors.IsForbidden(err) {
		t.Errorf("%s's agent writing %s's work status: err = %v, want Forbidden", one.Name, other, err)
	}
	if err := c.Delete(ctx, w); !apierrors.IsForbidden(err) {
		t.Errorf("%s's agent deleting %s's work: err = %v, want Forbidden", one.Name, other, err)
	}
}
