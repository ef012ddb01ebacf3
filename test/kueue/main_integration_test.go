//go:build integration

package kueue

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{}))
	os.Exit(testenv.Main(m, testenv.Options{CRDs: true}))
}

const (
	ns   = kueue.DefaultNamespace
	wait = 60 * time.Second
	// secretReader is the Role, in the Kueue namespace, that lets the hub read the kubeconfig
	// Secrets, as docs/kueue.md tells an installer to grant.
	secretReader = "flotilla-hub-kueue-secrets"
)

// fixture is a test's cluster set, bound into the Kueue namespace, on a hub with Kueue's CRDs.
type fixture struct {
	env *testenv.Env
	c   client.Client
	set string
}

// setup installs Kueue's CRDs, makes the Kueue namespace and binds a new cluster set into it.
func setup(t *testing.T, set string) *fixture {
	t.Helper()
	env := testenv.Start(t, testenv.Options{CRDs: true})
	env.InstallKueueCRDs(t)
	c := env.HubClient(t)
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: secretReader, Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}}
	if err := c.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	testenv.Create(t, c, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}}})
	testenv.Create(t, c, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: ns},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}})
	return &fixture{env: env, c: c, set: set}
}

// startHub runs the hub on the Secret path (--kueue-credentials secret) as its generated roles,
// plus, when readSecrets, the Role that lets it read Secrets in the Kueue namespace, until the
// test ends.
func (f *fixture) startHub(t *testing.T, readSecrets bool) {
	t.Helper()
	cfg := f.env.HubIdentity(t, "")
	if readSecrets {
		testenv.BindToHub(t, f.c, cfg, ns, secretReader)
	}
	opts := testenv.TestHubOptions()
	opts.KueueCredentials = kueue.SourceSecret // the kubeconfig Secrets these tests read and withhold
	mgr, err := hub.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("hub: %v", err)
		}
	})
}

// cluster makes a ManagedCluster in the set; it goes when the test ends.
func (f *fixture) cluster(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	l := map[string]string{clusterv1beta2.ClusterSetLabel: f.set}
	for k, v := range labels {
		l[k] = v
	}
	// Accepted: the hub gives MultiKueue credentials only to clusters it accepts.
	testenv.Create(t, f.c, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}})
}

// score gives cluster the AddOnPlacementScore "kueue"/"gpu" = v, in a namespace named after it.
func (f *fixture) score(t *testing.T, cluster string, v int32) {
	t.Helper()
	ctx := context.Background()
	if err := f.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = f.c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}})
	})
	s := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Name: "kueue", Namespace: cluster}}
	testenv.Create(t, f.c, s)
	s.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "gpu", Value: v}}
	if err := f.c.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// placement makes a Placement in the Kueue namespace choosing every cluster labeled match,
// scored by the AddOnPlacementScore kueue/gpu.
func (f *fixture) placement(t *testing.T, name string, match map[string]string) {
	t.Helper()
	testenv.Create(t, f.c, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: clusterv1beta1.PlacementSpec{
		Tolerations: testenv.NoAgentTolerations(),
		Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: match}}}},
		PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
			Configurations: []clusterv1beta1.PrioritizerConfig{{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
				Type: clusterv1beta1.ScoreCoordinateTypeAddOn, AddOn: &clusterv1beta1.AddOnScore{ResourceName: "kueue", ScoreName: "gpu"}}}}},
	}})
}

// check makes an AdmissionCheck of controller with parameters p.
func (f *fixture) check(t *testing.T, name, controller string, p *kueuev1beta2.AdmissionCheckParametersReference) *kueuev1beta2.AdmissionCheck {
	t.Helper()
	ac := &kueuev1beta2.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueuev1beta2.AdmissionCheckSpec{ControllerName: controller, Parameters: p}}
	testenv.Create(t, f.c, ac)
	return ac
}

// placementParams names placement p.
func placementParams(p string) *kueuev1beta2.AdmissionCheckParametersReference {
	return &kueuev1beta2.AdmissionCheckParametersReference{APIGroup: clusterv1beta1.GroupVersion.Group, Kind: "Placement", Name: p}
}

// active is what an Active condition says.
type active struct {
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// waitActive waits until check name's Active condition is want; an empty want.Message matches any.
func (f *fixture) waitActive(t *testing.T, name string, want active) {
	t.Helper()
	testenv.WaitFor(t, wait, fmt.Sprintf("AdmissionCheck %s to be Active=%s %s", name, want.Status, want.Reason), func(ctx context.Context) (bool, string, error) {
		ac := &kueuev1beta2.AdmissionCheck{}
		if err := f.c.Get(ctx, client.ObjectKey{Name: name}, ac); err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(ac.Status.Conditions, kueuev1beta2.AdmissionCheckActive)
		if c == nil {
			return false, "no Active condition", nil
		}
		got := active{c.Status, c.Reason, c.Message}
		if want.Message == "" {
			got.Message = ""
		}
		return got == want && c.ObservedGeneration == ac.Generation, fmt.Sprintf("%+v", *c), nil
	})
}

// configClusters is MultiKueueConfig name's clusters, or nil when it is missing.
func configClusters(ctx context.Context, c client.Client, name string) ([]string, error) {
	cfg := &kueuev1beta2.MultiKueueConfig{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, cfg); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if cfg.Labels[kueue.ManagedLabel] != kueue.ManagedValue {
		return nil, fmt.Errorf("MultiKueueConfig %s lacks label %s", name, kueue.ManagedLabel)
	}
	return cfg.Spec.Clusters, nil
}

// mkClusters maps each of names to its MultiKueueCluster's kubeconfig Secret, or "" when missing.
func mkClusters(ctx context.Context, c client.Client, names ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range names {
		mk := &kueuev1beta2.MultiKueueCluster{}
		err := c.Get(ctx, client.ObjectKey{Name: n}, mk)
		switch {
		case apierrors.IsNotFound(err):
			out[n] = ""
		case err != nil:
			return nil, err
		case mk.Spec.ClusterSource.KubeConfig == nil:
			out[n] = "no kubeConfig"
		default:
			out[n] = fmt.Sprintf("%s %s %s", mk.Labels[kueue.ManagedLabel], mk.Spec.ClusterSource.KubeConfig.LocationType, mk.Spec.ClusterSource.KubeConfig.Location)
		}
	}
	return out, nil
}

// kubeconfigSecret makes cluster's kubeconfig Secret in the Kueue namespace.
func (f *fixture) kubeconfigSecret(t *testing.T, cluster string) {
	t.Helper()
	testenv.Create(t, f.c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: kueue.SecretName(cluster), Namespace: ns},
		Data: map[string][]byte{"kubeconfig": []byte("apiVersion: v1\nkind: Config\n")}})
}
