//go:build integration

package multikueue

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/kueueworker"
	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// msaSubject is the ServiceAccount MultiKueue acts as on a worker on the ClusterProfile path.
var msaSubject = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: kueueworker.ProfileNamespace, Name: kueueworker.ManagedServiceAccount}

// msaClient is a client of j's spoke with the token the hub holds for cluster's
// ManagedServiceAccount multikueue (what the credentials plugin hands Kueue).
func (f *fleet) msaClient(ctx context.Context, t *testing.T, cluster string, spoke *rest.Config) (kubernetes.Interface, string, error) {
	t.Helper()
	s := &corev1.Secret{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: kueueworker.ManagedServiceAccount}, s); err != nil {
		return nil, "", err
	}
	tok := string(s.Data["token"])
	if tok == "" {
		return nil, "", fmt.Errorf("Secret %s/%s has no token yet", cluster, s.Name)
	}
	cfg := rest.AnonymousClientConfig(spoke)
	cfg.BearerToken = tok
	cs, err := kubernetes.NewForConfig(cfg)
	return cs, tok, err
}

func testProfileCredentials(t *testing.T, f *fleet) {
	one, two := f.bothWorkers(t, "mk-prof", "ClusterProfiles and tokens ready")
	ctx := context.Background()

	t.Run("each MultiKueueCluster names its ClusterProfile, Kueue connects through the plugin, and no kubeconfig is written", func(t *testing.T) {
		for _, j := range f.joined {
			mkc := &kueuev1beta2.MultiKueueCluster{}
			testenv.WaitFor(t, wait, "Kueue to connect to "+j.Name+" through its ClusterProfile", func(ctx context.Context) (bool, string, error) {
				if err := f.c.Get(ctx, client.ObjectKey{Name: j.Name}, mkc); err != nil {
					return false, "", client.IgnoreNotFound(err)
				}
				return meta.IsStatusConditionTrue(mkc.Status.Conditions, kueuev1beta2.MultiKueueClusterActive), fmt.Sprint(mkc.Status.Conditions), nil
			})
			if ref := mkc.Spec.ClusterSource.ClusterProfileRef; ref == nil || ref.Name != j.Name || mkc.Spec.ClusterSource.KubeConfig != nil {
				t.Errorf("MultiKueueCluster %s: clusterSource %+v, want clusterProfileRef %s only", j.Name, mkc.Spec.ClusterSource, j.Name)
			}
			for _, name := range []string{kueue.SecretName(j.Name), kueueworker.TokenSecret(j.Name)} {
				if err := f.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
					t.Errorf("Secret %s/%s on the ClusterProfile path: want NotFound, got %v", ns, name, err)
				}
			}
		}
	})

	t.Run("the ManagedServiceAccount's token does what MultiKueue needs on its worker and nothing else", func(t *testing.T) {
		for _, j := range f.joined {
			w, _, err := f.msaClient(ctx, t, j.Name, j.Spoke.RESTConfig())
			if err != nil {
				t.Fatal(err)
			}
			namespace := f.env.Namespace(t, j.Spoke)
			canRunJobs(t, w, namespace)
			canDoNoMore(t, j.Name, w, namespace, msaSubject)
		}
	})

	t.Run("a cluster that leaves the placement loses its credentials", func(t *testing.T) {
		old, _, err := f.msaClient(ctx, t, two, f.joined[1].Spoke.RESTConfig())
		if err != nil {
			t.Fatal(err)
		}
		f.label(t, two, map[string]string{"mk-prof": ""})
		f.waitActive(t, "mk-prof", metav1.ConditionTrue, one)
		gone := []client.Object{
			&kueuev1beta2.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: two}},
			&workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: two, Name: kueueworker.WorkName}},
			&authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: two, Name: kueueworker.ManagedServiceAccount}},
			&addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: two, Name: authv1beta1.AddOnName}},
		}
		f.waitGone(t, gone...)
		testenv.WaitFor(t, wait, "the old token of "+two+" to stop working", func(ctx context.Context) (bool, string, error) {
			_, err := old.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
			return apierrors.IsUnauthorized(err), fmt.Sprint(err), nil
		})
		// Back in the placement, it gets credentials anew (the dispatch tests use both workers).
		f.label(t, two, map[string]string{"mk-prof": "worker"})
		f.waitActive(t, "mk-prof", metav1.ConditionTrue, one, two)
	})

	t.Run("a ManagedServiceAccount the user made is used as it is, with none of the hub's objects", func(t *testing.T) {
		f.label(t, two, map[string]string{"mk-prof": ""})
		testenv.WaitFor(t, wait, "the hub's ManagedServiceAccount of "+two+" to go", func(ctx context.Context) (bool, string, error) {
			err := f.c.Get(ctx, client.ObjectKey{Namespace: two, Name: kueueworker.ManagedServiceAccount}, &authv1beta1.ManagedServiceAccount{})
			return apierrors.IsNotFound(err), "", client.IgnoreNotFound(err)
		})
		mine := &authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: two, Name: kueueworker.ManagedServiceAccount},
			Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{Enabled: true, Validity: metav1.Duration{Duration: 2 * time.Hour}}}}
		testenv.Create(t, f.c, mine)
		f.label(t, two, map[string]string{"mk-prof": "worker"})
		testenv.WaitFor(t, wait, "MultiKueueCluster "+two+" again", func(ctx context.Context) (bool, string, error) {
			err := f.c.Get(ctx, client.ObjectKey{Name: two}, &kueuev1beta2.MultiKueueCluster{})
			return err == nil, "", client.IgnoreNotFound(err)
		})
		time.Sleep(3 * time.Second) // time enough for the hub to have delivered its objects, were it to
		got := &authv1beta1.ManagedServiceAccount{}
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(mine), got); err != nil {
			t.Fatal(err)
		}
		if got.Labels[kueue.ManagedLabel] != "" || got.Spec.Rotation.Validity.Duration != 2*time.Hour || len(got.OwnerReferences) > 0 {
			t.Errorf("the user's ManagedServiceAccount was changed: labels %v, owners %v, validity %s", got.Labels, got.OwnerReferences, got.Spec.Rotation.Validity)
		}
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: two, Name: kueueworker.WorkName}, &workv1.ManifestWork{}); !apierrors.IsNotFound(err) {
			t.Errorf("the hub delivered MultiKueue's rules to %s although the user made its ManagedServiceAccount: %v", two, err)
		}
		if err := f.c.Delete(ctx, mine); err != nil {
			t.Fatal(err)
		}
		f.waitActive(t, "mk-prof", metav1.ConditionTrue, one, two)
	})
}
