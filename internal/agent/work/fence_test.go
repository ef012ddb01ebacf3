package work

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

type fakeFence struct {
	fenced   bool
	episodes int64
}

func (f *fakeFence) Fenced() bool    { return f.fenced }
func (f *fakeFence) Episodes() int64 { return f.episodes }

func TestFenceGate(t *testing.T) {
	fenced := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "gpu-1", UID: "u1",
		Annotations: map[string]string{fencing.AnnotationWorkFenced: "true"}}}
	plain := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "serve", Namespace: "gpu-1", UID: "u2"}}
	replaced := fenced.DeepCopy()
	replaced.UID = "u3"
	tests := map[string]struct {
		work     *workv1.ManifestWork
		onHub    *workv1.ManifestWork
		fence    fakeFence
		wantWait bool
	}{
		"plain work while fenced":          {work: plain, fence: fakeFence{fenced: true}},
		"fenced work while fenced":         {work: fenced, onHub: fenced, fence: fakeFence{fenced: true}, wantWait: true},
		"fenced work, never fenced":        {work: fenced, onHub: fenced},
		"after a fence, still on the hub":  {work: fenced, onHub: fenced, fence: fakeFence{episodes: 1}},
		"after a fence, gone from the hub": {work: fenced, fence: fakeFence{episodes: 1}, wantWait: true},
		"after a fence, another work now":  {work: fenced, onHub: replaced, fence: fakeFence{episodes: 1}, wantWait: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme.Scheme)
			if tc.onHub != nil {
				b = b.WithObjects(tc.onHub.DeepCopy())
			}
			r := &Reconciler{Fence: &tc.fence, HubReader: b.Build()}
			wait, err := r.fenceGate(context.Background(), tc.work)
			if err != nil {
				t.Fatal(err)
			}
			if wait != tc.wantWait {
				t.Errorf("wait = %v, want %v", wait, tc.wantWait)
			}
		})
	}
}

func TestMarkFenced(t *testing.T) {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "train", Annotations: map[string]string{fencing.AnnotationWorkFenced: "true"}}}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j", "labels": map[string]any{"app": "x"}}}}
	ms := []manifest{{Obj: obj}, {Err: errBad}}
	markFenced(w, ms)
	if diff := cmp.Diff(map[string]string{"app": "x", fencing.LabelFenced: "true"}, obj.GetLabels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{fencing.AnnotationWork: "train"}, obj.GetAnnotations()); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	other := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j"}}}
	markFenced(&workv1.ManifestWork{}, []manifest{{Obj: other}})
	if other.GetLabels() != nil {
		t.Errorf("a work that is not fenced marked its objects: %v", other.GetLabels())
	}
}

var errBad = errString("bad manifest")

type errString string

func (e errString) Error() string { return string(e) }
