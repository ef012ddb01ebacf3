//go:build integration

package explain

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/certs"
	explaincli "github.com/flotilla/flotilla/internal/cli/explain"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/core/placementview"
	"github.com/flotilla/flotilla/internal/core/scheduler"
	"github.com/flotilla/flotilla/internal/hub/explain"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{CRDs: true})) }

const wait = 60 * time.Second

// startHub runs the hub, with its explanation server on a free loopback port and a certificate
// from an authority of the test's, as its generated roles until the test ends. It returns the
// server's base URL, an HTTP client that trusts it, and the file of its authority.
func startHub(t *testing.T, env *testenv.Env) (string, *http.Client, string) {
	t.Helper()
	dir, pool := serverCert(t)
	opts := testenv.TestHubOptions()
	opts.ExplainAddress, opts.ExplainCertDir = freeAddress(t), dir
	env.StartHub(t, opts)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	return "https://" + opts.ExplainAddress, hc, filepath.Join(dir, "ca.crt")
}

// serverCert writes a serving certificate for 127.0.0.1 and its authority (ca.crt) into a new
// directory, and returns it and a pool holding the authority.
func serverCert(t *testing.T) (string, *x509.CertPool) {
	t.Helper()
	now := time.Now()
	ca, err := certs.NewCA("explain-test-ca", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue(x509.Certificate{Subject: pkix.Name{CommonName: "explain-test"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{explain.CertFile: certPEM, explain.KeyFile: keyPEM, "ca.crt": ca.CertPEM()} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM())
	return dir, pool
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

func admin(t *testing.T, env *testenv.Env) client.Client {
	t.Helper()
	c, err := client.New(env.Hub.RESTConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// create creates obj and deletes it when the test ends.
func create(t *testing.T, c client.Client, obj client.Object) { testenv.Create(t, c, obj) }

// caller makes service account name in ns, with a Role of rules when any, and returns its token.
func caller(t *testing.T, env *testenv.Env, ns, name string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	cs := env.Hub.Client
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(rules) > 0 {
		if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}}
		if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// answer is one response: its code and body.
type answer struct {
	code int
	body []byte
}

func (a answer) String() string { return fmt.Sprintf("%d %s", a.code, bytes.TrimSpace(a.body)) }

func do(ctx context.Context, hc *http.Client, method, url, token, body string) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, b}, err
}

// local is what placementview gives for p from the hub's objects read now by the administrator,
// as `flotilla explain placement` computes it.
func local(ctx context.Context, c client.Client, p *clusterv1beta1.Placement) (placementview.Output, error) {
	var (
		clusters  clusterv1.ManagedClusterList
		sets      clusterv1beta2.ManagedClusterSetList
		bindings  clusterv1beta2.ManagedClusterSetBindingList
		scores    clusterv1alpha1.AddOnPlacementScoreList
		decisions clusterv1beta1.PlacementDecisionList
	)
	for _, l := range []client.ObjectList{&clusters, &sets, &scores, &decisions} {
		if err := c.List(ctx, l); err != nil {
			return placementview.Output{}, err
		}
	}
	if err := c.List(ctx, &bindings, client.InNamespace(p.Namespace)); err != nil {
		return placementview.Output{}, err
	}
	objs := &placementview.Objects{Clusters: clusters.Items, Sets: sets.Items, Bindings: bindings.Items, Scores: scores.Items, Decisions: decisions.Items}
	res := scheduler.New(clock.RealClock{}).Schedule(p, placementview.SnapshotFrom(objs, p.Namespace, p.Name))
	return roundTrip(placementview.NewOutput(p.Namespace, p.Name, &res))
}

func roundTrip(o placementview.Output) (placementview.Output, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return placementview.Output{}, err
	}
	var out placementview.Output
	err = json.Unmarshal(b, &out)
	return out, err
}

// status decodes an error answer.
func status(t *testing.T, a answer) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(a.body, &st); err != nil || st.Kind != "Status" {
		t.Fatalf("answer %s is not a Status: %v", a, err)
	}
	return st
}

// sameExplanation compares explanations made at different times: conditions' transition times
// are when each was computed.
var sameExplanation = cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")

func TestExplainOverHTTPS(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := admin(t, env)
	ctx := context.Background()
	ns := env.Namespace(t, env.Hub)
	set := "ex-" + ns
	create(t, c, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}}})
	create(t, c, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: ns},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}})
	for name, gpu := range map[string]bool{"gpu-a": true, "gpu-b": true, "cpu-a": false} {
		l := map[string]string{clusterv1beta2.ClusterSetLabel: set}
		if gpu {
			l["gpu"] = "h100"
		}
		create(t, c, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name, Labels: l}})
	}
	gpu := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gpu"},
		Spec: clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](1), Tolerations: testenv.NoAgentTolerations(), Predicates: []clusterv1beta1.ClusterPredicate{{
			RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "h100"}}}}}}}
	create(t, c, gpu)

	base, hc, caFile := startHub(t, env)
	reader := caller(t, env, ns, "reader", rbacv1.PolicyRule{APIGroups: []string{explain.Group}, Resources: []string{"placements"}, Verbs: []string{"get"}})
	writer := caller(t, env, ns, "writer", rbacv1.PolicyRule{APIGroups: []string{explain.Group}, Resources: []string{"placements"}, Verbs: []string{"create"}})
	nobody := caller(t, env, ns, "nobody")
	getURL := base + explain.PathPrefix + ns + "/placements/gpu"
	postURL := base + explain.PathPrefix + ns + "/placements"

	t.Run("a caller allowed to get the placement receives placementview's explanation", func(t *testing.T) {
		// The hub's cache and controller catch up, and the new RoleBinding reaches the authorizer.
		var last string
		testenv.WaitFor(t, wait, "the hub's explanation to equal the local one", func(ctx context.Context) (bool, string, error) {
			a, err := do(ctx, hc, "GET", getURL, reader, "")
			if err != nil {
				return false, err.Error(), nil
			}
			if a.code != http.StatusOK {
				return false, a.String(), nil
			}
			var got placementview.Output
			if err := json.Unmarshal(a.body, &got); err != nil {
				return false, "", fmt.Errorf("decoding %s: %w", a, err)
			}
			p := &clusterv1beta1.Placement{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(gpu), p); err != nil {
				return false, "", err
			}
			want, err := local(ctx, c, p)
			if err != nil {
				return false, "", err
			}
			if len(want.Decisions) != 1 || len(want.Clusters) != 3 {
				return false, fmt.Sprintf("local explanation %+v: want one decision among three clusters", want), nil
			}
			last = cmp.Diff(want, got, sameExplanation)
			return last == "", "explanation (-local +hub):\n" + last, nil
		})
	})

	t.Run("a caller without get is refused with the reason", func(t *testing.T) {
		a, err := do(ctx, hc, "GET", getURL, nobody, "")
		if err != nil {
			t.Fatal(err)
		}
		st := status(t, a)
		want := fmt.Sprintf(`user "system:serviceaccount:%s:nobody" cannot get placements.cluster.open-cluster-management.io "gpu" in namespace %q`, ns, ns)
		if a.code != http.StatusForbidden || !strings.Contains(st.Message, want) {
			t.Errorf("answer %s, want 403 holding %q", a, want)
		}
	})

	t.Run("no token is 401, a bad token too", func(t *testing.T) {
		for what, token := range map[string]string{"no token": "", "a bad token": "not-a-token"} {
			a, err := do(ctx, hc, "GET", getURL, token, "")
			if err != nil {
				t.Fatal(err)
			}
			if a.code != http.StatusUnauthorized || !strings.Contains(status(t, a).Message, "Authorization: Bearer") {
				t.Errorf("%s: answer %s, want 401 saying how to send a token", what, a)
			}
		}
	})

	t.Run("a missing placement is 404", func(t *testing.T) {
		a, err := do(ctx, hc, "GET", base+explain.PathPrefix+ns+"/placements/nope", reader, "")
		if err != nil {
			t.Fatal(err)
		}
		if want := "placement " + ns + "/nope is not on the hub"; a.code != http.StatusNotFound || !strings.Contains(status(t, a).Message, want) {
			t.Errorf("answer %s, want 404 holding %q", a, want)
		}
	})

	whatIf := `apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: cpu-what-if
spec:
  predicates:
  - requiredClusterSelector:
      labelSelector:
        matchExpressions:
        - {key: gpu, operator: DoesNotExist}
  tolerations:
  - {key: cluster.open-cluster-management.io/unreachable, operator: Exists}
  - {key: cluster.open-cluster-management.io/unavailable, operator: Exists}
`
	t.Run("a what-if is explained and not created", func(t *testing.T) {
		var a answer
		testenv.WaitFor(t, wait, "the writer's RoleBinding to take effect", func(ctx context.Context) (bool, string, error) {
			var err error
			a, err = do(ctx, hc, "POST", postURL, writer, whatIf)
			if err != nil {
				return false, err.Error(), nil
			}
			return a.code != http.StatusForbidden, a.String(), nil
		})
		if a.code != http.StatusOK {
			t.Fatalf("answer %s, want 200", a)
		}
		var got placementview.Output
		if err := json.Unmarshal(a.body, &got); err != nil {
			t.Fatal(err)
		}
		p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cpu-what-if"},
			Spec: clusterv1beta1.PlacementSpec{Tolerations: testenv.NoAgentTolerations(), Predicates: []clusterv1beta1.ClusterPredicate{{
				RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "gpu", Operator: metav1.LabelSelectorOpDoesNotExist}}}}}}}}
		want, err := local(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, sameExplanation); diff != "" {
			t.Errorf("what-if explanation (-local +hub):\n%s", diff)
		}
		if len(got.Decisions) != 1 || got.Decisions[0].ClusterName != ns+"-cpu-a" {
			t.Errorf("what-if decisions %+v, want only %s-cpu-a", got.Decisions, ns)
		}
		err = c.Get(ctx, client.ObjectKeyFromObject(p), &clusterv1beta1.Placement{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("placement %s/cpu-what-if after the what-if: %v, want not found", ns, err)
		}
	})

	t.Run("a what-if needs create, get is not enough", func(t *testing.T) {
		a, err := do(ctx, hc, "POST", postURL, reader, whatIf)
		if err != nil {
			t.Fatal(err)
		}
		if want := "cannot create placements"; a.code != http.StatusForbidden || !strings.Contains(status(t, a).Message, want) {
			t.Errorf("answer %s, want 403 holding %q", a, want)
		}
	})

	t.Run("a malformed what-if is 400 naming the field", func(t *testing.T) {
		body := strings.Replace(whatIf, "predicates:", "predicatez:", 1)
		a, err := do(ctx, hc, "POST", postURL, writer, body)
		if err != nil {
			t.Fatal(err)
		}
		if want := `unknown field "spec.predicatez"`; a.code != http.StatusBadRequest || !strings.Contains(status(t, a).Message, want) {
			t.Errorf("answer %s, want 400 holding %q", a, want)
		}
	})

	t.Run("flotilla explain placement --via-hub prints the hub's answer", func(t *testing.T) {
		kubeconfig := filepath.Join(t.TempDir(), "reader.kubeconfig")
		cfg := env.Hub.RESTConfig()
		kc := clientcmdapi.NewConfig()
		kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
		kc.AuthInfos["reader"] = &clientcmdapi.AuthInfo{Token: reader}
		kc.Contexts["reader"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "reader", Namespace: ns}
		kc.CurrentContext = "reader"
		if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
			t.Fatal(err)
		}
		// The hub answers from its cache, the local explanation from the API server: they agree
		// once the cache has caught up with the placement's latest decisions.
		testenv.WaitFor(t, wait, "the hub's answer through the command to equal the local explanation", func(ctx context.Context) (bool, string, error) {
			io, out, _ := streams.Buffers()
			root := &cobra.Command{Use: "flotilla", SilenceUsage: true, SilenceErrors: true}
			root.AddCommand(explaincli.NewCommand(io, clock.RealClock{}))
			root.SetArgs([]string{"explain", "placement", "gpu", "-o", "json", "--kubeconfig", kubeconfig, "--via-hub", base, "--via-hub-ca", caFile})
			if err := root.ExecuteContext(ctx); err != nil {
				return false, "", err
			}
			var got placementview.Output
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				return false, "", fmt.Errorf("decoding %s: %w", out, err)
			}
			p := &clusterv1beta1.Placement{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(gpu), p); err != nil {
				return false, "", err
			}
			want, err := local(ctx, c, p)
			if err != nil {
				return false, "", err
			}
			diff := cmp.Diff(want, got, sameExplanation)
			return diff == "", "explanation (-local +hub):\n" + diff, nil
		})
	})
}
