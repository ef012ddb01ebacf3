package procruntime

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

const testNS = "apps"

var testNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// tokenLog records the TokenRequests a fake clientset answered.
type tokenLog struct {
	mu       sync.Mutex
	requests []tokenRequest
}

type tokenRequest struct {
	ServiceAccount string
	Spec           authenticationv1.TokenRequestSpec
}

func (l *tokenLog) all() []tokenRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]tokenRequest(nil), l.requests...)
}

// newTestRuntime is a Runtime on a fake clientset holding objs (and the default ServiceAccount
// of testNS). Its TokenRequests answer "token-<n>:<sa>:<audiences>" expiring after the requested
// lifetime by the fake clock.
func newTestRuntime(t *testing.T, objs ...runtime.Object) (*Runtime, *clocktesting.FakePassiveClock, *tokenLog) {
	t.Helper()
	objs = append(objs, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "default"}})
	cs := fake.NewClientset(objs...)
	clk := clocktesting.NewFakePassiveClock(testNow)
	log := &tokenLog{}
	cs.PrependReactor("create", "serviceaccounts", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		name := a.(clienttesting.CreateActionImpl).Name
		if _, err := cs.Tracker().Get(corev1.SchemeGroupVersion.WithResource("serviceaccounts"), a.GetNamespace(), name); err != nil {
			return true, nil, err
		}
		req := a.(clienttesting.CreateAction).GetObject().(*authenticationv1.TokenRequest).DeepCopy()
		log.mu.Lock()
		log.requests = append(log.requests, tokenRequest{ServiceAccount: name, Spec: req.Spec})
		n := len(log.requests)
		log.mu.Unlock()
		req.Status.Token = fmt.Sprintf("token-%d:%s:%v", n, name, req.Spec.Audiences)
		req.Status.ExpirationTimestamp = metav1.NewTime(clk.Now().Add(time.Duration(*req.Spec.ExpirationSeconds) * time.Second))
		return true, req, nil
	})
	return &Runtime{
		Root:     t.TempDir(),
		Commands: map[string]string{"example.com/app": "/bin/true", "busybox": "/bin/sh"},
		Client:   cs,
		Server:   &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("test CA")}},
		Clock:    clk,
		allocatable: corev1.ResourceList{
			corev1.ResourceCPU:              resource.MustParse("8"),
			corev1.ResourceMemory:           resource.MustParse("16Gi"),
			corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		},
	}, clk, log
}

// tree lists the files under dir, following symbolic links as a container sees its mounts:
// path -> "mode content".
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(rel string)
	walk = func(rel string) {
		entries, err := os.ReadDir(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			p := filepath.Join(rel, e.Name())
			st, err := os.Stat(filepath.Join(dir, p))
			if err != nil {
				t.Fatal(err)
			}
			if st.IsDir() {
				walk(p)
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil {
				t.Fatal(err)
			}
			out["/"+p] = fmt.Sprintf("%04o %s", st.Mode().Perm(), data)
		}
	}
	walk("")
	return out
}

// waitExit waits for a started container to exit and returns its exit code.
func waitExit(t *testing.T, r *Running) int {
	t.Helper()
	select {
	case <-r.Done():
	case <-time.After(20 * time.Second):
		r.Stop(time.Second)
		t.Fatalf("%s did not exit", r.Pod())
	}
	code, _ := r.ExitCode()
	return code
}

func ptr[T any](v T) *T { return &v }

func typesUID(s string) types.UID { return types.UID(s) }
