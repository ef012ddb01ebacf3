package delivery

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
)

func cluster(accepted, deleting bool) *clusterv1.ManagedCluster {
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: accepted}}
	if deleting {
		mc.DeletionTimestamp = &metav1.Time{Time: time.Unix(1e9, 0)}
		mc.Finalizers = []string{"test/hold"}
	}
	return mc
}

func namespace(terminating bool) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}
	if terminating {
		ns.Status.Phase = corev1.NamespaceTerminating
	}
	return ns
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		objs []client.Object
		want string // the refusal's reason, "" for none
	}{
		{"accepted", []client.Object{cluster(true, false), namespace(false)}, ""},
		{"accepted, namespace not made yet", []client.Object{cluster(true, false)}, ""},
		{"not accepted", []client.Object{cluster(false, false), namespace(false)}, ReasonNotAccepted},
		{"being deleted", []client.Object{cluster(true, true), namespace(false)}, ReasonDeleting},
		{"denied and being deleted", []client.Object{cluster(false, true), namespace(false)}, ReasonDeleting},
		{"namespace terminating", []client.Object{cluster(true, false), namespace(true)}, ReasonNamespaceTerminating},
		{"no ManagedCluster", []client.Object{namespace(false)}, ReasonNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(tc.objs...).Build()
			r, err := Check(context.Background(), c, "c1")
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if r != nil {
				got = r.Reason
				if r.Cluster != "c1" || r.Message == "" {
					t.Errorf("refusal %+v: want cluster c1 and a message", r)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reason (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChanged(t *testing.T) {
	deleting := cluster(true, true)
	for _, tc := range []struct {
		name     string
		old, new client.Object
		want     bool
	}{
		{"accepted", cluster(false, false), cluster(true, false), true},
		{"denied", cluster(true, false), cluster(false, false), true},
		{"deleted", cluster(true, false), deleting, true},
		{"status only", cluster(true, false), func() client.Object {
			mc := cluster(true, false)
			mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue}}
			return mc
		}(), false},
		{"namespace terminating", namespace(false), namespace(true), true},
		{"namespace labeled", namespace(false), func() client.Object {
			ns := namespace(false)
			ns.Labels = map[string]string{"a": "b"}
			return ns
		}(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Changed.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Update (-want +got):\n%s", diff)
			}
		})
	}
}
