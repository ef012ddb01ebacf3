//go:build integration

package clusterset

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
	"github.com/flotilla/flotilla/internal/hub/clusterset"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const wait = 30 * time.Second

func cluster(name string, labels map[string]string) *clusterv1.ManagedCluster {
	return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func labelSet(name string) *clusterv1beta2.ManagedClusterSet {
	return &clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.ExclusiveClusterSetLabel,
		}},
	}
}

func selectorSet(name string, ls *metav1.LabelSelector) *clusterv1beta2.ManagedClusterSet {
	return &clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.LabelSelector, LabelSelector: ls,
		}},
	}
}

// describe shows a condition as status/reason: message, or "missing".
func describe(conds []metav1.Condition, typ string) string {
	c := meta.FindStatusCondition(conds, typ)
	if c == nil {
		return "missing"
	}
	return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
}

// waitEmpty waits until set's ClusterSetEmpty condition has the given status and message, for
// the set's current generation.
func waitEmpty(t *testing.T, c client.Client, set string, status metav1.ConditionStatus, message string) {
	t.Helper()
	want := fmt.Sprintf("%s/%s: %s", status, map[metav1.ConditionStatus]string{
		metav1.ConditionTrue: clusterset.ReasonNoClusterMatched, metav1.ConditionFalse: clusterset.ReasonClustersSelected,
		metav1.ConditionUnknown: clusterset.ReasonInvalidClusterSelector,
	}[status], message)
	testenv.WaitFor(t, wait, fmt.Sprintf("ManagedClusterSet %s to be %s", set, want), func(ctx context.Context) (bool, string, error) {
		s := &clusterv1beta2.ManagedClusterSet{}
		if err := c.Get(ctx, client.ObjectKey{Name: set}, s); err != nil {
			return false, "", err
		}
		got := describe(s.Status.Conditions, clusterv1beta2.ManagedClusterSetConditionEmpty)
		cond := meta.FindStatusCondition(s.Status.Conditions, clusterv1beta2.ManagedClusterSetConditionEmpty)
		return got == want && cond.ObservedGeneration == s.Generation, got, nil
	})
}

// members lists the hub's clusters and returns the members of set by clusterset.Members.
func members(t *testing.T, c client.Client, set string) []string {
	t.Helper()
	ctx := context.Background()
	s := &clusterv1beta2.ManagedClusterSet{}
	if err := c.Get(ctx, client.ObjectKey{Name: set}, s); err != nil {
		t.Fatal(err)
	}
	l := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, l); err != nil {
		t.Fatal(err)
	}
	m, err := clusterset.Members(s, l.Items)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func setLabels(t *testing.T, c client.Client, name string, change func(map[string]string)) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, mc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFromWithOptions(mc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if mc.Labels == nil {
		mc.Labels = map[string]string{}
	}
	change(mc.Labels)
	if err := c.Patch(context.Background(), mc, patch); err != nil {
		t.Fatal(err)
	}
}

func clusterLabel(ctx context.Context, c client.Client, name string) (string, bool, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return "", false, err
	}
	v, ok := mc.Labels[clusterv1beta2.ClusterSetLabel]
	return v, ok, nil
}

func TestDefaultSetsAndLabel(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := hubClient(t, env)
	startControllers(t, env)
	// Clusters belong to the whole test, not to the step that creates them.
	outer := t

	t.Run("default and global sets appear", func(t *testing.T) {
		want := map[string]clusterv1beta2.ManagedClusterSelector{}
		for _, s := range clusterset.DefaultSetSpecs() {
			want[s.Name] = s.Spec.ClusterSelector
		}
		testenv.WaitFor(t, wait, "sets default and global", func(ctx context.Context) (bool, string, error) {
			got := map[string]clusterv1beta2.ManagedClusterSelector{}
			for name := range want {
				s := &clusterv1beta2.ManagedClusterSet{}
				if err := c.Get(ctx, client.ObjectKey{Name: name}, s); err != nil {
					return false, "", client.IgnoreNotFound(err)
				}
				got[name] = s.Spec.ClusterSelector
			}
			diff := cmp.Diff(want, got)
			return diff == "", "(-want +got)\n" + diff, nil
		})
	})

	t.Run("a new cluster gets the default label; a set label is kept", func(t *testing.T) {
		create(outer, c, cluster("dl-bare", map[string]string{"env": "test"}))
		create(outer, c, cluster("dl-own", map[string]string{clusterv1beta2.ClusterSetLabel: "dl-elsewhere"}))
		create(outer, c, cluster("dl-empty", map[string]string{clusterv1beta2.ClusterSetLabel: ""}))
		testenv.WaitFor(t, wait, "dl-bare to get the default clusterset label", func(ctx context.Context) (bool, string, error) {
			v, ok, err := clusterLabel(ctx, c, "dl-bare")
			return v == clusterset.DefaultSetName, fmt.Sprintf("label %q present=%v", v, ok), err
		})
		// The controller has caught up with all three creations by now; give it a moment more.
		time.Sleep(time.Second)
		for name, want := range map[string]string{"dl-own": "dl-elsewhere", "dl-empty": ""} {
			if v, ok, err := clusterLabel(context.Background(), c, name); err != nil || !ok || v != want {
				t.Errorf("cluster %s: clusterset label %q present=%v (err %v), want %q kept", name, v, ok, err, want)
			}
		}
		if got := members(t, c, clusterset.DefaultSetName); !contains(got, "dl-bare") || contains(got, "dl-own") {
			t.Errorf("members of default = %v, want dl-bare and not dl-own", got)
		}
		n := len(members(t, c, clusterset.DefaultSetName))
		waitEmpty(t, c, clusterset.DefaultSetName, metav1.ConditionFalse, fmt.Sprintf("%d ManagedCluster%s selected", n, plural(n)))
	})

	t.Run("a removed label comes back as default", func(t *testing.T) {
		setLabels(t, c, "dl-own", func(l map[string]string) { delete(l, clusterv1beta2.ClusterSetLabel) })
		testenv.WaitFor(t, wait, "dl-own to get the default clusterset label", func(ctx context.Context) (bool, string, error) {
			v, ok, err := clusterLabel(ctx, c, "dl-own")
			return v == clusterset.DefaultSetName, fmt.Sprintf("label %q present=%v", v, ok), err
		})
	})

	t.Run("global holds every cluster", func(t *testing.T) {
		l := &clusterv1.ManagedClusterList{}
		if err := c.List(context.Background(), l); err != nil {
			t.Fatal(err)
		}
		var all []string
		for _, mc := range l.Items {
			all = append(all, mc.Name)
		}
		if diff := cmp.Diff(all, members(t, c, clusterset.GlobalSetName)); diff != "" {
			t.Errorf("members of global (-want +got):\n%s", diff)
		}
		waitEmpty(t, c, clusterset.GlobalSetName, metav1.ConditionFalse, fmt.Sprintf("%d ManagedCluster%s selected", len(all), plural(len(all))))
	})
}

func TestMembershipByLabel(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := hubClient(t, env)
	startControllers(t, env)
	const set = "lbl-blue"
	create(t, c, labelSet(set))

	waitEmpty(t, c, set, metav1.ConditionTrue,
		"no ManagedCluster selected: label a cluster cluster.open-cluster-management.io/clusterset=lbl-blue to add it")

	create(t, c, cluster("lbl-1", map[string]string{clusterv1beta2.ClusterSetLabel: set}))
	waitEmpty(t, c, set, metav1.ConditionFalse, "1 ManagedCluster selected")
	create(t, c, cluster("lbl-2", map[string]string{clusterv1beta2.ClusterSetLabel: set}))
	create(t, c, cluster("lbl-other", map[string]string{clusterv1beta2.ClusterSetLabel: "lbl-red"}))
	waitEmpty(t, c, set, metav1.ConditionFalse, "2 ManagedClusters selected")
	if diff := cmp.Diff([]string{"lbl-1", "lbl-2"}, members(t, c, set)); diff != "" {
		t.Errorf("members of %s (-want +got):\n%s", set, diff)
	}

	// Leaving by relabeling: the set left behind is counted again.
	setLabels(t, c, "lbl-1", func(l map[string]string) { l[clusterv1beta2.ClusterSetLabel] = "lbl-red" })
	waitEmpty(t, c, set, metav1.ConditionFalse, "1 ManagedCluster selected")
	// Leaving by deletion.
	if err := c.Delete(context.Background(), cluster("lbl-2", nil)); err != nil {
		t.Fatal(err)
	}
	waitEmpty(t, c, set, metav1.ConditionTrue,
		"no ManagedCluster selected: label a cluster cluster.open-cluster-management.io/clusterset=lbl-blue to add it")

	// A set created after its clusters were labeled counts them at once.
	create(t, c, labelSet("lbl-red"))
	waitEmpty(t, c, "lbl-red", metav1.ConditionFalse, "2 ManagedClusters selected")
}

func TestMembershipBySelector(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := hubClient(t, env)
	startControllers(t, env)
	const set, key = "sel-t4", "flotilla.test/accelerator"
	create(t, c, selectorSet(set, &metav1.LabelSelector{MatchLabels: map[string]string{key: "t4"}}))

	waitEmpty(t, c, set, metav1.ConditionTrue,
		"no ManagedCluster selected: no cluster has labels matching spec.clusterSelector.labelSelector flotilla.test/accelerator=t4")

	create(t, c, cluster("sel-1", map[string]string{key: "t4"}))
	create(t, c, cluster("sel-2", map[string]string{key: "a100"}))
	waitEmpty(t, c, set, metav1.ConditionFalse, "1 ManagedCluster selected")
	if diff := cmp.Diff([]string{"sel-1"}, members(t, c, set)); diff != "" {
		t.Errorf("members of %s (-want +got):\n%s", set, diff)
	}
	// Joining by a label change.
	setLabels(t, c, "sel-2", func(l map[string]string) { l[key] = "t4" })
	waitEmpty(t, c, set, metav1.ConditionFalse, "2 ManagedClusters selected")
	// Leaving by a label change.
	setLabels(t, c, "sel-1", func(l map[string]string) { delete(l, key) })
	setLabels(t, c, "sel-2", func(l map[string]string) { l[key] = "a100" })
	waitEmpty(t, c, set, metav1.ConditionTrue,
		"no ManagedCluster selected: no cluster has labels matching spec.clusterSelector.labelSelector flotilla.test/accelerator=t4")

	// The API accepts any operator; the set says which field is wrong.
	create(t, c, selectorSet("sel-bad", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: key, Operator: "Near", Values: []string{"t4"}},
	}}))
	testenv.WaitFor(t, wait, "sel-bad to report its invalid selector", func(ctx context.Context) (bool, string, error) {
		s := &clusterv1beta2.ManagedClusterSet{}
		if err := c.Get(ctx, client.ObjectKey{Name: "sel-bad"}, s); err != nil {
			return false, "", err
		}
		cond := meta.FindStatusCondition(s.Status.Conditions, clusterv1beta2.ManagedClusterSetConditionEmpty)
		return cond != nil && cond.Status == metav1.ConditionUnknown && cond.Reason == clusterset.ReasonInvalidClusterSelector,
			describe(s.Status.Conditions, clusterv1beta2.ManagedClusterSetConditionEmpty), nil
	})
}

func TestBindingFollowsSet(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := hubClient(t, env)
	startControllers(t, env)
	ns := env.Namespace(t, env.Hub)
	const set = "bind-later"
	create(t, c, &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: ns},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set},
	})
	waitBound := func(want string) {
		t.Helper()
		testenv.WaitFor(t, wait, "binding "+ns+"/"+set+" to be "+want, func(ctx context.Context) (bool, string, error) {
			b := &clusterv1beta2.ManagedClusterSetBinding{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: set}, b); err != nil {
				return false, "", err
			}
			got := describe(b.Status.Conditions, clusterv1beta2.ClusterSetBindingBoundType)
			return got == want, got, nil
		})
	}
	notFound := fmt.Sprintf("False/%s: ManagedClusterSet %s does not exist: create it to bind it to namespace %s, or delete this binding",
		clusterset.ReasonClusterSetNotFound, set, ns)

	waitBound(notFound)
	create(t, c, labelSet(set))
	waitBound(fmt.Sprintf("True/%s: ManagedClusterSet %s is bound to namespace %s", clusterset.ReasonClusterSetBound, set, ns))
	if err := c.Delete(context.Background(), labelSet(set)); err != nil {
		t.Fatal(err)
	}
	waitBound(notFound)
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
