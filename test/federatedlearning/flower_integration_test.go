//go:build integration

package federatedlearning

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/federatedlearning"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestFlowerFederation runs OCM's Flower sample: the ServerApp on the hub, a ClientApp on each
// cluster that reports the data claim and runs flower-addon, told only its own data path; a
// client cluster lost with the quorum kept, then below it, then replaced; and clean-up.
func TestFlowerFederation(t *testing.T) {
	f := start(t, "fl-flower")
	ctx := context.Background()
	f.cluster(t, "hospital-a", map[string]string{dataClaim: "/data/hospital-a"}, true)
	f.cluster(t, "hospital-b", map[string]string{dataClaim: "/data/hospital-b"}, true)
	f.cluster(t, "hospital-c", map[string]string{dataClaim: "/data/hospital-c"}, true)
	f.cluster(t, "edge-1", nil, true)                                                 // holds no data
	f.cluster(t, "no-flower", map[string]string{dataClaim: "/data/no-flower"}, false) // no SuperNode

	fl := f.flower("mnist", 2)
	testenv.Create(t, f.c, fl)

	// One work per client cluster carries all it runs for the federation, named so that no
	// other namespace's federation of this name can share it.
	clientApp := fl.Namespace + ".mnist-client"
	f.waitWorks(t, clientApp, "hospital-a", "hospital-b", "hospital-c")

	// The placement is the spec's, plus the requirement that flower-addon is available, and it
	// belongs to the FederatedLearning.
	p := &clusterv1beta1.Placement{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: "mnist"}, p); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(p, mustGet(t, f, fl)) {
		t.Errorf("placement %s is not controlled by the FederatedLearning: %+v", p.Name, p.OwnerReferences)
	}
	wantExpr := []metav1.LabelSelectorRequirement{{Key: "feature.open-cluster-management.io/addon-flower-addon", Operator: metav1.LabelSelectorOpIn, Values: []string{"available"}}}
	if diff := cmp.Diff(wantExpr, p.Spec.Predicates[0].RequiredClusterSelector.LabelSelector.MatchExpressions); diff != "" {
		t.Errorf("placement's label requirements (-want +got):\n%s", diff)
	}

	// The federation's own SuperLink: a NodePort Service whose port, target port and node port
	// are the one port the API server gave it, the SuperLink on its pod's loopback with the SuperExec
	// secret, the front on the pod's address.
	svc := &corev1.Service{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: "mnist-superlink"}, svc); err != nil {
		t.Fatal(err)
	}
	port := svc.Spec.Ports[0].NodePort
	if svc.Spec.Type != corev1.ServiceTypeNodePort || len(svc.Spec.Ports) != 1 || port == 0 || svc.Spec.Ports[0].Port != port || svc.Spec.Ports[0].TargetPort.IntVal != port {
		t.Errorf("Service mnist-superlink = %s %+v, want NodePort with port = targetPort = nodePort", svc.Spec.Type, svc.Spec.Ports)
	}
	p8 := strconv.Itoa(int(port))
	link := &appsv1.Deployment{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: "mnist-superlink"}, link); err != nil {
		t.Fatal(err)
	}
	args := map[string][]string{}
	for _, c := range link.Spec.Template.Spec.Containers {
		args[c.Name] = c.Args
	}
	wantLink := map[string][]string{
		"superlink": {"--insecure", "--isolation", "process", "--host", "127.0.0.1", "--port", p8,
			"--superexec-auth-secret-file", "/etc/flower/superlink/superexec"},
		"front": {"flower-front", "--listen", "$(POD_IP):" + p8, "--upstream", "http://127.0.0.1:" + p8,
			"--tls-cert-file", "/etc/flower/superlink/tls.crt", "--tls-key-file", "/etc/flower/superlink/tls.key",
			"--control-token-file", "/etc/flower/superlink/control-token"},
	}
	if diff := cmp.Diff(wantLink, args); diff != "" {
		t.Errorf("SuperLink containers' args (-want +got):\n%s", diff)
	}
	// The hub's record of the keys is in flower-system, where only the hub reads; the pods get a
	// copy of what they mount, owned by the FederatedLearning, without any SuperNode's key.
	live := mustGet(t, f, fl)
	sec := &corev1.Secret{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: "flower-system", Name: "federation-" + string(live.UID)}, sec); err != nil {
		t.Fatal(err)
	}
	if len(sec.Data["node.hospital-a"]) == 0 || len(sec.Data["node.edge-1"]) != 0 || len(sec.Data["node.no-flower"]) != 0 {
		t.Errorf("the hub's record has keys %v: want a SuperNode key for each client cluster only", keys(sec.Data))
	}
	podCopy := &corev1.Secret{}
	copyName := link.Spec.Template.Spec.Volumes[0].Secret.SecretName
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: copyName}, podCopy); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(podCopy, live) || !strings.HasPrefix(copyName, "mnist-superlink-") ||
		!slices.Equal(keys(podCopy.Data), []string{"ca.crt", "control-token", "superexec", "tls.crt", "tls.key"}) {
		t.Errorf("the pods' Secret %s: owners %+v, keys %v: want the FederatedLearning's, with no SuperNode key", copyName, podCopy.OwnerReferences, keys(podCopy.Data))
	}

	// OCM's ServerApp, talking to the federation's own SuperLink over TLS with its CA.
	d := &appsv1.Deployment{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: "mnist-serverapp"}, d); err != nil {
		t.Fatal(err)
	}
	wantArgs := []string{"--appio-api-address=mnist-superlink." + fl.Namespace + ":" + p8, "--plugin-type=serverapp",
		"--root-certificates=/etc/flower/superlink/ca.crt", "--superexec-auth-secret-file=/etc/flower/superlink/superexec"}
	if diff := cmp.Diff(wantArgs, d.Spec.Template.Spec.Containers[0].Args); diff != "" {
		t.Errorf("ServerApp args (-want +got):\n%s", diff)
	}

	// Each client cluster's work: in a namespace of the FederatedLearning's namespace's name
	// (created only if missing, and left behind), its data path, its SuperNode with its own key
	// only, and the ClientApp, told its data path through the ConfigMap only its cluster gets.
	for _, c := range []string{"hospital-a", "hospital-b", "hospital-c"} {
		w := &workv1.ManifestWork{}
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: c, Name: clientApp}, w); err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, m := range w.Spec.Workload.Manifests {
			u := decode[metav1.PartialObjectMetadata](t, m)
			kinds = append(kinds, u.Kind+" "+u.Namespace+"/"+u.Name)
		}
		ns := fl.Namespace
		if diff := cmp.Diff([]string{"Namespace /" + ns, "ConfigMap " + ns + "/mnist-data", "Secret " + ns + "/mnist-supernode",
			"Deployment " + ns + "/mnist-supernode", "Service " + ns + "/mnist-supernode", "Deployment " + ns + "/mnist-clientapp"}, kinds); diff != "" {
			t.Errorf("cluster %s's work holds (-want +got):\n%s", c, diff)
		}
		if w.Spec.DeleteOption == nil || w.Spec.DeleteOption.SelectivelyOrphans == nil {
			t.Errorf("cluster %s's work would delete the namespace %s when it goes", c, ns)
		}
		cm := decode[corev1.ConfigMap](t, w.Spec.Workload.Manifests[1])
		if got := cm.Data[federatedlearning.DataPathKey]; got != "/data/"+c {
			t.Errorf("cluster %s is told data path %q, want its own claim's /data/%s", c, got, c)
		}
		key := decode[corev1.Secret](t, w.Spec.Workload.Manifests[2])
		if string(key.Data["node.key"]) != string(sec.Data["node."+c]) || len(key.Data) != 3 {
			t.Errorf("cluster %s gets Secret %s with keys %v, want its own SuperNode key, the CA and the SuperExec secret", c, key.Name, keys(key.Data))
		}
		sn := decode[appsv1.Deployment](t, w.Spec.Workload.Manifests[3])
		if !slices.Contains(sn.Spec.Template.Spec.Containers[0].Args, `cluster-name="`+c+`"`) {
			t.Errorf("cluster %s's SuperNode args %v do not name it", c, sn.Spec.Template.Spec.Containers[0].Args)
		}
		c0 := decode[appsv1.Deployment](t, w.Spec.Workload.Manifests[5]).Spec.Template.Spec.Containers[0]
		if diff := cmp.Diff([]string{"--insecure", "--appio-api-address=mnist-supernode." + ns + ":" + p8, "--plugin-type=clientapp",
			"--superexec-auth-secret-file=/etc/flower/supernode/superexec"}, c0.Args); diff != "" {
			t.Errorf("ClientApp args (-want +got):\n%s", diff)
		}
		if len(c0.Env) != 1 || c0.Env[0].Name != federatedlearning.DataPathEnv || c0.Env[0].ValueFrom.ConfigMapKeyRef.Name != "mnist-data" {
			t.Errorf("ClientApp env = %+v, want %s from ConfigMap mnist-data", c0.Env, federatedlearning.DataPathEnv)
		}
	}
	// No ManifestWorkReplicaSet: the works above carry the ClientApps.
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: "mnist-clientapp"}, &workv1alpha1.ManifestWorkReplicaSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("ManifestWorkReplicaSet mnist-clientapp: %v, want none", err)
	}

	got := f.waitStatus(t, fl, "Running with 3 clients", func(st *flv1alpha1.FederatedLearningStatus) bool {
		return st.Phase == flv1alpha1.PhaseRunning && st.Message == "Assigned 3 clusters for client execution in model training"
	})
	if c := condition(&got.Status, federatedlearning.ConditionFailed); c == nil || c.ObservedGeneration != got.Generation {
		t.Errorf("conditions lack observedGeneration %d: %+v", got.Generation, got.Status.Conditions)
	}
	for _, c := range []string{"hospital-a", "hospital-b", "hospital-c"} {
		f.applied(t, c, clientApp)
	}
	f.waitStatus(t, fl, "three clients running", func(st *flv1alpha1.FederatedLearningStatus) bool {
		return len(clientsIn(st, flv1alpha1.ClientRunning)) == 3
	})

	// hospital-c is lost (its claim is gone): two clients remain, the quorum of two holds.
	f.setClaims(t, "hospital-c", nil)
	f.waitWorks(t, clientApp, "hospital-a", "hospital-b")
	got = f.waitStatus(t, fl, "hospital-c lost, quorum kept", func(st *flv1alpha1.FederatedLearningStatus) bool {
		c := condition(st, federatedlearning.ConditionTraining)
		return slices.Equal(clientsIn(st, flv1alpha1.ClientLost), []string{"hospital-c"}) && c != nil && c.Status == metav1.ConditionTrue
	})
	if !hasEvent(got, "ClientLost", "hospital-c") {
		t.Errorf("the timeline does not record hospital-c's loss: %+v", got.Status.Timeline)
	}

	// hospital-b too: below the quorum, training waits.
	f.setClaims(t, "hospital-b", nil)
	f.waitStatus(t, fl, "below the quorum", func(st *flv1alpha1.FederatedLearningStatus) bool {
		c := condition(st, federatedlearning.ConditionTraining)
		return c != nil && c.Reason == federatedlearning.ReasonQuorumLost && st.Phase == flv1alpha1.PhaseRunning
	})

	// A new cluster with data and flower-addon: the placement chooses it, it gets the client.
	f.cluster(t, "hospital-d", map[string]string{dataClaim: "/data/hospital-d"}, true)
	f.waitWorks(t, clientApp, "hospital-a", "hospital-d")
	f.applied(t, "hospital-d", clientApp)
	f.waitStatus(t, fl, "hospital-d replaces the lost clients", func(st *flv1alpha1.FederatedLearningStatus) bool {
		c := condition(st, federatedlearning.ConditionTraining)
		return slices.Equal(clientsIn(st, flv1alpha1.ClientRunning), []string{"hospital-a", "hospital-d"}) && c != nil && c.Status == metav1.ConditionTrue
	})

	// edge-1 (no claim) and no-flower (no SuperNode) never got a client.
	for _, name := range []string{clientApp} {
		l, err := f.worksNamed(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(l, "edge-1") || slices.Contains(l, "no-flower") {
			t.Errorf("ManifestWork %s went to %v, which includes a cluster without the claim or without flower-addon", name, l)
		}
	}

	// Deleting the FederatedLearning removes everything it made, on the hub and in the
	// clusters' namespaces.
	if err := f.c.Delete(ctx, fl); err != nil {
		t.Fatal(err)
	}
	f.waitWorks(t, clientApp)
	testenv.WaitFor(t, wait, "the FederatedLearning and its placement gone", func(ctx context.Context) (bool, string, error) {
		err1 := f.c.Get(ctx, client.ObjectKeyFromObject(fl), &flv1alpha1.FederatedLearning{})
		err2 := f.c.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: "mnist"}, &clusterv1beta1.Placement{})
		return client.IgnoreNotFound(err1) == nil && err1 != nil && err2 != nil, "", nil
	})
	// The set's binding was the test's own (the FederatedLearning's spec names the set, and the
	// controller creates a binding only where none is): it is neither adopted nor deleted.
	b := &clusterv1beta2.ManagedClusterSetBinding{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: f.set.Set}, b); err != nil {
		t.Errorf("the binding the FederatedLearning did not make is gone: %v", err)
	} else if len(b.OwnerReferences) != 0 {
		t.Errorf("the controller adopted a binding it did not make: owners %+v", b.OwnerReferences)
	}
}

func mustGet(t *testing.T, f *fleet, fl *flv1alpha1.FederatedLearning) *flv1alpha1.FederatedLearning {
	t.Helper()
	cur, err := f.get(context.Background(), fl)
	if err != nil {
		t.Fatal(err)
	}
	return cur
}

func decode[T any](t *testing.T, m workv1.Manifest) *T {
	t.Helper()
	var out T
	if err := json.Unmarshal(m.Raw, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func clientsIn(st *flv1alpha1.FederatedLearningStatus, state flv1alpha1.ClientState) []string {
	var out []string
	for _, c := range st.Clients {
		if c.State == state {
			out = append(out, c.Cluster)
		}
	}
	return out
}

func hasEvent(fl *flv1alpha1.FederatedLearning, event, cluster string) bool {
	for _, e := range fl.Status.Timeline {
		if e.Event == event && e.Cluster == cluster {
			return true
		}
	}
	return false
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestFlowerMovesToItsOwnSuperLink: a federation on its author's SuperLink has OCM's replica set
// and data works; moved to flower-addon's address it gets a SuperLink of its own, and the replica
// set and the data works go with the move, so that no cluster runs two clients.
func TestFlowerMovesToItsOwnSuperLink(t *testing.T) {
	f := start(t, "fl-move")
	f.cluster(t, "move-a", map[string]string{dataClaim: "/data/move-a"}, true)
	f.cluster(t, "move-b", map[string]string{dataClaim: "/data/move-b"}, true)
	fl := f.flower("moving", 2)
	fl.Spec.Server.SuperLink = "superlink.ml-team:9091"
	testenv.Create(t, f.c, fl)
	f.waitWorks(t, "moving-clientapp", "move-a", "move-b")
	f.waitWorks(t, "moving-client-data", "move-a", "move-b")

	testenv.WaitFor(t, wait, "the move to flower-addon's SuperLink address", func(ctx context.Context) (bool, string, error) {
		cur := mustGet(t, f, fl)
		cur.Spec.Server.SuperLink = "superlink.flower-system:9091"
		err := f.c.Update(ctx, cur)
		return err == nil, fmt.Sprint(err), nil
	})
	f.waitWorks(t, fl.Namespace+".moving-client", "move-a", "move-b")
	f.waitWorks(t, "moving-clientapp")
	f.waitWorks(t, "moving-client-data")
	testenv.WaitFor(t, wait, "the replica set gone", func(ctx context.Context) (bool, string, error) {
		err := f.c.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: "moving-clientapp"}, &workv1alpha1.ManifestWorkReplicaSet{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), client.IgnoreNotFound(err)
	})
}
