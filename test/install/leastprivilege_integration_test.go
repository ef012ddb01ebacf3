//go:build integration

package install

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/agent/builtin/resourceusage"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const (
	hubNamespace   = "open-cluster-management-hub"
	agentNamespace = "open-cluster-management-agent"
	clusterName    = "lp-spoke"
)

// TestChartsGrantEnough renders both charts, applies them, and runs the hub and the agent as
// their Deployments say, with the charts' ServiceAccounts and nothing else (no administrator
// credentials reach either process). A spoke then joins, is accepted, a placement decides it, a
// ManifestWork is applied and reported, and an add-on turns Available: a rule missing from a
// chart fails one of these steps (remove the ClusterRole flotilla-hub's rule on leases and the
// cluster never turns Available; see the closing note of issue 20).
func TestChartsGrantEnough(t *testing.T) {
	f := installFleet(t, nil)
	admin, spoke := f.admin, f.spoke
	ctx := context.Background()
	if got := f.hubRun.Env(); !slices.Contains(got, "GOMEMLIMIT=1073741824") {
		t.Errorf("the hub runs without GOMEMLIMIT from its 1Gi memory limit: env %v", got)
	}

	// A placement decides the cluster.
	const ns = "lp-demo"
	testenv.Create(t, admin, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	testenv.Create(t, admin, &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "default"},
	})
	testenv.Create(t, admin, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "all"}})
	testenv.WaitFor(t, 60*time.Second, "placement all decides "+clusterName, func(ctx context.Context) (bool, string, error) {
		var list clusterv1beta1.PlacementDecisionList
		if err := admin.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		var got []string
		for _, d := range list.Items {
			for _, dec := range d.Status.Decisions {
				got = append(got, dec.ClusterName)
			}
		}
		return slices.Contains(got, clusterName), fmt.Sprintf("decisions %v", got), nil
	})

	// A ManifestWork is applied on the spoke and reported on the hub.
	testenv.Create(t, admin, manifestWork(t, clusterName, "lp-work", &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "lp-applied"},
	}, &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "lp-applied", Name: "hello"}, Data: map[string]string{"k": "v"},
	}))
	testenv.WaitFor(t, 60*time.Second, "ManifestWork lp-work Applied and Available", func(ctx context.Context) (bool, string, error) {
		w := &workv1.ManifestWork{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: "lp-work"}, w); err != nil {
			return false, "", err
		}
		ok := meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied) && meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkAvailable)
		return ok, fmt.Sprintf("conditions %+v", w.Status.Conditions), nil
	})
	if _, err := spoke.Client.CoreV1().ConfigMaps("lp-applied").Get(ctx, "hello", metav1.GetOptions{}); err != nil {
		t.Fatalf("the work's ConfigMap on the spoke: %v", err)
	}

	// A built-in add-on turns Available.
	testenv.Create(t, admin, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: resourceusage.Name}})
	testenv.WaitFor(t, 60*time.Second, "add-on resource-usage Available", func(ctx context.Context) (bool, string, error) {
		a := &addonv1alpha1.ManagedClusterAddOn{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: resourceusage.Name}, a); err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(a.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
		return c != nil && c.Status == metav1.ConditionTrue, fmt.Sprintf("%+v", c), nil
	})
}

// waitClusterNamed waits until the accepted cluster is Joined and Available.
func waitClusterNamed(t *testing.T, admin client.Client, clusterName string, agent interface{ Done() <-chan struct{} }) {
	t.Helper()
	testenv.WaitFor(t, 90*time.Second, "ManagedCluster "+clusterName+" Joined and Available", func(ctx context.Context) (bool, string, error) {
		select {
		case <-agent.Done():
			return false, "", fmt.Errorf("the agent exited")
		default:
		}
		mc := &clusterv1.ManagedCluster{}
		if err := admin.Get(ctx, client.ObjectKey{Name: clusterName}, mc); err != nil {
			if apierrors.IsNotFound(err) {
				return false, "no ManagedCluster yet", nil
			}
			return false, "", err
		}
		ok := meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined) &&
			meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		return ok, fmt.Sprintf("conditions %+v", mc.Status.Conditions), nil
	})
}

func manifestWork(t *testing.T, ns, name string, objs ...runtime.Object) *workv1.ManifestWork {
	t.Helper()
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, o := range objs {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return w
}
