package resourceusage

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/builtinaddon"
)

// Name is the add-on's name.
var Name = builtinaddon.ResourceUsage.Name

// Label marks the AddOnPlacementScore the add-on wrote: it deletes only one that carries it.
const Label = builtinaddon.Label

// DefaultInterval is how often the score is written, as OCM's add-on.
const DefaultInterval = 60 * time.Second

// AddOn is the resource-usage built-in add-on.
type AddOn struct {
	// Interval is DefaultInterval when zero.
	Interval time.Duration
}

var _ builtin.AddOn = AddOn{}

// Name implements builtin.AddOn.
func (AddOn) Name() string { return Name }

func (a AddOn) interval() time.Duration {
	if a.Interval > 0 {
		return a.Interval
	}
	return DefaultInterval
}

// Run watches the spoke's nodes and pods and writes the score every interval.
func (a AddOn) Run(ctx context.Context, env builtin.Env) error {
	cs, err := kubernetes.NewForConfig(env.Spoke)
	if err != nil {
		return err
	}
	f := informers.NewSharedInformerFactory(cs, 0)
	nodes, pods := f.Core().V1().Nodes(), f.Core().V1().Pods()
	// Only what the scores need is kept of each pod: the pod cache of a large cluster is the
	// add-on's memory.
	if err := pods.Informer().SetTransform(trimPod); err != nil {
		return err
	}
	nodeLister, podLister := nodes.Lister(), pods.Lister()
	// The informers stop before Shutdown waits for them, however Run ends.
	informCtx, stop := context.WithCancel(ctx)
	defer f.Shutdown()
	defer stop()
	f.Start(informCtx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), nodes.Informer().HasSynced, pods.Informer().HasSynced) {
		return fmt.Errorf("reading the nodes and pods of the cluster: %w", context.Cause(ctx))
	}
	t := env.Clock.NewTicker(a.interval())
	defer t.Stop()
	for {
		ns, err := nodeLister.List(labels.Everything())
		if err != nil {
			return err
		}
		ps, err := podLister.List(labels.Everything())
		if err != nil {
			return err
		}
		if err := a.write(ctx, env, Scores(ns, ps)); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// trimPod keeps the fields PodRequests and the phase need.
func trimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID, ResourceVersion: p.ResourceVersion},
		Spec: corev1.PodSpec{
			NodeName: p.Spec.NodeName, Containers: p.Spec.Containers, InitContainers: p.Spec.InitContainers,
			Overhead: p.Spec.Overhead, Resources: p.Spec.Resources,
		},
		Status: corev1.PodStatus{Phase: p.Status.Phase},
	}, nil
}

// write creates or updates the AddOnPlacementScore when its scores changed or a third of its
// validity has passed.
func (a AddOn) write(ctx context.Context, env builtin.Env, scores []clusterv1alpha1.AddOnPlacementScoreItem) error {
	now := env.Clock.Now()
	until := metav1.NewTime(now.Add(3 * a.interval()).Truncate(time.Second))
	s := &clusterv1alpha1.AddOnPlacementScore{}
	key := client.ObjectKey{Namespace: env.ClusterName, Name: clusterv1alpha1.ResourceUsageScoreName}
	err := env.Hub.Get(ctx, key, s)
	if apierrors.IsNotFound(err) {
		s = &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{Label: Name},
		}}
		if err := env.Hub.Create(ctx, s); err != nil {
			return fmt.Errorf("creating AddOnPlacementScore %s: %w", key, err)
		}
	} else if err != nil {
		return fmt.Errorf("reading AddOnPlacementScore %s: %w", key, err)
	}
	if s.Labels[Label] != Name {
		return fmt.Errorf("AddOnPlacementScore %s exists and was not written by the built-in add-on %s (no label %s=%s): "+
			"the add-on neither takes it over nor deletes it; delete it, or disable the add-on on this cluster", key, Name, Label, Name)
	}
	fresh := s.Status.ValidUntil != nil && s.Status.ValidUntil.Sub(now) > 2*a.interval()
	if fresh && equality.Semantic.DeepEqual(s.Status.Scores, scores) {
		return nil
	}
	s.Status.Scores = slices.Clone(scores)
	s.Status.ValidUntil = &until
	if err := env.Hub.Status().Update(ctx, s); err != nil {
		return fmt.Errorf("writing the scores of AddOnPlacementScore %s: %w", key, err)
	}
	return nil
}

// Cleanup deletes the score the add-on wrote.
func (AddOn) Cleanup(ctx context.Context, env builtin.Env) error {
	s := &clusterv1alpha1.AddOnPlacementScore{}
	key := client.ObjectKey{Namespace: env.ClusterName, Name: clusterv1alpha1.ResourceUsageScoreName}
	if err := env.Hub.Get(ctx, key, s); err != nil {
		return client.IgnoreNotFound(err)
	}
	if s.Labels[Label] != Name {
		return nil
	}
	uid := s.UID
	return client.IgnoreNotFound(env.Hub.Delete(ctx, s, client.Preconditions{UID: &uid}))
}
