package webhook

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

func TestRegistrarEnsure(t *testing.T) {
	want := Configuration(Endpoint{URL: "https://127.0.0.1:9443"}, []byte("CA"))
	stale := Configuration(Endpoint{URL: "https://127.0.0.1:7777"}, []byte("old CA"))
	cases := map[string]struct {
		existing   []runtime.Object
		wantWrites []string
	}{
		"missing: created":                   {wantWrites: []string{"create"}},
		"another replica's: rewritten":       {existing: []runtime.Object{stale}, wantWrites: []string{"update"}},
		"already this replica's: left alone": {existing: []runtime.Object{want.DeepCopy()}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cs := fake.NewClientset(tc.existing...)
			r := &registrar{cs: cs, want: want}
			if _, err := r.ensure(context.Background(), func(string, ...any) {}); err != nil {
				t.Fatal(err)
			}
			var writes []string
			for _, a := range cs.Actions() {
				if a.GetVerb() != "get" {
					writes = append(writes, a.GetVerb())
				}
			}
			if diff := cmp.Diff(tc.wantWrites, writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			got, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), ConfigurationName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Webhooks, got.Webhooks); diff != "" {
				t.Errorf("webhooks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRegistrarKeeps: while it runs, the registrar puts back a deleted or changed configuration.
func TestRegistrarKeeps(t *testing.T) {
	want := Configuration(Endpoint{URL: "https://127.0.0.1:9443"}, []byte("CA"))
	cs := fake.NewClientset()
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	r := &registrar{cs: cs, want: want, started: func() error { return nil }, clock: clk, resync: DefaultResync}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start() = %v after the context ended, want nil", err)
		}
	}()
	api := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	// eventually polls the fake's store, ticking the fake clock so that a missed event cannot
	// hang the test.
	eventually := func(what string, ok func(*admissionregistrationv1.ValidatingWebhookConfiguration) bool) {
		t.Helper()
		for range 200 {
			got, err := api.Get(context.Background(), ConfigurationName, metav1.GetOptions{})
			if err == nil && ok(got) {
				return
			}
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			clk.Step(DefaultResync)
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("the registrar did not %s", what)
	}
	isWanted := func(got *admissionregistrationv1.ValidatingWebhookConfiguration) bool {
		return cmp.Equal(want.Webhooks, got.Webhooks)
	}
	eventually("write the configuration", isWanted)

	if err := api.Delete(context.Background(), ConfigurationName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("restore the deleted configuration", isWanted)

	changed := want.DeepCopy()
	changed.Webhooks[0].FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
	if _, err := api.Update(context.Background(), changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("restore the changed configuration", isWanted)
}
