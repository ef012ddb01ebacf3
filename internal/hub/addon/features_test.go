package addon

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
)

// featureAddOn is the ManagedClusterAddOn name in cluster c1 with Available at status ("" for no
// condition).
func featureAddOn(name string, status metav1.ConditionStatus) addonv1alpha1.ManagedClusterAddOn {
	m := addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: name}}
	if status != "" {
		m.Status.Conditions = []metav1.Condition{{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: status, Reason: "R"}}
	}
	return m
}

func TestFeatureLabelValue(t *testing.T) {
	cases := map[string]struct {
		status metav1.ConditionStatus
		want   string
	}{
		"Available True":         {metav1.ConditionTrue, FeatureAvailable},
		"Available False":        {metav1.ConditionFalse, FeatureUnhealthy},
		"Available Unknown":      {metav1.ConditionUnknown, FeatureUnreachable},
		"no Available condition": {"", FeatureUnreachable},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := featureAddOn("gpu", tc.status)
			if diff := cmp.Diff(tc.want, FeatureLabelValue(&m)); diff != "" {
				t.Errorf("label value (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFeatureLabelChanges(t *testing.T) {
	deleting := featureAddOn("old", metav1.ConditionTrue)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	deleting.Finalizers = []string{"x"}
	cases := map[string]struct {
		labels map[string]string
		addons []addonv1alpha1.ManagedClusterAddOn
		want   map[string]*string
	}{
		"new add-ons get their labels": {
			labels: map[string]string{"env": "prod"},
			addons: []addonv1alpha1.ManagedClusterAddOn{featureAddOn("flower-addon", metav1.ConditionTrue), featureAddOn("gpu", metav1.ConditionFalse)},
			want: map[string]*string{
				FeatureLabelPrefix + "flower-addon": ptr.To(FeatureAvailable),
				FeatureLabelPrefix + "gpu":          ptr.To(FeatureUnhealthy),
			},
		},
		"up to date: nothing": {
			labels: map[string]string{FeatureLabelPrefix + "gpu": FeatureAvailable},
			addons: []addonv1alpha1.ManagedClusterAddOn{featureAddOn("gpu", metav1.ConditionTrue)},
			want:   map[string]*string{},
		},
		"a value that changed": {
			labels: map[string]string{FeatureLabelPrefix + "gpu": FeatureAvailable},
			addons: []addonv1alpha1.ManagedClusterAddOn{featureAddOn("gpu", metav1.ConditionUnknown)},
			want:   map[string]*string{FeatureLabelPrefix + "gpu": ptr.To(FeatureUnreachable)},
		},
		"an add-on deleted or being deleted loses its label; other labels stay": {
			labels: map[string]string{
				FeatureLabelPrefix + "gone": FeatureAvailable, FeatureLabelPrefix + "old": FeatureAvailable,
				"feature.open-cluster-management.io/other": "x", "env": "prod",
			},
			addons: []addonv1alpha1.ManagedClusterAddOn{deleting},
			want:   map[string]*string{FeatureLabelPrefix + "gone": nil, FeatureLabelPrefix + "old": nil},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, featureLabelChanges(tc.labels, tc.addons)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFeatureLabelReconcile: the reconciler patches only the feature labels, and leaves alone a
// cluster whose agent has not reported yet.
func TestFeatureLabelReconcile(t *testing.T) {
	available := []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "R"}}
	cases := map[string]struct {
		conditions []metav1.Condition
		want       map[string]string
	}{
		"reported: labels set, others kept": {
			conditions: available,
			want:       map[string]string{"env": "prod", FeatureLabelPrefix + "gpu": FeatureAvailable},
		},
		"not reported yet: left as it is": {
			want: map[string]string{"env": "prod", FeatureLabelPrefix + "stale": FeatureAvailable},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cluster := &clusterv1.ManagedCluster{
				ObjectMeta: metav1.ObjectMeta{Name: "c1", Labels: map[string]string{"env": "prod", FeatureLabelPrefix + "stale": FeatureAvailable}},
				Status:     clusterv1.ManagedClusterStatus{Conditions: tc.conditions},
			}
			mca := featureAddOn("gpu", metav1.ConditionTrue)
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cluster, &mca).WithStatusSubresource(cluster, &mca).Build()
			r := &FeatureLabelReconciler{Client: c}
			if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "c1"}}); err != nil {
				t.Fatal(err)
			}
			got := &clusterv1.ManagedCluster{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: "c1"}, got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}
