//go:build integration

package workreplicaset

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/workreplicaset"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{CRDs: true})) }

const wait = 60 * time.Second

// fleet is a test's hub: an administrator's client, its bound set and namespace, and clusters
// with their namespaces.
type fleet struct {
	c   client.Client
	set *testenv.BoundSet
}

// start runs the hub as its generated roles and makes a cluster set bound into a new namespace.
func start(t *testing.T, set string) *fleet {
	t.Helper()
	s := testenv.StartHubWithSet(t, set)
	return &fleet{c: s.Client, set: s}
}

func configMap(name string) workv1.Manifest {
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: fmt.Appendf(nil,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default"},"data":{"k":"v"}}`, name)}}
}

// replicaSet makes a ManifestWorkReplicaSet of one ConfigMap over placement.
func (f *fleet) replicaSet(t *testing.T, name, placement string, strategy clusterv1alpha1.RolloutStrategy, policy workv1alpha1.CascadeDeletionPolicy) *workv1alpha1.ManifestWorkReplicaSet {
	t.Helper()
	s := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: f.set.Namespace, Name: name}, Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
		ManifestWorkTemplate:  workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{configMap("app")}}},
		PlacementRefs:         []workv1alpha1.LocalPlacementReference{{Name: placement, RolloutStrategy: strategy}},
		CascadeDeletionPolicy: policy,
	}}
	testenv.Create(t, f.c, s)
	return s
}

func setLabel(s *workv1alpha1.ManifestWorkReplicaSet) string { return s.Namespace + "." + s.Name }

// works lists the namespaces of the ManifestWorks carrying s's label, sorted.
func (f *fleet) works(ctx context.Context, s *workv1alpha1.ManifestWorkReplicaSet) ([]string, []workv1.ManifestWork, error) {
	l := &workv1.ManifestWorkList{}
	if err := f.c.List(ctx, l, client.MatchingLabels{workreplicaset.SetLabel: setLabel(s)}); err != nil {
		return nil, nil, err
	}
	got := []string{}
	for _, w := range l.Items {
		got = append(got, w.Namespace)
	}
	slices.Sort(got)
	return got, l.Items, nil
}

// waitWorks waits until the ManifestWorks labeled for s are in exactly the namespaces want.
func (f *fleet) waitWorks(t *testing.T, s *workv1alpha1.ManifestWorkReplicaSet, want ...string) []workv1.ManifestWork {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	var items []workv1.ManifestWork
	testenv.WaitFor(t, wait, fmt.Sprintf("the ManifestWorks of %s in %v", s.Name, want), func(ctx context.Context) (bool, string, error) {
		got, all, err := f.works(ctx, s)
		items = all
		diff := cmp.Diff(want, got)
		return diff == "", fmt.Sprintf("(-want +got)\n%s\n%s", diff, f.status(ctx, s)), err
	})
	return items
}

// state is what the test, playing the agent, reports for a ManifestWork.
type state int

const (
	succeeded state = iota
	progressing
	failing
)

// report writes the conditions an agent would for the work's current generation.
func (f *fleet) report(t *testing.T, cluster, name string, st state) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		w := &workv1.ManifestWork{}
		if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: name}, w); err != nil {
			return err
		}
		set := func(typ string, ok bool) {
			s := metav1.ConditionFalse
			if ok {
				s = metav1.ConditionTrue
			}
			meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: typ, Status: s, Reason: "Test", ObservedGeneration: w.Generation})
		}
		set(workv1.WorkApplied, true)
		set(workv1.WorkAvailable, st == succeeded)
		set(workv1.WorkProgressing, st != succeeded)
		set(workv1.WorkDegraded, st == failing)
		return f.c.Status().Update(context.Background(), w)
	})
	if err != nil {
		t.Fatalf("reporting the status of ManifestWork %s/%s: %v", cluster, name, err)
	}
}

// waitConditions waits until s's conditions, for its generation, are want (type -> Status/Reason)
// and check (if any) accepts its status.
func (f *fleet) waitConditions(t *testing.T, s *workv1alpha1.ManifestWorkReplicaSet, want map[string]string, check func(*workv1alpha1.ManifestWorkReplicaSet) string) *workv1alpha1.ManifestWorkReplicaSet {
	t.Helper()
	got := &workv1alpha1.ManifestWorkReplicaSet{}
	testenv.WaitFor(t, wait, fmt.Sprintf("the conditions of %s", s.Name), func(ctx context.Context) (bool, string, error) {
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
			return false, "", err
		}
		conds := map[string]string{}
		for typ := range want {
			c := meta.FindStatusCondition(got.Status.Conditions, typ)
			switch {
			case c == nil:
				conds[typ] = "missing"
			case c.ObservedGeneration != got.Generation:
				conds[typ] = fmt.Sprintf("stale (generation %d, set at %d)", c.ObservedGeneration, got.Generation)
			default:
				conds[typ] = string(c.Status) + "/" + c.Reason
			}
		}
		diff := cmp.Diff(want, conds)
		more := ""
		if diff == "" && check != nil {
			more = check(got)
		}
		return diff == "" && more == "", fmt.Sprintf("(-want +got)\n%s%s\n%s", diff, more, f.status(ctx, s)), nil
	})
	return got
}

// status shows a set's status, for failure messages.
func (f *fleet) status(ctx context.Context, s *workv1alpha1.ManifestWorkReplicaSet) string {
	got := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
		return err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "set generation %d, summary %+v", got.Generation, got.Status.Summary)
	for _, c := range got.Status.Conditions {
		fmt.Fprintf(&b, "; %s=%s/%s (generation %d): %s", c.Type, c.Status, c.Reason, c.ObservedGeneration, c.Message)
	}
	return b.String()
}

func message(s *workv1alpha1.ManifestWorkReplicaSet, typ string) string {
	if c := meta.FindStatusCondition(s.Status.Conditions, typ); c != nil {
		return c.Message
	}
	return ""
}
