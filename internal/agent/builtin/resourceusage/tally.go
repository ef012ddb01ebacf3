package resourceusage

import (
	corev1 "k8s.io/api/core/v1"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// amounts are resource amounts as integers: cpu in millicores, everything else in its unit
// (bytes, devices, pods). Sums stay exact and cheap, which Quantity arithmetic is not.
type amounts map[corev1.ResourceName]int64

// amountOf returns q in the integer unit of the resource.
func amountOf(name corev1.ResourceName, q resourceQuantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// resourceQuantity is what amountOf reads of a resource.Quantity.
type resourceQuantity interface {
	MilliValue() int64
	Value() int64
}

func toAmounts(l corev1.ResourceList) amounts {
	out := make(amounts, len(l))
	for name, q := range l {
		out[name] = amountOf(name, &q)
	}
	return out
}

// nodeState is what the tally keeps of one node.
type nodeState struct {
	// present is false for a node only pods name (not seen yet, or deleted while pods remain).
	present bool
	// counted: the node is Ready and schedulable, so its free capacity can be used.
	counted               bool
	capacity, allocatable amounts
	// models maps an accelerator resource to the node's model of it (ModelLabels).
	models map[corev1.ResourceName]string
	// requested sums the requests of the unfinished pods bound to the node.
	requested amounts
}

// podState is one unfinished, bound pod's contribution to its node's requests: a short slice,
// not a map, since the tally keeps one per pod of the cluster.
type podState struct {
	node     string
	requests []request
}

type request struct {
	name   corev1.ResourceName
	amount int64
}

// tally keeps, incrementally, each node's allocatable and requested amounts from node and pod
// events, so that the figures are computed from the nodes alone (not from every pod) however
// many pods the cluster runs. It is not safe for concurrent use.
type tally struct {
	nodes map[string]*nodeState
	pods  map[string]podState
}

func newTally() *tally {
	return &tally{nodes: map[string]*nodeState{}, pods: map[string]podState{}}
}

func (t *tally) node(name string) *nodeState {
	n := t.nodes[name]
	if n == nil {
		n = &nodeState{requested: amounts{}}
		t.nodes[name] = n
	}
	return n
}

// setNode records a node added or changed.
func (t *tally) setNode(node *corev1.Node) {
	n := t.node(node.Name)
	n.present = true
	n.counted = !node.Spec.Unschedulable && ready(node)
	n.capacity = toAmounts(node.Status.Capacity)
	n.allocatable = toAmounts(node.Status.Allocatable)
	n.models = nil
	for res, label := range usagev1alpha1.ModelLabels {
		if m := node.Labels[label]; m != "" {
			if n.models == nil {
				n.models = map[corev1.ResourceName]string{}
			}
			n.models[corev1.ResourceName(res)] = m
		}
	}
}

// deleteNode records a node deleted. What its pods request is kept until they go too.
func (t *tally) deleteNode(name string) {
	n := t.nodes[name]
	if n == nil {
		return
	}
	if len(n.requested) == 0 {
		delete(t.nodes, name)
		return
	}
	*n = nodeState{requested: n.requested}
}

// setPod records a pod added or changed, as its record.
func (t *tally) setPod(key string, r *podRecord) {
	t.deletePod(key)
	if len(r.requests) == 0 {
		return
	}
	n := t.node(r.node)
	for _, q := range r.requests {
		n.requested[q.name] += q.amount
	}
	t.pods[key] = podState{node: r.node, requests: r.requests}
}

// deletePod records a pod deleted.
func (t *tally) deletePod(key string) {
	p, ok := t.pods[key]
	if !ok {
		return
	}
	delete(t.pods, key)
	n := t.nodes[p.node]
	for _, r := range p.requests {
		if n.requested[r.name] -= r.amount; n.requested[r.name] == 0 {
			delete(n.requested, r.name)
		}
	}
	if !n.present && len(n.requested) == 0 {
		delete(t.nodes, p.node)
	}
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nodeNames lists the nodes the tally has seen and not seen deleted.
func (t *tally) nodeNames() []string {
	var out []string
	for name, n := range t.nodes {
		if n.present {
			out = append(out, name)
		}
	}
	return out
}

// podKeys lists the pods that count.
func (t *tally) podKeys() []string {
	out := make([]string, 0, len(t.pods))
	for key := range t.pods {
		out = append(out, key)
	}
	return out
}
