//go:build integration

package localk8s_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestFleetStarts(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2})
	type component struct{ Cluster, Name string }
	var got []component
	for _, c := range append([]*testenv.Cluster{env.Hub}, env.Spokes...) {
		v, err := c.Client.Discovery().ServerVersion()
		if err != nil {
			t.Fatalf("%s: asking the API server its version: %v", c.Name, err)
		}
		if v.GitVersion != localk8s.KubernetesVersion {
			t.Errorf("%s: API server reports version %q, want %q (are the version ldflags set?)", c.Name, v.GitVersion, localk8s.KubernetesVersion)
		}
		for _, p := range c.Processes() {
			got = append(got, component{c.Name, p.Name})
		}
	}
	want := []component{
		{"hub", "hub/kube-apiserver"}, {"hub", "hub/kube-controller-manager"},
		{"spoke-1", "spoke-1/kube-apiserver"}, {"spoke-1", "spoke-1/kube-controller-manager"},
		{"spoke-1", "spoke-1/kube-scheduler"}, {"spoke-1", "spoke-1/kwok"},
		{"spoke-2", "spoke-2/kube-apiserver"}, {"spoke-2", "spoke-2/kube-controller-manager"},
		{"spoke-2", "spoke-2/kube-scheduler"}, {"spoke-2", "spoke-2/kwok"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("running components (-want +got):\n%s", diff)
	}
	// The clusters share an etcd but not their data: a namespace on one is not on another.
	ns := env.Namespace(t, env.Spokes[0])
	if _, err := env.Spokes[1].Client.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); err == nil {
		t.Errorf("namespace %s created on spoke-1 is visible on spoke-2: the clusters' etcd prefixes overlap", ns)
	}
}

// gpuJob is a Job of pods pods of gpusPerPod GPUs each, which kwok completes after a second.
func gpuJob(ns, name string, pods int32, gpusPerPod int64) *batchv1.Job {
	return apitest.MakeJob(ns, name).Pods(pods).GPUs(gpusPerPod).Image("registry.example/train:v1").RunFor(time.Second).Obj()
}

var a100 = localk8s.NodePool{
	Name: "a100", Count: 2, GPUModel: "NVIDIA-A100-SXM4-80GB", GPUs: 8,
	CPU: resource.MustParse("96"), Memory: resource.MustParse("1Ti"),
}

func TestGPUJobRunsToCompletion(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 1})
	spoke := env.Spokes[0]
	env.AddNodes(t, spoke, a100)
	ns := env.Namespace(t, spoke)
	ctx := context.Background()
	// Two pods of 8 GPUs each fill both nodes: the scheduler must place one on each.
	job, err := spoke.Client.BatchV1().Jobs(ns).Create(ctx, gpuJob(ns, "train", 2, 8), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 90*time.Second, "job "+ns+"/train to complete", func(ctx context.Context) (bool, string, error) {
		j, err := spoke.Client.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
				return false, "", fmt.Errorf("job failed: %s", c.Message)
			}
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("active=%d succeeded=%d", j.Status.Active, j.Status.Succeeded), nil
	})
	pods, err := spoke.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=train"})
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodSucceeded {
			t.Errorf("pod %s is %s, want Succeeded", p.Name, p.Status.Phase)
		}
		nodes[p.Spec.NodeName] = true
	}
	if diff := cmp.Diff(map[string]bool{"a100-0": true, "a100-1": true}, nodes); diff != "" {
		t.Errorf("nodes the job's pods ran on (-want +got):\n%s", diff)
	}
}

func TestJobAskingTooManyGPUsStaysPending(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2})
	spoke := env.Spokes[1]
	env.AddNodes(t, spoke, a100)
	ns := env.Namespace(t, spoke)
	if _, err := spoke.Client.BatchV1().Jobs(ns).Create(context.Background(), gpuJob(ns, "too-big", 1, 16), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	testenv.WaitFor(t, 60*time.Second, "the scheduler to report the 16-GPU pod unschedulable", func(ctx context.Context) (bool, string, error) {
		pods, err := spoke.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=too-big"})
		if err != nil || len(pods.Items) == 0 {
			return false, "no pod yet", err
		}
		pod = pods.Items[0]
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("phase=%s conditions=%v", pod.Status.Phase, pod.Status.Conditions), nil
	})
	if pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" {
		t.Errorf("pod %s: phase=%s node=%q, want Pending on no node", pod.Name, pod.Status.Phase, pod.Spec.NodeName)
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && !strings.Contains(c.Message, "Insufficient nvidia.com/gpu") {
			t.Errorf("PodScheduled message = %q, want the scheduler's reason naming Insufficient nvidia.com/gpu", c.Message)
		}
	}
}
