package procruntime

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// NodeLabel marks the nodes whose pods the PodRunner runs as local processes. Such nodes must not
// carry kwok's annotation (localk8s.KwokNodeAnnotation), or kwok would write their pods' status
// too.
const NodeLabel = "flotilla.io/process-runtime"

// PodRunner is the kubelet of the nodes it selects: it runs the pods bound to them as local
// processes through Runtime and writes their status (Pending, Running with its containers
// started, Succeeded or Failed with their exit codes). It deletes a pod being deleted once its
// processes have stopped, as a kubelet confirms a graceful deletion. Pods with an image missing
// from Runtime.Commands stay Pending with the reason in their containers' waiting state.
type PodRunner struct {
	Runtime *Runtime
	// Nodes selects the nodes whose pods run; NodeLabel=true when nil.
	Nodes labels.Selector
	// Keep lists the nodes this runner is the kubelet of: Run runs their NodeKeepers beside the
	// pods, so that the nodes are registered, Ready and their Leases fresh (NodeRunner sets one).
	Keep []*NodeKeeper
	// Backoff is the first delay before a container is restarted (10 s when zero); it doubles
	// up to 5 minutes.
	Backoff time.Duration

	nodes   corelisters.NodeLister
	pods    corelisters.PodLister
	queue   workqueue.TypedRateLimitingInterface[types.NamespacedName]
	mu      sync.Mutex
	workers map[types.NamespacedName]*podWorker
}

// Run runs pods until ctx ends, then stops their processes.
func (p *PodRunner) Run(ctx context.Context) error {
	if err := p.Runtime.check(); err != nil {
		return fmt.Errorf("pod runner: %w", err)
	}
	for _, k := range p.Keep {
		if err := k.check(); err != nil {
			return fmt.Errorf("pod runner: %w", err)
		}
	}
	var keepers sync.WaitGroup
	defer keepers.Wait()
	keepCtx, stopKeepers := context.WithCancel(ctx)
	defer stopKeepers()
	for _, k := range p.Keep {
		keepers.Go(func() { _ = k.Run(keepCtx) })
	}
	sel := p.Nodes
	if sel == nil {
		sel = labels.SelectorFromSet(labels.Set{NodeLabel: "true"})
	}
	p.workers = map[types.NamespacedName]*podWorker{}
	p.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())
	defer p.queue.ShutDown()

	nodeInformers := informers.NewSharedInformerFactoryWithOptions(p.Runtime.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel.String() }))
	podInformers := informers.NewSharedInformerFactoryWithOptions(p.Runtime.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermNotEqualSelector("spec.nodeName", "").String()
		}))
	p.nodes = nodeInformers.Core().V1().Nodes().Lister()
	p.pods = podInformers.Core().V1().Pods().Lister()
	enqueue := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			p.queue.Add(types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
		} else if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			if ns, name, err := cache.SplitMetaNamespaceKey(tomb.Key); err == nil {
				p.queue.Add(types.NamespacedName{Namespace: ns, Name: name})
			}
		}
	}
	if _, err := podInformers.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	}); err != nil {
		return err
	}
	// A node that joins or leaves the selection changes which of its pods run.
	onNode := func(obj any) {
		pods, _ := p.pods.List(labels.Everything())
		for _, pod := range pods {
			enqueue(pod)
		}
	}
	if _, err := nodeInformers.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onNode, UpdateFunc: func(_, obj any) { onNode(obj) }, DeleteFunc: onNode,
	}); err != nil {
		return err
	}
	nodeInformers.Start(ctx.Done())
	podInformers.Start(ctx.Done())
	defer nodeInformers.Shutdown()
	defer podInformers.Shutdown()
	nodeInformers.WaitForCacheSync(ctx.Done())
	podInformers.WaitForCacheSync(ctx.Done())

	go func() {
		<-ctx.Done()
		p.queue.ShutDown()
	}()
	for p.next(ctx) {
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, w := range p.workers {
		w.stop(gracePeriod(w.pod))
		delete(p.workers, key)
	}
	return nil
}

func (p *PodRunner) next(ctx context.Context) bool {
	key, quit := p.queue.Get()
	if quit {
		return false
	}
	defer p.queue.Done(key)
	if err := p.sync(ctx, key); err != nil {
		klog.FromContext(ctx).Error(err, "syncing pod", "pod", key)
		p.queue.AddRateLimited(key)
		return true
	}
	p.queue.Forget(key)
	return true
}

// sync starts, keeps or stops the pod's worker.
func (p *PodRunner) sync(ctx context.Context, key types.NamespacedName) error {
	pod, err := p.pods.Pods(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		pod, err = nil, nil
	}
	if err != nil {
		return err
	}
	p.mu.Lock()
	w := p.workers[key]
	p.mu.Unlock()
	ours := pod != nil && p.selected(pod.Spec.NodeName)
	if w != nil && (pod == nil || pod.UID != w.pod.UID || pod.DeletionTimestamp != nil || !ours) {
		grace := gracePeriod(w.pod)
		if pod != nil && pod.UID == w.pod.UID {
			grace = gracePeriod(pod)
		}
		w.stop(grace)
		p.mu.Lock()
		delete(p.workers, key)
		p.mu.Unlock()
		_ = os.RemoveAll(p.Runtime.PodDir(key.Namespace, key.Name))
		w = nil
	}
	if pod == nil || !ours {
		return nil
	}
	if pod.DeletionTimestamp != nil {
		// The processes have stopped: confirm the deletion, as a kubelet does.
		err := p.Runtime.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptrTo(int64(0)),
			Preconditions:      &metav1.Preconditions{UID: &pod.UID},
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	if w != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	w = newPodWorker(p, pod)
	p.mu.Lock()
	p.workers[key] = w
	p.mu.Unlock()
	w.start(ctx)
	return nil
}

func (p *PodRunner) selected(node string) bool {
	_, err := p.nodes.Get(node) // the lister holds only the selected nodes
	return err == nil
}

func (p *PodRunner) backoff() time.Duration {
	if p.Backoff > 0 {
		return p.Backoff
	}
	return defaultBackoff
}

// writeStatus writes a pod's status when it differs from the stored one.
func (p *PodRunner) writeStatus(ctx context.Context, pod *corev1.Pod, status corev1.PodStatus) {
	pods := p.Runtime.Client.CoreV1().Pods(pod.Namespace)
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.UID != pod.UID || cur.DeletionTimestamp != nil {
			return nil
		}
		status.QOSClass = cur.Status.QOSClass
		if apiequality.Semantic.DeepEqual(cur.Status, status) {
			return nil
		}
		cur.Status = status
		_, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		klog.FromContext(ctx).Error(err, "writing pod status", "pod", pod.Namespace+"/"+pod.Name)
	}
}
