package fence

import (
	"context"
	"maps"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

// childJob is a Job named name in ns carrying the label of the JobSet train, controlled by the
// JobSet of UID controller when that is not empty (as the JobSet controller makes them).
func childJob(ns, name string, controller types.UID) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name),
		Labels: map[string]string{"jobset.sigs.k8s.io/jobset-name": "train"}}}
	if controller != "" {
		j.OwnerReferences = []metav1.OwnerReference{{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet", Name: "train",
			UID: controller, Controller: ptr.To(true)}}
	}
	return j
}

// The pods of a suspended JobSet are found through its Jobs: a pod whose Job the JobSet
// controls is deleted; the pods of a Job that only carries the JobSet's label, or that names the
// JobSet's UID from another namespace, are never touched.
func TestHurryFollowsAJobSetToItsPods(t *testing.T) {
	var jobSetKind fencing.Kind
	for _, k := range fencing.Kinds {
		if k.Resource == "jobsets" {
			jobSetKind = k
		}
	}
	js := object("jobset.x-k8s.io/v1alpha2", "JobSet", "train", map[string]string{fencing.LabelMultiKueueOrigin: "flotilla"}, nil,
		map[string]any{"suspend": true})
	uid := js.GetUID()
	objs := []runtime.Object{
		childJob("ml", "train-workers-0", uid), // the JobSet's own Job
		jobPod("ml", "train-workers-0-0", "train-workers-0", nil, true),
		childJob("other", "train-elsewhere", uid), // names the UID from another namespace
		jobPod("other", "train-elsewhere-0", "train-elsewhere", nil, true),
		childJob("ml", "train-labeled", ""), // carries the label only
		jobPod("ml", "train-labeled-0", "train-labeled", nil, true),
	}
	mc := gpu1()
	hub := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(mc.DeepCopy()).Build()
	fl := spokeFleet(t, hub, mc, []runtime.Object{js}, kubefake.NewClientset(objs...))
	graces := fl.podGraces()

	e := &episode{At: t0, LastRenewed: t0, Timing: fencing.Default}
	n, err := fl.f.hurryAll(context.Background(), []fenced{{Kind: jobSetKind, Obj: js}}, e)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"train-workers-0-0"}, slices.Sorted(maps.Keys(graces))); diff != "" {
		t.Errorf("pods deleted (-want +got):\n%s", diff)
	}
	if n != 1 || !e.hurried[uid] {
		t.Errorf("hurryAll = %d pods, hurried[JobSet] = %v; want 1 and true", n, e.hurried[uid])
	}
	left, err := fl.kube.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range left.Items {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	sort.Strings(names)
	if diff := cmp.Diff([]string{"ml/train-labeled-0", "other/train-elsewhere-0"}, names); diff != "" {
		t.Errorf("pods left (-want +got):\n%s", diff)
	}
}
