package describe

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/hub/workreplicaset"
)

// fakeHub returns a client constructor serving objs, and the flags it was last asked for (nil
// until asked).
func fakeHub(funcs interceptor.Funcs, objs ...client.Object) (kubeflags.ReaderFunc, **kubeflags.Flags) {
	var asked *kubeflags.Flags
	return func(kube kubeflags.Flags) (client.Reader, *kubeflags.Loaded, error) {
		asked = &kube
		c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
		return c, &kubeflags.Loaded{Namespace: "default", Source: kube.Kubeconfig, Config: &rest.Config{Host: "https://127.0.0.1:6443"}}, nil
	}, &asked
}

// runDescribe runs `flotilla describe args...` mounted under a root as root.go mounts commands.
func runDescribe(newClient kubeflags.ReaderFunc, args ...string) (stdout, stderr string, err error) {
	io, out, errOut := streams.Buffers()
	root := &cobra.Command{Use: "flotilla", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.AddCommand(newCommand(io, clocktesting.NewFakePassiveClock(now), newClient))
	root.SetArgs(append([]string{"describe"}, args...))
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// lines joins rows into the text the command prints.
func lines(rows ...string) string { return strings.Join(rows, "\n") + "\n" }

// trainJob is a GPU Job a ManifestWorkReplicaSet shipped to gpu-east, run to completion, with
// its namespace, an executor, and a delete option that orphans the namespace and deletes the
// work an hour after it completes. The agent wrote the Job's conditions in another order than
// the printer's.
func trainJob() *workv1.ManifestWork {
	return makeWork("gpu-east", "train", 2*day).Label(workreplicaset.SetLabel, "research.train.v2").
		Object("v1", "Namespace", "", "ml").
		Object("batch/v1", "Job", "ml", "train").
		DeleteOption(&workv1.DeleteOption{
			PropagationPolicy:       workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
			SelectivelyOrphans:      &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{{Resource: "namespaces", Name: "ml"}}},
			TTLSecondsAfterFinished: ptr.To[int64](3600),
		}).
		Executor("ml", "trainer").
		Condition(cond(workv1.WorkApplied, metav1.ConditionTrue, "AppliedManifestWorkComplete", "Apply manifest work complete", 2*day)).
		Condition(cond(workv1.WorkAvailable, metav1.ConditionTrue, "ResourcesAvailable", "All resources are available", 2*day)).
		Condition(cond(workv1.WorkComplete, metav1.ConditionTrue, "ConditionRulesAggregated", "All manifests are complete", 10*time.Minute)).
		ManifestStatus(0, workv1.ManifestResourceMeta{Version: "v1", Kind: "Namespace", Resource: "namespaces", Name: "ml"}, nil,
			cond(workv1.ManifestApplied, metav1.ConditionTrue, "AppliedManifestComplete", "Apply manifest complete", 2*day),
			cond(workv1.ManifestAvailable, metav1.ConditionTrue, "ResourceAvailable", "Resource is available", 2*day)).
		ManifestStatus(1, workv1.ManifestResourceMeta{Group: "batch", Version: "v1", Kind: "Job", Resource: "jobs", Namespace: "ml", Name: "train"},
			[]workv1.FeedbackValue{
				integer("succeeded", 4), str("phase", "Complete"), str("empty", ""), boolean("ready", true),
				jsonRaw("conditions", `[{"type":"Complete","status":"True"}]`),
			},
			cond(workv1.ManifestComplete, metav1.ConditionTrue, "ConditionRuleEvaluated", "Job is finished", 10*time.Minute),
			cond("GPUsReleased", metav1.ConditionTrue, "ConditionRuleEvaluated", "", 10*time.Minute),
			cond(workv1.ManifestStatusFeedbackSynced, metav1.ConditionTrue, "StatusFeedbackSynced", "", time.Minute),
			cond(workv1.ManifestApplied, metav1.ConditionTrue, "AppliedManifestComplete", "Apply manifest complete", 2*day),
			cond(workv1.ManifestAvailable, metav1.ConditionTrue, "ResourceAvailable", "Resource is available", 2*day)).
		Obj()
}

// brokenWeb failed to apply a Deployment on gpu-west (the spoke's message spans lines), applied
// its ConfigMap, has a third manifest the agent has not reported yet, and a status left from a
// fourth manifest since removed.
func brokenWeb() *workv1.ManifestWork {
	return makeWork("gpu-west", "web", time.Hour).
		Object("apps/v1", "Deployment", "web", "web").
		Object("v1", "ConfigMap", "web", "settings").
		Object("v1", "Service", "web", "web").
		Condition(cond(workv1.WorkApplied, metav1.ConditionFalse, "AppliedManifestWorkFailed", "Failed to apply manifest work", 5*time.Minute)).
		Condition(cond(workv1.WorkAvailable, metav1.ConditionUnknown, "ResourcesStatusUnknown", "", 5*time.Minute)).
		ManifestStatus(0, workv1.ManifestResourceMeta{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "web", Name: "web"}, nil,
			cond(workv1.ManifestApplied, metav1.ConditionFalse, "AppliedManifestFailed",
				"Deployment.apps \"web\" is invalid:\n\tspec.replicas: Invalid value: -1: must be greater than or equal to 0", 5*time.Minute),
			cond(workv1.ManifestStatusFeedbackSynced, metav1.ConditionFalse, "StatusFeedbackSyncFailed", "readyReplicas: no value at .status.readyReplicas", 5*time.Minute)).
		ManifestStatus(1, workv1.ManifestResourceMeta{Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "web", Name: "settings"}, nil,
			cond(workv1.ManifestApplied, metav1.ConditionTrue, "AppliedManifestComplete", "Apply manifest complete", 5*time.Minute)).
		ManifestStatus(3, workv1.ManifestResourceMeta{Version: "v1", Kind: "Secret", Resource: "secrets", Namespace: "web", Name: "old"}, nil).
		Obj()
}

// leaving is being deleted and was never reported on.
func leaving() *workv1.ManifestWork {
	return makeWork("edge-1", "leaving", 3*time.Minute).Object("v1", "ConfigMap", "default", "c").
		Deleting(now.Add(-30 * time.Second)).Finalizer(workv1.ManifestWorkFinalizer).Obj()
}

func TestDescribeWork(t *testing.T) {
	cases := map[string]struct {
		arg  string
		want string
	}{
		"a completed Job from a replica set": {
			arg: "gpu-east/train",
			want: lines(
				"Name:           train",
				"Cluster:        gpu-east",
				"Age:            2d",
				"Made by:        ManifestWorkReplicaSet research/train.v2",
				"Delete option:  SelectivelyOrphan, orphaning namespaces ml, deleted 3600s after Complete (ttlSecondsAfterFinished)",
				"Executor:       ServiceAccount ml/trainer",
				"Conditions:",
				"  TYPE        STATUS   REASON                        MESSAGE                        AGE",
				"  Applied     True     AppliedManifestWorkComplete   Apply manifest work complete   2d",
				"  Available   True     ResourcesAvailable            All resources are available    2d",
				"  Complete    True     ConditionRulesAggregated      All manifests are complete     10m",
				"Manifests:      2",
				"  0: Namespace ml (v1)",
				"    Conditions:",
				"      TYPE        STATUS   REASON                    MESSAGE                   AGE",
				"      Applied     True     AppliedManifestComplete   Apply manifest complete   2d",
				"      Available   True     ResourceAvailable         Resource is available     2d",
				"  1: Job ml/train (batch/v1)",
				"    Conditions:",
				"      TYPE                   STATUS   REASON                    MESSAGE                   AGE",
				"      Applied                True     AppliedManifestComplete   Apply manifest complete   2d",
				"      Available              True     ResourceAvailable         Resource is available     2d",
				"      StatusFeedbackSynced   True     StatusFeedbackSynced      -                         60s",
				"      Complete               True     ConditionRuleEvaluated    Job is finished           10m",
				"      GPUsReleased           True     ConditionRuleEvaluated    -                         10m",
				"    Status feedback:",
				"      succeeded = 4 (Integer)",
				"      phase = \"Complete\" (String)",
				"      empty = \"\" (String)",
				"      ready = true (Boolean)",
				"      conditions = [{\"type\":\"Complete\",\"status\":\"True\"}] (JsonRaw)",
			),
		},
		"a work that failed to apply": {
			arg: "gpu-west/web",
			want: lines(
				"Name:           web",
				"Cluster:        gpu-west",
				"Age:            60m",
				"Conditions:",
				"  TYPE        STATUS    REASON                      MESSAGE                         AGE",
				"  Applied     False     AppliedManifestWorkFailed   Failed to apply manifest work   5m",
				"  Available   Unknown   ResourcesStatusUnknown      -                               5m",
				"Manifests:      3",
				"  0: Deployment web/web (apps/v1)",
				"    Conditions:",
				"      TYPE                   STATUS   REASON                     MESSAGE                                                                                                  AGE",
				"      Applied                False    AppliedManifestFailed      Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0   5m",
				"      StatusFeedbackSynced   False    StatusFeedbackSyncFailed   readyReplicas: no value at .status.readyReplicas                                                         5m",
				"  1: ConfigMap web/settings (v1)",
				"    Conditions:",
				"      TYPE      STATUS   REASON                    MESSAGE                   AGE",
				"      Applied   True     AppliedManifestComplete   Apply manifest complete   5m",
				"  2: Service web/web (v1)",
				"    Not reported by the cluster's work agent yet.",
				"  3: Secret web/old (v1) (no longer in spec.workload: the agent has not caught up with an edit)",
				"    Conditions: none",
			),
		},
		"a work being deleted": {
			arg: "edge-1/leaving",
			want: lines(
				"Name:           leaving",
				"Cluster:        edge-1",
				"Age:            3m",
				"Deleting:       for 30s: the cluster's agent removes what the work applied, per its delete option",
				"Conditions:     none: the cluster's work agent has not reported on this work yet",
				"Manifests:      1",
				"  0: ConfigMap default/c (v1)",
				"    Not reported by the cluster's work agent yet.",
			),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			newClient, _ := fakeHub(interceptor.Funcs{}, trainJob(), brokenWeb(), leaving())
			out, errOut, err := runDescribe(newClient, "work", tc.arg)
			if err != nil {
				t.Fatalf("describe work %s: %v", tc.arg, err)
			}
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if errOut != "" {
				t.Errorf("stderr: %q, want nothing", errOut)
			}
		})
	}
}

func TestDescribeWorkRejectsBadInput(t *testing.T) {
	noMatch := &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: workv1.GroupVersion.Group, Kind: "ManifestWork"}, SearchedVersions: []string{"v1"}}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: workv1.GroupVersion.Group, Resource: "manifestworks"}, "train",
		errors.New(`User "alice" cannot get resource "manifestworks"`))
	cases := map[string]struct {
		args      []string
		getErr    error
		wantErr   string
		wantNoHub bool
	}{
		"no argument": {
			args:      []string{"work"},
			wantErr:   "flotilla describe work takes one ManifestWork as NAMESPACE/NAME, got 0 arguments: for example gpu-east/train",
			wantNoHub: true,
		},
		"two arguments": {
			args:      []string{"work", "gpu-east", "train"},
			wantErr:   "flotilla describe work takes one ManifestWork as NAMESPACE/NAME, got 2 arguments",
			wantNoHub: true,
		},
		"a name without its namespace": {
			args:      []string{"work", "train"},
			wantErr:   `ManifestWork "train": give it as NAMESPACE/NAME, the namespace being its cluster's name (for example gpu-east/train); ` + "`flotilla get works -A` lists them",
			wantNoHub: true,
		},
		"an empty name": {
			args:      []string{"work", "gpu-east/"},
			wantErr:   `ManifestWork "gpu-east/": give it as NAMESPACE/NAME`,
			wantNoHub: true,
		},
		"too many parts": {
			args:      []string{"mw", "gpu-east/train/0"},
			wantErr:   `ManifestWork "gpu-east/train/0": give it as NAMESPACE/NAME`,
			wantNoHub: true,
		},
		"not on the hub": {
			args:    []string{"work", "gpu-east/nope", "--kubeconfig", "hub.kubeconfig"},
			wantErr: "no ManifestWork gpu-east/nope on the hub of kubeconfig hub.kubeconfig: list them with `flotilla get works -A --kubeconfig hub.kubeconfig`",
		},
		"in another cluster's namespace": {
			args:    []string{"work", "gpu-west/train", "--kubeconfig", "hub.kubeconfig"},
			wantErr: "no ManifestWork gpu-west/train on the hub of kubeconfig hub.kubeconfig: list them with `flotilla get works -A --kubeconfig hub.kubeconfig`",
		},
		"CRDs not installed": {
			args:    []string{"work", "gpu-east/train", "--kubeconfig", "hub.kubeconfig"},
			getErr:  noMatch,
			wantErr: "the hub of kubeconfig hub.kubeconfig does not serve ManifestWorks: no matches for kind \"ManifestWork\" in version \"work.open-cluster-management.io/v1\"; install the CRDs with `flotilla install crds --kubeconfig hub.kubeconfig`",
		},
		"not allowed": {
			args:    []string{"work", "gpu-east/train", "--kubeconfig", "hub.kubeconfig"},
			getErr:  forbidden,
			wantErr: "; use a kubeconfig whose user may get manifestworks in namespace gpu-east",
		},
		"hub unreachable": {
			args:    []string{"work", "gpu-east/train", "--kubeconfig", "hub.kubeconfig"},
			getErr:  errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"),
			wantErr: "reading ManifestWork gpu-east/train on the hub of kubeconfig hub.kubeconfig: dial tcp 127.0.0.1:6443: connect: connection refused; check that the hub's API server at https://127.0.0.1:6443 is up and reachable, or pass the hub's kubeconfig with --kubeconfig",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			funcs := interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if tc.getErr != nil {
					return tc.getErr
				}
				return c.Get(ctx, key, obj, opts...)
			}}
			newClient, asked := fakeHub(funcs, trainJob())
			out, errOut, err := runDescribe(newClient, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("describe %v: err = %v, want one saying %q", tc.args, err, tc.wantErr)
			}
			if tc.wantNoHub && *asked != nil {
				t.Errorf("bad input reached the hub (flags %+v)", **asked)
			}
			if out != "" || errOut != "" {
				t.Errorf("a failed describe printed stdout %q stderr %q", out, errOut)
			}
		})
	}
}
