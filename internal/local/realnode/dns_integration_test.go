//go:build integration

package realnode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// dnsQueryEnv makes the test binary a DNS client (TestMain): "server name" asks server for name
// and prints its addresses, NXDOMAIN or the error. TestRealNode runs it inside a pod's network
// namespace (nsenter --net), so the query leaves from where the pod's do.
const dnsQueryEnv = "FLOTILLA_REALNODE_DNS_QUERY"

func TestMain(m *testing.M) {
	if q := os.Getenv(dnsQueryEnv); q != "" {
		fmt.Println(dnsQuery(q))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// dnsQuery answers a dnsQueryEnv request: the sorted addresses, comma-separated, or NXDOMAIN.
func dnsQuery(q string) string {
	server, name, ok := strings.Cut(q, " ")
	if !ok {
		return "bad query " + q
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := Resolver(net.JoinHostPort(server, "53")).LookupHost(ctx, name)
	var de *net.DNSError
	if errors.As(err, &de) && de.IsNotFound {
		return "NXDOMAIN"
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return strings.Join(addrs, ",")
}

// lookupFrom asks server for name from network namespace ns (dnsQuery, run by nsenter).
func lookupFrom(t *testing.T, ns, server, name string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("nsenter", "--net="+ns, "--", self)
	cmd.Env = append(os.Environ(), dnsQueryEnv+"="+server+" "+name)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("DNS query for %s in %s: %v\n%s", name, ns, err, out)
	}
	return strings.TrimSpace(string(out))
}

// checkDNS checks, from inside podNS (a pod of cluster b), that the pod's resolv.conf (which
// the kubelet asked containerd to write) names node b's CoreDNS and the search path, that
// CoreDNS answers for the kubernetes Service and a Service of cluster b, and that a Service of
// cluster a, which cluster a's CoreDNS answers for, does not exist for cluster b.
func checkDNS(ctx context.Context, t *testing.T, a, b *withNode, podNS string) {
	t.Helper()
	resolv := podResolvConf(t, b)
	wantResolv := map[string]string{
		"nameserver": b.network.NodeIP(),
		"search":     "default.svc.cluster.local svc.cluster.local cluster.local",
	}
	gotResolv := map[string]string{"nameserver": resolv["nameserver"], "search": firstFields(resolv["search"], 3)}
	if diff := cmp.Diff(wantResolv, gotResolv); diff != "" {
		t.Errorf("resolv.conf of a pod of cluster b (-want +got):\n%s", diff)
	}
	server := resolv["nameserver"]
	// CoreDNS serves TCP too (the lookups below go over UDP), for answers too long for a datagram.
	if !dialFrom(podNS, net.JoinHostPort(server, "53")) {
		t.Errorf("from a pod of cluster b, %s:53 over TCP does not answer", server)
	}

	// CoreDNS reads its cluster as its own user, who may read what names are made of and no more.
	cs := kubernetes.NewForConfigOrDie(b.cluster.Config)
	for _, tc := range []struct {
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		{authorizationv1.ResourceAttributes{Verb: "watch", Group: "discovery.k8s.io", Resource: "endpointslices"}, true},
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "services"}, true},
		{authorizationv1.ResourceAttributes{Verb: "watch", Resource: "namespaces"}, true},
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods"}, false},
		{authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: "default"}, false},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "services", Namespace: "default"}, false},
	} {
		sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: CoreDNSUser, ResourceAttributes: &tc.attrs,
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sar.Status.Allowed != tc.want {
			t.Errorf("%s may %s %s: %v, want %v", CoreDNSUser, tc.attrs.Verb, tc.attrs.Resource, sar.Status.Allowed, tc.want)
		}
	}

	svcB := createService(ctx, t, cs, "default", "only-in-b")
	onlyInA := "only-in-a.only-in-a.svc.cluster.local"
	createService(ctx, t, kubernetes.NewForConfigOrDie(a.cluster.Config), "only-in-a", "only-in-a")
	// The name exists where it was made: cluster a's CoreDNS answers for it.
	eventually(t, "cluster a's CoreDNS resolves "+onlyInA, func() (string, bool) {
		got := dnsQuery(a.network.NodeIP() + " " + onlyInA)
		return got, net.ParseIP(got) != nil
	})
	for _, tc := range []struct{ name, want string }{
		{"kubernetes.default.svc.cluster.local", "10.96.0.1"},
		{"only-in-b.default.svc.cluster.local", svcB.Spec.ClusterIP},
		{onlyInA, "NXDOMAIN"},
	} {
		eventually(t, fmt.Sprintf("%s resolves to %s from a pod of cluster b", tc.name, tc.want), func() (string, bool) {
			got := lookupFrom(t, podNS, server, tc.name)
			return got, got == tc.want
		})
	}
}

// eventually retries check for ten seconds (CoreDNS learns of a new Service by its watch).
func eventually(t *testing.T, what string, check func() (string, bool)) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, ok := check()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: got %q", what, got)
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// createService creates namespace ns if needed and a Service name in it, with a ClusterIP and
// no pods, and returns it.
func createService(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) *corev1.Service {
	t.Helper()
	if ns != "default" {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	svc, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// podResolvConf reads the resolv.conf containerd wrote, as the kubelet asked, for node x's one
// pod sandbox, keyed by its first word (nameserver, search, options); nameserver lines join.
func podResolvConf(t *testing.T, x *withNode) map[string]string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(x.node.Dir, "containerd", "root", "io.containerd.grpc.v1.cri", "sandboxes", "*", "resolv.conf"))
	if len(matches) != 1 {
		t.Fatalf("node %s: want its one pod sandbox's resolv.conf, found %v", x.node.Name, matches)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		key, value, _ := strings.Cut(strings.TrimSpace(line), " ")
		if key == "" {
			continue
		}
		if prev, ok := out[key]; ok {
			value = prev + " " + value
		}
		out[key] = value
	}
	return out
}

// firstFields is the first n space-separated fields of s: the kubelet appends the host's search
// domains to the cluster's.
func firstFields(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}
