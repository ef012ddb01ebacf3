//go:build integration

package clusterprofile

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	mcv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const wait = 30 * time.Second

// profile is what the test checks of a ClusterProfile.
type profile struct {
	Labels      map[string]string
	DisplayName string
	Manager     string
	Version     string
	Properties  map[string]string
	// Conditions are "status/reason" by type.
	Conditions map[string]string
}

func summarize(p *mcv1alpha1.ClusterProfile) profile {
	s := profile{
		Labels: p.Labels, DisplayName: p.Spec.DisplayName, Manager: p.Spec.ClusterManager.Name,
		Version: p.Status.Version.Kubernetes, Properties: map[string]string{}, Conditions: map[string]string{},
	}
	for _, pr := range p.Status.Properties {
		s.Properties[pr.Name] = pr.Value
	}
	for _, c := range p.Status.Conditions {
		s.Conditions[c.Type] = fmt.Sprintf("%s/%s", c.Status, c.Reason)
	}
	return s
}

// hubProfile is the profile the hub should keep for a cluster written by joinedCluster.
func hubProfile(cluster, version, available string) profile {
	return profile{
		Labels: map[string]string{
			"x-k8s.io/cluster-manager":                "open-cluster-management",
			"open-cluster-management.io/cluster-name": cluster,
		},
		DisplayName: cluster,
		Manager:     "open-cluster-management",
		Version:     version,
		Properties:  map[string]string{"id.k8s.io": cluster + "-uid", "region.open-cluster-management.io": "us-east-1"},
		Conditions: map[string]string{"ControlPlaneHealthy": available, "Joined": "True/ManagedClusterJoined",
			"AccessProviderReady": "False/NotAccepted"},
	}
}

// waitProfiles waits until namespace ns holds exactly the profiles want, by name.
func waitProfiles(t *testing.T, c client.Client, ns string, want map[string]profile) {
	t.Helper()
	testenv.WaitFor(t, wait, fmt.Sprintf("the ClusterProfiles in %s", ns), func(ctx context.Context) (bool, string, error) {
		l := &mcv1alpha1.ClusterProfileList{}
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		got := map[string]profile{}
		for i := range l.Items {
			got[l.Items[i].Name] = summarize(&l.Items[i])
		}
		diff := cmp.Diff(want, got)
		return diff == "", "(-want +got)\n" + diff, nil
	})
}

// joinedCluster creates a cluster in set with the status a joined, healthy agent writes.
func joinedCluster(t *testing.T, c client.Client, name, set, version string) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: set}}}
	create(t, c, mc)
	now := metav1.Now()
	mc.Status = clusterv1.ManagedClusterStatus{
		Version: clusterv1.ManagedClusterVersion{Kubernetes: version},
		ClusterClaims: []clusterv1.ManagedClusterClaim{
			{Name: "id.k8s.io", Value: name + "-uid"},
			{Name: "region.open-cluster-management.io", Value: "us-east-1"},
		},
		Conditions: []metav1.Condition{
			{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined",
				Message: "the agent joined", LastTransitionTime: now},
			{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable",
				Message: "the API server is healthy", LastTransitionTime: now},
		},
	}
	if err := c.Status().Update(context.Background(), mc); err != nil {
		t.Fatalf("writing the status of ManagedCluster %s: %v", name, err)
	}
}

// updateCluster changes cluster name and writes it back, status through the status subresource.
func updateCluster(t *testing.T, c client.Client, name string, change func(*clusterv1.ManagedCluster), status bool) {
	t.Helper()
	ctx := context.Background()
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFromWithOptions(mc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	change(mc)
	var err error
	if status {
		err = c.Status().Patch(ctx, mc, patch)
	} else {
		err = c.Patch(ctx, mc, patch)
	}
	if err != nil {
		t.Fatalf("updating ManagedCluster %s: %v", name, err)
	}
}

func TestProfilesFollowBindingsAndClusters(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := hubClient(t, env)
	startControllers(t, env)
	ns := env.Namespace(t, env.Hub)
	const set, other = "cp-blue", "cp-red"
	create(t, c, &clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: set},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.ExclusiveClusterSetLabel,
		}},
	})
	joinedCluster(t, c, "cp-1", set, "v1.37.2")
	joinedCluster(t, c, "cp-2", set, "v1.36.5")
	joinedCluster(t, c, "cp-3", set, "v1.37.2")
	joinedCluster(t, c, "cp-red-1", other, "v1.37.2")

	// Someone else's profile, without the hub's label: the hub never touches it.
	userProfile := profile{
		Labels: map[string]string{"team": "ml"}, DisplayName: "bring your own", Manager: "someone-else",
		Properties: map[string]string{}, Conditions: map[string]string{},
	}
	create(t, c, &mcv1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Name: "cp-user", Namespace: ns, Labels: userProfile.Labels},
		Spec: mcv1alpha1.ClusterProfileSpec{DisplayName: userProfile.DisplayName,
			ClusterManager: mcv1alpha1.ClusterManager{Name: userProfile.Manager}},
	})

	binding := &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: ns},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set},
	}
	create(t, c, binding)
	healthy := "True/ManagedClusterAvailable"
	want := map[string]profile{
		"cp-1":    hubProfile("cp-1", "v1.37.2", healthy),
		"cp-2":    hubProfile("cp-2", "v1.36.5", healthy),
		"cp-3":    hubProfile("cp-3", "v1.37.2", healthy),
		"cp-user": userProfile,
	}

	t.Run("binding a set gives a profile per member cluster", func(t *testing.T) {
		waitProfiles(t, c, ns, want)
	})

	t.Run("ControlPlaneHealthy follows the cluster's Available condition", func(t *testing.T) {
		updateCluster(t, c, "cp-1", func(mc *clusterv1.ManagedCluster) {
			meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
				Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionFalse,
				Reason: "ManagedClusterKubeAPIServerUnavailable", Message: "the API server's health probe failed",
			})
		}, true)
		want["cp-1"] = hubProfile("cp-1", "v1.37.2", "False/ManagedClusterKubeAPIServerUnavailable")
		waitProfiles(t, c, ns, want)
		p := &mcv1alpha1.ClusterProfile{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cp-1"}, p); err != nil {
			t.Fatal(err)
		}
		cond := meta.FindStatusCondition(p.Status.Conditions, mcv1alpha1.ClusterConditionControlPlaneHealthy)
		if cond.Message != "the API server's health probe failed" || cond.ObservedGeneration != p.Generation {
			t.Errorf("ControlPlaneHealthy = %+v, want the cluster's message, observed at generation %d", cond, p.Generation)
		}
	})

	t.Run("a cluster that leaves the set loses its profile", func(t *testing.T) {
		updateCluster(t, c, "cp-2", func(mc *clusterv1.ManagedCluster) { mc.Labels[clusterv1beta2.ClusterSetLabel] = other }, false)
		delete(want, "cp-2")
		waitProfiles(t, c, ns, want)
	})

	t.Run("a deleted cluster loses its profile", func(t *testing.T) {
		if err := c.Delete(context.Background(), &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cp-3"}}); err != nil {
			t.Fatal(err)
		}
		delete(want, "cp-3")
		waitProfiles(t, c, ns, want)
	})

	t.Run("deleting the binding deletes the hub's profiles only", func(t *testing.T) {
		if err := c.Delete(context.Background(), binding); err != nil {
			t.Fatal(err)
		}
		waitProfiles(t, c, ns, map[string]profile{"cp-user": userProfile})
		// The controller has caught up by now; the user's profile must still be there a moment later.
		time.Sleep(time.Second)
		waitProfiles(t, c, ns, map[string]profile{"cp-user": userProfile})
	})
}
