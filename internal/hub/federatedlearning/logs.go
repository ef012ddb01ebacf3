package federatedlearning

import (
	"context"
	"sort"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
)

// LogReader reads a container's log.
type LogReader interface {
	Log(ctx context.Context, namespace, pod, container string) (string, error)
}

// maxLogBytes bounds how much of a server's log is read each time: the newest MiB.
const maxLogBytes = 1 << 20

// APILogs reads logs through the API server (pods/log), as kubectl logs does.
type APILogs struct{ Client kubernetes.Interface }

// Log reads the last maxLogBytes of a container's log.
func (a APILogs) Log(ctx context.Context, namespace, pod, container string) (string, error) {
	limit := int64(maxLogBytes)
	raw, err := a.Client.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, LimitBytes: &limit}).DoRaw(ctx)
	return string(raw), err
}

// progress reads the log of fl's server pod (component serverapp or server); nil when there is
// no log yet. A log that cannot be read is no error: progress is a report, not a step.
func (r *Reconciler) progress(ctx context.Context, fl *flv1alpha1.FederatedLearning, component string) *Progress {
	if r.Logs == nil {
		return nil
	}
	pods := &corev1.PodList{}
	if err := r.Reader.List(ctx, pods, client.InNamespace(fl.Namespace), client.MatchingLabels{NameLabel: fl.Name, ComponentLabel: component}); err != nil {
		return nil
	}
	// The newest pod that has started: the one running now, or the last that ran.
	sort.Slice(pods.Items, func(i, j int) bool {
		return pods.Items[j].CreationTimestamp.Before(&pods.Items[i].CreationTimestamp)
	})
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodPending || p.Spec.NodeName == "" {
			continue
		}
		log, err := r.Logs.Log(ctx, p.Namespace, p.Name, component)
		if err != nil {
			ctrlLog(ctx).V(1).Info("reading the server's log", "pod", p.Name, "error", err.Error())
			return nil
		}
		pr := ParseProgress(log)
		return &pr
	}
	return nil
}

func ctrlLog(ctx context.Context) logr.Logger { return ctrl.LoggerFrom(ctx) }
