package get

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/apitest"
)

// clientSince is when every test client entered its state.
var clientSince = now.Add(-time.Minute)

// makeFL is a FederatedLearning of framework running rounds rounds, created age ago; it has no
// status.
func makeFL(namespace, name string, framework flv1alpha1.Framework, rounds int32, age time.Duration) *apitest.FederatedLearningWrapper {
	return apitest.MakeFederatedLearning(namespace, name).Created(now.Add(-age)).Framework(framework).Rounds(rounds).MinClients(1)
}

// federation is a Flower training in its third of five rounds on three of three clusters, an
// OpenFL one that finished, one that waits for clusters, a new one nobody reconciled yet, and
// one in another namespace that failed.
func federation() []client.Object {
	return []client.Object{
		makeFL("research", "mnist", flv1alpha1.FrameworkFlower, 5, 2*time.Hour).Phase(flv1alpha1.PhaseRunning, "round 2 of 5 aggregated").
			Client("gpu-east", flv1alpha1.ClientRunning, "", "", clientSince).
			Client("gpu-west", flv1alpha1.ClientRunning, "", "", clientSince).
			Client("edge-1", flv1alpha1.ClientRunning, "", "", clientSince).
			Progress(2, 5, "loss", "0.2812", "accuracy", "0.9123").Obj(),
		makeFL("research", "fraud", flv1alpha1.FrameworkOpenFL, 3, 3*day).Phase(flv1alpha1.PhaseCompleted, "the model is stored in /models").
			Client("bank-a", flv1alpha1.ClientRunning, "", "", clientSince).
			Client("bank-b", flv1alpha1.ClientLost, "", "", clientSince).
			Client("bank-c", flv1alpha1.ClientRunning, "", "", clientSince).
			Progress(3, 0, "accuracy", "0.97").Obj(),
		makeFL("research", "waiting", flv1alpha1.FrameworkFlower, 10, 5*time.Minute).
			Phase(flv1alpha1.PhaseWaiting, "1 of 2 clients running, 2 needed").
			Client("gpu-east", flv1alpha1.ClientRunning, "", "", clientSince).
			Client("edge-1", flv1alpha1.ClientExcluded, "", "", clientSince).
			Client("gpu-west", flv1alpha1.ClientPending, "", "", clientSince).Obj(),
		makeFL("research", "new", "", 0, 3*time.Second).Obj(),
		makeFL("team-b", "llm", flv1alpha1.FrameworkFlower, 2, time.Hour).
			Phase(flv1alpha1.PhaseFailed, "the ServerApp failed:\n  Traceback (most recent call last): ValueError: the model does not fit").Obj(),
	}
}

func TestPrintFederatedLearnings(t *testing.T) {
	manyMetrics := makeFL("research", "many", flv1alpha1.FrameworkOther, 0, time.Minute).Phase(flv1alpha1.PhaseRunning, "").
		Progress(7, 0, "val_loss", "0.3", "accuracy", "0.91", "loss", "0.28", "f1", "0.88", "precision", "0.9", "recall", "0.87").Obj()
	longMetric := makeFL("research", "long", flv1alpha1.FrameworkOther, 4, time.Minute).
		Progress(1, 4, "a_metric_whose_name_goes_on_and_on_and_on", "12345", "b", "1").Obj()
	longMessage := makeFL("research", "verbose", flv1alpha1.FrameworkOpenFL, 4, time.Minute).
		Phase(flv1alpha1.PhaseFailed, strings.Repeat("the aggregator stopped ", 10)).Obj()
	cases := map[string]struct {
		items         []client.Object
		allNamespaces bool
		wide          bool
		want          string
	}{
		"every phase": {
			items: federation(),
			want: lines(
				"NAME      FRAMEWORK   PHASE       ROUND   CLIENTS   METRICS                       AGE",
				"mnist     flower      Running     2/5     3/3       accuracy=0.9123 loss=0.2812   120m",
				"fraud     openfl      Completed   3/3     2/2       accuracy=0.97                 3d",
				"waiting   flower      Waiting     -       1/3       -                             5m",
				"new       -           -           -       -         -                             3s",
				"llm       flower      Failed      -       -         -                             60m",
			),
		},
		"every namespace, wide": {
			items:         federation()[3:],
			allNamespaces: true,
			wide:          true,
			want: lines(
				"NAMESPACE   NAME   FRAMEWORK   PHASE    ROUND   CLIENTS   METRICS   AGE   MESSAGE",
				"research    new    -           -        -       -         -         3s    -",
				"team-b      llm    flower      Failed   -       -         -         60m   the ServerApp failed: Traceback (most recent call last): ValueError: the model does not fit",
			),
		},
		"metrics that do not fit, and a message cut": {
			items: []client.Object{manyMetrics, longMetric, longMessage},
			wide:  true,
			want: lines(
				"NAME      FRAMEWORK   PHASE     ROUND   CLIENTS   METRICS                                            AGE   MESSAGE",
				"many      other       Running   7       -         accuracy=0.91 f1=0.88 loss=0.28 +3 more            60s   -",
				"long      other       -         1/4     -         a_metric_whose_name_goes_on_and_on_an... +1 more   60s   -",
				"verbose   openfl      Failed    -       -         -                                                  60s   "+
					"the aggregator stopped the aggregator stopped the aggregator stopped the aggregator stopped the a...",
			),
		},
		"none prints the header": {
			want: lines("NAME   FRAMEWORK   PHASE   ROUND   CLIENTS   METRICS   AGE"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			list := &flv1alpha1.FederatedLearningList{}
			for _, o := range tc.items {
				list.Items = append(list.Items, *o.(*flv1alpha1.FederatedLearning))
			}
			var out bytes.Buffer
			if err := printFederatedLearnings(&out, list, clocktesting.NewFakePassiveClock(now), tc.allNamespaces, tc.wide); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("table (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFederatedLearningCells(t *testing.T) {
	cases := map[string]struct {
		got, want string
	}{
		"no progress":                  {got: round(makeFL("ns", "a", "", 5, 0).Obj()), want: "-"},
		"round 0 of the spec's":        {got: round(makeFL("ns", "a", "", 5, 0).Progress(0, 0).Obj()), want: "0/5"},
		"the server's rounds win":      {got: round(makeFL("ns", "a", "", 5, 0).Progress(2, 6).Obj()), want: "2/6"},
		"no clients":                   {got: clients(nil), want: "-"},
		"lost clients are not counted": {got: clients(makeFL("ns", "a", "", 0, 0).Client("a", flv1alpha1.ClientLost, "", "", clientSince).Client("b", flv1alpha1.ClientPending, "", "", clientSince).Obj().Status.Clients), want: "0/1"},
		"metrics with no entries":      {got: metrics(&flv1alpha1.TrainingProgress{Round: 1}), want: "-"},
		"a value with a line break":    {got: metrics(makeFL("ns", "a", "", 0, 0).Progress(1, 1, "note", "a\nb").Obj().Status.Progress), want: "note=a b"},
		"exactly the width":            {got: metrics(makeFL("ns", "a", "", 0, 0).Progress(1, 1, "m", strings.Repeat("9", 38)).Obj().Status.Progress), want: "m=" + strings.Repeat("9", 38)},
		"cut unicode by characters":    {got: truncate(strings.Repeat("é", 6), 5), want: "éé..."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestGetFederatedLearnings(t *testing.T) {
	cases := map[string]struct {
		args       []string
		wantOut    string
		wantErrOut string
	}{
		"by short name, in the kubeconfig's namespace": {
			args: []string{"fl"},
			wantOut: lines(
				"NAME      FRAMEWORK   PHASE       ROUND   CLIENTS   METRICS                       AGE",
				"fraud     openfl      Completed   3/3     2/2       accuracy=0.97                 3d",
				"mnist     flower      Running     2/5     3/3       accuracy=0.9123 loss=0.2812   120m",
				"new       -           -           -       -         -                             3s",
				"waiting   flower      Waiting     -       1/3       -                             5m",
			),
		},
		"in another namespace, wide": {
			args: []string{"federatedlearnings", "-n", "team-b", "-o", "wide"},
			wantOut: lines(
				"NAME   FRAMEWORK   PHASE    ROUND   CLIENTS   METRICS   AGE   MESSAGE",
				"llm    flower      Failed   -       -         -         60m   the ServerApp failed: Traceback (most recent call last): ValueError: the model does not fit",
			),
		},
		"in every namespace": {
			args: []string{"FederatedLearning", "-A"},
			wantOut: lines(
				"NAMESPACE   NAME      FRAMEWORK   PHASE       ROUND   CLIENTS   METRICS                       AGE",
				"research    fraud     openfl      Completed   3/3     2/2       accuracy=0.97                 3d",
				"research    mnist     flower      Running     2/5     3/3       accuracy=0.9123 loss=0.2812   120m",
				"research    new       -           -           -       -         -                             3s",
				"research    waiting   flower      Waiting     -       1/3       -                             5m",
				"team-b      llm       flower      Failed      -       -         -                             60m",
			),
		},
		"none in a namespace": {
			args:       []string{"fls", "-n", "nobody", "-o", "wide"},
			wantErrOut: "No resources found in nobody namespace.\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			newClient, _ := fakeHub(interceptor.Funcs{}, federation()...)
			out, errOut, err := runGet(newClient, tc.args...)
			if err != nil {
				t.Fatalf("get %v: %v", tc.args, err)
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

func TestGetFederatedLearningsAsObjects(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			newClient, _ := fakeHub(interceptor.Funcs{}, federation()...)
			out, _, err := runGet(newClient, "fl", "-A", "-o", format)
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			if json.Valid([]byte(out)) != (format == "json") {
				t.Errorf("-o %s printed:\n%s", format, out)
			}
			var list struct {
				Items []flv1alpha1.FederatedLearning `json:"items"`
			}
			if err := yaml.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("reading %s: %v", out, err)
			}
			var got []string
			for _, fl := range list.Items {
				got = append(got, strings.Join([]string{fl.APIVersion, fl.Kind, fl.Namespace + "/" + fl.Name, string(fl.Status.Phase), round(&fl)}, " "))
			}
			want := []string{
				"federation-ai.open-cluster-management.io/v1alpha1 FederatedLearning research/fraud Completed 3/3",
				"federation-ai.open-cluster-management.io/v1alpha1 FederatedLearning research/mnist Running 2/5",
				"federation-ai.open-cluster-management.io/v1alpha1 FederatedLearning research/new  -",
				"federation-ai.open-cluster-management.io/v1alpha1 FederatedLearning research/waiting Waiting -",
				"federation-ai.open-cluster-management.io/v1alpha1 FederatedLearning team-b/llm Failed -",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("printed FederatedLearnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGetFederatedLearningsRejectsBadInput(t *testing.T) {
	cases := map[string]struct {
		args    []string
		wantErr string
	}{
		"-c: not kept per cluster": {
			args:    []string{"fl", "-c", "gpu-east"},
			wantErr: `--cluster (-c) "gpu-east": federatedlearnings are not kept per cluster; leave -c out`,
		},
		"an output nobody prints": {
			args:    []string{"fl", "-o", "table"},
			wantErr: `--output (-o) "table" is not supported: use -o yaml or -o json, -o wide for federatedlearnings, or leave it out for a table`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			newClient, asked := fakeHub(interceptor.Funcs{}, federation()...)
			out, errOut, err := runGet(newClient, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("get %v: err = %v, want one saying %q", tc.args, err, tc.wantErr)
			}
			if *asked != nil {
				t.Errorf("bad input reached the hub (flags %+v)", **asked)
			}
			if out != "" || errOut != "" {
				t.Errorf("a failed get printed stdout %q stderr %q", out, errOut)
			}
		})
	}
}
