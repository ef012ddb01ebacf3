package webhook

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/apitest"
)

func raw(t *testing.T, obj runtime.Object) runtime.RawExtension {
	t.Helper()
	if obj == nil {
		return runtime.RawExtension{}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
}

// clusterHandler is ManagedClusterHandler on a hub whose only namespace is team-a, made by a team.
func clusterHandler(s *runtime.Scheme, can Authorizer) admission.Handler {
	return ManagedClusterHandler(s, can, namespaces(namespace("team-a")), hubUser)
}

func TestHandlers(t *testing.T) {
	type result struct {
		Allowed bool
		Code    int32
		Message string
	}
	cases := map[string]struct {
		handler  func(*runtime.Scheme, Authorizer) admission.Handler
		op       admissionv1.Operation
		old, cur runtime.Object
		grants   []Permission
		want     result
	}{
		"cluster create allowed": {
			handler: clusterHandler, op: admissionv1.Create,
			cur:  apitest.MakeCluster("gpu-east").Obj(),
			want: result{Allowed: true, Code: 200},
		},
		"cluster accept denied": {
			handler: clusterHandler, op: admissionv1.Update,
			old: apitest.MakeCluster("gpu-east").Obj(), cur: apitest.MakeCluster("gpu-east").Accepted().Obj(),
			want: result{Code: 403, Message: `managedclusters "gpu-east": setting spec.hubAcceptsClient to true needs permission to ` +
				`update managedclusters/accept on "gpu-east" in group register.open-cluster-management.io; ask a hub ` +
				`administrator to bind a role with it, or run flotilla accept as one`},
		},
		"two refusals are joined": {
			handler: clusterHandler, op: admissionv1.Create,
			cur: apitest.MakeCluster("gpu-east").Accepted().ClusterSet("red").Obj(),
			want: result{Code: 403, Message: `managedclusters "gpu-east": setting spec.hubAcceptsClient to true needs permission to ` +
				`update managedclusters/accept on "gpu-east" in group register.open-cluster-management.io; ask a hub ` +
				`administrator to bind a role with it, or run flotilla accept as one; and managedclusters "gpu-east": ` +
				`setting label cluster.open-cluster-management.io/clusterset to "red" (joining set "red") needs permission ` +
				`to create managedclustersets/join on "red" in group cluster.open-cluster-management.io; ask a hub ` +
				`administrator to bind a role with it`},
		},
		"cluster named after a team's namespace": {
			handler: clusterHandler, op: admissionv1.Create,
			cur: apitest.MakeCluster("team-a").Obj(),
			want: result{Code: 403, Message: `managedclusters "team-a": namespace "team-a" already exists and the hub did ` +
				`not make it for a cluster; the hub would have to take it over to give the cluster's agent access there: ` +
				`register the cluster under another name (flotilla agent --cluster-name), or delete the namespace if it is unused`},
		},
		"an update does not check the name": {
			handler: clusterHandler, op: admissionv1.Update,
			old: apitest.MakeCluster("team-a").Obj(), cur: apitest.MakeCluster("team-a").ClusterSet("").Obj(),
			want: result{Allowed: true, Code: 200},
		},
		"cluster accept allowed": {
			handler: clusterHandler, op: admissionv1.Update,
			old: apitest.MakeCluster("gpu-east").Obj(), cur: apitest.MakeCluster("gpu-east").Accepted().Obj(),
			grants: []Permission{AcceptPermission("gpu-east")},
			want:   result{Allowed: true, Code: 200},
		},
		"binding allowed": {
			handler: BindingHandler, op: admissionv1.Create,
			cur:    apitest.MakeClusterSetBinding("team-a", "red").Obj(),
			grants: []Permission{BindPermission("red")},
			want:   result{Allowed: true, Code: 200},
		},
		"delete is not checked": {
			handler: BindingHandler, op: admissionv1.Delete,
			old:  apitest.MakeClusterSetBinding("team-a", "red").Obj(),
			want: result{Allowed: true, Code: 200},
		},
		"a status write that changes claims": {
			handler: clusterHandler, op: admissionv1.Update,
			old: apitest.MakeCluster("gpu-east").Claim("a.example.com", "1").Obj(), cur: apitest.MakeCluster("gpu-east").Obj(),
			want: result{Code: 403, Message: `managedclusters "gpu-east": status.clusterClaims is reported by the cluster's own ` +
				`agent only (from the ClusterClaims on the cluster), and alice is not that agent; this write would remove claim ` +
				`a.example.com; create, change or delete the ClusterClaim on cluster gpu-east instead, and its agent reports it`},
		},
		"a user sets the fencing epoch": {
			handler: clusterHandler, op: admissionv1.Update,
			old: apitest.MakeCluster("gpu-east").Obj(), cur: apitest.MakeCluster("gpu-east").Annotation("failover.flotilla.io/epoch", "9").Obj(),
			want: result{Code: 403, Message: `managedclusters "gpu-east": the annotations failover.flotilla.io/* are the hub's (user ` +
				hubUser + `): it writes failover.flotilla.io/timing from the FailoverPolicies of the cluster's sets, and raises ` +
				`failover.flotilla.io/epoch and failover.flotilla.io/lost-at when it declares the cluster lost, which the cluster's ` +
				`agent acts on; alice is not the hub, and this write would add failover.flotilla.io/epoch="9"; keep those annotations ` +
				`as they are, and change a FailoverPolicy to change the cluster's timing`},
		},
		"federated learning allowed": {
			handler: FederatedLearningHandler, op: admissionv1.Create,
			cur:    makeFL("team-a", "mnist").Framework("flower").ClusterSets("gpu").Flower("superlink.ml-team:9091", "").Obj(),
			grants: []Permission{BindPermission("gpu"), PlacementPermission("team-a"), ServerPermission("flower", "team-a"), ClientPermission("team-a")},
			want:   result{Allowed: true, Code: 200},
		},
		"federated learning denied": {
			handler: FederatedLearningHandler, op: admissionv1.Create,
			cur:    makeFL("team-a", "mnist").Framework("flower").Flower("superlink.ml-team:9091", "").Obj(),
			grants: []Permission{PlacementPermission("team-a"), ServerPermission("flower", "team-a")},
			want: result{Code: 403, Message: `federatedlearnings "mnist" in namespace "team-a": spec.client.image ` +
				`("ghcr.io/team/client:1") makes the hub run the client on the clusters spec.client.placement chooses from ` +
				`the sets bound to namespace "team-a", which needs permission to create manifestworkreplicasets in namespace ` +
				`"team-a" in group work.open-cluster-management.io; ask a hub administrator to bind a role with it`},
		},
		"undecodable object": {
			handler: clusterHandler, op: admissionv1.Create,
			want: result{Code: 400, Message: "decoding the object: there is no content to decode"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sar := &fakeSAR{grants: map[string][]Permission{alice.Username: tc.grants}}
			h := &admission.Webhook{Handler: tc.handler(scheme.Scheme, sar.can)}
			resp := h.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				UID: "1", Operation: tc.op, UserInfo: alice, Object: raw(t, tc.cur), OldObject: raw(t, tc.old),
			}})
			got := result{Allowed: resp.Allowed}
			if resp.Result != nil {
				got.Code, got.Message = resp.Result.Code, resp.Result.Message
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSubjectAccessReviews(t *testing.T) {
	cs := fake.NewClientset()
	var got *authorizationv1.SubjectAccessReview
	cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		got = a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		out := got.DeepCopy()
		out.Status.Allowed = true
		return true, out, nil
	})
	user := authenticationv1.UserInfo{
		Username: "alice", UID: "u-1", Groups: []string{"team-a", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a", "b"}},
	}
	ok, err := SubjectAccessReviews(cs)(context.Background(), user, JoinPermission("red"))
	if err != nil || !ok {
		t.Fatalf("SubjectAccessReviews() = %v, %v; want true, nil", ok, err)
	}
	want := authorizationv1.SubjectAccessReviewSpec{
		User: "alice", UID: "u-1", Groups: []string{"team-a", "system:authenticated"},
		Extra: map[string]authorizationv1.ExtraValue{"scopes": {"a", "b"}},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: "create", Group: "cluster.open-cluster-management.io", Resource: "managedclustersets", Subresource: "join", Name: "red",
		},
	}
	if diff := cmp.Diff(want, got.Spec); diff != "" {
		t.Errorf("review spec (-want +got):\n%s", diff)
	}
}
