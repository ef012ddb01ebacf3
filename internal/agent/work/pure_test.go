package work

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

func raw(s string) workv1.Manifest {
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(s)}}
}

func TestApplyOrder(t *testing.T) {
	cases := map[string]struct {
		manifests []workv1.Manifest
		want      []string
	}{
		"namespaces, then CRDs, then the rest in the work's order": {
			manifests: []workv1.Manifest{
				raw(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"n"}}`),
				raw(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"n"}}`),
				raw(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"}}`),
				raw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"}}`),
				raw(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"}}`),
			},
			want: []string{"4 Namespace n", "2 CustomResourceDefinition widgets.example.com", "0 Deployment d", "1 Widget w", "3 ConfigMap c"},
		},
		"a manifest that does not decode keeps its place and its error": {
			manifests: []workv1.Manifest{
				raw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"}}`),
				raw(`{not json`),
				raw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"n"}}`),
				raw(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"}}`),
			},
			want: []string{"3 Namespace n", "0 ConfigMap c", "1 error", "2 error"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, m := range applyOrder(decode(tc.manifests)) {
				if m.Err != nil {
					got = append(got, itoa(m.Ordinal)+" error")
					continue
				}
				got = append(got, itoa(m.Ordinal)+" "+m.Obj.GetKind()+" "+m.Obj.GetName())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

func TestAppliedName(t *testing.T) {
	h := HubHash("https://127.0.0.1:6443")
	if len(h) != 64 {
		t.Fatalf("HubHash = %q, want 64 hex digits", h)
	}
	if h == HubHash("https://127.0.0.1:6444") {
		t.Error("two hubs share a hash")
	}
	name := AppliedName(h, "web")
	cases := map[string]struct{ applied, want string }{
		"this hub's work":    {applied: name, want: "web"},
		"another hub's work": {applied: HubHash("other") + "-web", want: HubHash("other") + "-web"},
	}
	for n, tc := range cases {
		t.Run(n, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, workOfApplied(h, tc.applied)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideRemoval(t *testing.T) {
	const self, other = types.UID("self"), types.UID("other")
	obj := func(uid string, owners ...types.UID) *metav1.ObjectMeta {
		m := &metav1.ObjectMeta{UID: types.UID(uid)}
		for _, o := range owners {
			m.OwnerReferences = append(m.OwnerReferences, ownerRef("amw-"+string(o), o))
		}
		return m
	}
	cases := map[string]struct {
		live     *metav1.ObjectMeta
		recorded string
		orphan   bool
		want     removal
	}{
		"last owner deletes":                      {live: obj("u1", self), recorded: "u1", want: remove},
		"another work also owns it: release":      {live: obj("u1", self, other), recorded: "u1", want: release},
		"orphan: release":                         {live: obj("u1", self), recorded: "u1", orphan: true, want: release},
		"not ours (CreateOnly found it): leave":   {live: obj("u1", other), recorded: "u1", want: leave},
		"recreated by someone else since: leave":  {live: obj("u2", self), recorded: "u1", want: leave},
		"no recorded uid, ours alone: delete":     {live: obj("u1", self), want: remove},
		"a non-work owner does not keep it alive": {live: &metav1.ObjectMeta{UID: "u1", OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", UID: "rs"}, ownerRef("amw", self)}}, recorded: "u1", want: remove},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := decideRemoval(tc.live, tc.recorded, self, tc.orphan)
			if diff := cmp.Diff(tc.want.String(), got.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestOrphaned(t *testing.T) {
	res := workv1.AppliedManifestResourceMeta{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "n", Name: "d"}
	rule := workv1.OrphaningRule{Group: "apps", Resource: "deployments", Namespace: "n", Name: "d"}
	cases := map[string]struct {
		opt  *workv1.DeleteOption
		want bool
	}{
		"no option: foreground":        {},
		"foreground":                   {opt: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeForeground}},
		"orphan":                       {opt: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan}, want: true},
		"selectively orphan, matching": {opt: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan, SelectivelyOrphans: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{rule}}}, want: true},
		"selectively orphan, other name": {opt: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
			SelectivelyOrphans: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{{Group: "apps", Resource: "deployments", Namespace: "n", Name: "e"}}}}},
		"selectively orphan without rules": {opt: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, orphaned(tc.opt, res)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNextApplied(t *testing.T) {
	r := func(name, uid string) workv1.AppliedManifestResourceMeta {
		return workv1.AppliedManifestResourceMeta{Version: "v1", Resource: "configmaps", Namespace: "n", Name: name, UID: uid}
	}
	in := func(names ...string) map[resourceKey]bool {
		m := map[resourceKey]bool{}
		for _, n := range names {
			m[keyOf(r(n, ""))] = true
		}
		return m
	}
	cases := map[string]struct {
		previous, applied []workv1.AppliedManifestResourceMeta
		inWork            map[resourceKey]bool
		wantRecord        []workv1.AppliedManifestResourceMeta
		wantStale         []workv1.AppliedManifestResourceMeta
	}{
		"first apply": {applied: []workv1.AppliedManifestResourceMeta{r("a", "1")}, inWork: in("a"),
			wantRecord: []workv1.AppliedManifestResourceMeta{r("a", "1")}},
		"unchanged (agent restart): nothing stale": {previous: []workv1.AppliedManifestResourceMeta{r("a", "1"), r("b", "2")},
			applied: []workv1.AppliedManifestResourceMeta{r("a", "1"), r("b", "2")}, inWork: in("a", "b"),
			wantRecord: []workv1.AppliedManifestResourceMeta{r("a", "1"), r("b", "2")}},
		"dropped from the work: stale": {previous: []workv1.AppliedManifestResourceMeta{r("a", "1"), r("b", "2")},
			applied: []workv1.AppliedManifestResourceMeta{r("a", "1")}, inWork: in("a"),
			wantRecord: []workv1.AppliedManifestResourceMeta{r("a", "1")}, wantStale: []workv1.AppliedManifestResourceMeta{r("b", "2")}},
		"failed this round but still in the work: kept": {previous: []workv1.AppliedManifestResourceMeta{r("a", "1"), r("b", "2")},
			applied: []workv1.AppliedManifestResourceMeta{r("a", "1")}, inWork: in("a", "b"),
			wantRecord: []workv1.AppliedManifestResourceMeta{r("a", "1"), r("b", "2")}},
		"recreated with a new uid: the new one is recorded": {previous: []workv1.AppliedManifestResourceMeta{r("a", "1")},
			applied: []workv1.AppliedManifestResourceMeta{r("a", "9")}, inWork: in("a"),
			wantRecord: []workv1.AppliedManifestResourceMeta{r("a", "9")}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			record, stale := nextApplied(tc.previous, tc.applied, tc.inWork)
			if diff := cmp.Diff(tc.wantRecord, record); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStale, stale); diff != "" {
				t.Errorf("stale (-want +got):\n%s", diff)
			}
		})
	}
}

func obj(s string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(s), &u.Object); err != nil {
		panic(err)
	}
	return u
}

func TestMatches(t *testing.T) {
	desired := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"1"}},"data":{"k":"v"}}`
	cases := map[string]struct {
		live string
		want bool
	}{
		"same": {live: desired, want: true},
		"extra fields and labels on the spoke (defaults)": {live: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":"u","labels":{"a":"1","b":"2"}},"data":{"k":"v"},"binaryData":{}}`, want: true},
		"value changed on the spoke":                      {live: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"1"}},"data":{"k":"w"}}`},
		"label missing":                                   {live: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`},
		"field missing":                                   {live: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"1"}}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, matches(obj(desired), obj(tc.live))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Lists compare element by element; numbers as numbers.
	d := obj(`{"spec":{"replicas":2,"ports":[{"port":80}]}}`)
	l := obj(`{"spec":{"replicas":2.0,"ports":[{"port":80,"protocol":"TCP"}]}}`)
	if !matches(d, l) {
		t.Error("defaults inside list elements made the objects differ")
	}
	if matches(d, obj(`{"spec":{"replicas":2,"ports":[{"port":80},{"port":81}]}}`)) {
		t.Error("an extra list element went unnoticed")
	}
	// Quantities come back canonical: a Job asking for nvidia.com/gpu: 8 (a number) reads back
	// "8", and "1000m" reads back "1". Updating it for that would fail (a Job's template is
	// immutable) and mark the work Degraded.
	q := obj(`{"spec":{"limits":{"nvidia.com/gpu":8,"cpu":"1000m","memory":"0.5Gi"}}}`)
	if !matches(q, obj(`{"spec":{"limits":{"nvidia.com/gpu":"8","cpu":"1","memory":"512Mi"}}}`)) {
		t.Error("canonical quantities made the objects differ")
	}
	if matches(q, obj(`{"spec":{"limits":{"nvidia.com/gpu":"4","cpu":"1","memory":"512Mi"}}}`)) {
		t.Error("a different quantity went unnoticed")
	}
	if matches(obj(`{"data":{"k":"8"}}`), obj(`{"data":{"k":"9"}}`)) {
		t.Error("different strings matched")
	}
}

func TestRemovePath(t *testing.T) {
	cases := map[string]struct {
		path      string
		wantFound bool
		want      string
	}{
		"JSONPath":           {path: ".spec.replicas", wantFound: true, want: `{"spec":{"paused":true}}`},
		"JSONPath in braces": {path: "{.spec.replicas}", wantFound: true, want: `{"spec":{"paused":true}}`},
		"JSON pointer":       {path: "/spec/replicas", wantFound: true, want: `{"spec":{"paused":true}}`},
		"absent":             {path: ".spec.other", want: `{"spec":{"paused":true,"replicas":3}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := obj(`{"spec":{"replicas":3,"paused":true}}`)
			found := removePath(o.Object, tc.path)
			got, _ := o.MarshalJSON()
			if diff := cmp.Diff(tc.wantFound, found); diff != "" {
				t.Errorf("found (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, string(got[:len(got)-1])); diff != "" {
				t.Errorf("object (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTTLExpired(t *testing.T) {
	done := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	work := func(ttl *int64, complete metav1.ConditionStatus) *workv1.ManifestWork {
		w := &workv1.ManifestWork{Spec: workv1.ManifestWorkSpec{DeleteOption: &workv1.DeleteOption{TTLSecondsAfterFinished: ttl}}}
		if complete != "" {
			w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkComplete, Status: complete, LastTransitionTime: metav1.NewTime(done)}}
		}
		return w
	}
	type result struct {
		Expired bool
		After   time.Duration
	}
	cases := map[string]struct {
		work *workv1.ManifestWork
		now  time.Time
		want result
	}{
		"no ttl":                {work: work(nil, metav1.ConditionTrue), now: done.Add(time.Hour)},
		"not complete":          {work: work(ptr.To[int64](10), metav1.ConditionFalse), now: done.Add(time.Hour)},
		"no Complete condition": {work: work(ptr.To[int64](10), ""), now: done.Add(time.Hour)},
		"complete, ttl to come": {work: work(ptr.To[int64](10), metav1.ConditionTrue), now: done.Add(4 * time.Second), want: result{After: 6 * time.Second}},
		"complete, ttl passed":  {work: work(ptr.To[int64](10), metav1.ConditionTrue), now: done.Add(10 * time.Second), want: result{Expired: true}},
		"ttl 0: at once":        {work: work(ptr.To[int64](0), metav1.ConditionTrue), now: done, want: result{Expired: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expired, after := ttlExpired(tc.work, tc.now)
			if diff := cmp.Diff(tc.want, result{expired, after}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorkStatusKeepsTransitionTimes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ok := outcome{Meta: workv1.ManifestResourceMeta{Ordinal: 0, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Name: "c", Namespace: "n"},
		Applied: applied(ReasonApplied, msgApplied)}
	first := workStatus(workv1.ManifestWorkStatus{}, []outcome{ok}, 1, t0)
	// The same outcome later is no change to write...
	second := workStatus(first, []outcome{ok}, 1, t0.Add(time.Minute))
	if statusChanged(first, second) {
		t.Errorf("status changed with the same outcome:\n%s", cmp.Diff(first, second))
	}
	// ...a failure is, with a new transition time.
	bad := ok
	bad.Applied = failed(ReasonFailed, "forbidden")
	third := workStatus(second, []outcome{bad}, 1, t0.Add(2*time.Minute))
	if !statusChanged(second, third) {
		t.Fatal("a failed manifest did not change the status")
	}
	got := third.ResourceStatus.Manifests[0].Conditions[0]
	want := metav1.Condition{Type: workv1.ManifestApplied, Status: metav1.ConditionFalse, Reason: ReasonFailed, Message: "forbidden",
		ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(t0.Add(2 * time.Minute))}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifest condition (-want +got):\n%s", diff)
	}
	if c := third.Conditions[0]; c.Type != workv1.WorkApplied || c.Status != metav1.ConditionFalse {
		t.Errorf("work condition = %+v, want Applied=False", c)
	}
}

func TestExecutorUser(t *testing.T) {
	sa := func(typ workv1.ManifestWorkExecutorSubjectType, ns, name string) *workv1.ManifestWorkExecutor {
		return &workv1.ManifestWorkExecutor{Subject: &workv1.ManifestWorkExecutorSubject{Type: typ,
			ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: ns, Name: name}}}
	}
	cases := map[string]struct {
		executor *workv1.ManifestWorkExecutor
		want     string
	}{
		"no executor: the agent":     {},
		"no subject: the agent":      {executor: &workv1.ManifestWorkExecutor{}},
		"a ServiceAccount":           {executor: sa(workv1.ExecutorSubjectTypeServiceAccount, "ns", "deployer"), want: "system:serviceaccount:ns:deployer"},
		"another subject type: none": {executor: sa("User", "ns", "deployer")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, executorUser(tc.executor)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigFor(t *testing.T) {
	cfgs := []workv1.ManifestConfigOption{
		{ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "n", Name: "web"}, FeedbackScrapeType: "first"},
		{ResourceIdentifier: workv1.ResourceIdentifier{Resource: "namespaces", Name: "n"}, FeedbackScrapeType: "second"},
	}
	cases := map[string]struct {
		meta workv1.ManifestResourceMeta
		want string
	}{
		"namespaced match":   {meta: workv1.ManifestResourceMeta{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "n", Name: "web"}, want: "first"},
		"cluster-scoped":     {meta: workv1.ManifestResourceMeta{Version: "v1", Kind: "Namespace", Resource: "namespaces", Name: "n"}, want: "second"},
		"other namespace":    {meta: workv1.ManifestResourceMeta{Group: "apps", Resource: "deployments", Namespace: "m", Name: "web"}},
		"other group":        {meta: workv1.ManifestResourceMeta{Group: "extensions", Resource: "deployments", Namespace: "n", Name: "web"}},
		"resource not known": {meta: workv1.ManifestResourceMeta{Group: "apps", Namespace: "n", Name: "web"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if c := configFor(cfgs, tc.meta); c != nil {
				got = string(c.FeedbackScrapeType)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTransient(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	cases := map[string]struct {
		err  error
		want bool
	}{
		"none":                      {},
		"no answer":                 {err: errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"), want: true},
		"unavailable":               {err: apierrors.NewServiceUnavailable("restarting"), want: true},
		"too many requests":         {err: apierrors.NewTooManyRequests("slow down", 1), want: true},
		"internal error":            {err: apierrors.NewInternalError(errors.New("etcd")), want: true},
		"server timeout":            {err: apierrors.NewServerTimeout(gr, "create", 1), want: true},
		"not found":                 {err: apierrors.NewNotFound(gr, "c")},
		"forbidden":                 {err: apierrors.NewForbidden(gr, "c", errors.New("no"))},
		"invalid":                   {err: apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "c", nil)},
		"conflict":                  {err: apierrors.NewConflict(gr, "c", errors.New("modified"))},
		"unknown kind (no matches)": {err: &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "example.com", Kind: "Nope"}, SearchedVersions: []string{"v1"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, transient(tc.err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSettled(t *testing.T) {
	cm := workv1.ManifestResourceMeta{Ordinal: 0, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Name: "c", Namespace: "n"}
	rec := &workv1.AppliedManifestResourceMeta{Version: "v1", Resource: "configmaps", Name: "c", Namespace: "n", UID: "u1"}
	amw := &workv1.AppliedManifestWork{Status: workv1.AppliedManifestWorkStatus{AppliedResources: []workv1.AppliedManifestResourceMeta{*rec}}}
	ok := outcome{Meta: cm, Applied: applied(ReasonApplied, msgApplied), Record: rec}
	with := func(change func(*outcome)) []outcome {
		o := ok
		change(&o)
		return []outcome{o}
	}
	cases := map[string]struct {
		outcomes []outcome
		want     bool
	}{
		"as the last full round left it":                    {outcomes: []outcome{ok}, want: true},
		"the cache lacks the object or it would be written": {outcomes: with(func(o *outcome) { o.Stale = true })},
		"the spoke did not answer":                          {outcomes: with(func(o *outcome) { o.Transient = true })},
		"waiting for a CRD":                                 {outcomes: with(func(o *outcome) { o.Retry = true })},
		"the object was made again (another uid)": {outcomes: with(func(o *outcome) {
			r := *rec
			r.UID = "u2"
			o.Record = &r
		})},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, settled(amw, tc.outcomes)); diff != "" {
				t.Errorf("settled (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSpecChanged(t *testing.T) {
	w := func(gen int64, finalizers ...string) *workv1.ManifestWork {
		return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "c", Name: "w", Generation: gen, Finalizers: finalizers}}
	}
	cases := map[string]struct {
		old, new *workv1.ManifestWork
		want     bool
	}{
		"status only (the agent's own write)": {old: w(1, Finalizer), new: w(1, Finalizer)},
		"the agent's finalizer added":         {old: w(1), new: w(1, Finalizer)},
		"a new generation":                    {old: w(1, Finalizer), new: w(2, Finalizer), want: true},
		"the agent's finalizer taken away":    {old: w(1, Finalizer), new: w(1), want: true},
		"another finalizer added":             {old: w(1, Finalizer), new: w(1, Finalizer, "other"), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := specChanged.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
