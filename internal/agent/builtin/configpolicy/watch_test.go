package configpolicy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A change taken but deferred (MinWatchGap) is kept without waking the loop: waking it would
// make it list and defer again, spinning until the gap has passed.
func TestObjectWatchesDeferWithoutWaking(t *testing.T) {
	changed := make(chan struct{}, 1)
	w := newObjectWatches(nil, changed)
	key := watchKey{GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "c1"}
	w.mark(key)
	if len(changed) != 1 {
		t.Fatal("a change did not wake the loop")
	}
	<-changed
	taken := w.take()
	w.keepDirty(key)
	if len(changed) != 0 {
		t.Error("a deferred change woke the loop")
	}
	if d := cmp.Diff(taken, w.take()); d != "" {
		t.Errorf("the deferred change was not kept (-taken +kept):\n%s", d)
	}
}
