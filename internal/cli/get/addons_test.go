package get

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// makeAddOn is a ManagedClusterAddOn of cluster with conditions; from names the
// ClusterManagementAddOn that controls it, "" for a user's.
func makeAddOn(cluster, name, from string, age time.Duration, conds ...metav1.Condition) client.Object {
	a := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name, CreationTimestamp: ago(age)}}
	if from != "" {
		a.OwnerReferences = []metav1.OwnerReference{{APIVersion: addonv1alpha1.GroupVersion.String(), Kind: "ClusterManagementAddOn",
			Name: from, UID: "u", Controller: ptr.To(true)}}
	}
	a.Status.Conditions = conds
	return a
}

func TestGetAddOns(t *testing.T) {
	addons := []client.Object{
		makeAddOn("gpu-east", "gpu-score", "gpu-score", 2*day,
			condition(addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionTrue),
			condition(addonv1alpha1.ManagedClusterAddOnConditionDegraded, metav1.ConditionFalse),
			condition(addonv1alpha1.ManagedClusterAddOnConditionProgressing, metav1.ConditionFalse)),
		makeAddOn("gpu-east", "kueue", "", time.Hour, condition(addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionFalse)),
		makeAddOn("gpu-west", "gpu-score", "gpu-score", 2*time.Minute),
	}
	cases := map[string]struct {
		args       []string
		wantOut    string
		wantErrOut string
	}{
		"of a cluster": {
			args: []string{"addons", "-c", "gpu-east"},
			wantOut: lines(
				"NAME        AVAILABLE   DEGRADED   PROGRESSING   INSTALLED-BY                       AGE",
				"gpu-score   True        False      False         ClusterManagementAddOn/gpu-score   2d",
				"kueue       False       -          -             user                               60m",
			),
		},
		"of every cluster, by a short name": {
			args: []string{"mca", "-A"},
			wantOut: lines(
				"NAMESPACE   NAME        AVAILABLE   DEGRADED   PROGRESSING   INSTALLED-BY                       AGE",
				"gpu-east    gpu-score   True        False      False         ClusterManagementAddOn/gpu-score   2d",
				"gpu-east    kueue       False       -          -             user                               60m",
				"gpu-west    gpu-score   Unknown     -          -             ClusterManagementAddOn/gpu-score   2m",
			),
		},
		"none on a cluster": {
			args:       []string{"addons", "-c", "edge-1"},
			wantErrOut: "No resources found in edge-1 namespace.\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			newClient, _ := fakeHub(interceptor.Funcs{}, addons...)
			out, errOut, err := runGet(newClient, tc.args...)
			if err != nil {
				t.Fatalf("get %v: %v", tc.args, err)
			}
			if diff := cmp.Diff(tc.wantOut, out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErrOut, errOut); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrintAddOnsScoreConflict: an add-on whose score has another writer gets a warning under
// the table, with the condition's message (what to do); others get none.
func TestPrintAddOnsScoreConflict(t *testing.T) {
	conflict := metav1.Condition{Type: builtinaddon.ScoreConflictCondition, Status: metav1.ConditionTrue, Reason: "ResourceUsageCollectEnabled",
		Message: "OCM's add-on resource-usage-collect is enabled on this cluster too; disable one of the two."}
	over := conflict
	over.Status, over.Reason = metav1.ConditionFalse, "NoScoreConflict"
	list := &addonv1alpha1.ManagedClusterAddOnList{Items: []addonv1alpha1.ManagedClusterAddOn{
		*makeAddOn("gpu-east", "resource-usage", "", time.Hour, conflict).(*addonv1alpha1.ManagedClusterAddOn),
		*makeAddOn("gpu-east", "resource-usage-collect", "", time.Hour).(*addonv1alpha1.ManagedClusterAddOn),
		*makeAddOn("gpu-west", "resource-usage", "", time.Hour, over).(*addonv1alpha1.ManagedClusterAddOn),
	}}
	var b strings.Builder
	if err := printAddOns(&b, list, clocktesting.NewFakePassiveClock(now), true); err != nil {
		t.Fatal(err)
	}
	want := lines(
		"NAMESPACE   NAME                     AVAILABLE   DEGRADED   PROGRESSING   INSTALLED-BY   AGE",
		"gpu-east    resource-usage           Unknown     -          -             user           60m",
		"gpu-east    resource-usage-collect   Unknown     -          -             user           60m",
		"gpu-west    resource-usage           Unknown     -          -             user           60m",
		"Warning: add-on resource-usage on cluster gpu-east: ScoreConflict (ResourceUsageCollectEnabled): OCM's add-on resource-usage-collect is enabled on this cluster too; disable one of the two.",
	)
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
