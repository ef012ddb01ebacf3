package get

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/hub/workreplicaset"
)

// makeWork is a ManifestWork for cluster (its namespace) with n ConfigMap manifests, created
// age ago.
func makeWork(cluster, name string, n int, age time.Duration) *apitest.WorkWrapper {
	w := apitest.MakeWork(cluster, name).Created(now.Add(-age))
	for i := range n {
		w.Object("v1", "ConfigMap", "default", name+"-"+string(rune('a'+i)))
	}
	return w
}

// works are a completed Job from a replica set, a work that failed to apply, a Job that is not
// available yet on another cluster, and a work no agent has reported on.
func works() []client.Object {
	return []client.Object{
		makeWork("gpu-east", "train", 1, 2*day).Label(workreplicaset.SetLabel, "research.train.v2").
			Condition(condition(workv1.WorkApplied, metav1.ConditionTrue)).
			Condition(condition(workv1.WorkAvailable, metav1.ConditionTrue)).
			Condition(condition(workv1.WorkComplete, metav1.ConditionTrue)).Obj(),
		makeWork("gpu-east", "web", 3, time.Hour).
			Condition(condition(workv1.WorkApplied, metav1.ConditionFalse)).Obj(),
		makeWork("gpu-west", "train", 1, 3*time.Minute).Label(workreplicaset.SetLabel, "research.train.v2").
			Condition(condition(workv1.WorkApplied, metav1.ConditionTrue)).
			Condition(condition(workv1.WorkAvailable, metav1.ConditionFalse)).
			Condition(condition(workv1.WorkComplete, metav1.ConditionFalse)).Obj(),
		makeWork("gpu-west", "new", 0, 5*time.Second).Obj(),
	}
}

func TestGetWorks(t *testing.T) {
	cases := map[string]struct {
		args       []string
		wantOut    string
		wantErrOut string
	}{
		"of a cluster": {
			args: []string{"works", "-c", "gpu-east"},
			wantOut: lines(
				"NAME    MANIFESTS   APPLIED   AVAILABLE   COMPLETE   REPLICASET          AGE",
				"train   1           True      True        True       research/train.v2   2d",
				"web     3           False     Unknown     -          -                   60m",
			),
		},
		"of a cluster by its namespace, by a short name": {
			args: []string{"mw", "-n", "gpu-west"},
			wantOut: lines(
				"NAME    MANIFESTS   APPLIED   AVAILABLE   COMPLETE   REPLICASET          AGE",
				"new     0           Unknown   Unknown     -          -                   5s",
				"train   1           True      False       False      research/train.v2   3m",
			),
		},
		"-c and the same -n": {
			args: []string{"manifestwork", "-c", "gpu-west", "-n", "gpu-west"},
			wantOut: lines(
				"NAME    MANIFESTS   APPLIED   AVAILABLE   COMPLETE   REPLICASET          AGE",
				"new     0           Unknown   Unknown     -          -                   5s",
				"train   1           True      False       False      research/train.v2   3m",
			),
		},
		"of every cluster": {
			args: []string{"works", "-A"},
			wantOut: lines(
				"NAMESPACE   NAME    MANIFESTS   APPLIED   AVAILABLE   COMPLETE   REPLICASET          AGE",
				"gpu-east    train   1           True      True        True       research/train.v2   2d",
				"gpu-east    web     3           False     Unknown     -          -                   60m",
				"gpu-west    new     0           Unknown   Unknown     -          -                   5s",
				"gpu-west    train   1           True      False       False      research/train.v2   3m",
			),
		},
		"none in the kubeconfig's namespace": {
			args:       []string{"works"},
			wantErrOut: "No resources found in research namespace.\n",
		},
		"none for a cluster": {
			args:       []string{"works", "-c", "edge-1"},
			wantErrOut: "No resources found in edge-1 namespace.\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			newClient, _ := fakeHub(interceptor.Funcs{}, works()...)
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

func TestGetWorksAsObjects(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			newClient, _ := fakeHub(interceptor.Funcs{}, works()...)
			out, _, err := runGet(newClient, "works", "-c", "gpu-west", "-o", format)
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			if json.Valid([]byte(out)) != (format == "json") {
				t.Errorf("-o %s printed:\n%s", format, out)
			}
			var list struct {
				Items []workv1.ManifestWork `json:"items"`
			}
			if err := yaml.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("reading %s: %v", out, err)
			}
			var got []string
			for _, w := range list.Items {
				got = append(got, strings.Join([]string{w.APIVersion, w.Kind, w.Namespace + "/" + w.Name,
					optionalConditionStatus(w.Status.Conditions, workv1.WorkAvailable)}, " "))
			}
			want := []string{
				"work.open-cluster-management.io/v1 ManifestWork gpu-west/new -",
				"work.open-cluster-management.io/v1 ManifestWork gpu-west/train False",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("printed works (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGetWorksRejectsBadInput(t *testing.T) {
	cases := map[string]struct {
		args    []string
		wantErr string
	}{
		"-c for a kind not kept per cluster": {
			args:    []string{"placements", "-c", "gpu-east"},
			wantErr: `--cluster (-c) "gpu-east": placements are not kept per cluster; leave -c out`,
		},
		"-c and -A": {
			args:    []string{"works", "-c", "gpu-east", "-A"},
			wantErr: `--cluster (-c) "gpu-east" and --all-namespaces (-A) contradict each other`,
		},
		"-c and another -n": {
			args:    []string{"works", "-c", "gpu-east", "-n", "gpu-west"},
			wantErr: `--cluster (-c) "gpu-east" and --namespace (-n) "gpu-west" contradict each other: a cluster's works are in the namespace named after it; give only -c`,
		},
		"unknown output": {
			args:    []string{"works", "-A", "-o", "wide"},
			wantErr: `--output (-o) "wide" is not supported for works: use -o yaml or -o json, or leave it out for a table (-o wide is for federatedlearnings)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			newClient, asked := fakeHub(interceptor.Funcs{}, works()...)
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
