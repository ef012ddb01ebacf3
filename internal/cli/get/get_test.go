package get

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
)

// contextNamespace is the namespace the fake hub's kubeconfig context names.
const contextNamespace = "research"

// fleet is what the fake hub holds, in no particular order.
func fleet() []client.Object {
	return []client.Object{
		makeCluster("edge-1", 5*time.Second).Accepted().
			Condition(condition(clusterv1.ManagedClusterConditionJoined, metav1.ConditionTrue)).
			Condition(condition(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionUnknown)).Obj(),
		makeCluster("gpu-east", 2*day+4*time.Hour).Accepted().Condition(healthy()...).
			Allocatable(clusterv1.ResourceNvidiaGPU, "16").GPUClaim("NVIDIA-A100-SXM4-80GB", "16").Obj(),
		makeSet("global", 30*day).LabelSelector(&metav1.LabelSelector{}).Condition(empty(metav1.ConditionFalse)).Obj(),
		makeSet("a100", 2*day).Condition(empty(metav1.ConditionFalse)).Obj(),
		makeBinding("team-inference", "global", 3*time.Minute).Condition(bound(metav1.ConditionTrue)).Obj(),
		makeBinding(contextNamespace, "global", time.Hour).Condition(bound(metav1.ConditionTrue)).Obj(),
		makeBinding(contextNamespace, "a100", 2*day).Condition(bound(metav1.ConditionTrue)).Obj(),
	}
}

// fakeHub returns a client constructor serving objs, and the flags it was last asked for (nil
// until asked).
func fakeHub(funcs interceptor.Funcs, objs ...client.Object) (kubeflags.ReaderFunc, **kubeflags.Flags) {
	var asked *kubeflags.Flags
	return func(kube kubeflags.Flags) (client.Reader, *kubeflags.Loaded, error) {
		asked = &kube
		c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
		return c, &kubeflags.Loaded{Namespace: contextNamespace, Source: kube.Kubeconfig}, nil
	}, &asked
}

// runGet runs `flotilla get args...` mounted under a root as root.go mounts commands.
func runGet(newClient kubeflags.ReaderFunc, args ...string) (stdout, stderr string, err error) {
	io, out, errOut := streams.Buffers()
	root := &cobra.Command{Use: "flotilla", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.AddCommand(newCommand(io, clocktesting.NewFakePassiveClock(now), newClient))
	root.SetArgs(append([]string{"get"}, args...))
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func TestGetTables(t *testing.T) {
	cases := map[string]struct {
		args       []string
		emptyHub   bool
		wantOut    string
		wantErrOut string
	}{
		"clusters": {
			args: []string{"clusters"},
			wantOut: lines(
				"NAME       ACCEPTED   JOINED   AVAILABLE   GPUS                       FREE-GPUS   AGE",
				"edge-1     true       True     Unknown     -                          -           5s",
				"gpu-east   true       True     True        16 NVIDIA-A100-SXM4-80GB   -           2d4h",
			),
		},
		"a short name in capitals": {
			args: []string{"MCL"},
			wantOut: lines(
				"NAME       ACCEPTED   JOINED   AVAILABLE   GPUS                       FREE-GPUS   AGE",
				"edge-1     true       True     Unknown     -                          -           5s",
				"gpu-east   true       True     True        16 NVIDIA-A100-SXM4-80GB   -           2d4h",
			),
		},
		"cluster sets ignore -n": {
			args: []string{"managedclustersets", "-n", "team-inference"},
			wantOut: lines(
				"NAME     SELECTOR                   EMPTY   AGE",
				"a100     ExclusiveClusterSetLabel   False   2d",
				"global   <all>                      False   30d",
			),
		},
		"bindings in the kubeconfig's namespace": {
			args: []string{"bindings"},
			wantOut: lines(
				"NAME     CLUSTERSET   BOUND   AGE",
				"a100     a100         True    2d",
				"global   global       True    60m",
			),
		},
		"bindings in another namespace": {
			args: []string{"mclsetbinding", "--namespace", "team-inference"},
			wantOut: lines(
				"NAME     CLUSTERSET   BOUND   AGE",
				"global   global       True    3m",
			),
		},
		"bindings in every namespace": {
			args: []string{"binding", "-A", "-n", "ignored"},
			wantOut: lines(
				"NAMESPACE        NAME     CLUSTERSET   BOUND   AGE",
				"research         a100     a100         True    2d",
				"research         global   global       True    60m",
				"team-inference   global   global       True    3m",
			),
		},
		"no bindings in a namespace": {
			args:       []string{"bindings", "-n", "nobody"},
			wantErrOut: "No resources found in nobody namespace.\n",
		},
		"no clusters": {
			args:       []string{"clusters"},
			emptyHub:   true,
			wantErrOut: "No resources found.\n",
		},
		"no bindings anywhere": {
			args:       []string{"bindings", "-A"},
			emptyHub:   true,
			wantErrOut: "No resources found.\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := fleet()
			if tc.emptyHub {
				objs = nil
			}
			newClient, asked := fakeHub(interceptor.Funcs{}, objs...)
			out, errOut, err := runGet(newClient, append(tc.args, "--kubeconfig", "hub.kubeconfig")...)
			if err != nil {
				t.Fatalf("get %v: %v", tc.args, err)
			}
			if *asked == nil || (*asked).Kubeconfig != "hub.kubeconfig" {
				t.Errorf("the client was built from flags %+v, want --kubeconfig hub.kubeconfig", *asked)
			}
			if diff := cmp.Diff(tc.wantOut, out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErrOut, errOut); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

// item is what a test checks of each printed object.
type item struct {
	APIVersion, Kind, Namespace, Name string
}

func TestGetObjects(t *testing.T) {
	const group = "cluster.open-cluster-management.io"
	cases := map[string]struct {
		args     []string
		emptyHub bool
		want     []item
	}{
		"clusters as yaml": {
			args: []string{"clusters", "-o", "yaml"},
			want: []item{
				{APIVersion: group + "/v1", Kind: "ManagedCluster", Name: "edge-1"},
				{APIVersion: group + "/v1", Kind: "ManagedCluster", Name: "gpu-east"},
			},
		},
		"cluster sets as json": {
			args: []string{"clustersets", "-o", "json"},
			want: []item{
				{APIVersion: group + "/v1beta2", Kind: "ManagedClusterSet", Name: "a100"},
				{APIVersion: group + "/v1beta2", Kind: "ManagedClusterSet", Name: "global"},
			},
		},
		"bindings in every namespace as yaml": {
			args: []string{"bindings", "-A", "-o", "yaml"},
			want: []item{
				{APIVersion: group + "/v1beta2", Kind: "ManagedClusterSetBinding", Namespace: "research", Name: "a100"},
				{APIVersion: group + "/v1beta2", Kind: "ManagedClusterSetBinding", Namespace: "research", Name: "global"},
				{APIVersion: group + "/v1beta2", Kind: "ManagedClusterSetBinding", Namespace: "team-inference", Name: "global"},
			},
		},
		"nothing as json is an empty list": {
			args:     []string{"clusters", "-o", "json"},
			emptyHub: true,
			want:     []item{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := fleet()
			if tc.emptyHub {
				objs = nil
			}
			newClient, _ := fakeHub(interceptor.Funcs{}, objs...)
			out, errOut, err := runGet(newClient, append(tc.args, "--kubeconfig", "hub.kubeconfig")...)
			if err != nil {
				t.Fatalf("get %v: %v\n%s", tc.args, err, errOut)
			}
			// yaml.Unmarshal reads JSON too; json.Valid tells the formats apart.
			if wantJSON := tc.args[len(tc.args)-1] == "json"; json.Valid([]byte(out)) != wantJSON {
				t.Errorf("output is JSON: %v, want %v:\n%s", !wantJSON, wantJSON, out)
			}
			var list struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Items      []struct {
					metav1.TypeMeta   `json:",inline"`
					metav1.ObjectMeta `json:"metadata"`
				} `json:"items"`
			}
			if err := yaml.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("decoding the output: %v\n%s", err, out)
			}
			if list.APIVersion != "v1" || list.Kind != "List" {
				t.Errorf("printed apiVersion %q kind %q, want v1 List", list.APIVersion, list.Kind)
			}
			got := []item{}
			for _, i := range list.Items {
				got = append(got, item{i.APIVersion, i.Kind, i.Namespace, i.Name})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("printed objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGetRejectsBadInput(t *testing.T) {
	noMatch := &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "cluster.open-cluster-management.io", Kind: "ManagedCluster"}, SearchedVersions: []string{"v1"}}
	cases := map[string]struct {
		args       []string
		listErr    error
		wantErrs   []string
		wantNoHub  bool
		wantOutput bool
	}{
		"no resource": {
			args:      []string{"--kubeconfig", "hub.kubeconfig"},
			wantErrs:  []string{"flotilla get takes one resource, got 0 arguments", "clusters (cluster, managedclusters, managedcluster, mcl, mcls)"},
			wantNoHub: true,
		},
		"two resources": {
			args:      []string{"clusters", "clustersets", "--kubeconfig", "hub.kubeconfig"},
			wantErrs:  []string{"got 2 arguments"},
			wantNoHub: true,
		},
		"unknown resource": {
			args:      []string{"pods", "--kubeconfig", "hub.kubeconfig"},
			wantErrs:  []string{`unknown resource "pods"`, "clustersets (clusterset, managedclustersets, managedclusterset, mclset, mclsets)", "bindings (binding, managedclustersetbindings"},
			wantNoHub: true,
		},
		"unknown output": {
			args:      []string{"clusters", "-o", "wide", "--kubeconfig", "hub.kubeconfig"},
			wantErrs:  []string{`--output (-o) "wide" is not supported for clusters`, "-o yaml or -o json", "-o wide is for federatedlearnings"},
			wantNoHub: true,
		},
		"CRDs not installed": {
			args:     []string{"clusters", "--kubeconfig", "hub.kubeconfig"},
			listErr:  noMatch,
			wantErrs: []string{"does not serve clusters", "flotilla install crds --kubeconfig hub.kubeconfig"},
		},
		"hub down": {
			args:     []string{"bindings", "--kubeconfig", "hub.kubeconfig"},
			listErr:  errors.New("connection refused"),
			wantErrs: []string{"listing bindings on the hub of kubeconfig hub.kubeconfig: connection refused"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			funcs := interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if tc.listErr != nil {
					return tc.listErr
				}
				return c.List(ctx, list, opts...)
			}}
			newClient, asked := fakeHub(funcs, fleet()...)
			out, errOut, err := runGet(newClient, tc.args...)
			if err == nil {
				t.Fatalf("get %v succeeded, want an error", tc.args)
			}
			for _, want := range tc.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if tc.wantNoHub && *asked != nil {
				t.Errorf("bad input reached the hub (flags %+v)", **asked)
			}
			if out != "" || errOut != "" {
				t.Errorf("a failed get printed stdout %q stderr %q", out, errOut)
			}
		})
	}
}

func TestNewHubClient(t *testing.T) {
	dir := t.TempDir()
	write := func(name, namespace string) string {
		ctx := "    cluster: hub\n    user: admin\n"
		if namespace != "" {
			ctx += "    namespace: " + namespace + "\n"
		}
		path := filepath.Join(dir, name)
		kubeconfig := "apiVersion: v1\nkind: Config\ncurrent-context: hub\n" +
			"clusters:\n- name: hub\n  cluster:\n    server: https://127.0.0.1:1\n" +
			"users:\n- name: admin\n  user:\n    token: t\n" +
			"contexts:\n- name: hub\n  context:\n" + ctx
		if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cases := map[string]struct {
		kubeconfig    string
		wantNamespace string
		wantErr       string
	}{
		"context names a namespace": {kubeconfig: write("team.kubeconfig", "research"), wantNamespace: "research"},
		"context names none":        {kubeconfig: write("admin.kubeconfig", ""), wantNamespace: "default"},
		"missing file":              {kubeconfig: filepath.Join(dir, "nope.kubeconfig"), wantErr: "--kubeconfig " + filepath.Join(dir, "nope.kubeconfig") + ": no such file"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, hub, err := kubeflags.NewHubReader(kubeflags.Flags{Kubeconfig: tc.kubeconfig})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("NewHubReader: err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c == nil {
				t.Fatal("NewHubReader returned no client")
			}
			if diff := cmp.Diff(tc.wantNamespace, hub.Namespace); diff != "" {
				t.Errorf("namespace (-want +got):\n%s", diff)
			}
		})
	}
}
