package procruntime

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// NodeRunner is the kubelet of one process-runtime node: a PodRunner that runs that node's pods
// only (NodeLabel=true and kubernetes.io/hostname=node, so that runners of other nodes in the
// same cluster leave them alone), with a NodeKeeper that registers the node with this machine's
// capacity (HostCapacity of rt.Root) and keeps it Ready.
func NodeRunner(rt *Runtime, node string, clk clock.Clock) *PodRunner {
	return &PodRunner{
		Runtime: rt,
		Nodes:   labels.SelectorFromSet(labels.Set{NodeLabel: "true", corev1.LabelHostname: node}),
		Keep: []*NodeKeeper{{
			Client: rt.Client, Name: node, Register: true, Capacity: HostCapacity(rt.Root), Clock: clk, Address: rt.Address,
		}},
	}
}

// StartNode runs NodeRunner(rt, node) in the background and returns once the node is Ready and
// untainted, so kube-scheduler places pods on it. stop ends the runner (its processes stop and
// the node turns NotReady) and waits for it.
func StartNode(ctx context.Context, rt *Runtime, node string, clk clock.Clock, timeout time.Duration) (stop func(), err error) {
	runner := NodeRunner(rt, node, clk)
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := runner.Run(runCtx); err != nil {
			klog.FromContext(ctx).Error(err, "process runtime", "node", node)
		}
	}()
	stop = func() {
		cancel()
		<-done
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-done:
			return false, fmt.Errorf("the runner of node %s ended", node)
		default:
		}
		n, err := rt.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprintf("taints %v, conditions %v", n.Spec.Taints, n.Status.Conditions)
		return localk8s.NodeSchedulable(n), nil
	})
	if err != nil {
		stop()
		return nil, fmt.Errorf("process-runtime node %s is not Ready and untainted after %s (%s): %w", node, timeout, last, err)
	}
	return stop, nil
}
