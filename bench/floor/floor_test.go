package floor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestRatesTime(t *testing.T) {
	rates := Rates{{"POST", "placements"}: 500, {"PATCH", "placements/status"}: 1000}
	tests := []struct {
		name    string
		writes  Writes
		want    time.Duration
		wantErr string
	}{
		{name: "none", writes: Writes{}, want: 0},
		{name: "one kind", writes: Writes{{"POST", "placements"}: 1000}, want: 2 * time.Second},
		{name: "kinds add up", writes: Writes{{"POST", "placements"}: 1000, {"PATCH", "placements/status"}: 500}, want: 2500 * time.Millisecond},
		{name: "a zero count needs no rate", writes: Writes{{"POST", "placements"}: 500, {"PUT", "events"}: 0}, want: time.Second},
		{name: "a kind without a rate is named", writes: Writes{{"POST", "placements"}: 1, {"POST", "events"}: 3, {"PUT", "leases"}: 1},
			wantErr: "no write rate measured for POST events, PUT leases: add a Target"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rates.Time(tc.writes)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Time (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRatesSplit(t *testing.T) {
	rates := Rates{{"POST", "placements"}: 500, {"PUT", "events"}: 0}
	covered, missing := rates.Split(Writes{{"POST", "placements"}: 3, {"PUT", "events"}: 2, {"PATCH", "leases"}: 1})
	if diff := cmp.Diff(Writes{{"POST", "placements"}: 3}, covered); diff != "" {
		t.Errorf("covered (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Writes{{"PUT", "events"}: 2, {"PATCH", "leases"}: 1}, missing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
}

// The probe times every kind of write of each target, and leaves nothing behind. The client is
// a fake (this checks the probe's bookkeeping; bench/ runs it against real API servers).
func TestProbe(t *testing.T) {
	cl := fake.NewClientBuilder().WithStatusSubresource(&corev1.Namespace{}).Build()
	targets := []Target{
		{Resource: "namespaces", New: func(i int) client.Object {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ns-%d", i)}}
		}, SetStatus: func(o client.Object, round int) {
			o.(*corev1.Namespace).Status.Phase = corev1.NamespacePhase(fmt.Sprintf("round-%d", round))
		}},
		{Resource: "configmaps", New: func(i int) client.Object {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cm-%d", i)}}
		}},
	}
	rates, err := Probe(context.Background(), cl, targets, Options{Objects: 20, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for k, v := range rates {
		if v <= 0 {
			t.Errorf("rate of %s = %v, want > 0", k, v)
		}
		got = append(got, k.String())
	}
	want := []string{"PATCH configmaps", "PATCH namespaces", "PATCH namespaces/status", "POST configmaps", "POST namespaces", "PUT configmaps", "PUT namespaces", "PUT namespaces/status"}
	if diff := cmp.Diff(want, got, cmpSorted); diff != "" {
		t.Errorf("kinds measured (-want +got):\n%s", diff)
	}
	var nss corev1.NamespaceList
	var cms corev1.ConfigMapList
	if err := cl.List(context.Background(), &nss); err != nil {
		t.Fatal(err)
	}
	if err := cl.List(context.Background(), &cms); err != nil {
		t.Fatal(err)
	}
	if len(nss.Items)+len(cms.Items) != 0 {
		t.Errorf("the probe left %d namespaces and %d config maps", len(nss.Items), len(cms.Items))
	}
}

// A failed write fails the probe with the kind it was measuring, and what was created is still
// deleted.
func TestProbeFails(t *testing.T) {
	cl := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cm-3"}}).Build()
	_, err := Probe(context.Background(), cl, []Target{{Resource: "configmaps", New: func(i int) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cm-%d", i)}}
	}}}, Options{Objects: 5, Workers: 2})
	if err == nil || !strings.Contains(err.Error(), "POST configmaps") || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("err = %v, want the POST of configmaps refused", err)
	}
	var cms corev1.ConfigMapList
	if err := cl.List(context.Background(), &cms); err != nil {
		t.Fatal(err)
	}
	if len(cms.Items) != 1 {
		t.Errorf("%d config maps left, want only the one that was there before", len(cms.Items))
	}
	if _, err := Probe(context.Background(), cl, nil, Options{}); err == nil {
		t.Error("a probe of zero objects and workers: no error")
	}
}

var cmpSorted = cmpopts.SortSlices(func(a, b string) bool { return a < b })
