package resourceusage

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// entry is a managedFields entry of manager that owns the status ("status"), the hub's label
// ("label") or another label ("meta").
func entry(manager, owns string) metav1.ManagedFieldsEntry {
	fields := map[string]string{
		"status": `{"f:status":{"f:scores":{}}}`,
		"label":  `{"f:metadata":{"f:labels":{".":{},"f:` + builtinaddon.Label + `":{}}}}`,
		"meta":   `{"f:metadata":{"f:labels":{"f:team":{}}}}`,
	}[owns]
	return metav1.ManagedFieldsEntry{Manager: manager, APIVersion: clusterv1alpha1.GroupVersion.String(), Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

// score is the cluster c1's resource-usage-score with the hub's label (if hubs) and managedFields.
func score(hubs bool, fields ...metav1.ManagedFieldsEntry) *clusterv1alpha1.AddOnPlacementScore {
	s := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: clusterv1alpha1.ResourceUsageScoreName, ManagedFields: fields}}
	if hubs {
		s.Labels = map[string]string{builtinaddon.Label: Name}
	}
	return s
}

func TestOtherWriters(t *testing.T) {
	cases := map[string]struct {
		score *clusterv1alpha1.AddOnPlacementScore
		want  []string
	}{
		"the hub's, written by the hub": {
			score: score(true, entry(FieldManager, "label"), entry(FieldManager, "status")),
		},
		"the hub's, made before it named its manager": {
			score: score(true, entry("flotilla", "label"), entry("flotilla", "status"), entry(FieldManager, "status")),
		},
		"the hub's, and OCM's agent updated its status": {
			score: score(true, entry(FieldManager, "label"), entry(FieldManager, "status"), entry("resource-usage-collect-addon", "status")),
			want:  []string{"resource-usage-collect-addon"},
		},
		"someone labeled it (metadata only): not a writer of the score": {
			score: score(true, entry(FieldManager, "label"), entry("kubectl-label", "meta")),
		},
		"made by another writer": {
			score: score(false, entry("addon", "meta"), entry("addon", "status")),
			want:  []string{"addon"},
		},
		"another writer copied the hub's label": {
			score: score(true, entry("addon", "label"), entry("addon", "status"), entry("other", "status")),
			want:  []string{"other"},
		},
		"not the hub's, no record of who made it": {
			score: score(false),
			want:  []string{"unknown"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, otherWriters(tc.score)); diff != "" {
				t.Errorf("other writers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScoreConflict(t *testing.T) {
	hubs := score(true, entry(FieldManager, "label"), entry(FieldManager, "status"))
	ocms := score(true, entry(FieldManager, "label"), entry("agent", "status"))
	type want struct {
		Condition string
		Yield     bool
	}
	cases := map[string]struct {
		score        *clusterv1alpha1.AddOnPlacementScore
		ocmEnabled   bool
		hadCondition bool
		want         want
	}{
		"no score yet, alone":                    {want: want{Condition: "none"}},
		"the hub's score, alone":                 {score: hubs, want: want{Condition: "none"}},
		"OCM's add-on enabled too, no score yet": {ocmEnabled: true, want: want{Condition: "True/ResourceUsageCollectEnabled", Yield: true}},
		"OCM's add-on enabled, the hub's score":  {score: hubs, ocmEnabled: true, want: want{Condition: "True/ResourceUsageCollectEnabled", Yield: true}},
		"another writer writes the hub's score":  {score: ocms, want: want{Condition: "True/ScoreWrittenByOther", Yield: true}},
		"the conflict is over":                   {score: hubs, hadCondition: true, want: want{Condition: "False/NoScoreConflict"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, yield := scoreConflict("c1", tc.score, tc.ocmEnabled, tc.hadCondition)
			got := want{Condition: "none", Yield: yield}
			if c != nil {
				got.Condition = string(c.Status) + "/" + c.Reason
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	c, _ := scoreConflict("c1", nil, true, false)
	wantMessage := "OCM's add-on resource-usage-collect is enabled on this cluster too (ManagedClusterAddOn c1/resource-usage-collect), and both write " +
		"AddOnPlacementScore c1/resource-usage-score: the hub does not write it while resource-usage-collect is enabled, so placements see " +
		"resource-usage-collect's scores. Disable one of the two: delete ManagedClusterAddOn c1/resource-usage-collect " +
		"(then delete AddOnPlacementScore c1/resource-usage-score, and the hub writes its own), or c1/resource-usage."
	if diff := cmp.Diff(wantMessage, c.Message); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}

// TestReconcileYields: with OCM's resource-usage-collect enabled on the cluster, the hub writes
// no score and says why on its add-on; with another writer on its score, it leaves the score as
// that writer wrote it.
func TestReconcileYields(t *testing.T) {
	usage := gpuUsage("c1", 2, 4, map[int64]int32{4: 2})
	mine := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: Name}}
	ocm := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: builtinaddon.ResourceUsageCollect}}
	// Made by the hub, then written by OCM's agent (field manager "agent"); see writeAsOther.
	written := score(true)
	written.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "cpuAvailable", Value: 42}}
	cases := map[string]struct {
		objects       []client.Object
		other         *clusterv1alpha1.AddOnPlacementScore
		noUsage       bool
		wantCondition string
		wantScores    []clusterv1alpha1.AddOnPlacementScoreItem
		wantNoScore   bool
	}{
		"alone: the hub writes the score": {
			objects:       []client.Object{mine},
			wantCondition: "none",
		},
		"OCM's add-on enabled: no score, and the add-on says why": {
			objects:       []client.Object{mine, ocm},
			wantCondition: "True/ResourceUsageCollectEnabled",
			wantNoScore:   true,
		},
		"another writer on the score: left as it wrote it": {
			objects:       []client.Object{mine},
			other:         written,
			wantCondition: "True/ScoreWrittenByOther",
			wantScores:    written.Status.Scores,
		},
		"another writer on the score, the hub's figures gone: not deleted": {
			objects:       []client.Object{mine},
			other:         written,
			noUsage:       true,
			wantCondition: "True/ScoreWrittenByOther",
			wantScores:    written.Status.Scores,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// c1 is an accepted cluster in a namespace the hub made: only such figures count.
			objs := append(acceptedClusters("c1"), tc.objects...)
			if !tc.noUsage {
				objs = append(objs, usage.DeepCopy())
			}
			for i, o := range objs {
				objs[i] = o.DeepCopyObject().(client.Object)
			}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).WithReturnManagedFields().
				WithStatusSubresource(&addonv1alpha1.ManagedClusterAddOn{}, &clusterv1alpha1.AddOnPlacementScore{}).Build()
			r := &Reconciler{Client: c, all: make(chan event.GenericEvent, 16)}
			ctx := context.Background()
			if tc.other != nil {
				// The hub makes the score; the other writer updates its status, as OCM's agent does.
				o := tc.other.DeepCopy()
				o.Status = clusterv1alpha1.AddOnPlacementScoreStatus{}
				if err := c.Create(ctx, o, client.FieldOwner(FieldManager)); err != nil {
					t.Fatal(err)
				}
				o.Status = tc.other.Status
				if err := c.Status().Update(ctx, o, client.FieldOwner("agent")); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "c1", Name: "resource-usage"}}); err != nil {
				t.Fatal(err)
			}
			got := &addonv1alpha1.ManagedClusterAddOn{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "c1", Name: Name}, got); err != nil {
				t.Fatal(err)
			}
			cond := "none"
			if x := meta.FindStatusCondition(got.Status.Conditions, builtinaddon.ScoreConflictCondition); x != nil {
				cond = string(x.Status) + "/" + x.Reason
			}
			if diff := cmp.Diff(tc.wantCondition, cond); diff != "" {
				t.Errorf("ScoreConflict (-want +got):\n%s", diff)
			}
			s := &clusterv1alpha1.AddOnPlacementScore{}
			err := c.Get(ctx, client.ObjectKey{Namespace: "c1", Name: clusterv1alpha1.ResourceUsageScoreName}, s)
			switch {
			case tc.wantNoScore:
				if err == nil {
					t.Errorf("the hub wrote a score while OCM's add-on is enabled: %+v", s.Status.Scores)
				}
			case err != nil:
				t.Fatal(err)
			case tc.wantScores != nil:
				if diff := cmp.Diff(tc.wantScores, s.Status.Scores); diff != "" {
					t.Errorf("the other writer's scores were overwritten (-want +got):\n%s", diff)
				}
			case len(s.Status.Scores) == 0:
				t.Error("the hub wrote no scores")
			}
		})
	}
}
