package webhook

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
)

// flWrapper builds test FederatedLearnings.
type flWrapper struct{ flv1alpha1.FederatedLearning }

func makeFL(ns, name string) *flWrapper {
	w := &flWrapper{flv1alpha1.FederatedLearning{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}}
	w.Spec.Server.Image, w.Spec.Client.Image = "ghcr.io/team/server:1", "ghcr.io/team/client:1"
	return w
}

func (w *flWrapper) framework(f flv1alpha1.Framework) *flWrapper {
	w.Spec.Framework = f
	return w
}

func (w *flWrapper) sets(sets ...string) *flWrapper {
	w.Spec.Client.Placement.ClusterSets = sets
	return w
}

func (w *flWrapper) rounds(n int32) *flWrapper {
	w.Spec.Server.Rounds = n
	return w
}

func (w *flWrapper) serverImage(image string) *flWrapper {
	w.Spec.Server.Image = image
	return w
}

func (w *flWrapper) label(k, v string) *flWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[k] = v
	return w
}

func (w *flWrapper) obj() *flv1alpha1.FederatedLearning { return w.DeepCopy() }

func TestReviewFederatedLearning(t *testing.T) {
	const ns = "team-a"
	subject := `federatedlearnings "mnist" in namespace "team-a": `
	bindMsg := func(i, set string) string {
		return subject + `spec.client.placement.clusterSets[` + i + `] makes the hub bind set "` + set + `" to namespace "team-a", ` +
			`which needs permission to create managedclustersets/bind on "` + set + `" in group cluster.open-cluster-management.io; ` +
			`ask a hub administrator to bind a role with it`
	}
	serverMsg := func(image, kind, fw, perm string) string {
		return subject + `spec.server.image` + image + ` makes the hub run the server in namespace "team-a" as a ` + kind +
			` (spec.framework ` + fw + `), which needs permission to ` + perm + `; ask a hub administrator to bind a role with it`
	}
	jobs := `create jobs in namespace "team-a" in group batch`
	deployments := `create deployments in namespace "team-a" in group apps`
	clientMsg := subject + `spec.client.image ("ghcr.io/team/client:1") makes the hub run the client on the clusters ` +
		`spec.client.placement chooses from the sets bound to namespace "team-a", which needs permission to create ` +
		`manifestworkreplicasets in namespace "team-a" in group work.open-cluster-management.io; ask a hub administrator ` +
		`to bind a role with it`
	flowerAll := []Permission{BindPermission("gpu"), BindPermission("cpu"), ServerPermission(flv1alpha1.FrameworkFlower, ns), ClientPermission(ns)}
	otherAll := []Permission{BindPermission("gpu"), ServerPermission(flv1alpha1.FrameworkOther, ns), ClientPermission(ns)}
	cases := map[string]struct {
		grants      []Permission
		old, cur    *flv1alpha1.FederatedLearning
		wantDenials []string
		wantAsked   []Permission
	}{
		"flower with every permission": {
			grants:    flowerAll,
			cur:       makeFL(ns, "mnist").framework(flv1alpha1.FrameworkFlower).sets("gpu", "cpu").obj(),
			wantAsked: flowerAll,
		},
		"flower without bind on the second set": {
			grants:      []Permission{BindPermission("gpu"), ServerPermission(flv1alpha1.FrameworkFlower, ns), ClientPermission(ns)},
			cur:         makeFL(ns, "mnist").framework(flv1alpha1.FrameworkFlower).sets("gpu", "cpu").obj(),
			wantDenials: []string{bindMsg("1", "cpu")},
			wantAsked:   flowerAll,
		},
		"flower needs deployments, not jobs": {
			grants: []Permission{BindPermission("gpu"), BindPermission("cpu"), CreatePermission("batch", "jobs", ns), ClientPermission(ns)},
			cur:    makeFL(ns, "mnist").framework(flv1alpha1.FrameworkFlower).sets("gpu", "cpu").obj(),
			wantDenials: []string{
				serverMsg(` ("ghcr.io/team/server:1")`, "Deployment", "flower", deployments),
			},
			wantAsked: flowerAll,
		},
		"openfl needs jobs": {
			grants:      []Permission{BindPermission("gpu"), ClientPermission(ns)},
			cur:         makeFL(ns, "mnist").framework(flv1alpha1.FrameworkOpenFL).sets("gpu").obj(),
			wantDenials: []string{serverMsg(` ("ghcr.io/team/server:1")`, "Job", "openfl", jobs)},
			wantAsked:   otherAll,
		},
		"an empty framework is other, and needs jobs": {
			grants:      []Permission{BindPermission("gpu"), ClientPermission(ns)},
			cur:         makeFL(ns, "mnist").sets("gpu").serverImage("").obj(),
			wantDenials: []string{serverMsg("", "Job", "other", jobs)},
			wantAsked:   otherAll,
		},
		"nothing granted: every refusal, in spec order": {
			cur: makeFL(ns, "mnist").framework(flv1alpha1.FrameworkOther).sets("gpu").obj(),
			wantDenials: []string{
				bindMsg("0", "gpu"),
				serverMsg(` ("ghcr.io/team/server:1")`, "Job", "other", jobs),
				clientMsg,
			},
			wantAsked: otherAll,
		},
		"a set named twice is asked once, at its first index": {
			grants:      []Permission{ServerPermission(flv1alpha1.FrameworkOther, ns), ClientPermission(ns)},
			cur:         makeFL(ns, "mnist").sets("gpu", "gpu").obj(),
			wantDenials: []string{bindMsg("0", "gpu")},
			wantAsked:   otherAll,
		},
		"bind on another set does not help": {
			grants:      []Permission{BindPermission("cpu"), ServerPermission(flv1alpha1.FrameworkOther, ns), ClientPermission(ns)},
			cur:         makeFL(ns, "mnist").sets("gpu").obj(),
			wantDenials: []string{bindMsg("0", "gpu")},
			wantAsked:   otherAll,
		},
		"permissions in another namespace do not help": {
			grants: []Permission{BindPermission("gpu"), ServerPermission(flv1alpha1.FrameworkOther, "team-b"), ClientPermission("team-b")},
			cur:    makeFL(ns, "mnist").sets("gpu").obj(),
			wantDenials: []string{
				serverMsg(` ("ghcr.io/team/server:1")`, "Job", "other", jobs),
				clientMsg,
			},
			wantAsked: otherAll,
		},
		"an update that keeps spec needs nothing": {
			old: makeFL(ns, "mnist").sets("gpu").obj(),
			cur: makeFL(ns, "mnist").sets("gpu").label("team", "a").obj(),
		},
		"an update that changes spec is checked as a create": {
			old:         makeFL(ns, "mnist").sets("gpu").obj(),
			cur:         makeFL(ns, "mnist").sets("gpu").rounds(5).obj(),
			grants:      []Permission{BindPermission("gpu"), ClientPermission(ns)},
			wantDenials: []string{serverMsg(` ("ghcr.io/team/server:1")`, "Job", "other", jobs)},
			wantAsked:   otherAll,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sar := &fakeSAR{grants: map[string][]Permission{alice.Username: tc.grants}}
			got, err := ReviewFederatedLearning(context.Background(), sar.can, alice, tc.old, tc.cur)
			if err != nil {
				t.Fatalf("ReviewFederatedLearning() error = %v", err)
			}
			if diff := cmp.Diff(tc.wantDenials, got); diff != "" {
				t.Errorf("denials (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAsked, sar.asked); diff != "" {
				t.Errorf("permissions asked (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReviewFederatedLearningAuthorizerFails(t *testing.T) {
	sar := &fakeSAR{err: errors.New("connection refused")}
	_, err := ReviewFederatedLearning(context.Background(), sar.can, alice, nil, makeFL("team-a", "mnist").sets("gpu").obj())
	if err == nil {
		t.Fatal("ReviewFederatedLearning() with a failing authorizer: no error, want one (the webhook must not guess)")
	}
	want := `federatedlearnings "mnist" in namespace "team-a": checking whether alice may create managedclustersets/bind on "gpu" ` +
		`in group cluster.open-cluster-management.io: connection refused`
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}
