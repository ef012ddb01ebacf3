//go:build integration

package bench

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/bench/floor"
)

// addonFloorTargets are the hub's resources an add-on's install writes, for the floor probe:
// each cluster's ManagedClusterAddOn (its status, from the add-on manager's controllers) and its
// agent's ManifestWork (created by the hub; finalizer and status from the work agent).
func addonFloorTargets() []floor.Target {
	return []floor.Target{
		{Resource: "managedclusteraddons",
			New: func(i int) client.Object {
				return &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: floorNamespace, Name: fmt.Sprintf("floor-%05d", i)}}
			},
			SetStatus: func(o client.Object, round int) {
				m := o.(*addonv1alpha1.ManagedClusterAddOn)
				meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable,
					Status: metav1.ConditionTrue, Reason: "ProbeAvailable", Message: fmt.Sprintf("round %d", round)})
			}},
		{Resource: "manifestworks",
			New: func(i int) client.Object {
				w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: floorNamespace, Name: fmt.Sprintf("floor-%05d", i)}}
				w.Spec.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(
					`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"floor","name":"bench-addon"},"data":{"cluster":"floor"}}`)}}}
				return w
			},
			SetStatus: func(o client.Object, round int) {
				w := o.(*workv1.ManifestWork)
				meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1.WorkApplied,
					Status: metav1.ConditionTrue, Reason: "AppliedManifestWorkComplete", Message: fmt.Sprintf("round %d", round)})
			}},
		eventTarget(),
	}
}
