//go:build integration

package kueue

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestPlacementDrivesMultiKueue: a placement's decisions become a MultiKueueConfig, best first,
// and a MultiKueueCluster per cluster; a cluster leaving the placement leaves both; the check is
// active once the kubeconfig Secrets exist; deleting the check takes the hub's objects with it.
func TestPlacementDrivesMultiKueue(t *testing.T) {
	f := setup(t, "kq-drive")
	scores := map[string]int32{"kq-drive-a": 10, "kq-drive-b": 90, "kq-drive-c": 50}
	for cl, s := range scores {
		f.cluster(t, cl, map[string]string{"gpu": "true"})
		f.score(t, cl, s)
	}
	f.placement(t, "kq-drive", map[string]string{"gpu": "true"})
	f.check(t, "kq-drive", kueue.ControllerName, placementParams("kq-drive"))
	f.startHub(t, true)

	waitMultiKueue(t, f.c, "kq-drive", []string{"kq-drive-b", "kq-drive-c", "kq-drive-a"}, "kq-drive-a", "kq-drive-b", "kq-drive-c")
	f.waitActive(t, "kq-drive", active{metav1.ConditionFalse, kueue.ReasonCredentialsPending,
		"waiting for kubeconfig Secrets multikueue-kq-drive-b, multikueue-kq-drive-c, multikueue-kq-drive-a (key kubeconfig) in namespace kueue-system" + pending})

	t.Run("a cluster loses its label", func(t *testing.T) {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "kq-drive-c"}}
		testenv.Update(t, f.c, mc, func() { delete(mc.Labels, "gpu") })
		waitMultiKueue(t, f.c, "kq-drive", []string{"kq-drive-b", "kq-drive-a"}, "kq-drive-a", "kq-drive-b")
		waitGone(t, f.c, &kueuev1beta2.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: "kq-drive-c"}})
	})

	t.Run("the Secrets appear", func(t *testing.T) {
		f.kubeconfigSecret(t, "kq-drive-a")
		f.waitActive(t, "kq-drive", active{metav1.ConditionFalse, kueue.ReasonCredentialsPending,
			"waiting for kubeconfig Secrets multikueue-kq-drive-b (key kubeconfig) in namespace kueue-system" + pending})
		f.kubeconfigSecret(t, "kq-drive-b")
		f.waitActive(t, "kq-drive", active{metav1.ConditionTrue, kueue.ReasonActive,
			"MultiKueueConfig kq-drive lists 2 clusters of Placement kueue-system/kq-drive"})
	})

	t.Run("the check is deleted", func(t *testing.T) {
		if err := f.c.Delete(context.Background(), &kueuev1beta2.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "kq-drive"}}); err != nil {
			t.Fatal(err)
		}
		waitGone(t, f.c, &kueuev1beta2.MultiKueueConfig{ObjectMeta: metav1.ObjectMeta{Name: "kq-drive"}})
		waitGone(t, f.c, &kueuev1beta2.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: "kq-drive-a"}})
		waitGone(t, f.c, &kueuev1beta2.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: "kq-drive-b"}})
	})
}

// waitMultiKueue waits until MultiKueueConfig name lists want, in order, and each of clusters
// has the hub's MultiKueueCluster pointing at its Secret.
func waitMultiKueue(t *testing.T, c client.Client, name string, want []string, clusters ...string) {
	t.Helper()
	wantMK := map[string]string{}
	for _, cl := range clusters {
		wantMK[cl] = "flotilla Secret multikueue-" + cl
	}
	testenv.WaitFor(t, wait, fmt.Sprintf("MultiKueueConfig %s to list %v", name, want), func(ctx context.Context) (bool, string, error) {
		got, err := configClusters(ctx, c, name)
		if err != nil {
			return false, "", err
		}
		mk, err := mkClusters(ctx, c, clusters...)
		if err != nil {
			return false, "", err
		}
		diff := cmp.Diff(want, got) + cmp.Diff(wantMK, mk)
		return diff == "", "(-want +got)\n" + diff, nil
	})
}

// waitGone waits until obj is deleted.
func waitGone(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	testenv.WaitFor(t, wait, fmt.Sprintf("%T %s to go", obj, obj.GetName()), func(ctx context.Context) (bool, string, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, fmt.Sprintf("still there (owners %v)", obj.GetOwnerReferences()), err
	})
}

// TestBadInput: a missing placement, wrong parameters and a placement without clusters each give
// a condition that says what to fix, and another controller's check is left alone.
func TestBadInput(t *testing.T) {
	f := setup(t, "kq-bad")
	f.cluster(t, "kq-bad-1", map[string]string{"gpu": "true"})
	theirs := f.check(t, "kq-bad-theirs", kueuev1beta2.MultiKueueControllerName,
		&kueuev1beta2.AdmissionCheckParametersReference{APIGroup: kueuev1beta2.GroupVersion.Group, Kind: "MultiKueueConfig", Name: "kq-bad-theirs"})
	f.check(t, "kq-bad-missing", kueue.ControllerName, placementParams("kq-bad-nowhere"))
	f.check(t, "kq-bad-kind", kueue.ControllerName,
		&kueuev1beta2.AdmissionCheckParametersReference{APIGroup: "cluster.open-cluster-management.io", Kind: "PlacementDecision", Name: "kq-bad-empty"})
	f.check(t, "kq-bad-group", kueue.ControllerName,
		&kueuev1beta2.AdmissionCheckParametersReference{APIGroup: "kueue.x-k8s.io", Kind: "Placement", Name: "kq-bad-empty"})
	f.placement(t, "kq-bad-empty", map[string]string{"gpu": "none"})
	f.check(t, "kq-bad-empty", kueue.ControllerName, placementParams("kq-bad-empty"))
	f.startHub(t, true)

	f.waitActive(t, "kq-bad-missing", active{metav1.ConditionFalse, kueue.ReasonPlacementNotFound,
		"Placement kueue-system/kq-bad-nowhere (spec.parameters.name) not found: create it in namespace kueue-system or name an existing one"})
	fix := "set spec.parameters to {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: <a Placement in namespace kueue-system>}"
	f.waitActive(t, "kq-bad-kind", active{metav1.ConditionFalse, kueue.ReasonInvalidParameters,
		`spec.parameters.kind is "PlacementDecision", not Placement: ` + fix})
	f.waitActive(t, "kq-bad-group", active{metav1.ConditionFalse, kueue.ReasonInvalidParameters,
		`spec.parameters.apiGroup is "kueue.x-k8s.io", not cluster.open-cluster-management.io: ` + fix})
	f.waitActive(t, "kq-bad-empty", active{metav1.ConditionFalse, kueue.ReasonNoClusters,
		"Placement kueue-system/kq-bad-empty has decided no clusters: check its predicates, cluster sets and bindings in namespace kueue-system"})
	for _, name := range []string{"kq-bad-nowhere", "kq-bad-empty", "kq-bad-theirs"} {
		if got, err := configClusters(context.Background(), f.c, name); err != nil || got != nil {
			t.Errorf("MultiKueueConfig %s: %v, %v; want none", name, got, err)
		}
	}

	t.Run("the missing placement appears", func(t *testing.T) {
		f.placement(t, "kq-bad-nowhere", map[string]string{"gpu": "true"})
		waitMultiKueue(t, f.c, "kq-bad-nowhere", []string{"kq-bad-1"}, "kq-bad-1")
		f.waitActive(t, "kq-bad-missing", active{metav1.ConditionFalse, kueue.ReasonCredentialsPending, ""})
	})

	t.Run("another controller's check is untouched", func(t *testing.T) {
		got := &kueuev1beta2.AdmissionCheck{}
		if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(theirs), got); err != nil {
			t.Fatal(err)
		}
		if got.ResourceVersion != theirs.ResourceVersion || len(got.Status.Conditions) != 0 {
			t.Errorf("AdmissionCheck %s of %s changed: resourceVersion %s -> %s, conditions %+v",
				theirs.Name, theirs.Spec.ControllerName, theirs.ResourceVersion, got.ResourceVersion, got.Status.Conditions)
		}
	})
}

// TestNameClash: a MultiKueueConfig or MultiKueueCluster of someone else's with the name the hub
// wants is left alone and the check says so; once it goes, the hub writes its own.
func TestNameClash(t *testing.T) {
	f := setup(t, "kq-clash")
	f.cluster(t, "kq-clash-1", map[string]string{"gpu": "true"})
	f.kubeconfigSecret(t, "kq-clash-1")
	others := &kueuev1beta2.MultiKueueConfig{ObjectMeta: metav1.ObjectMeta{Name: "kq-clash"},
		Spec: kueuev1beta2.MultiKueueConfigSpec{Clusters: []string{"elsewhere"}}}
	testenv.Create(t, f.c, others)
	othersMK := &kueuev1beta2.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: "kq-clash-1"},
		Spec: kueuev1beta2.MultiKueueClusterSpec{ClusterSource: kueuev1beta2.ClusterSource{
			KubeConfig: &kueuev1beta2.KubeConfig{LocationType: kueuev1beta2.SecretLocationType, Location: "their-secret"}}}}
	testenv.Create(t, f.c, othersMK)
	f.placement(t, "kq-clash", map[string]string{"gpu": "true"})
	f.check(t, "kq-clash", kueue.ControllerName, placementParams("kq-clash"))
	f.startHub(t, true)

	f.waitActive(t, "kq-clash", active{metav1.ConditionFalse, kueue.ReasonNameClash,
		"in the way and not the hub's (no label kueue.flotilla.io/managed-by=flotilla), so left alone: " +
			"MultiKueueConfig kq-clash, MultiKueueCluster kq-clash-1; delete them, or rename the placement"})
	for _, obj := range []client.Object{others, othersMK} {
		got := obj.DeepCopyObject().(client.Object)
		if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err != nil {
			t.Fatal(err)
		}
		if got.GetResourceVersion() != obj.GetResourceVersion() || len(got.GetOwnerReferences()) > 0 || len(got.GetLabels()) > 0 {
			t.Errorf("%T %s changed: resourceVersion %s -> %s, owners %v, labels %v", obj, obj.GetName(),
				obj.GetResourceVersion(), got.GetResourceVersion(), got.GetOwnerReferences(), got.GetLabels())
		}
	}

	t.Run("theirs go", func(t *testing.T) {
		for _, obj := range []client.Object{others, othersMK} {
			if err := f.c.Delete(context.Background(), obj); err != nil {
				t.Fatal(err)
			}
		}
		waitMultiKueue(t, f.c, "kq-clash", []string{"kq-clash-1"}, "kq-clash-1")
		f.waitActive(t, "kq-clash", active{metav1.ConditionTrue, kueue.ReasonActive, ""})
	})
}

// TestSecretsNotReadable: a hub without the Role that lets it read Secrets in the Kueue namespace
// still writes the MultiKueue objects, and the check says what to grant.
func TestSecretsNotReadable(t *testing.T) {
	f := setup(t, "kq-noread")
	f.cluster(t, "kq-noread-1", map[string]string{"gpu": "true"})
	f.kubeconfigSecret(t, "kq-noread-1")
	f.placement(t, "kq-noread", map[string]string{"gpu": "true"})
	f.check(t, "kq-noread", kueue.ControllerName, placementParams("kq-noread"))
	f.startHub(t, false)
	waitMultiKueue(t, f.c, "kq-noread", []string{"kq-noread-1"}, "kq-noread-1")
	f.waitActive(t, "kq-noread", active{metav1.ConditionFalse, kueue.ReasonCredentialsPending,
		"the hub may not read kubeconfig Secrets multikueue-kq-noread-1 in namespace kueue-system: grant it get on secrets there with a Role (docs/kueue.md)"})
}

// pending ends the CredentialsPending message.
const pending = ": the hub writes each from the token the cluster's agent reports (built-in add-on multikueue-worker), unless you write it yourself"
