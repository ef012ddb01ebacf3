package resourceusage

import (
	"sync"

	toolscache "k8s.io/client-go/tools/cache"
)

// tallyStore is what a reflector fills instead of an informer's cache: it keeps no objects, and
// hands each one it gets to the tally, so the add-on's memory is the tally's (a few numbers per
// pod), not a copy of every pod of the cluster.
type tallyStore struct {
	w *watcher
	// set records an object added or changed; del one deleted; keys lists what the tally holds of
	// this kind, for Replace to delete what is gone.
	set  func(t *tally, key string, obj any)
	del  func(t *tally, key string)
	keys func(t *tally) []string
	// trim is applied by the reflector before the store sees an object, and to what it holds
	// while it streams the first list.
	trim toolscache.TransformFunc

	syncOnce sync.Once
	synced   chan struct{}
}

var (
	_ toolscache.ReflectorStore    = (*tallyStore)(nil)
	_ toolscache.TransformingStore = (*tallyStore)(nil)
)

func newTallyStore(w *watcher, trim toolscache.TransformFunc, set func(*tally, string, any), del func(*tally, string), keys func(*tally) []string) *tallyStore {
	return &tallyStore{w: w, trim: trim, set: set, del: del, keys: keys, synced: make(chan struct{})}
}

func (s *tallyStore) transformed(obj any) (any, error) {
	if _, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		return obj, nil
	}
	return s.trim(obj)
}

// Add implements cache.ReflectorStore.
func (s *tallyStore) Add(obj any) error {
	obj, err := s.transformed(obj)
	if err != nil {
		return err
	}
	s.w.update(func(t *tally) { s.set(t, objectKey(obj), obj) })
	return nil
}

// Update implements cache.ReflectorStore.
func (s *tallyStore) Update(obj any) error { return s.Add(obj) }

// Delete implements cache.ReflectorStore.
func (s *tallyStore) Delete(obj any) error {
	s.w.update(func(t *tally) { s.del(t, objectKey(obj)) })
	return nil
}

// Replace implements cache.ReflectorStore: the objects are all there is (a list, at the start
// or after the watch was lost).
func (s *tallyStore) Replace(list []any, _ string) error {
	objs := make([]any, len(list))
	for i, obj := range list {
		var err error
		if objs[i], err = s.transformed(obj); err != nil {
			return err
		}
	}
	s.w.update(func(t *tally) {
		listed := make(map[string]bool, len(objs))
		for _, obj := range objs {
			key := objectKey(obj)
			listed[key] = true
			s.set(t, key, obj)
		}
		for _, key := range s.keys(t) {
			if !listed[key] {
				s.del(t, key)
			}
		}
	})
	s.syncOnce.Do(func() { close(s.synced) })
	return nil
}

// Resync implements cache.ReflectorStore; there is nothing to resync.
func (s *tallyStore) Resync() error { return nil }

// Transformer implements cache.TransformingStore.
func (s *tallyStore) Transformer() toolscache.TransformFunc { return s.trim }
