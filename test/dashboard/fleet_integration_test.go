//go:build integration

package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const wait = 60 * time.Second

// fixture is a small fleet on the hub: two clusters of a set bound to ns, one with 16 H100s of
// which 8 are free, a placement of one cluster with gpu=h100, and a work on each cluster.
type fixture struct {
	env                *testenv.Env
	c                  client.Client
	ns                 string
	gpuCluster, cpu    string
	placement          *clusterv1beta1.Placement
	gpuWork, otherWork *workv1.ManifestWork
}

func newFixture(t *testing.T) *fixture {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := env.HubClient(t)
	f := &fixture{env: env, c: c, ns: env.Namespace(t, env.Hub), gpuCluster: env.Namespace(t, env.Hub), cpu: env.Namespace(t, env.Hub)}
	set := "dash-" + f.ns
	testenv.Create(t, c, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}}})
	testenv.Create(t, c, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: f.ns},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}})
	gpu := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: f.gpuCluster, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: set, "gpu": "h100"}},
		Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
	testenv.Create(t, c, gpu)
	testenv.Create(t, c, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: f.cpu, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: set}},
		Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}})
	writeStatus(t, c, gpu, func(mc *clusterv1.ManagedCluster) {
		mc.Status.Conditions = append(mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable,
			Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable", Message: "Managed cluster is available", LastTransitionTime: metav1.Now()})
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{
			{Name: clusterv1.GPUModelsClaim, Value: "NVIDIA-H100-80GB-HBM3"},
			{Name: clusterv1.GPUCountClaimName("NVIDIA-H100-80GB-HBM3"), Value: "16"},
		}
		mc.Status.Version.Kubernetes = "v1.37.2"
	})
	testenv.Create(t, c, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: f.gpuCluster, Name: clusterv1.ManagedClusterLeaseName},
		Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: time.Now().Add(-5 * time.Second)}}})
	usage := &usagev1alpha1.ResourceUsage{ObjectMeta: metav1.ObjectMeta{Namespace: f.gpuCluster, Name: usagev1alpha1.ResourceUsageName}}
	testenv.Create(t, c, usage)
	writeStatus(t, c, usage, func(u *usagev1alpha1.ResourceUsage) {
		u.Status = usagev1alpha1.ResourceUsageStatus{ObservedTime: ptr.To(metav1.Now()), ValidUntil: ptr.To(metav1.NewTime(time.Now().Add(time.Hour))), Nodes: 2,
			Resources: []usagev1alpha1.ResourceFigures{{Name: usagev1alpha1.ResourceNvidiaGPU, Model: "NVIDIA-H100-80GB-HBM3",
				Capacity: resource.MustParse("16"), Allocatable: resource.MustParse("16"), Requested: resource.MustParse("8"), Free: resource.MustParse("8"),
				LargestNodeAllocatable: resource.MustParse("8"), FreeNodes: []usagev1alpha1.NodesWithFree{{Free: resource.MustParse("4"), Nodes: 2}},
				Nodes: []usagev1alpha1.NodeFigures{{Name: "h-0", Allocatable: resource.MustParse("8"), Requested: resource.MustParse("4")},
					{Name: "h-1", Allocatable: resource.MustParse("8"), Requested: resource.MustParse("4")}}}}}
	})
	f.placement = &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "gpu"},
		Spec: clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](1), Tolerations: testenv.NoAgentTolerations(), Predicates: []clusterv1beta1.ClusterPredicate{{
			RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "h100"}}}}}}}
	testenv.Create(t, c, f.placement)
	f.gpuWork = newWork(t, c, f.gpuCluster, "train")
	f.otherWork = newWork(t, c, f.cpu, "serve")
	return f
}

func newWork(t *testing.T, c client.Client, ns, name string) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"default"}}`)}}}}}}
	testenv.Create(t, c, w)
	writeStatus(t, c, w, func(w *workv1.ManifestWork) {
		w.Status.Conditions = []metav1.Condition{
			{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "AppliedManifestWorkComplete", LastTransitionTime: metav1.Now()},
			{Type: workv1.WorkAvailable, Status: metav1.ConditionTrue, Reason: "ResourcesAvailable", LastTransitionTime: metav1.Now()},
		}
	})
	return w
}

func writeStatus[T client.Object](t *testing.T, c client.Client, obj T, mutate func(T)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate(obj)
		return c.Status().Update(context.Background(), obj)
	})
	if err != nil {
		t.Fatalf("writing the status of %T %s: %v", obj, obj.GetName(), err)
	}
}

// relabel sets (or, with value "", removes) label key on cluster.
func relabel(t *testing.T, c client.Client, cluster, key, value string) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
	testenv.Update(t, c, mc, func() {
		if value == "" {
			delete(mc.Labels, key)
		} else {
			mc.Labels[key] = value
		}
	})
}

// token makes service account name in ns, gives it rules with a ClusterRole bound in each of
// namespaces (cluster-wide when namespaces is empty), and returns a token of it.
func token(t testing.TB, env *testenv.Env, ns, name string, rules []rbacv1.PolicyRule, namespaces ...string) string {
	t.Helper()
	ctx := context.Background()
	cs := env.Hub.Client
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := "dashboard-test-" + ns + "-" + name
	if rules != nil {
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.RbacV1().ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{}) })
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}
	switch {
	case rules == nil:
	case len(namespaces) == 0:
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role}, RoleRef: ref, Subjects: subjects}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), role, metav1.DeleteOptions{})
		})
	default:
		for _, n := range namespaces {
			if _, err := cs.RbacV1().RoleBindings(n).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role}, RoleRef: ref, Subjects: subjects}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// kubeconfigOf writes a kubeconfig of the hub with tok.
func kubeconfigOf(t *testing.T, env *testenv.Env, name, tok string) string {
	t.Helper()
	cfg := env.Hub.RESTConfig()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: name}
	kc.CurrentContext = name
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// serve runs `flotilla dashboard --address 127.0.0.1:0 args...` and returns the URL it prints
// first; the process ends with the test.
func serve(t testing.TB, args ...string) string {
	url, _ := serveProcess(t, args...)
	return url
}

// serveProcess is serve, and the process.
func serveProcess(t testing.TB, args ...string) (string, *os.Process) {
	t.Helper()
	cmd := exec.Command(flotillaBin, append([]string{"dashboard", "--address", "127.0.0.1:0"}, args...)...)
	cmd.Stderr = os.Stderr
	url := testenv.StartFirstLine(t, cmd)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/") {
		t.Fatalf("flotilla dashboard's first line = %q, want its loopback URL", url)
	}
	return strings.TrimSuffix(url, "/"), cmd.Process
}

// getJSON GETs url with the bearer token tok ("" for none) and decodes the answer into out; it
// returns the status and the body.
func getJSON(t *testing.T, url, tok string, out any) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("GET %s: %v\n%s", url, err, b)
		}
	}
	return res.StatusCode, string(b)
}

// createClusters creates n ManagedClusters named prefix-00000... (no agents), 16 at a time.
func createClusters(t testing.TB, c client.Client, prefix string, n int, labels map[string]string) {
	createClustersFrom(t, c, prefix, 0, n, labels)
}

// createClustersFrom creates n ManagedClusters named prefix-FROM and on.
func createClustersFrom(t testing.TB, c client.Client, prefix string, from, n int, labels map[string]string) {
	t.Helper()
	inParallel(t, "creating clusters", from, n, func(i int) error {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%05d", prefix, i), Labels: labels},
			Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
		return c.Create(context.Background(), mc)
	})
	t.Cleanup(func() {
		_ = c.DeleteAllOf(context.Background(), &clusterv1.ManagedCluster{}, client.MatchingLabels{"dashboard-test": prefix})
	})
}

// inParallel runs do(i) for i from FROM, n of them, 16 at a time, and fails on the first error.
func inParallel(t testing.TB, what string, from, n int, do func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		next <- from + i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("%s (%d): %v", what, n, err)
	}
}

func jsonDecode(res *http.Response, out any) error { return json.NewDecoder(res.Body).Decode(out) }
