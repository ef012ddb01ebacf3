//go:build integration

package webhook

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/webhook"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func federatedLearning(ns, name string, fw flv1alpha1.Framework, sets ...string) *flv1alpha1.FederatedLearning {
	return &flv1alpha1.FederatedLearning{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: flv1alpha1.FederatedLearningSpec{
			Framework: fw,
			Server:    flv1alpha1.ServerSpec{Image: "quay.io/example/server:1", Rounds: 3, MinAvailableClients: 1},
			Client:    flv1alpha1.ClientSpec{Image: "quay.io/example/client:1", Placement: clusterv1beta1.PlacementSpec{ClusterSets: sets}},
		},
	}
}

// TestFederatedLearningNeedsTheRequestersPermissions: a FederatedLearning makes the hub bind its
// sets and run its images, so whoever creates one, or changes its spec, needs bind on every set,
// create on the server's workload kind (deployments for flower, jobs for openfl), for flower's own
// SuperLink create on services and secrets, and create on manifestworkreplicasets in its
// namespace, and is refused naming each missing one. With them
// the hub carries it out, its own bindings passing the same webhook (the hub's role holds
// managedclustersets/bind).
func TestFederatedLearningNeedsTheRequestersPermissions(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	ctx := context.Background()
	ns := env.Namespace(t, env.Hub)
	const user = "wh-fl-user"
	writeFL := rbacv1.PolicyRule{
		APIGroups: []string{webhook.FederationGroup}, Resources: []string{"federatedlearnings"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"},
	}
	grant(t, env, user, writeFL)
	c := as(t, env, user)
	eventually(t, "RBAC for the user", func(ctx context.Context) error {
		return c.List(ctx, &flv1alpha1.FederatedLearningList{}, client.InNamespace(ns))
	})

	subject := fmt.Sprintf("federatedlearnings %q in namespace %q: ", "mnist", ns)
	bindRefusal := func(i int, set string) string {
		return fmt.Sprintf(`%sspec.client.placement.clusterSets[%d] makes the hub bind set %q to namespace %q, which needs `+
			`permission to create managedclustersets/bind on %q in group cluster.open-cluster-management.io; ask a hub `+
			`administrator to bind a role with it`, subject, i, set, ns, set)
	}
	serverRefusal := func(kind, fw, perm string) string {
		return fmt.Sprintf(`%sspec.server.image ("quay.io/example/server:1") makes the hub run the server in namespace %q as a %s `+
			`(spec.framework %s), which needs permission to %s in namespace %q`, subject, ns, kind, fw, perm, ns)
	}
	clientRefusal := fmt.Sprintf(`%sspec.client.image ("quay.io/example/client:1") makes the hub run the client on the clusters `+
		`spec.client.placement chooses from the sets bound to namespace %q, which needs permission to create `+
		`manifestworkreplicasets in namespace %q in group work.open-cluster-management.io`, subject, ns, ns)

	// A Flower federation with flower-addon's SuperLink address (the default) gets a SuperLink of
	// its own: a NodePort Service and its keys in a Secret, in the namespace.
	ownLinkRefusal := func(what, perm string) string {
		return fmt.Sprintf(`%sspec.server.superlink "superlink.flower-system:9091" (flower-addon's) makes the hub %s, which needs `+
			`permission to create %s in namespace %q (core group)`, subject, what, perm, ns)
	}
	fl := federatedLearning(ns, "mnist", flv1alpha1.FrameworkFlower, "wh-fl-gpu", "wh-fl-cpu")
	err := c.Create(ctx, fl.DeepCopy())
	for _, want := range []string{bindRefusal(0, "wh-fl-gpu"), bindRefusal(1, "wh-fl-cpu"),
		serverRefusal("Deployment", "flower", "create deployments"),
		ownLinkRefusal(fmt.Sprintf(`run a SuperLink of the federation's own in namespace %q: Service "mnist-superlink" of type NodePort, taking a node port on every hub node`, ns), "services"),
		ownLinkRefusal(fmt.Sprintf(`keep the federation's keys in Secret "mnist-superlink" in namespace %q`, ns), "secrets"),
		clientRefusal} {
		denied(t, "creating a flower FederatedLearning with no permission", err, want)
	}

	// The sets are cluster-wide; the server and the clients need permissions in the namespace only.
	grant(t, env, user, subresource(webhook.ClusterGroup, "managedclustersets/bind", "create", "wh-fl-gpu"))
	grantIn(t, env, ns, user,
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services", "secrets"}, Verbs: []string{"create"}},
		rbacv1.PolicyRule{APIGroups: []string{webhook.ClusterGroup}, Resources: []string{"placements"}, Verbs: []string{"create"}},
		rbacv1.PolicyRule{APIGroups: []string{webhook.WorkGroup}, Resources: []string{"manifestworkreplicasets"}, Verbs: []string{"create"}})
	testenv.WaitFor(t, wait, "the refusal to name only the second set", func(ctx context.Context) (bool, string, error) {
		err := c.Create(ctx, fl.DeepCopy(), client.DryRunAll)
		msg := fmt.Sprint(err)
		return err != nil && strings.Contains(msg, bindRefusal(1, "wh-fl-cpu")) && !strings.Contains(msg, "clusterSets[0]") &&
			!strings.Contains(msg, "spec.server.image") && !strings.Contains(msg, "spec.client.image"), "dry-run create: " + msg, nil
	})
	// OpenFL runs its server as a Job: deployments do not cover it.
	denied(t, "creating an openfl FederatedLearning without create on jobs",
		c.Create(ctx, federatedLearning(ns, "mnist", flv1alpha1.FrameworkOpenFL, "wh-fl-gpu")),
		serverRefusal("Job", "openfl", "create jobs"))

	grant(t, env, user, subresource(webhook.ClusterGroup, "managedclustersets/bind", "create", "wh-fl-cpu"))
	eventually(t, "the user to create the FederatedLearning with every permission", func(ctx context.Context) error {
		return c.Create(ctx, fl.DeepCopy())
	})
	deleteAtEnd(t, admin(t, env), fl)

	// The hub binds both sets to the namespace: its own bindings pass the webhook.
	testenv.WaitFor(t, wait, "the hub to bind both sets to the namespace", func(ctx context.Context) (bool, string, error) {
		l := &clusterv1beta2.ManagedClusterSetBindingList{}
		if err := admin(t, env).List(ctx, l, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		var got []string
		for _, b := range l.Items {
			got = append(got, b.Spec.ClusterSet)
		}
		return len(got) == 2, fmt.Sprintf("bindings of %v", got), nil
	})

	// Another user who may edit FederatedLearnings, but holds none of the rest, may change labels
	// but not spec: the hub would act on the new spec as theirs.
	const editor = "wh-fl-editor"
	grant(t, env, editor, writeFL)
	e := as(t, env, editor)
	eventually(t, "the editor to label the FederatedLearning", func(ctx context.Context) error {
		return update(ctx, e, fl, func() { fl.Labels = map[string]string{"team": "a"} })
	})
	denied(t, "the editor changing the rounds", update(ctx, e, fl, func() { fl.Spec.Server.Rounds = 5 }), bindRefusal(0, "wh-fl-gpu"))
	denied(t, "the editor changing the server image", update(ctx, e, fl, func() { fl.Spec.Server.Image = "quay.io/attacker/server:1" }),
		fmt.Sprintf(`%sspec.server.image ("quay.io/attacker/server:1") makes the hub run the server in namespace %q as a Deployment`, subject, ns))
}

// TestFederatedLearningNeedsWhatTheHubMakes: an OpenFL federation makes the hub create, as
// itself, a Service (a NodePort with the node port the listener names), a PersistentVolumeClaim
// of the size the storage names, or a pod mounting a hub node's directory (HostPath), and a
// Placement with the spec's tolerations. A requester who may create FederatedLearnings, jobs and
// manifestworkreplicasets is refused for each of these they may not create themselves, naming
// the field; a HostPath needs an administrator's grant of use on federatedlearnings/hostpath,
// which no built-in role holds.
func TestFederatedLearningNeedsWhatTheHubMakes(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	ctx := context.Background()
	ns := env.Namespace(t, env.Hub)
	const user = "wh-fl-openfl-user"
	grant(t, env, user, rbacv1.PolicyRule{APIGroups: []string{webhook.FederationGroup}, Resources: []string{"federatedlearnings"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		subresource(webhook.ClusterGroup, "managedclustersets/bind", "create", "wh-fl-openfl"))
	grantIn(t, env, ns, user,
		rbacv1.PolicyRule{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create"}},
		rbacv1.PolicyRule{APIGroups: []string{webhook.WorkGroup}, Resources: []string{"manifestworkreplicasets"}, Verbs: []string{"create"}})
	c := as(t, env, user)
	eventually(t, "RBAC for the user", func(ctx context.Context) error {
		return c.List(ctx, &flv1alpha1.FederatedLearningList{}, client.InNamespace(ns))
	})
	subject := fmt.Sprintf("federatedlearnings %q in namespace %q: ", "brain", ns)
	openFL := func(storage flv1alpha1.ModelStorageSpec) *flv1alpha1.FederatedLearning {
		fl := federatedLearning(ns, "brain", flv1alpha1.FrameworkOpenFL, "wh-fl-openfl")
		fl.Spec.Server.Listeners = []flv1alpha1.ListenerSpec{{Name: "server", Type: flv1alpha1.ListenerTypeNodePort, Port: 30099}}
		fl.Spec.Server.Storage = storage
		fl.Spec.Client.Placement.Tolerations = []clusterv1beta1.Toleration{{Key: "cluster.open-cluster-management.io/unreachable", Operator: clusterv1beta1.TolerationOpExists}}
		return fl
	}
	hostPath := openFL(flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypeHostPath, Path: "/"})
	claim := openFL(flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypePersistentVolumeClaim, Name: "model", Path: "/m", Size: "500Gi"})

	placementRefusal := fmt.Sprintf(`%sspec.client.placement makes the hub create Placement "brain" in namespace %q, with its 1 tolerations, `+
		`which needs permission to create placements in namespace %q in group cluster.open-cluster-management.io`, subject, ns, ns)
	serviceRefusal := fmt.Sprintf(`%sspec.server.listeners[0] (type NodePort, port 30099) makes the hub create Service "brain-server" of type `+
		`NodePort in namespace %q, taking node port 30099 on every hub node, which needs permission to create services in namespace %q (core group)`, subject, ns, ns)
	hostPathRefusal := fmt.Sprintf(`%sspec.server.storage (type HostPath, path "/") makes the hub mount that directory of a hub node, created if `+
		`missing, into the server's pod in namespace %q; only a hub administrator may allow it, which needs permission to use `+
		`federatedlearnings/hostpath in namespace %q in group federation-ai.open-cluster-management.io`, subject, ns, ns)
	claimRefusal := fmt.Sprintf(`%sspec.server.storage (type PersistentVolumeClaim, size 500Gi) makes the hub create PersistentVolumeClaim "model" `+
		`in namespace %q, which needs permission to create persistentvolumeclaims in namespace %q (core group)`, subject, ns, ns)

	err := c.Create(ctx, hostPath.DeepCopy())
	for _, want := range []string{placementRefusal, serviceRefusal, hostPathRefusal} {
		denied(t, "an OpenFL federation with a NodePort, a HostPath / and tolerations, from a user who may create none", err, want)
	}
	denied(t, "an OpenFL federation with a 500Gi claim, from a user who may create none", c.Create(ctx, claim.DeepCopy()), claimRefusal)

	// Services and placements granted: the HostPath is still refused; so is the claim.
	grantIn(t, env, ns, user,
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create"}},
		rbacv1.PolicyRule{APIGroups: []string{webhook.ClusterGroup}, Resources: []string{"placements"}, Verbs: []string{"create"}})
	testenv.WaitFor(t, wait, "the refusal to name only the HostPath", func(ctx context.Context) (bool, string, error) {
		err := c.Create(ctx, hostPath.DeepCopy(), client.DryRunAll)
		msg := fmt.Sprint(err)
		return err != nil && strings.Contains(msg, hostPathRefusal) && !strings.Contains(msg, "spec.server.listeners") &&
			!strings.Contains(msg, "spec.client.placement makes"), "dry-run create: " + msg, nil
	})
	denied(t, "the claim without create on persistentvolumeclaims", c.Create(ctx, claim.DeepCopy(), client.DryRunAll), claimRefusal)

	// An administrator allows HostPath in this namespace; claims need their own permission.
	grantIn(t, env, ns, user,
		rbacv1.PolicyRule{APIGroups: []string{webhook.FederationGroup}, Resources: []string{"federatedlearnings/hostpath"}, Verbs: []string{"use"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"create"}})
	eventually(t, "the HostPath federation with the administrator's grant", func(ctx context.Context) error {
		return c.Create(ctx, hostPath.DeepCopy(), client.DryRunAll)
	})
	eventually(t, "the claim federation with create on persistentvolumeclaims", func(ctx context.Context) error {
		return c.Create(ctx, claim.DeepCopy(), client.DryRunAll)
	})
}
