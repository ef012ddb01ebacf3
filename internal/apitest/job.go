package apitest

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Names a Job for simulated GPU nodes uses, as real clusters expose them.
const (
	// GPUResource is the extended resource of NVIDIA's device plugin.
	GPUResource = corev1.ResourceName("nvidia.com/gpu")
	// GPUProductLabel is the node label with the GPU model (NVIDIA's GPU feature discovery).
	GPUProductLabel = "nvidia.com/gpu.product"
	// QueueLabel names the Kueue LocalQueue a Job is submitted to.
	QueueLabel = "kueue.x-k8s.io/queue-name"
	// KwokCompleteDelay is the pod annotation after which kwok's pod-complete stage finishes a
	// simulated pod (internal/local/localk8s).
	KwokCompleteDelay = "pod-complete.stage.kwok.x-k8s.io/delay"
)

// JobWrapper builds a batch/v1 Job of one container, "train" from image "trainer", that is not
// retried (backoffLimit 0, restartPolicy Never): the training job of the fleet's tests.
type JobWrapper struct{ batchv1.Job }

// MakeJob starts Job ns/name of one pod asking for nothing.
func MakeJob(ns, name string) *JobWrapper {
	return &JobWrapper{batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "train", Image: "trainer"}},
			}},
		},
	}}
}

// Obj is a deep copy of the Job built so far.
func (w *JobWrapper) Obj() *batchv1.Job { return w.DeepCopy() }

// Queue submits the Job to Kueue's LocalQueue q in its namespace.
func (w *JobWrapper) Queue(q string) *JobWrapper {
	setLabel(&w.ObjectMeta, QueueLabel, q)
	return w
}

// Pods runs n pods at once (parallelism and completions n).
func (w *JobWrapper) Pods(n int32) *JobWrapper {
	w.Spec.Parallelism, w.Spec.Completions = ptr.To(n), ptr.To(n)
	return w
}

// GPUs asks for n GPUs per pod (request and limit).
func (w *JobWrapper) GPUs(n int64) *JobWrapper {
	return w.Resource(GPUResource, *resource.NewQuantity(n, resource.DecimalSI), true)
}

// CPU requests q CPU per pod, such as "100m".
func (w *JobWrapper) CPU(q string) *JobWrapper {
	return w.Resource(corev1.ResourceCPU, resource.MustParse(q), false)
}

// Resource requests q of name per pod, and limits it too when limit is set.
func (w *JobWrapper) Resource(name corev1.ResourceName, q resource.Quantity, limit bool) *JobWrapper {
	r := &w.Spec.Template.Spec.Containers[0].Resources
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	r.Requests[name] = q
	if limit {
		if r.Limits == nil {
			r.Limits = corev1.ResourceList{}
		}
		r.Limits[name] = q
	}
	return w
}

// Model keeps the pods on nodes of GPU model m.
func (w *JobWrapper) Model(m string) *JobWrapper {
	if w.Spec.Template.Spec.NodeSelector == nil {
		w.Spec.Template.Spec.NodeSelector = map[string]string{}
	}
	w.Spec.Template.Spec.NodeSelector[GPUProductLabel] = m
	return w
}

// RunFor has kwok finish each pod d after it starts (a simulated node's pod only).
func (w *JobWrapper) RunFor(d time.Duration) *JobWrapper {
	setAnnotation(&w.Spec.Template.ObjectMeta, KwokCompleteDelay, d.String())
	return w
}

// PodLabel labels the Job's pods.
func (w *JobWrapper) PodLabel(key, value string) *JobWrapper {
	setLabel(&w.Spec.Template.ObjectMeta, key, value)
	return w
}

// Image sets the container's image.
func (w *JobWrapper) Image(image string) *JobWrapper {
	w.Spec.Template.Spec.Containers[0].Image = image
	return w
}
