package configpolicy

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMatches(t *testing.T) {
	actual := `{"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"m","namespace":"default","labels":{"a":"1","b":"2"},"uid":"u"},
		"spec":{"limits":[{"type":"Container","default":{"memory":"512Mi"},"defaultRequest":{"memory":"256Mi"}},{"type":"Pod","max":{"cpu":"2"}}]},
		"status":{"x":1}}`
	cases := map[string]struct {
		tmpl           string
		fields, labels only
		want           bool
	}{
		"musthave: a subset of the fields":   {tmpl: `{"spec":{"limits":[{"type":"Container","default":{"memory":"512Mi"}}]}}`, want: true},
		"musthave: a list item anywhere":     {tmpl: `{"spec":{"limits":[{"type":"Pod"}]}}`, want: true},
		"musthave: a different value":        {tmpl: `{"spec":{"limits":[{"type":"Container","default":{"memory":"1Gi"}}]}}`},
		"musthave: a field the object lacks": {tmpl: `{"spec":{"limits":[{"type":"Container","max":{"cpu":"1"}}]}}`},
		"mustonlyhave: a list must be whole": {tmpl: `{"spec":{"limits":[{"type":"Container","default":{"memory":"512Mi"},"defaultRequest":{"memory":"256Mi"}}]}}`, fields: true},
		"mustonlyhave: exactly the object's fields": {fields: true, want: true,
			tmpl: `{"spec":{"limits":[{"type":"Container","default":{"memory":"512Mi"},"defaultRequest":{"memory":"256Mi"}},{"type":"Pod","max":{"cpu":"2"}}]}}`},
		"metadata: labels musthave":            {tmpl: `{"metadata":{"name":"m","labels":{"a":"1"}}}`, want: true},
		"metadata: labels mustonlyhave":        {tmpl: `{"metadata":{"name":"m","labels":{"a":"1"}}}`, labels: true},
		"status and identity are not compared": {tmpl: `{"apiVersion":"v9","kind":"Other","status":{"x":2},"metadata":{"name":"m"}}`, want: true},
		"numbers by value":                     {tmpl: `{"status":{},"spec":{"limits":[{"type":"Pod"}]}}`, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, why := matches(obj(t, tc.tmpl), obj(t, actual), tc.fields, tc.labels)
			if got != tc.want {
				t.Errorf("matches = %v (%s), want %v", got, why, tc.want)
			}
		})
	}
	if ok, _ := equalValue(int64(3), float64(3), false, "x"); !ok {
		t.Error("3 and 3.0 differ")
	}
}

func TestMerge(t *testing.T) {
	actual := obj(t, `{"metadata":{"name":"m","labels":{"a":"1"}},"spec":{"limits":[{"type":"Pod"}],"keep":true}}`)
	tmpl := obj(t, `{"metadata":{"name":"m","labels":{"b":"2"}},"spec":{"limits":[{"type":"Container"}]}}`)
	got := merge(tmpl, actual, false, false)
	want := obj(t, `{"metadata":{"name":"m","labels":{"a":"1","b":"2"}},"spec":{"limits":[{"type":"Pod"},{"type":"Container"}],"keep":true}}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("musthave merge (-want +got):\n%s", diff)
	}
	if ok, why := matches(tmpl, got, false, false); !ok {
		t.Errorf("the merged object does not match its template: %s", why)
	}
	got = merge(tmpl, actual, true, true)
	want = obj(t, `{"metadata":{"name":"m","labels":{"b":"2"}},"spec":{"limits":[{"type":"Container"}]}}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mustonlyhave merge (-want +got):\n%s", diff)
	}
	if actual["spec"].(map[string]any)["keep"] != true {
		t.Error("merge changed its input")
	}
}

func TestSummarize(t *testing.T) {
	cases := map[string]struct {
		results     []result
		wantOK      bool
		wantMessage string
	}{
		"cluster-scoped, missing": {results: []result{{reason: reasonNotFound, names: []string{"prod"}}},
			wantMessage: "namespaces [prod] not found"},
		"compliant in two namespaces": {wantOK: true, results: []result{
			{namespace: "b", compliant: true, reason: reasonFoundExists, names: []string{"m"}},
			{namespace: "a", compliant: true, reason: reasonFoundExists, names: []string{"m"}}},
			wantMessage: "namespaces [m] found as specified in namespaces: a, b"},
		"only the violations are told": {results: []result{
			{namespace: "a", compliant: true, reason: reasonFoundExists, names: []string{"m"}},
			{namespace: "b", reason: reasonNoMatch, names: []string{"m"}},
			{namespace: "c", reason: reasonNotFound, names: []string{"m"}}},
			wantMessage: "namespaces [m] not found in namespace c; namespaces [m] found but not as specified in namespace b"},
		"an error's own message": {results: []result{{reason: reasonError, message: "listing namespaces: boom"}},
			wantMessage: "listing namespaces: boom"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := summarize("namespaces", tc.results)
			if got.compliant != tc.wantOK || got.message != tc.wantMessage {
				t.Errorf("summarize = %v %q, want %v %q", got.compliant, got.message, tc.wantOK, tc.wantMessage)
			}
		})
	}
}

func TestDue(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	cp := func(compliant, noncompliant string) *policyv1.ConfigurationPolicy {
		return &policyv1.ConfigurationPolicy{ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Spec: policyv1.ConfigurationPolicySpec{EvaluationInterval: policyv1.EvaluationInterval{Compliant: compliant, NonCompliant: noncompliant}}}
	}
	at := func(ago time.Duration, compliant bool) evaluation {
		return evaluation{generation: 2, at: now.Add(-ago), compliant: compliant}
	}
	cases := map[string]struct {
		last evaluation
		cp   *policyv1.ConfigurationPolicy
		want bool
	}{
		"never evaluated":                   {cp: cp("", ""), want: true},
		"changed since":                     {last: evaluation{generation: 1, at: now}, cp: cp("never", "never"), want: true},
		"watch: every resync":               {last: at(10*time.Second, true), cp: cp("watch", ""), want: true},
		"watch: not before the resync":      {last: at(5*time.Second, true), cp: cp("watch", "")},
		"compliant interval not yet passed": {last: at(30*time.Second, true), cp: cp("1m", "5s")},
		"noncompliant interval passed":      {last: at(6*time.Second, false), cp: cp("1m", "5s"), want: true},
		"never: only on a change":           {last: at(time.Hour, true), cp: cp("never", "")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := due(tc.last, tc.cp, now, 10*time.Second); got != tc.want {
				t.Errorf("due = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSelected(t *testing.T) {
	sel := policyv1.Target{Include: []policyv1.NonEmptyString{"team-*", "default"}, Exclude: []policyv1.NonEmptyString{"team-sys*"}}
	for name, want := range map[string]bool{"default": true, "team-ml": true, "team-system": false, "kube-system": false} {
		if got := selected(name, sel); got != want {
			t.Errorf("selected(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestWatchesChanges(t *testing.T) {
	limits := watchKey{GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}, Namespace: "default"}
	pods := watchKey{GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: "default"}
	limitsElsewhere := watchKey{GroupVersionResource: limits.GroupVersionResource, Namespace: "kube-system"}
	cp := func(compliant, noncompliant string) *policyv1.ConfigurationPolicy {
		return &policyv1.ConfigurationPolicy{Spec: policyv1.ConfigurationPolicySpec{EvaluationInterval: policyv1.EvaluationInterval{Compliant: compliant, NonCompliant: noncompliant}}}
	}
	last := evaluation{compliant: true, resources: []watchKey{limits}}
	cases := map[string]struct {
		cp      *policyv1.ConfigurationPolicy
		changed map[watchKey]bool
		want    bool
	}{
		"unset: a change of a checked kind": {cp: cp("", ""), changed: map[watchKey]bool{limits: true}, want: true},
		"watch: a change of a checked kind": {cp: cp("watch", "1m"), changed: map[watchKey]bool{limits: true}, want: true},
		"a change of another kind":          {cp: cp("", ""), changed: map[watchKey]bool{pods: true}},
		"the kind in another namespace":     {cp: cp("", ""), changed: map[watchKey]bool{limitsElsewhere: true}},
		"an interval for its compliance":    {cp: cp("10m", "watch"), changed: map[watchKey]bool{limits: true}},
		"never":                             {cp: cp("never", ""), changed: map[watchKey]bool{limits: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := watchesChanges(last, tc.cp, tc.changed); got != tc.want {
				t.Errorf("watchesChanges = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOnePass(t *testing.T) {
	e := &engine{}
	calls := 0
	list := e.onePass(func(context.Context) ([]corev1.Namespace, error) {
		calls++
		return []corev1.Namespace{{}}, nil
	})
	for range 3 {
		if _, err := list(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	e.pass++
	_, _ = list(context.Background())
	if calls != 2 {
		t.Errorf("%d lists over two passes, want 2", calls)
	}
}

func TestDifferences(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"name": "mem", "labels": map[string]any{"team": "ml", "extra": "x"}},
		"spec":     map[string]any{"limits": []any{map[string]any{"type": "Container", "default": map[string]any{"memory": "1Gi"}}}},
		"data":     map[string]any{"a": "1", "b": "2"},
	}
	for name, tc := range map[string]struct {
		tmpl           map[string]any
		fields, labels only
		limit          int
		want           []string
	}{
		"as specified": {tmpl: map[string]any{"data": map[string]any{"a": "1"}}, limit: 20},
		"every difference, in the template's order": {
			tmpl:  map[string]any{"data": map[string]any{"a": "2", "c": "3"}, "metadata": map[string]any{"labels": map[string]any{"team": "infra"}}},
			limit: 20, want: []string{"data.a is 1, want 2", "data.c is unset, want 3", "metadata.labels.team is ml, want infra"}},
		"mustonlyhave names what is extra": {tmpl: map[string]any{"data": map[string]any{"a": "1"}, "metadata": map[string]any{"labels": map[string]any{"team": "ml"}}},
			fields: true, labels: true, limit: 20, want: []string{"data.b is set, and mustonlyhave lists no such field", "metadata.labels.extra is set, and mustonlyhave lists no such field"}},
		"a list item no object item has": {tmpl: map[string]any{"spec": map[string]any{"limits": []any{map[string]any{"default": map[string]any{"memory": "512Mi"}}}}},
			limit: 20, want: []string{"spec.limits[0].default.memory is 1Gi, want 512Mi"}},
		"a list the object lacks": {tmpl: map[string]any{"spec": map[string]any{"limits": []any{map[string]any{"type": "Pod"}}}}, limit: 20,
			want: []string{"spec.limits[0].type is Container, want Pod"}},
		"bounded": {tmpl: map[string]any{"data": map[string]any{"a": "2", "b": "3", "c": "4"}}, limit: 2,
			want: []string{"data.a is 1, want 2", "data.b is 2, want 3"}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, differences(tc.tmpl, obj, tc.fields, tc.labels, tc.limit)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
