package kueuequeues

import (
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// nodeStore is the store a reflector on Nodes fills. It keeps of each node only what Compute
// reads (its model label and allocatable) and signals changed when that changes: kubelets'
// status heartbeats do not wake the add-on.
type nodeStore struct {
	mu     sync.Mutex
	nodes  map[string]*corev1.Node
	synced chan struct{}
	once   sync.Once
	// changed gets a token after every change that matters; one pending token is enough.
	changed chan struct{}
}

var _ toolscache.TransformingStore = (*nodeStore)(nil)

func newNodeStore() *nodeStore {
	return &nodeStore{nodes: map[string]*corev1.Node{}, synced: make(chan struct{}), changed: make(chan struct{}, 1)}
}

// trim keeps what Compute reads of a node.
func trim(obj any) *corev1.Node {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return nil
	}
	out := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{}}}
	if v, ok := n.Labels[GPUProductLabel]; ok {
		out.Labels = map[string]string{GPUProductLabel: v}
	}
	for _, r := range coveredResources {
		if q, ok := n.Status.Allocatable[r]; ok {
			out.Status.Allocatable[r] = q
		}
	}
	return out
}

func (s *nodeStore) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *nodeStore) set(obj any) {
	n := trim(obj)
	if n == nil {
		return
	}
	s.mu.Lock()
	old := s.nodes[n.Name]
	s.nodes[n.Name] = n
	s.mu.Unlock()
	if old == nil || !equality.Semantic.DeepEqual(old, n) {
		s.signal()
	}
}

// Add implements cache.ReflectorStore.
func (s *nodeStore) Add(obj any) error { s.set(obj); return nil }

// Update implements cache.ReflectorStore.
func (s *nodeStore) Update(obj any) error { s.set(obj); return nil }

// Delete implements cache.ReflectorStore.

func (s *nodeStore) Delete(obj any) error {
	key, err := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	_, had := s.nodes[key]
	delete(s.nodes, key)
	s.mu.Unlock()
	if had {
		s.signal()
	}
	return nil
}

// Replace implements cache.ReflectorStore: the nodes are all there are (a list, at the start or
// after the watch was lost). The first marks the store synced.
func (s *nodeStore) Replace(list []any, _ string) error {
	nodes := make(map[string]*corev1.Node, len(list))
	for _, obj := range list {
		if n := trim(obj); n != nil {
			nodes[n.Name] = n
		}
	}
	s.mu.Lock()
	same := equality.Semantic.DeepEqual(s.nodes, nodes)
	s.nodes = nodes
	s.mu.Unlock()
	s.once.Do(func() { close(s.synced) })
	if !same {
		s.signal()
	}
	return nil
}

// list returns the nodes by name.
func (s *nodeStore) list() []*corev1.Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*corev1.Node, 0, len(s.nodes))
	for _, n := range s.nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Resync implements cache.ReflectorStore; there is nothing to resync.
func (s *nodeStore) Resync() error { return nil }

// Transformer implements cache.TransformingStore: the reflector trims each node before the
// store sees it, and what it holds while it streams the first list.
func (s *nodeStore) Transformer() toolscache.TransformFunc {
	return func(obj any) (any, error) {
		if n := trim(obj); n != nil {
			return n, nil
		}
		return obj, nil
	}
}
