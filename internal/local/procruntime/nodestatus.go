package procruntime

import (
	"runtime"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// defaultMaxPods is a node's pod capacity, the kubelet's default (--max-pods).
const defaultMaxPods = 110

// HostCapacity is the capacity of a node that stands for this machine: its CPUs, its memory,
// the free space of dir as ephemeral storage, and the kubelet's default of 110 pods (without
// a pods capacity the scheduler fits no pod on the node).
func HostCapacity(dir string) corev1.ResourceList {
	out := hostAllocatable(dir)
	out[corev1.ResourcePods] = *resource.NewQuantity(defaultMaxPods, resource.DecimalSI)
	return out
}

// registrationNode is the Node a kubelet registers: its labels (with NodeLabel=true and the
// hostname, OS and architecture labels a kubelet sets), and no status, which the NodeKeeper
// writes next.
func registrationNode(name string, labels map[string]string) *corev1.Node {
	l := map[string]string{
		corev1.LabelHostname:   name,
		corev1.LabelOSStable:   runtime.GOOS,
		corev1.LabelArchStable: runtime.GOARCH,
	}
	for k, v := range labels {
		l[k] = v
	}
	l[NodeLabel] = "true"
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

// nodeConditions are the conditions a kubelet owns, with their healthy status and reason.
var nodeConditions = []struct {
	t       corev1.NodeConditionType
	healthy corev1.ConditionStatus
	reason  string
	message string
}{
	{corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
	{corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
	{corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
	{corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"},
}

// nodeStatus is the status a kubelet would write over old: capacity and allocatable, this
// machine's address and system, and its four conditions heartbeating at now. Ready is True when
// ready, else False with the reason why the node stopped. A condition keeps its transition time
// while its status stays; conditions the kubelet does not own are kept as they are. No side
// effects: the NodeKeeper writes the result when it differs (statusChanged).
func nodeStatus(old corev1.NodeStatus, name, ip string, capacity corev1.ResourceList, ready bool, now metav1.Time) corev1.NodeStatus {
	st := *old.DeepCopy()
	st.Capacity = capacity.DeepCopy()
	st.Allocatable = capacity.DeepCopy()
	st.Phase = ""
	st.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}}
	st.NodeInfo = corev1.NodeSystemInfo{
		KubeletVersion:          localk8s.KubernetesVersion,
		OperatingSystem:         runtime.GOOS,
		Architecture:            runtime.GOARCH,
		ContainerRuntimeVersion: "process://flotilla",
	}
	var kept []corev1.NodeCondition
	for _, c := range old.Conditions {
		owned := false
		for _, o := range nodeConditions {
			owned = owned || o.t == c.Type
		}
		if !owned {
			kept = append(kept, c)
		}
	}
	for _, o := range nodeConditions {
		c := corev1.NodeCondition{Type: o.t, Status: o.healthy, Reason: o.reason, Message: o.message, LastHeartbeatTime: now}
		if o.t == corev1.NodeReady && !ready {
			c.Status, c.Reason, c.Message = corev1.ConditionFalse, "KubeletNotReady", "the process runtime of this node has stopped"
		}
		c.LastTransitionTime = now
		for _, prev := range old.Conditions {
			if prev.Type == c.Type && prev.Status == c.Status && !prev.LastTransitionTime.IsZero() {
				c.LastTransitionTime = prev.LastTransitionTime
			}
		}
		kept = append(kept, c)
	}
	st.Conditions = kept
	return st
}

// statusChanged reports whether a differs from b other than in the conditions' heartbeat times:
// a kubelet writes an unchanged status only every nodeStatusReportPeriod, and lets the Lease
// say it is alive in between.
func statusChanged(a, b corev1.NodeStatus) bool {
	strip := func(s corev1.NodeStatus) corev1.NodeStatus {
		s = *s.DeepCopy()
		for i := range s.Conditions {
			s.Conditions[i].LastHeartbeatTime = metav1.Time{}
		}
		return s
	}
	return !apiequality.Semantic.DeepEqual(strip(a), strip(b))
}

// nodeReady reports whether the node's Ready condition is True.
func nodeReady(st corev1.NodeStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// withoutNotReadyTaints removes the taints the node lifecycle controller (and the API server's
// admission, on creation) put on a node that is not Ready or not reachable; the controller
// removes them once the node is Ready again, and so does the NodeKeeper, so that pods schedule
// at once. It reports whether it removed any.
func withoutNotReadyTaints(taints []corev1.Taint) ([]corev1.Taint, bool) {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			continue
		}
		out = append(out, t)
	}
	return out, len(out) != len(taints)
}

// renewedLease is the node's Lease renewed at now, as a kubelet's lease controller writes it:
// held by the node, for duration, owned by the Node (so it goes when the Node is deleted).
func renewedLease(l *coordinationv1.Lease, node *corev1.Node, durationSeconds int32, now metav1.MicroTime) *coordinationv1.Lease {
	l = l.DeepCopy()
	l.Name, l.Namespace = node.Name, corev1.NamespaceNodeLease
	l.Spec.HolderIdentity = &node.Name
	l.Spec.LeaseDurationSeconds = &durationSeconds
	l.Spec.RenewTime = &now
	if node.UID != "" {
		owned := false
		for _, o := range l.OwnerReferences {
			owned = owned || o.UID == node.UID
		}
		if !owned {
			l.OwnerReferences = append(l.OwnerReferences, metav1.OwnerReference{
				APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID,
			})
		}
	}
	return l
}
