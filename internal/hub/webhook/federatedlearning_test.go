package webhook

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/apitest"
)

// makeFL is a FederatedLearning with images from ghcr.io/team and nothing else set.
func makeFL(ns, name string) *apitest.FederatedLearningWrapper {
	return apitest.MakeFederatedLearning(ns, name).ServerImage("ghcr.io/team/server:1").ClientImage("ghcr.io/team/client:1")
}

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
	placementMsg := subject + `spec.client.placement makes the hub create Placement "mnist" in namespace "team-a", which needs ` +
		`permission to create placements in namespace "team-a" in group cluster.open-cluster-management.io; ask a hub ` +
		`administrator to bind a role with it`
	services := CreatePermission("", "services", ns)
	secrets := CreatePermission("", "secrets", ns)
	flowerAll := []Permission{BindPermission("gpu"), BindPermission("cpu"), PlacementPermission(ns), ServerPermission(flv1alpha1.FrameworkFlower, ns), services, secrets, ClientPermission(ns)}
	otherAll := []Permission{BindPermission("gpu"), PlacementPermission(ns), ServerPermission(flv1alpha1.FrameworkOther, ns), ClientPermission(ns)}
	ownLinkMsg := func(what, perm string) string {
		return subject + `spec.server.superlink "superlink.flower-system:9091" (flower-addon's) makes the hub ` + what +
			`, which needs permission to create ` + perm + ` in namespace "team-a" (core group); ask a hub administrator to bind a role with it`
	}
	claims := CreatePermission("", "persistentvolumeclaims", ns)
	openFLAll := func(storage Permission) []Permission {
		return []Permission{BindPermission("gpu"), PlacementPermission(ns), ServerPermission(flv1alpha1.FrameworkOpenFL, ns), services, storage, ClientPermission(ns)}
	}
	nodePortPVC := makeFL(ns, "mnist").Framework(flv1alpha1.FrameworkOpenFL).ClusterSets("gpu").Listener(flv1alpha1.ListenerSpec{Name: "server", Type: flv1alpha1.ListenerTypeNodePort, Port: 30089}).
		Storage(flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypePersistentVolumeClaim, Name: "model", Path: "/m", Size: "500Gi"})
	hostPathRoot := makeFL(ns, "mnist").Framework(flv1alpha1.FrameworkOpenFL).ClusterSets("gpu").Listener(flv1alpha1.ListenerSpec{Name: "server", Type: flv1alpha1.ListenerTypeNodePort, Port: 30089}).
		Storage(flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypeHostPath, Path: "/"})
	cases := map[string]struct {
		grants      []Permission
		old, cur    *flv1alpha1.FederatedLearning
		wantDenials []string
		wantAsked   []Permission
	}{
		"flower with every permission": {
			grants:    flowerAll,
			cur:       makeFL(ns, "mnist").Framework(flv1alpha1.FrameworkFlower).ClusterSets("gpu", "cpu").Obj(),
			wantAsked: flowerAll,
		},
		"flower's own SuperLink needs create on services and secrets": {
			grants: []Permission{BindPermission("gpu"), BindPermission("cpu"), PlacementPermission(ns), ServerPermission(flv1alpha1.FrameworkFlower, ns), ClientPermission(ns)},
			cur:    makeFL(ns, "mnist").Framework(flv1alpha1.FrameworkFlower).ClusterSets("gpu", "cpu").Obj(),
			wantDenials: []string{
				ownLinkMsg(`run a SuperLink of the federation's own in namespace "team-a": Service "mnist-superlink" of type NodePort, taking a node port on every hub node`, "services"),
				ownLinkMsg(`keep the federation's keys in Secret "mnist-superlink" in namespace "team-a"`, "secrets"),
			},
			wantAsked: flowerAll,
		},
		"flower with a SuperLink of the author's asks for neither": {
			grants:    []Permission{BindPermission("gpu"), PlacementPermission(ns), ServerPermission(flv1alpha1.FrameworkFlower, ns), ClientPermission(ns)},
			cur:       makeFL(ns, "mnist").Framework(flv1alpha1.FrameworkFlower).ClusterSets("gpu").Flower("superlink.ml-team:9091", "").Obj(),
			wantAsked: []Permission{BindPermission("gpu"), PlacementPermission(ns), ServerPermission(flv1alpha1.FrameworkFlower, ns), ClientPermission(ns)},
		},
		"flower without bind on the second set": {
			grants:      []Permission{BindPermission("gpu"), PlacementPermission(ns), ServerPermission(flv1alpha1.FrameworkFlower, ns), services, secrets, ClientPermission(ns)},
			cur:         makeFL(ns, "mnist").Framework(flv1alpha1.FrameworkFlower).ClusterSets("gpu", "cpu").Obj(),
			wantDenials: []string{bindMsg("1", "cpu")},
			wantAsked:   flowerAll,
		},
		"flower needs deployments, not jobs": {
			grants: []Permission{BindPermission("gpu"), BindPermission("cpu"), PlacementPermission(ns), CreatePermission("batch", "jobs", ns), services, secrets, ClientPermission(ns)},
			cur:    makeFL(ns, "mnist").Framework(flv1alpha1.FrameworkFlower).ClusterSets("gpu", "cpu").Obj(),
			wantDenials: []string{
				serverMsg(` ("ghcr.io/team/server:1")`, "Deployment", "flower", deployments),
			},
			wantAsked: flowerAll,
		},
		"openfl needs jobs": {
			grants:      []Permission{BindPermission("gpu"), PlacementPermission(ns), ClientPermission(ns)},
			cur:         makeFL(ns, "mnist").Framework(flv1alpha1.FrameworkOpenFL).ClusterSets("gpu").Obj(),
			wantDenials: []string{serverMsg(` ("ghcr.io/team/server:1")`, "Job", "openfl", jobs)},
			wantAsked:   otherAll,
		},
		"an empty framework is other, and needs jobs": {
			grants:      []Permission{BindPermission("gpu"), PlacementPermission(ns), ClientPermission(ns)},
			cur:         makeFL(ns, "mnist").ClusterSets("gpu").ServerImage("").Obj(),
			wantDenials: []string{serverMsg("", "Job", "other", jobs)},
			wantAsked:   otherAll,
		},
		"nothing granted: every refusal, in spec order": {
			cur: makeFL(ns, "mnist").Framework(flv1alpha1.FrameworkOther).ClusterSets("gpu").Obj(),
			wantDenials: []string{
				bindMsg("0", "gpu"),
				placementMsg,
				serverMsg(` ("ghcr.io/team/server:1")`, "Job", "other", jobs),
				clientMsg,
			},
			wantAsked: otherAll,
		},
		"the placement's tolerations need create on placements": {
			grants: []Permission{BindPermission("gpu"), ServerPermission(flv1alpha1.FrameworkOther, ns), ClientPermission(ns)},
			cur:    makeFL(ns, "mnist").ClusterSets("gpu").Tolerate("cluster.open-cluster-management.io/unreachable").Obj(),
			wantDenials: []string{subject + `spec.client.placement makes the hub create Placement "mnist" in namespace "team-a", ` +
				`with its 1 tolerations, which needs permission to create placements in namespace "team-a" in group ` +
				`cluster.open-cluster-management.io; ask a hub administrator to bind a role with it`},
			wantAsked: otherAll,
		},
		"openfl with a NodePort and a claim, every permission": {
			grants:    openFLAll(claims),
			cur:       nodePortPVC.Obj(),
			wantAsked: openFLAll(claims),
		},
		"openfl's NodePort needs create on services": {
			grants: []Permission{BindPermission("gpu"), PlacementPermission(ns), ServerPermission(flv1alpha1.FrameworkOpenFL, ns), claims, ClientPermission(ns)},
			cur:    nodePortPVC.Obj(),
			wantDenials: []string{subject + `spec.server.listeners[0] (type NodePort, port 30089) makes the hub create Service ` +
				`"mnist-server" of type NodePort in namespace "team-a", taking node port 30089 on every hub node, which needs ` +
				`permission to create services in namespace "team-a" (core group); ask a hub administrator to bind a role with it`},
			wantAsked: openFLAll(claims),
		},
		"openfl's claim needs create on persistentvolumeclaims": {
			grants: []Permission{BindPermission("gpu"), PlacementPermission(ns), ServerPermission(flv1alpha1.FrameworkOpenFL, ns), services, ClientPermission(ns)},
			cur:    nodePortPVC.Obj(),
			wantDenials: []string{subject + `spec.server.storage (type PersistentVolumeClaim, size 500Gi) makes the hub create ` +
				`PersistentVolumeClaim "model" in namespace "team-a", which needs permission to create persistentvolumeclaims in ` +
				`namespace "team-a" (core group); ask a hub administrator to bind a role with it`},
			wantAsked: openFLAll(claims),
		},
		"hostPath needs the administrator's use on federatedlearnings/hostpath": {
			grants: openFLAll(claims),
			cur:    hostPathRoot.Obj(),
			wantDenials: []string{subject + `spec.server.storage (type HostPath, path "/") makes the hub mount that directory of a ` +
				`hub node, created if missing, into the server's pod in namespace "team-a"; only a hub administrator may allow it, ` +
				`which needs permission to use federatedlearnings/hostpath in namespace "team-a" in group ` +
				`federation-ai.open-cluster-management.io; ask a hub administrator to bind a role with it`},
			wantAsked: openFLAll(HostPathPermission(ns)),
		},
		"hostPath allowed by the administrator": {
			grants:    openFLAll(HostPathPermission(ns)),
			cur:       hostPathRoot.Obj(),
			wantAsked: openFLAll(HostPathPermission(ns)),
		},
		"flower ignores listeners and storage": {
			grants:    []Permission{BindPermission("gpu"), PlacementPermission(ns), ServerPermission(flv1alpha1.FrameworkFlower, ns), ClientPermission(ns)},
			cur:       hostPathRoot.Framework(flv1alpha1.FrameworkFlower).Flower("superlink.ml-team:9091", "").Obj(),
			wantAsked: []Permission{BindPermission("gpu"), PlacementPermission(ns), ServerPermission(flv1alpha1.FrameworkFlower, ns), ClientPermission(ns)},
		},
		"a set named twice is asked once, at its first index": {
			grants:      []Permission{PlacementPermission(ns), ServerPermission(flv1alpha1.FrameworkOther, ns), ClientPermission(ns)},
			cur:         makeFL(ns, "mnist").ClusterSets("gpu", "gpu").Obj(),
			wantDenials: []string{bindMsg("0", "gpu")},
			wantAsked:   otherAll,
		},
		"bind on another set does not help": {
			grants:      []Permission{BindPermission("cpu"), PlacementPermission(ns), ServerPermission(flv1alpha1.FrameworkOther, ns), ClientPermission(ns)},
			cur:         makeFL(ns, "mnist").ClusterSets("gpu").Obj(),
			wantDenials: []string{bindMsg("0", "gpu")},
			wantAsked:   otherAll,
		},
		"permissions in another namespace do not help": {
			grants: []Permission{BindPermission("gpu"), PlacementPermission("team-b"), ServerPermission(flv1alpha1.FrameworkOther, "team-b"), ClientPermission("team-b")},
			cur:    makeFL(ns, "mnist").ClusterSets("gpu").Obj(),
			wantDenials: []string{
				placementMsg,
				serverMsg(` ("ghcr.io/team/server:1")`, "Job", "other", jobs),
				clientMsg,
			},
			wantAsked: otherAll,
		},
		"an update that keeps spec needs nothing": {
			old: makeFL(ns, "mnist").ClusterSets("gpu").Obj(),
			cur: makeFL(ns, "mnist").ClusterSets("gpu").Label("team", "a").Obj(),
		},
		"an update that changes spec is checked as a create": {
			old:         makeFL(ns, "mnist").ClusterSets("gpu").Obj(),
			cur:         makeFL(ns, "mnist").ClusterSets("gpu").Rounds(5).Obj(),
			grants:      []Permission{BindPermission("gpu"), PlacementPermission(ns), ClientPermission(ns)},
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
	_, err := ReviewFederatedLearning(context.Background(), sar.can, alice, nil, makeFL("team-a", "mnist").ClusterSets("gpu").Obj())
	if err == nil {
		t.Fatal("ReviewFederatedLearning() with a failing authorizer: no error, want one (the webhook must not guess)")
	}
	want := `federatedlearnings "mnist" in namespace "team-a": checking whether alice may create managedclustersets/bind on "gpu" ` +
		`in group cluster.open-cluster-management.io: connection refused`
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}
