package procruntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// A kubelet's defaults for its node's liveness.
const (
	// NodeLeaseDuration is the node Lease's duration (--node-lease-duration-seconds).
	NodeLeaseDuration = 40 * time.Second
	// NodeRenewInterval is how often the Lease is renewed: a quarter of its duration.
	NodeRenewInterval = NodeLeaseDuration / 4
	// nodeStatusReportPeriod is how often an unchanged status is written all the same
	// (nodeStatusReportFrequency).
	nodeStatusReportPeriod = 5 * time.Minute
	// nodeRetryInterval is the wait after a failed round, instead of NodeRenewInterval.
	nodeRetryInterval = time.Second
)

// NodeKeeper keeps one node of the process runtime alive as its kubelet would: it registers the
// Node if asked, renews its Lease in kube-node-lease every NodeRenewInterval (which is what
// kube-controller-manager's node lifecycle controller watches), and writes its status (capacity,
// address, Ready and the pressure conditions) when it changes and every 5 minutes. Once Ready is
// written it removes the not-ready and unreachable taints, as the node lifecycle controller does
// for a Ready node, so kube-scheduler places pods at once. When Run ends the node is marked
// NotReady, and the node lifecycle controller taints it.
type NodeKeeper struct {
	// Client reaches the node's cluster.
	Client kubernetes.Interface
	// Name is the node's name.
	Name string
	// Register creates the Node when it does not exist, with Labels plus NodeLabel=true and the
	// hostname, OS and architecture labels a kubelet sets. Without it the Node must exist: a
	// missing Node is an error each round.
	Register bool
	Labels   map[string]string
	// Capacity is the node's capacity and allocatable; HostCapacity(os.TempDir()) when nil.
	Capacity corev1.ResourceList
	// Clock decides when the Lease is renewed and stamps the status and the Lease.
	Clock clock.Clock
	// Address is the node's InternalIP (127.0.0.1 when empty).
	Address string

	lastReport time.Time
}

// Run keeps the node alive until ctx ends, then marks it NotReady. Failed rounds are logged and
// retried after a second.
func (k *NodeKeeper) Run(ctx context.Context) error {
	if err := k.check(); err != nil {
		return err
	}
	log := klog.FromContext(ctx).WithValues("node", k.Name)
	for {
		wait := NodeRenewInterval
		if err := k.sync(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "keeping the node alive")
			wait = nodeRetryInterval
		}
		select {
		case <-ctx.Done():
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := k.writeStatus(stopCtx, false); err != nil && !apierrors.IsNotFound(err) {
				log.Error(err, "marking the node NotReady")
			}
			return nil
		case <-k.Clock.After(wait):
		}
	}
}

func (k *NodeKeeper) check() error {
	var errs []error
	if k.Client == nil {
		errs = append(errs, errors.New("NodeKeeper.Client is nil; set it to a client of the node's cluster"))
	}
	if k.Name == "" {
		errs = append(errs, errors.New("NodeKeeper.Name is empty; set it to the node's name"))
	}
	if k.Clock == nil {
		errs = append(errs, errors.New("NodeKeeper.Clock is nil; set it (clock.RealClock{} outside tests)"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("node %q: %w", k.Name, err)
	}
	return nil
}

// sync is one round: the Node (registered if missing), its status, its taints, its Lease.
func (k *NodeKeeper) sync(ctx context.Context) error {
	if k.Register {
		_, err := k.Client.CoreV1().Nodes().Create(ctx, registrationNode(k.Name, k.Labels), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering node %s: %w", k.Name, err)
		}
	}
	if err := k.writeStatus(ctx, true); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("node %s does not exist: create it, or set NodeKeeper.Register", k.Name)
		}
		return fmt.Errorf("writing the status of node %s: %w", k.Name, err)
	}
	if err := k.untaint(ctx); err != nil {
		return fmt.Errorf("removing the not-ready taints of node %s: %w", k.Name, err)
	}
	if err := k.renewLease(ctx); err != nil {
		return fmt.Errorf("renewing the lease %s/%s: %w", corev1.NamespaceNodeLease, k.Name, err)
	}
	return nil
}

// writeStatus writes the node's status when it changed, or when the last write is older than
// nodeStatusReportPeriod.
func (k *NodeKeeper) writeStatus(ctx context.Context, ready bool) error {
	capacity := k.Capacity
	if capacity == nil {
		capacity = HostCapacity(os.TempDir())
	}
	nodes := k.Client.CoreV1().Nodes()
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		node, err := nodes.Get(ctx, k.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := k.Clock.Now()
		ip := k.Address
		if ip == "" {
			ip = localIP
		}
		want := nodeStatus(node.Status, k.Name, ip, capacity, ready, metav1.NewTime(now))
		if !statusChanged(node.Status, want) && now.Sub(k.lastReport) < nodeStatusReportPeriod {
			return nil
		}
		node.Status = want
		if _, err := nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
			return err
		}
		k.lastReport = now
		return nil
	})
}

// untaint removes the not-ready and unreachable taints from a Ready node.
func (k *NodeKeeper) untaint(ctx context.Context) error {
	nodes := k.Client.CoreV1().Nodes()
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		node, err := nodes.Get(ctx, k.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		taints, removed := withoutNotReadyTaints(node.Spec.Taints)
		if !removed || !nodeReady(node.Status) {
			return nil
		}
		node.Spec.Taints = taints
		_, err = nodes.Update(ctx, node, metav1.UpdateOptions{})
		return err
	})
}

func (k *NodeKeeper) renewLease(ctx context.Context) error {
	node, err := k.Client.CoreV1().Nodes().Get(ctx, k.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	leases := k.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(k.Clock.Now())
	secs := int32(NodeLeaseDuration / time.Second)
	l, err := leases.Get(ctx, k.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, renewedLease(&coordinationv1.Lease{}, node, secs, now), metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	_, err = leases.Update(ctx, renewedLease(l, node, secs, now), metav1.UpdateOptions{})
	return err
}
