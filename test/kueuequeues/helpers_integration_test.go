//go:build integration

package kueuequeues

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/flotilla/flotilla/internal/agent/builtin/kueuequeues"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func newClient(t *testing.T, c *testenv.Cluster) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kueuev1beta2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(c.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// gpuJob is a Job of one pod asking gpus GPUs in the add-on's LocalQueue, which kwok completes
// after runFor. It is created unsuspended; Kueue's webhook suspends it.
func gpuJob(name string, gpus int64, runFor time.Duration) *batchv1.Job {
	q := *resource.NewQuantity(gpus, resource.DecimalSI)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: kueuequeues.LocalQueueNS, Name: name,
			Labels: map[string]string{queueLabel: kueuequeues.LocalQueueName}},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": runFor.String()}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
					Name: "train", Image: "trainer",
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{kueuequeues.GPUResource: q},
						Limits:   corev1.ResourceList{kueuequeues.GPUResource: q},
					},
				}}},
			},
		},
	}
}

// create creates obj and deletes it when the test ends.
func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
	})
}
