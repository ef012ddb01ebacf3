//go:build integration

package kueuequeues

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/flotilla/flotilla/internal/agent/builtin/kueuequeues"
	"github.com/flotilla/flotilla/internal/apitest"
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
	return apitest.MakeJob(kueuequeues.LocalQueueNS, name).Queue(kueuequeues.LocalQueueName).GPUs(gpus).RunFor(runFor).Obj()
}

// create creates obj and deletes it when the test ends.
func create(t *testing.T, c client.Client, obj client.Object) { testenv.Create(t, c, obj) }
