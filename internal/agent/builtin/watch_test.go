package builtin

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
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
		obj  any
		want bool
	}{
		{"the loop's write", cm("1", "10"), true},
		{"another writer after it", cm("1", "11"), false},
		{"an earlier write of the loop, replaced", cm("2", "20"), false},
		{"the later write", cm("2", "21"), true},
		{"an object the loop never wrote", cm("3", "10"), false},
		{"not an object", &metav1.Status{}, false},
	}
	got, want := map[string]bool{}, map[string]bool{}
	for _, tt := range tests {
		got[tt.name], want[tt.name] = own.ownObject(tt.obj), tt.want
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ownObject (-want +got):\n%s", d)
	}
	var none *OwnWrites // a loop without own writes: every event is news
	if none.ownObject(cm("1", "10")) {
		t.Error("a nil OwnWrites called an event own")
	}
}

func TestLatest(t *testing.T) {
	cm := func(rv, v string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: rv}, Data: map[string]string{"v": v}}
	}
	tests := []struct {
		name     string
		mirrored *corev1.ConfigMap
		want     string // the value of the answer
	}{
		{"the mirror still has what the write replaced: the write", cm("10", "before"), "written"},
		{"the mirror has the write", cm("11", "written"), "written"},
		{"someone wrote after the loop", cm("12", "theirs"), "theirs"},
		{"and the older version, seen late, is the mirror's again", cm("10", "before"), "before"},
	}
	var own OwnWrites
	own.Wrote("10", cm("11", "written"))
	for _, tt := range tests {
		if got := latest(&own, tt.mirrored).Data["v"]; got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := latest(nil, cm("10", "before")).Data["v"]; got != "before" {
		t.Errorf("without OwnWrites: %q, want the mirror's", got)
	}
}
