package addontemplate

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// TestApplyWork: the work is written when the rendering changes, not when the API server's
// defaults make the stored spec differ from the rendered one, and never when the hub did not make it.
func TestApplyWork(t *testing.T) {
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "spoke-1", Name: "gpu", UID: "u1"}}
	render := func(image string) *Rendered {
		r, err := Render(Input{Cluster: "spoke-1", Addon: "gpu", Template: templateOf(kubeClient, agentDeployment),
			Config: config(func(s *addonv1alpha1.AddOnDeploymentConfigSpec) {
				s.Registries = []addonv1alpha1.ImageMirror{{Source: "quay.io/flotilla", Mirror: image}}
			})})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	defaulted := func(w *workv1.ManifestWork) { // as the API server stores it
		for i := range w.Spec.ManifestConfigs {
			w.Spec.ManifestConfigs[i].FeedbackScrapeType = workv1.FeedbackPollType
		}
	}
	cases := map[string]struct {
		existing  func() *workv1.ManifestWork
		render    *Rendered
		wantWrite bool
		wantErr   string
	}{
		"created": {render: render("m.io"), wantWrite: true},
		"same rendering, defaults added by the API server": {
			existing: func() *workv1.ManifestWork { w, _ := desiredWork(mca, render("m.io")); defaulted(w); return w },
			render:   render("m.io")},
		"new rendering": {
			existing: func() *workv1.ManifestWork { w, _ := desiredWork(mca, render("m.io")); defaulted(w); return w },
			render:   render("other.io"), wantWrite: true},
		"not the hub's": {
			existing: func() *workv1.ManifestWork {
				return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "spoke-1", Name: WorkName("gpu")}}
			},
			render:  render("m.io"),
			wantErr: "ManifestWork spoke-1/addon-gpu-deploy-0 exists and was not made by the hub for this add-on: delete or rename it"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme.Scheme)
			rv := ""
			if tc.existing != nil {
				b = b.WithObjects(tc.existing())
			}
			c := b.Build()
			r := &Reconciler{Client: c}
			if tc.existing != nil {
				w := &workv1.ManifestWork{}
				if err := c.Get(context.Background(), client.ObjectKey{Namespace: "spoke-1", Name: WorkName("gpu")}, w); err != nil {
					t.Fatal(err)
				}
				rv = w.ResourceVersion
			}
			_, err := r.applyWork(context.Background(), mca, tc.render)
			var refused *refusedError
			gotErr := ""
			if errors.As(err, &refused) {
				gotErr = err.Error()
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			w := &workv1.ManifestWork{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "spoke-1", Name: WorkName("gpu")}, w); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantWrite, w.ResourceVersion != rv); diff != "" {
				t.Errorf("written (-want +got):\n%s", diff)
			}
		})
	}
}
