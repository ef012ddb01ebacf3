package explain

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/core/placementview"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// fleetObjects: set prod (exclusive label) with east (gpu) and cpu, bound in ml; placement ml/gpu
// selects gpu clusters.
func fleetObjects() []client.Object {
	prod := func(extra ...string) map[string]string {
		m := map[string]string{clusterv1beta2.ClusterSetLabel: "prod"}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	return []client.Object{
		gpuPlacement(),
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "east", Labels: prod("gpu", "h100")}},
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cpu", Labels: prod()}},
		&clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "prod"}},
		&clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "prod"},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "prod"}},
	}
}

func gpuPlacement() *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "gpu"},
		Spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{
			RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "h100"}}}}}}}
}

// localOutput is what placementview gives for p against fleetObjects, as the CLI computes it.
func localOutput(t *testing.T, p *clusterv1beta1.Placement) placementview.Output {
	t.Helper()
	objs := &placementview.Objects{}
	for _, o := range fleetObjects() {
		switch v := o.(type) {
		case *clusterv1.ManagedCluster:
			objs.Clusters = append(objs.Clusters, *v)
		case *clusterv1beta2.ManagedClusterSet:
			objs.Sets = append(objs.Sets, *v)
		case *clusterv1beta2.ManagedClusterSetBinding:
			objs.Bindings = append(objs.Bindings, *v)
		}
	}
	res := scheduler.New(clocktesting.NewFakePassiveClock(now)).Schedule(p, placementview.SnapshotFrom(objs, p.Namespace, p.Name))
	// Round-trip through JSON, as the answer does.
	b, err := json.Marshal(placementview.NewOutput(p.Namespace, p.Name, &res))
	if err != nil {
		t.Fatal(err)
	}
	var out placementview.Output
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

const goodToken = "token-of-alice"

var alice = authenticationv1.UserInfo{Username: "alice", UID: "u-1", Groups: []string{"ml-team"},
	Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a"}}}

type call struct {
	User  authenticationv1.UserInfo
	Attrs authorizationv1.ResourceAttributes
}

func TestHandler(t *testing.T) {
	whatIf := `apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: cpu-only
spec:
  predicates:
  - requiredClusterSelector:
      labelSelector:
        matchExpressions:
        - {key: gpu, operator: DoesNotExist}
`
	whatIfPlacement := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "cpu-only"},
		Spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{
			RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "gpu", Operator: metav1.LabelSelectorOpDoesNotExist}}}}}}}}
	cases := map[string]struct {
		method, path, body string
		token              string
		allow              bool
		authzErr           error
		wantCode           int
		wantCalls          []call
		wantOutput         *placementview.Output
		wantMessage        []string // substrings of the error's message
	}{
		"get allowed": {
			method: "GET", path: "/explain/namespaces/ml/placements/gpu", token: goodToken, allow: true,
			wantCode:   200,
			wantCalls:  []call{{alice, authorizationv1.ResourceAttributes{Namespace: "ml", Verb: "get", Group: Group, Resource: "placements", Name: "gpu"}}},
			wantOutput: ptrTo(localOutput(t, gpuPlacement())),
		},
		"get denied": {
			method: "GET", path: "/explain/namespaces/ml/placements/gpu", token: goodToken, allow: false,
			wantCode:    403,
			wantCalls:   []call{{alice, authorizationv1.ResourceAttributes{Namespace: "ml", Verb: "get", Group: Group, Resource: "placements", Name: "gpu"}}},
			wantMessage: []string{`user "alice" cannot get placements.cluster.open-cluster-management.io "gpu" in namespace "ml"`, "denied by test", `verb "get"`},
		},
		"no token": {
			method: "GET", path: "/explain/namespaces/ml/placements/gpu",
			wantCode: 401, wantMessage: []string{"no bearer token", "Authorization: Bearer"},
		},
		"bad token": {
			method: "GET", path: "/explain/namespaces/ml/placements/gpu", token: "stolen",
			wantCode: 401, wantMessage: []string{"does not accept the bearer token"},
		},
		"missing placement": {
			method: "GET", path: "/explain/namespaces/ml/placements/nope", token: goodToken, allow: true,
			wantCode:    404,
			wantCalls:   []call{{alice, authorizationv1.ResourceAttributes{Namespace: "ml", Verb: "get", Group: Group, Resource: "placements", Name: "nope"}}},
			wantMessage: []string{"placement ml/nope is not on the hub", "flotilla get placements -n ml"},
		},
		"authorizer fails": {
			method: "GET", path: "/explain/namespaces/ml/placements/gpu", token: goodToken, authzErr: errors.New("API server down"),
			wantCode:    500,
			wantCalls:   []call{{alice, authorizationv1.ResourceAttributes{Namespace: "ml", Verb: "get", Group: Group, Resource: "placements", Name: "gpu"}}},
			wantMessage: []string{"API server down"},
		},
		"what-if allowed": {
			method: "POST", path: "/explain/namespaces/ml/placements", body: whatIf, token: goodToken, allow: true,
			wantCode:   200,
			wantCalls:  []call{{alice, authorizationv1.ResourceAttributes{Namespace: "ml", Verb: "create", Group: Group, Resource: "placements"}}},
			wantOutput: ptrTo(localOutput(t, whatIfPlacement)),
		},
		"what-if denied": {
			method: "POST", path: "/explain/namespaces/ml/placements", body: whatIf, token: goodToken,
			wantCode:    403,
			wantCalls:   []call{{alice, authorizationv1.ResourceAttributes{Namespace: "ml", Verb: "create", Group: Group, Resource: "placements"}}},
			wantMessage: []string{`cannot create placements.cluster.open-cluster-management.io in namespace "ml"`},
		},
		"what-if unknown field": {
			method: "POST", path: "/explain/namespaces/ml/placements", token: goodToken, allow: true,
			body:        `{"apiVersion":"cluster.open-cluster-management.io/v1beta1","kind":"Placement","spec":{"numberOfClusterz":2}}`,
			wantCode:    400,
			wantCalls:   []call{{alice, authorizationv1.ResourceAttributes{Namespace: "ml", Verb: "create", Group: Group, Resource: "placements"}}},
			wantMessage: []string{`unknown field "spec.numberOfClusterz"`},
		},
		"what-if unauthenticated body not read": {
			method: "POST", path: "/explain/namespaces/ml/placements", body: "{", wantCode: 401, wantMessage: []string{"no bearer token"},
		},
		"wrong method": {
			method: "DELETE", path: "/explain/namespaces/ml/placements/gpu", token: goodToken,
			wantCode: 405, wantMessage: []string{"DELETE /explain/namespaces/ml/placements/gpu is not served"},
		},
		"unknown path": {
			method: "GET", path: "/explain/namespaces/ml/workloads/gpu", token: goodToken,
			wantCode: 404, wantMessage: []string{"no such endpoint", "GET /explain/namespaces/NAMESPACE/placements/NAME"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(fleetObjects()...).Build()
			var calls []call
			h := &Handler{
				Reader: c,
				Authenticate: func(_ context.Context, token string) (authenticationv1.UserInfo, bool, error) {
					if token != goodToken {
						return authenticationv1.UserInfo{}, false, nil
					}
					return alice, true, nil
				},
				Authorize: func(_ context.Context, user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) (bool, string, error) {
					calls = append(calls, call{user, attrs})
					return tc.allow, "denied by test", tc.authzErr
				},
				Clock: clocktesting.NewFakePassiveClock(now),
			}
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			if rec.Code != tc.wantCode {
				t.Errorf("code %d, want %d; body %s", rec.Code, tc.wantCode, rec.Body)
			}
			if got := rec.Header().Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type %q, want application/json", got)
			}
			if diff := cmp.Diff(tc.wantCalls, calls); diff != "" {
				t.Errorf("authorizer calls (-want +got):\n%s", diff)
			}
			if tc.wantOutput != nil {
				if len(tc.wantOutput.Decisions) != 1 || len(tc.wantOutput.Clusters) != 2 {
					t.Fatalf("the fleet should give one decision among two clusters: %+v", tc.wantOutput)
				}
				var got placementview.Output
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
					t.Fatalf("decoding %s: %v", rec.Body, err)
				}
				if diff := cmp.Diff(*tc.wantOutput, got); diff != "" {
					t.Errorf("explanation (-want +got):\n%s", diff)
				}
			}
			if tc.wantMessage != nil {
				var st metav1.Status
				if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
					t.Fatalf("decoding %s: %v", rec.Body, err)
				}
				if st.Kind != "Status" || st.Code != int32(tc.wantCode) || st.Status != metav1.StatusFailure {
					t.Errorf("status %+v, want kind Status, code %d, Failure", st, tc.wantCode)
				}
				for _, w := range tc.wantMessage {
					if !strings.Contains(st.Message, w) {
						t.Errorf("message %q does not hold %q", st.Message, w)
					}
				}
			}
			// A what-if never creates its placement.
			err := c.Get(context.Background(), client.ObjectKey{Namespace: "ml", Name: "cpu-only"}, &clusterv1beta1.Placement{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("placement ml/cpu-only: %v, want not found", err)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
