//go:build integration

package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	flotillacli "github.com/flotilla/flotilla/internal/cli"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/hub/workreplicaset"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{CRDs: true})) }

// run runs `flotilla args...` as main does, with the clock at now.
func run(now time.Time, args ...string) (stdout, stderr string, err error) {
	io, out, errOut := streams.Buffers()
	root := flotillacli.NewRootCommand(io, clocktesting.NewFakeClock(now))
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func lines(rows ...string) string { return strings.Join(rows, "\n") + "\n" }

func TestWorkCommands(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := env.HubClient(t)
	ctx := context.Background()
	cluster := env.Namespace(t, env.Hub) // a cluster's works live in the namespace named after it
	kubeconfig := env.Hub.Kubeconfig

	job := `{"apiVersion":"batch/v1","kind":"Job","metadata":{"namespace":"ml","name":"train"},` +
		`"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"train","image":"trainer"}]}}}}`
	mw := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "train",
			Labels: map[string]string{workreplicaset.SetLabel: "research.train"}},
		Spec: workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml"}}`)}},
				{RawExtension: runtime.RawExtension{Raw: []byte(job)}},
			}},
			DeleteOption: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan},
		},
	}
	testenv.Create(t, c, mw)
	// Everything happened when the work was made; the commands run 90 seconds later.
	created := mw.CreationTimestamp
	now := created.Add(90 * time.Second)
	cond := func(typ string, s metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: message, LastTransitionTime: created}
	}
	mw.Status = workv1.ManifestWorkStatus{
		Conditions: []metav1.Condition{
			cond(workv1.WorkApplied, metav1.ConditionTrue, "AppliedManifestWorkComplete", "Apply manifest work complete"),
			cond(workv1.WorkAvailable, metav1.ConditionTrue, "ResourcesAvailable", "All resources are available"),
			cond(workv1.WorkComplete, metav1.ConditionTrue, "ConditionRulesAggregated", "All manifests are complete"),
		},
		ResourceStatus: workv1.ManifestResourceStatus{Manifests: []workv1.ManifestCondition{
			{
				ResourceMeta: workv1.ManifestResourceMeta{Ordinal: 0, Version: "v1", Kind: "Namespace", Resource: "namespaces", Name: "ml"},
				Conditions: []metav1.Condition{
					cond(workv1.ManifestApplied, metav1.ConditionTrue, "AppliedManifestComplete", "Apply manifest complete"),
					cond(workv1.ManifestAvailable, metav1.ConditionTrue, "ResourceAvailable", "Resource is available"),
				},
			},
			{
				ResourceMeta: workv1.ManifestResourceMeta{Ordinal: 1, Group: "batch", Version: "v1", Kind: "Job", Resource: "jobs", Namespace: "ml", Name: "train"},
				StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{
					{Name: "succeeded", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](4)}},
					{Name: "phase", Value: workv1.FieldValue{Type: workv1.String, String: ptr.To("Complete")}},
					{Name: "suspended", Value: workv1.FieldValue{Type: workv1.Boolean, Boolean: ptr.To(false)}},
					{Name: "conditions", Value: workv1.FieldValue{Type: workv1.JSONRaw, JSONRaw: ptr.To(`[{"type":"Complete","status":"True"}]`)}},
				}},
				Conditions: []metav1.Condition{
					cond(workv1.ManifestComplete, metav1.ConditionTrue, "ConditionRuleEvaluated", "Job is finished"),
					cond(workv1.ManifestStatusFeedbackSynced, metav1.ConditionTrue, "StatusFeedbackSynced", ""),
					cond(workv1.ManifestApplied, metav1.ConditionTrue, "AppliedManifestComplete", "Apply manifest complete"),
					cond(workv1.ManifestAvailable, metav1.ConditionTrue, "ResourceAvailable", "Resource is available"),
				},
			},
		}},
	}
	if err := c.Status().Update(ctx, mw); err != nil {
		t.Fatalf("writing the work's status as its agent would: %v", err)
	}
	// A second work, on no replica set, that no agent has reported on.
	testenv.Create(t, c, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "web"}})
	if err := c.Get(ctx, client.ObjectKeyFromObject(mw), mw); err != nil {
		t.Fatal(err)
	}
	if got := len(mw.Status.ResourceStatus.Manifests); got != 2 {
		t.Fatalf("the API server kept %d manifest statuses, want 2", got)
	}

	t.Run("get works -c", func(t *testing.T) {
		out, errOut, err := run(now, "get", "works", "-c", cluster, "--kubeconfig", kubeconfig)
		if err != nil {
			t.Fatalf("get works: %v\n%s", err, errOut)
		}
		// web's age depends on when the API server stamped it; train's is fixed.
		want := lines(
			"NAME    MANIFESTS   APPLIED   AVAILABLE   COMPLETE   REPLICASET       AGE",
			"train   2           True      True        True       research/train   90s",
		)
		got, _, _ := strings.Cut(out, "\nweb ")
		if diff := cmp.Diff(want, got+"\n"); diff != "" {
			t.Errorf("stdout (-want +got):\n%s\nwhole output:\n%s", diff, out)
		}
		if !strings.Contains(out, "\nweb     0           Unknown   Unknown     -          -                ") {
			t.Errorf("no row for web, unreported, in:\n%s", out)
		}
	})

	t.Run("describe work", func(t *testing.T) {
		out, errOut, err := run(now, "describe", "work", cluster+"/train", "--kubeconfig", kubeconfig)
		if err != nil {
			t.Fatalf("describe work: %v\n%s", err, errOut)
		}
		want := lines(
			"Name:           train",
			"Cluster:        "+cluster,
			"Age:            90s",
			"Made by:        ManifestWorkReplicaSet research/train",
			"Delete option:  Orphan",
			"Conditions:",
			"  TYPE        STATUS   REASON                        MESSAGE                        AGE",
			"  Applied     True     AppliedManifestWorkComplete   Apply manifest work complete   90s",
			"  Available   True     ResourcesAvailable            All resources are available    90s",
			"  Complete    True     ConditionRulesAggregated      All manifests are complete     90s",
			"Manifests:      2",
			"  0: Namespace ml (v1)",
			"    Conditions:",
			"      TYPE        STATUS   REASON                    MESSAGE                   AGE",
			"      Applied     True     AppliedManifestComplete   Apply manifest complete   90s",
			"      Available   True     ResourceAvailable         Resource is available     90s",
			"  1: Job ml/train (batch/v1)",
			"    Conditions:",
			"      TYPE                   STATUS   REASON                    MESSAGE                   AGE",
			"      Applied                True     AppliedManifestComplete   Apply manifest complete   90s",
			"      Available              True     ResourceAvailable         Resource is available     90s",
			"      StatusFeedbackSynced   True     StatusFeedbackSynced      -                         90s",
			"      Complete               True     ConditionRuleEvaluated    Job is finished           90s",
			"    Status feedback:",
			"      succeeded = 4 (Integer)",
			`      phase = "Complete" (String)`,
			"      suspended = false (Boolean)",
			`      conditions = [{"type":"Complete","status":"True"}] (JsonRaw)`,
		)
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("stdout (-want +got):\n%s", diff)
		}
	})

	t.Run("describe a missing work", func(t *testing.T) {
		_, _, err := run(now, "describe", "work", cluster+"/nope", "--kubeconfig", kubeconfig)
		want := "no ManifestWork " + cluster + "/nope on the hub of kubeconfig " + kubeconfig +
			": list them with `flotilla get works -A --kubeconfig " + kubeconfig + "`"
		if err == nil || err.Error() != want {
			t.Errorf("err = %v, want %q", err, want)
		}
	})

	t.Run("describe on an unreachable hub", func(t *testing.T) {
		down := filepath.Join(t.TempDir(), "down.kubeconfig")
		kc := "apiVersion: v1\nkind: Config\ncurrent-context: hub\n" +
			"clusters:\n- name: hub\n  cluster:\n    server: https://127.0.0.1:1\n" +
			"users:\n- name: admin\n  user:\n    token: t\n" +
			"contexts:\n- name: hub\n  context:\n    cluster: hub\n    user: admin\n"
		if err := os.WriteFile(down, []byte(kc), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := run(now, "describe", "work", cluster+"/train", "--kubeconfig", down)
		for _, want := range []string{
			"reading ManifestWork " + cluster + "/train on the hub of kubeconfig " + down + ": ",
			"check that the hub's API server at https://127.0.0.1:1 is up and reachable",
		} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v, want one saying %q", err, want)
			}
		}
	})
}
