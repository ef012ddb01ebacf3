//go:build integration

package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestAddonCommands: `flotilla addon enable` makes ManagedClusterAddOns the API server accepts
// (the CRD's defaults filled in), `get addons` lists them, and `disable` deletes them.
func TestAddonCommands(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := env.HubClient(t)
	ctx := context.Background()
	kubeconfig := env.Hub.Kubeconfig
	testenv.Create(t, c, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "gpu-score"}})
	for _, name := range []string{"addon-east", "addon-west"} {
		testenv.Create(t, c, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}})
		testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}

	out, errOut, err := run(time.Now(), "addon", "enable", "gpu-score", "--clusters", "addon-east,addon-west", "--kubeconfig", kubeconfig)
	if err != nil {
		t.Fatalf("addon enable: %v\n%s", err, errOut)
	}
	want := lines(
		"addon-east: enabled (ManagedClusterAddOn addon-east/gpu-score created)",
		"addon-west: enabled (ManagedClusterAddOn addon-west/gpu-score created)")
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("addon enable (-want +got):\n%s", diff)
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "addon-east", Name: "gpu-score"}, mca); err != nil {
		t.Fatal(err)
	}
	if mca.Spec.InstallNamespace != "open-cluster-management-agent-addon" {
		t.Errorf("installNamespace = %q, want the CRD's default open-cluster-management-agent-addon", mca.Spec.InstallNamespace)
	}

	out, errOut, err = run(time.Now(), "get", "addons", "-c", "addon-east", "--kubeconfig", kubeconfig)
	if err != nil {
		t.Fatalf("get addons: %v\n%s", err, errOut)
	}
	if !strings.HasPrefix(out, "NAME        AVAILABLE   DEGRADED   PROGRESSING   INSTALLED-BY   AGE\ngpu-score   Unknown     -          -             user") {
		t.Errorf("get addons -c addon-east printed:\n%s", out)
	}

	_, errOut, err = run(time.Now(), "addon", "disable", "gpu-score", "--clusters", "addon-west", "--kubeconfig", kubeconfig)
	if err != nil {
		t.Fatalf("addon disable: %v\n%s", err, errOut)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "addon-west", Name: "gpu-score"}, &addonv1alpha1.ManagedClusterAddOn{}); !apierrors.IsNotFound(err) {
		t.Errorf("after disable, ManagedClusterAddOn addon-west/gpu-score: %v, want not found", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "addon-east", Name: "gpu-score"}, &addonv1alpha1.ManagedClusterAddOn{}); err != nil {
		t.Errorf("disable on addon-west touched addon-east's add-on: %v", err)
	}
}
