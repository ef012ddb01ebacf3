package builtin

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

func TestOwnWrites(t *testing.T) {
	cm := func(uid, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: ktypes.UID("u" + uid), ResourceVersion: rv}}
	}
	var own OwnWrites
	own.Note(cm("1", "10"))
	own.Note(cm("2", "20"))
	own.Note(cm("2", "21")) // a later write of the same object replaces the first
	tests := []struct {
		name string
		ev   watch.Event
		want bool
	}{
		{"the loop's write", watch.Event{Type: watch.Modified, Object: cm("1", "10")}, true},
		{"the loop's create", watch.Event{Type: watch.Added, Object: cm("1", "10")}, true},
		{"another writer after it", watch.Event{Type: watch.Modified, Object: cm("1", "11")}, false},
		{"an earlier write of the loop, replaced", watch.Event{Type: watch.Modified, Object: cm("2", "20")}, false},
		{"the later write", watch.Event{Type: watch.Modified, Object: cm("2", "21")}, true},
		{"an object the loop never wrote", watch.Event{Type: watch.Modified, Object: cm("3", "10")}, false},
		{"a deletion is always news", watch.Event{Type: watch.Deleted, Object: cm("1", "10")}, false},
		{"an error event", watch.Event{Type: watch.Error, Object: &metav1.Status{}}, false},
	}
	got, want := map[string]bool{}, map[string]bool{}
	for _, tt := range tests {
		got[tt.name], want[tt.name] = own.own(tt.ev), tt.want
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("own (-want +got):\n%s", d)
	}
	var none *OwnWrites // a loop without own writes: every event is news
	if none.own(watch.Event{Type: watch.Modified, Object: cm("1", "10")}) {
		t.Error("a nil OwnWrites called an event own")
	}
}
