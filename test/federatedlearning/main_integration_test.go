//go:build integration

package federatedlearning

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/federatedlearning"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Spokes: 1, CRDs: true})) }

const (
	wait      = 60 * time.Second
	dataClaim = "federated-learning-sample.client-data"
)

// fleet is a test's hub with a bound set and clusters that have no agent: the test plays them.
type fleet struct {
	env *testenv.Env
	c   client.Client
	set *testenv.BoundSet
}

func start(t *testing.T, set string) *fleet {
	t.Helper()
	return startWith(t, set, nil)
}

// startWith is start with the hub's options changed by mutate (when not nil).
func startWith(t *testing.T, set string, mutate func(*hub.Options)) *fleet {
	t.Helper()
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := env.HubClient(t)
	opts := testenv.TestHubOptions()
	if mutate != nil {
		mutate(&opts)
	}
	env.StartHub(t, opts)
	return &fleet{env: env, c: c, set: env.NewBoundSet(t, c, set)}
}

// cluster makes an accepted cluster of the set; claims, when given, are its reported claims
// (name to value), and flower says whether flower-addon is available there.
func (f *fleet) cluster(t *testing.T, name string, claims map[string]string, flower bool) {
	t.Helper()
	testenv.Create(t, f.c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	f.set.AcceptedCluster(t, name, nil)
	f.setClaims(t, name, claims)
	if flower {
		mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: federatedlearning.FlowerAddOn, Namespace: name}}
		testenv.Create(t, f.c, mca)
		f.addonAvailable(t, name, true)
	}
}

func (f *fleet) setClaims(t *testing.T, name string, claims map[string]string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := f.c.Get(context.Background(), client.ObjectKey{Name: name}, mc); err != nil {
			return err
		}
		mc.Status.ClusterClaims = nil
		// As if its agent had reported: the hub labels add-ons' availability only then.
		if meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) == nil {
			meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "Test"})
		}
		for _, k := range sortedKeys(claims) {
			mc.Status.ClusterClaims = append(mc.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: k, Value: claims[k]})
		}
		return f.c.Status().Update(context.Background(), mc)
	})
	if err != nil {
		t.Fatalf("setting the claims of %s: %v", name, err)
	}
}

// addonAvailable plays the work agent of flower-addon on a cluster: the hub renders the add-on
// (an AddOnTemplate) as ManifestWork addon-flower-addon-deploy-0, and the add-on is Available
// once that work reports its SuperNode Deployment ready.
func (f *fleet) addonAvailable(t *testing.T, cluster string, ok bool) {
	t.Helper()
	ready := int64(0)
	if ok {
		ready = 1
	}
	one := int64(1)
	testenv.WaitFor(t, wait, "flower-addon's ManifestWork on "+cluster, func(ctx context.Context) (bool, string, error) {
		w := &workv1.ManifestWork{}
		err := f.c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "addon-flower-addon-deploy-0"}, w)
		return err == nil, "", client.IgnoreNotFound(err)
	})
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		w := &workv1.ManifestWork{}
		if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: "addon-flower-addon-deploy-0"}, w); err != nil {
			return err
		}
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "Test", ObservedGeneration: w.Generation})
		w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{
			ResourceMeta: workv1.ManifestResourceMeta{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "flower-addon", Name: "flower-supernode"},
			Conditions:   []metav1.Condition{{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Now()}},
			StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{
				{Name: "ReadyReplicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: &ready}},
				{Name: "Replicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: &one}},
			}},
		}}
		return f.c.Status().Update(context.Background(), w)
	})
	if err != nil {
		t.Fatalf("reporting flower-addon on %s: %v", cluster, err)
	}
}

// flower is OCM's Flower sample's FederatedLearning, in the test's namespace: clients on
// clusters of the set that report the data claim.
func (f *fleet) flower(name string, min int32) *flv1alpha1.FederatedLearning {
	return &flv1alpha1.FederatedLearning{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.set.Namespace},
		Spec: flv1alpha1.FederatedLearningSpec{
			Framework: flv1alpha1.FrameworkFlower,
			Server:    flv1alpha1.ServerSpec{Image: "quay.io/example/flower-app-torch:latest", Rounds: 3, MinAvailableClients: min},
			Client: flv1alpha1.ClientSpec{Image: "quay.io/example/flower-app-torch:latest", Placement: clusterv1beta1.PlacementSpec{
				ClusterSets: []string{f.set.Set},
				Tolerations: testenv.NoAgentTolerations(),
				Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
					ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: dataClaim, Operator: metav1.LabelSelectorOpExists}}},
				}}},
			}},
		},
	}
}

// get reads fl again.
func (f *fleet) get(ctx context.Context, fl *flv1alpha1.FederatedLearning) (*flv1alpha1.FederatedLearning, error) {
	cur := &flv1alpha1.FederatedLearning{}
	err := f.c.Get(ctx, client.ObjectKeyFromObject(fl), cur)
	return cur, err
}

// waitStatus waits until cond holds of fl's status.
func (f *fleet) waitStatus(t *testing.T, fl *flv1alpha1.FederatedLearning, what string, cond func(*flv1alpha1.FederatedLearningStatus) bool) *flv1alpha1.FederatedLearning {
	t.Helper()
	var cur *flv1alpha1.FederatedLearning
	testenv.WaitFor(t, wait, what, func(ctx context.Context) (bool, string, error) {
		var err error
		if cur, err = f.get(ctx, fl); err != nil {
			return false, "", err
		}
		return cond(&cur.Status), describe(cur), nil
	})
	return cur
}

func describe(fl *flv1alpha1.FederatedLearning) string {
	s := fmt.Sprintf("phase %s: %s\n", fl.Status.Phase, fl.Status.Message)
	for _, c := range fl.Status.Conditions {
		s += fmt.Sprintf("  %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, c := range fl.Status.Clients {
		s += fmt.Sprintf("  client %s %s %s\n", c.Cluster, c.State, c.Reason)
	}
	return s
}

// worksNamed lists the namespaces holding a ManifestWork called name, sorted.
func (f *fleet) worksNamed(ctx context.Context, name string) ([]string, error) {
	l := &workv1.ManifestWorkList{}
	if err := f.c.List(ctx, l); err != nil {
		return nil, err
	}
	out := []string{}
	for _, w := range l.Items {
		if w.Name == name && w.DeletionTimestamp.IsZero() {
			out = append(out, w.Namespace)
		}
	}
	slices.Sort(out)
	return out, nil
}

// waitWorks waits until the ManifestWorks called name are in exactly the namespaces want.
func (f *fleet) waitWorks(t *testing.T, name string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	testenv.WaitFor(t, wait, fmt.Sprintf("ManifestWorks %s in %v", name, want), func(ctx context.Context) (bool, string, error) {
		got, err := f.worksNamed(ctx, name)
		diff := cmp.Diff(want, got)
		return diff == "", "(-want +got)\n" + diff + f.state(ctx), err
	})
}

// applied reports a ManifestWork as applied, as the cluster's agent would.
func (f *fleet) applied(t *testing.T, cluster, name string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		w := &workv1.ManifestWork{}
		if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: name}, w); err != nil {
			return err
		}
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "Test", ObservedGeneration: w.Generation})
		return f.c.Status().Update(context.Background(), w)
	})
	if err != nil {
		t.Fatalf("reporting %s/%s applied: %v", cluster, name, err)
	}
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func condition(st *flv1alpha1.FederatedLearningStatus, typ string) *metav1.Condition {
	return meta.FindStatusCondition(st.Conditions, typ)
}

// state describes the namespace's FederatedLearnings and Placements and the clusters' labels and
// claims, for failure messages.
func (f *fleet) state(ctx context.Context) string {
	s := "\n"
	fls := &flv1alpha1.FederatedLearningList{}
	if err := f.c.List(ctx, fls, client.InNamespace(f.set.Namespace)); err == nil {
		for i := range fls.Items {
			s += "FederatedLearning " + fls.Items[i].Name + ": " + describe(&fls.Items[i])
		}
	}
	ps := &clusterv1beta1.PlacementList{}
	if err := f.c.List(ctx, ps, client.InNamespace(f.set.Namespace)); err == nil {
		for _, p := range ps.Items {
			s += fmt.Sprintf("Placement %s: %d selected\n", p.Name, p.Status.NumberOfSelectedClusters)
			for _, c := range p.Status.Conditions {
				s += fmt.Sprintf("  %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
			}
		}
	}
	mcs := &clusterv1.ManagedClusterList{}
	if err := f.c.List(ctx, mcs); err == nil {
		for _, mc := range mcs.Items {
			s += fmt.Sprintf("cluster %s labels %v claims %v\n", mc.Name, mc.Labels, mc.Status.ClusterClaims)
		}
	}
	return s
}
