//go:build integration

package work

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/agent/work"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// appliedName is the AppliedManifestWork of a work on a spoke.
func appliedName(env *testenv.Env, workName string) string {
	return work.AppliedName(work.HubHash(env.Hub.RESTConfig().Host), workName)
}

// ownersOf returns the names of the AppliedManifestWorks that own an object, sorted.
func ownersOf(u *unstructured.Unstructured) []string {
	var out []string
	for _, r := range u.GetOwnerReferences() {
		if r.Kind == "AppliedManifestWork" {
			out = append(out, r.Name)
		}
	}
	slices.Sort(out)
	return out
}

func getCM(t *testing.T, j *joined, ns, name string) (*unstructured.Unstructured, error) {
	t.Helper()
	return j.Dyn.Resource(cmGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
}

// waitGone waits until the object is gone from the spoke.
func waitGone(t *testing.T, j *joined, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	testenv.WaitFor(t, 60*time.Second, fmt.Sprintf("%s %s/%s to be deleted from %s", gvr.Resource, ns, name, j.Name), func(ctx context.Context) (bool, string, error) {
		_, err := j.Dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "still there", err
	})
}

// deleteWork deletes a work on the hub and waits until the agent has let it go.
func deleteWork(t *testing.T, hub client.Client, ns, name string) {
	t.Helper()
	ctx := context.Background()
	if err := hub.Delete(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 60*time.Second, "work "+ns+"/"+name+" to be gone from the hub", func(ctx context.Context) (bool, string, error) {
		err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &workv1.ManifestWork{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "still there", err
	})
}

// testEnv is what the subtests of TestWorkAgent share.
type testEnv struct {
	env      *testenv.Env
	clusters []*joined
	hub      client.Client
	// outer is the whole test, for agents a subtest starts.
	outer *testing.T
}

func TestWorkAgent(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	clusters := joinAll(t, env)
	outer := t // agents started in a subtest run until the whole test ends
	hub := env.HubClient(t)
	te := &testEnv{env: env, clusters: clusters, hub: hub, outer: outer}
	ctx := context.Background()
	deployGVR := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	jobGVR := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}

	for _, j := range clusters {
		env.AddNodes(t, j.Spoke, localk8s.NodePool{Name: "gpu", Count: 1, GPUModel: "NVIDIA-H100-80GB-HBM3", GPUs: 8,
			CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi")})
	}

	t.Run("a Deployment and a GPU Job reach two clusters; Applied, the Job's succeeded count and Complete come back", func(t *testing.T) {
		for _, j := range clusters {
			w := newWork(j.Name, "app", manifests(t, deployment("app", "web", 1), job("app", "train"), namespace("app")))
			w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Group: "batch", Resource: "jobs", Namespace: "app", Name: "train"},
				FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
				ConditionRules:     []workv1.ConditionRule{{Condition: workv1.ManifestComplete, Type: workv1.WellKnownConditionsType}},
			}}
			createWork(t, hub, w)
		}
		for _, j := range clusters {
			w := waitWork(t, hub, j.Name, "app", "every manifest applied, the Job complete with 2 succeeded", func(w *workv1.ManifestWork) bool {
				return allApplied(w) && meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkComplete) &&
					feedback(w, 1, "JobSucceeded") == "2"
			})
			wantMeta := []workv1.ManifestResourceMeta{
				{Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Name: "web", Namespace: "app"},
				{Ordinal: 1, Group: "batch", Version: "v1", Kind: "Job", Resource: "jobs", Name: "train", Namespace: "app"},
				{Ordinal: 2, Version: "v1", Kind: "Namespace", Resource: "namespaces", Name: "app"},
			}
			var gotMeta []workv1.ManifestResourceMeta
			for _, m := range w.Status.ResourceStatus.Manifests {
				gotMeta = append(gotMeta, m.ResourceMeta)
			}
			if diff := cmp.Diff(wantMeta, gotMeta); diff != "" {
				t.Errorf("%s: resourceMeta (-want +got):\n%s", j.Name, diff)
			}
			if !slices.Contains(w.Finalizers, work.Finalizer) {
				t.Errorf("%s: work finalizers %v lack %s", j.Name, w.Finalizers, work.Finalizer)
			}
			d, err := j.Dyn.Resource(deployGVR).Namespace("app").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("%s: %v", j.Name, err)
			}
			if diff := cmp.Diff([]string{appliedName(env, "app")}, ownersOf(d)); diff != "" {
				t.Errorf("%s: Deployment owners (-want +got):\n%s", j.Name, diff)
			}
			amw := &workv1.AppliedManifestWork{}
			if err := spokeClient(t, j).Get(ctx, client.ObjectKey{Name: appliedName(env, "app")}, amw); err != nil {
				t.Fatalf("%s: AppliedManifestWork: %v", j.Name, err)
			}
			if amw.Spec.ManifestWorkName != "app" || amw.Spec.HubHash != work.HubHash(env.Hub.RESTConfig().Host) || len(amw.Status.AppliedResources) != 3 {
				t.Errorf("%s: AppliedManifestWork spec %+v, %d applied resources, want work app, the hub's hash and 3", j.Name, amw.Spec, len(amw.Status.AppliedResources))
			}
			for _, r := range amw.Status.AppliedResources {
				if r.UID == "" {
					t.Errorf("%s: applied resource %+v has no uid", j.Name, r)
				}
			}
		}
	})

	one := clusters[0]
	t.Run("editing the work updates the spoke and feedback comes back", func(t *testing.T) {
		w := &workv1.ManifestWork{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: "app"}, w); err != nil {
			t.Fatal(err)
		}
		w.Spec.Workload.Manifests = manifests(t, deployment("app", "web", 3), job("app", "train"), namespace("app"))
		w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "app", Name: "web"},
			FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JSONPaths: []workv1.JSONPath{{Name: "observedGeneration", Path: ".status.observedGeneration"}}}},
		}}
		if err := hub.Update(ctx, w); err != nil {
			t.Fatal(err)
		}
		waitWork(t, hub, one.Name, "app", "applied at the new generation with feedback", func(w *workv1.ManifestWork) bool {
			if !allApplied(w) {
				return false
			}
			v := w.Status.ResourceStatus.Manifests[0].StatusFeedbacks.Values
			return len(v) == 1 && v[0].Value.Integer != nil && *v[0].Value.Integer == 2
		})
		d, err := one.Dyn.Resource(deployGVR).Namespace("app").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); r != 3 {
			t.Errorf("spoke Deployment replicas = %d, want 3", r)
		}
	})

	t.Run("removing a manifest deletes it on the spoke", func(t *testing.T) {
		w := &workv1.ManifestWork{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: "app"}, w); err != nil {
			t.Fatal(err)
		}
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests[:1], w.Spec.Workload.Manifests[2])
		if err := hub.Update(ctx, w); err != nil {
			t.Fatal(err)
		}
		waitWork(t, hub, one.Name, "app", "applied without the Job", allApplied)
		waitGone(t, one, jobGVR, "app", "train")
		if _, err := one.Dyn.Resource(deployGVR).Namespace("app").Get(ctx, "web", metav1.GetOptions{}); err != nil {
			t.Errorf("the Deployment that stayed in the work: %v", err)
		}
		// The other cluster's work is untouched.
		if _, err := clusters[1].Dyn.Resource(jobGVR).Namespace("app").Get(ctx, "train", metav1.GetOptions{}); err != nil {
			t.Errorf("the Job on %s: %v", clusters[1].Name, err)
		}
	})

	t.Run("deleting a work deletes what it applied and nothing else", func(t *testing.T) {
		spokeNamespace(t, one.Spoke.Client, "del")
		shared := configMap("del", "shared", map[string]string{"k": "same"})
		createWork(t, hub, newWork(one.Name, "del-a", manifests(t, configMap("del", "only-a", nil), shared)))
		createWork(t, hub, newWork(one.Name, "del-b", manifests(t, shared, configMap("del", "only-b", nil))))
		waitWork(t, hub, one.Name, "del-a", "applied", allApplied)
		waitWork(t, hub, one.Name, "del-b", "applied", allApplied)
		cm, err := getCM(t, one, "del", "shared")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{appliedName(env, "del-a"), appliedName(env, "del-b")}, ownersOf(cm)); diff != "" {
			t.Errorf("shared ConfigMap owners (-want +got):\n%s", diff)
		}
		deleteWork(t, hub, one.Name, "del-a")
		waitGone(t, one, cmGVR, "del", "only-a")
		cm, err = getCM(t, one, "del", "shared")
		if err != nil {
			t.Fatalf("the ConfigMap del-b also applies was deleted with del-a: %v", err)
		}
		if diff := cmp.Diff([]string{appliedName(env, "del-b")}, ownersOf(cm)); diff != "" {
			t.Errorf("shared ConfigMap owners after del-a went (-want +got):\n%s", diff)
		}
		if _, err := getCM(t, one, "del", "only-b"); err != nil {
			t.Errorf("del-b's own ConfigMap: %v", err)
		}
		// Deleted with propagation Orphan: the garbage collector removes it once it has checked
		// that nothing refers to it any more.
		sc := spokeClient(t, one)
		testenv.WaitFor(t, 30*time.Second, "del-a's AppliedManifestWork to be gone", func(ctx context.Context) (bool, string, error) {
			err := sc.Get(ctx, client.ObjectKey{Name: appliedName(env, "del-a")}, &workv1.AppliedManifestWork{})
			if apierrors.IsNotFound(err) {
				return true, "", nil
			}
			return false, "still there", err
		})
		// Nothing is left behind by the garbage collector later either.
		time.Sleep(2 * time.Second)
		if _, err := getCM(t, one, "del", "shared"); err != nil {
			t.Errorf("shared ConfigMap after a while: %v", err)
		}
	})

	t.Run("Orphan and SelectivelyOrphan keep what they say", func(t *testing.T) {
		spokeNamespace(t, one.Spoke.Client, "orphan")
		w := newWork(one.Name, "orphan-all", manifests(t, configMap("orphan", "kept", nil)))
		w.Spec.DeleteOption = &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan}
		createWork(t, hub, w)
		s := newWork(one.Name, "orphan-some", manifests(t, configMap("orphan", "kept-too", nil), configMap("orphan", "deleted", nil)))
		s.Spec.DeleteOption = &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
			SelectivelyOrphans: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{{Resource: "configmaps", Namespace: "orphan", Name: "kept-too"}}}}
		createWork(t, hub, s)
		waitWork(t, hub, one.Name, "orphan-all", "applied", allApplied)
		waitWork(t, hub, one.Name, "orphan-some", "applied", allApplied)
		deleteWork(t, hub, one.Name, "orphan-all")
		deleteWork(t, hub, one.Name, "orphan-some")
		waitGone(t, one, cmGVR, "orphan", "deleted")
		time.Sleep(2 * time.Second) // the garbage collector would have acted on a left reference by now
		for _, name := range []string{"kept", "kept-too"} {
			cm, err := getCM(t, one, "orphan", name)
			if err != nil {
				t.Errorf("orphaned ConfigMap %s: %v", name, err)
				continue
			}
			if o := ownersOf(cm); len(o) != 0 {
				t.Errorf("orphaned ConfigMap %s still owned by %v", name, o)
			}
		}
	})

	t.Run("Foreground: a deleted work waits, saying Deleting, until its resources are gone", func(t *testing.T) { testForegroundWaits(t, te) })

	t.Run("an unknown kind or an invalid field fails only that manifest, with the API server's message", func(t *testing.T) { testBadInput(t, te) })

	t.Run("an object of another work or another field manager is a conflict naming it", func(t *testing.T) { testConflicts(t, te) })

	t.Run("a CRD and its objects in one work", func(t *testing.T) {
		crd := obj{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": obj{"name": "widgets.example.com"},
			"spec": obj{"group": "example.com", "scope": "Namespaced",
				"names":    obj{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
				"versions": []any{obj{"name": "v1", "served": true, "storage": true, "schema": obj{"openAPIV3Schema": obj{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}
		widget := obj{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": obj{"name": "w", "namespace": "crd"}, "spec": obj{"size": 3}}
		createWork(t, hub, newWork(one.Name, "crd", manifests(t, widget, crd, namespace("crd"))))
		waitWork(t, hub, one.Name, "crd", "the Widget applied after its CRD", allApplied)
		deleteWork(t, hub, one.Name, "crd")
	})

	t.Run("an executor cannot create what it may not create", func(t *testing.T) { testExecutor(t, te) })

	t.Run("an agent cannot read, write or delete another cluster's works", func(t *testing.T) { testOtherCluster(t, te) })

	t.Run("CreateOnly creates only what is missing, ReadOnly only reads", func(t *testing.T) { testCreateOnlyReadOnly(t, te) })
	t.Run("server-side apply leaves ignoreFields to the spoke", func(t *testing.T) { testIgnoreFields(t, te) })
	t.Run("Update takes over an object made as the work says by ownership alone", func(t *testing.T) { testAdopt(t, te) })
	t.Run("a resync reads from the cache; changes made on the spoke are put back", func(t *testing.T) { testDrift(t, te) })

	t.Run("an agent restart applies nothing again and deletes nothing", func(t *testing.T) {
		type ref struct {
			gvr      schema.GroupVersionResource
			ns, name string
		}
		watched := []ref{{deployGVR, "app", "web"}, {cmGVR, "del", "shared"}, {cmGVR, "del", "only-b"}, {cmGVR, "bad", "good"}, {cmGVR, "conflict", "ssa"}, {cmGVR, "exec", "allowed"}}
		versions := func() map[string]string {
			out := map[string]string{}
			for _, r := range watched {
				u, err := one.Dyn.Resource(r.gvr).Namespace(r.ns).Get(ctx, r.name, metav1.GetOptions{})
				if err != nil {
					out[r.ns+"/"+r.name] = err.Error()
					continue
				}
				out[r.ns+"/"+r.name] = u.GetResourceVersion()
			}
			amws := &workv1.AppliedManifestWorkList{}
			if err := spokeClient(t, one).List(ctx, amws); err != nil {
				t.Fatal(err)
			}
			for _, a := range amws.Items {
				out[a.Name] = a.ResourceVersion
			}
			return out
		}
		before := versions()
		one.stopWork()
		one.startWork(outer, 2*time.Second)
		// A new work applied shows the new agent runs; two resyncs later it has looked at every work.
		spokeNamespace(t, one.Spoke.Client, "probe")
		createWork(t, hub, newWork(one.Name, "probe", manifests(t, configMap("probe", "p", nil))))
		waitWork(t, hub, one.Name, "probe", "applied by the restarted agent", allApplied)
		time.Sleep(5 * time.Second)
		after := versions()
		delete(after, appliedName(env, "probe"))
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("resourceVersions changed across an agent restart (-before +after):\n%s", diff)
		}
		// Not even a write the API server would find a no-op: the restarted agent wrote only for
		// the new work.
		var writes []string
		for _, r := range one.writes.Requests() {
			if !strings.Contains(r, "probe") {
				writes = append(writes, r)
			}
		}
		if len(writes) > 0 {
			amws := &workv1.AppliedManifestWorkList{}
			_ = spokeClient(t, one).List(ctx, amws)
			var names []string
			for _, a := range amws.Items {
				names = append(names, a.Spec.ManifestWorkName+"@"+a.CreationTimestamp.String())
			}
			t.Errorf("the restarted agent wrote to the spoke for works it had applied before: %v (AppliedManifestWorks %v)", writes, names)
		}
	})

	t.Run("feedback by watch comes back without a resync", func(t *testing.T) { testWatchFeedback(t, te) })
	t.Run("a Progressive ManifestWorkReplicaSet stops at a failing cluster and goes on when it recovers", func(t *testing.T) { testProgressiveRollout(t, te) })

	t.Run("with the hub down the spoke stays as it is; a change made after reaches it", func(t *testing.T) { testHubOutage(t, te) })
	t.Run("after a spoke API server restart, a change made meanwhile is applied and status recovers", func(t *testing.T) { testSpokeOutage(t, te) })

	t.Run("ttlSecondsAfterFinished deletes a Complete work", func(t *testing.T) {
		spokeNamespace(t, one.Spoke.Client, "ttl")
		w := newWork(one.Name, "ttl", manifests(t, configMap("ttl", "done", nil)))
		w.Spec.DeleteOption = &workv1.DeleteOption{TTLSecondsAfterFinished: ptr.To[int64](1)}
		w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: "ttl", Name: "done"},
			ConditionRules:     []workv1.ConditionRule{{Condition: workv1.ManifestComplete, Type: workv1.CELConditionExpressionsType, CelExpressions: []string{"true"}}},
		}}
		createWork(t, hub, w)
		testenv.WaitFor(t, 60*time.Second, "the Complete work to be deleted after its ttl", func(ctx context.Context) (bool, string, error) {
			w := &workv1.ManifestWork{}
			err := hub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: "ttl"}, w)
			if apierrors.IsNotFound(err) {
				return true, "", nil
			}
			return false, fmt.Sprintf("still there: conditions %+v", w.Status.Conditions), err
		})
		waitGone(t, one, cmGVR, "ttl", "done")
	})
}

// feedback returns manifest i's feedback value name as text, "" when it has none.
func feedback(w *workv1.ManifestWork, i int, name string) string {
	for _, m := range w.Status.ResourceStatus.Manifests {
		if int(m.ResourceMeta.Ordinal) != i {
			continue
		}
		for _, v := range m.StatusFeedbacks.Values {
			if v.Name != name {
				continue
			}
			switch {
			case v.Value.Integer != nil:
				return fmt.Sprint(*v.Value.Integer)
			case v.Value.String != nil:
				return *v.Value.String
			case v.Value.Boolean != nil:
				return fmt.Sprint(*v.Value.Boolean)
			case v.Value.JSONRaw != nil:
				return *v.Value.JSONRaw
			}
		}
	}
	return ""
}

// createWork creates a work that outlives the subtest: later subtests build on it.
func createWork(t *testing.T, hub client.Client, w *workv1.ManifestWork) {
	t.Helper()
	if err := hub.Create(context.Background(), w); err != nil {
		t.Fatalf("creating work %s/%s: %v", w.Namespace, w.Name, err)
	}
}

func spokeClient(t *testing.T, j *joined) client.Client {
	t.Helper()
	c, err := client.New(j.Spoke.RESTConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
