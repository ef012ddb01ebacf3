//go:build integration

package addon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/hub/addon"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{CRDs: true})) }

const wait = 60 * time.Second

var adcGR = addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: "addondeploymentconfigs"}

// fleet is a test's hub: an administrator's client and a cluster set bound into a namespace of
// the test's, where its Placements and configurations live.
type fleet struct {
	c   client.Client
	set *testenv.BoundSet
}

// start runs the hub as its generated roles and makes a cluster set bound into a new namespace.
func start(t *testing.T, set string) *fleet {
	t.Helper()
	s := testenv.StartHubWithSet(t, set)
	return &fleet{c: s.Client, set: s}
}

// deploymentConfig makes an AddOnDeploymentConfig in the test's namespace.
func (f *fleet) deploymentConfig(t *testing.T, name, installNamespace string) *addonv1alpha1.AddOnDeploymentConfig {
	t.Helper()
	c := &addonv1alpha1.AddOnDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: f.set.Namespace, Name: name},
		Spec: addonv1alpha1.AddOnDeploymentConfigSpec{AgentInstallNamespace: installNamespace}}
	testenv.Create(t, f.c, c)
	return c
}

// hashOf is the spec hash of an AddOnDeploymentConfig as the API server returns it.
func (f *fleet) hashOf(t *testing.T, ns, name string) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(addonv1alpha1.GroupVersion.WithKind("AddOnDeploymentConfig"))
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	h, err := addon.SpecHash(u)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// addons lists the namespaces of the ManagedClusterAddOns named name, sorted.
func (f *fleet) addons(ctx context.Context, name string) ([]string, map[string]*addonv1alpha1.ManagedClusterAddOn, error) {
	l := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := f.c.List(ctx, l); err != nil {
		return nil, nil, err
	}
	got, byNS := []string{}, map[string]*addonv1alpha1.ManagedClusterAddOn{}
	for i := range l.Items {
		if m := &l.Items[i]; m.Name == name && m.DeletionTimestamp.IsZero() {
			got = append(got, m.Namespace)
			byNS[m.Namespace] = m
		}
	}
	slices.Sort(got)
	return got, byNS, nil
}

// waitAddons waits until the ManagedClusterAddOns named name are in exactly the clusters want.
func (f *fleet) waitAddons(t *testing.T, name string, want ...string) map[string]*addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	var byNS map[string]*addonv1alpha1.ManagedClusterAddOn
	testenv.WaitFor(t, wait, fmt.Sprintf("the ManagedClusterAddOns %s in %v", name, want), func(ctx context.Context) (bool, string, error) {
		got, all, err := f.addons(ctx, name)
		byNS = all
		diff := cmp.Diff(want, got)
		return diff == "", "(-want +got)\n" + diff + "\n" + f.status(ctx, name), err
	})
	return byNS
}

// configured returns, per cluster, the Configured condition of the add-on (Status/Reason) and the
// spec hash it desires of config, for the clusters given.
func (f *fleet) configured(ctx context.Context, name string, clusters []string) (map[string]string, error) {
	_, byNS, err := f.addons(ctx, name)
	if err != nil {
		return nil, err
	}
	got := map[string]string{}
	for _, c := range clusters {
		m := byNS[c]
		if m == nil {
			got[c] = "no add-on"
			continue
		}
		s := "no Configured"
		if cond := meta.FindStatusCondition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionConfigured); cond != nil {
			s = string(cond.Status) + "/" + cond.Reason
		}
		for _, r := range m.Status.ConfigReferences {
			if r.DesiredConfig != nil {
				s += " " + r.DesiredConfig.Name + "@" + short(r.DesiredConfig.SpecHash)
			}
		}
		got[c] = s
	}
	return got, nil
}

func short(h string) string {
	if len(h) > 8 {
		return h[:8]
	}
	return h
}

// waitConfigured waits until configured says want.
func (f *fleet) waitConfigured(t *testing.T, name string, want map[string]string) {
	t.Helper()
	var clusters []string
	for c := range want {
		clusters = append(clusters, c)
	}
	testenv.WaitFor(t, wait, fmt.Sprintf("the Configured conditions of %s", name), func(ctx context.Context) (bool, string, error) {
		got, err := f.configured(ctx, name, clusters)
		diff := cmp.Diff(want, got)
		return diff == "", "(-want +got)\n" + diff + "\n" + f.status(ctx, name), err
	})
}

// agentDone plays the add-on's manager and the work agent on cluster: the add-on's ManifestWork,
// rendered with the configurations its ManagedClusterAddOn desires, is Applied and Available,
// and the add-on says ManifestApplied. The hub's progressing controller then completes it.
func (f *fleet) agentDone(t *testing.T, cluster, name string) {
	t.Helper()
	ctx := context.Background()
	m := &addonv1alpha1.ManagedClusterAddOn{}
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, m); err != nil {
			return err
		}
		meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnManifestApplied,
			Status: metav1.ConditionTrue, Reason: "AddonManifestApplied", Message: "applied by the test"})
		return f.c.Status().Update(ctx, m)
	})
	if err != nil {
		t.Fatalf("setting ManifestApplied on %s/%s: %v", cluster, name, err)
	}
	hashes := map[string]string{}
	for _, r := range m.Status.ConfigReferences {
		hashes[addon.ConfigHashKey(r.ConfigGroupResource, r.DesiredConfig.ConfigReferent)] = r.DesiredConfig.SpecHash
	}
	raw, _ := json.Marshal(hashes)
	key := client.ObjectKey{Namespace: cluster, Name: "addon-" + name + "-deploy-0"}
	w := &workv1.ManifestWork{}
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		err := f.c.Get(ctx, key, w)
		if apierrors.IsNotFound(err) {
			w = &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: key.Name,
				Labels: map[string]string{addon.AddonLabel: name}, Annotations: map[string]string{addon.ConfigSpecHashAnnotation: string(raw)}}}
			return f.c.Create(ctx, w)
		}
		if err != nil {
			return err
		}
		w.Annotations[addon.ConfigSpecHashAnnotation] = string(raw)
		return f.c.Update(ctx, w)
	})
	if err != nil {
		t.Fatalf("writing the ManifestWork %s: %v", key, err)
	}
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := f.c.Get(ctx, key, w); err != nil {
			return err
		}
		for _, typ := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
			meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "Test", ObservedGeneration: w.Generation})
		}
		return f.c.Status().Update(ctx, w)
	})
	if err != nil {
		t.Fatalf("reporting the ManifestWork %s: %v", key, err)
	}
}

// progression returns the Progressing condition of the add-on's install progression of
// placement as Status/Reason: Message.
func progression(cma *addonv1alpha1.ClusterManagementAddOn, placement string) string {
	for _, p := range cma.Status.InstallProgressions {
		if p.Name != placement {
			continue
		}
		if c := meta.FindStatusCondition(p.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing); c != nil {
			return string(c.Status) + "/" + c.Reason + ": " + c.Message
		}
		return "no Progressing condition"
	}
	return "no install progression"
}

// waitProgression waits until the add-on's progression of placement satisfies ok.
func (f *fleet) waitProgression(t *testing.T, name, placement string, ok func(string) bool) *addonv1alpha1.ClusterManagementAddOn {
	t.Helper()
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	testenv.WaitFor(t, wait, fmt.Sprintf("the install progression of %s for placement %s", name, placement), func(ctx context.Context) (bool, string, error) {
		if err := f.c.Get(ctx, client.ObjectKey{Name: name}, cma); err != nil {
			return false, "", err
		}
		got := progression(cma, placement)
		return ok(got), got, nil
	})
	return cma
}

func is(want string) func(string) bool { return func(got string) bool { return got == want } }

func contains(parts ...string) func(string) bool {
	return func(got string) bool {
		for _, p := range parts {
			if !strings.Contains(got, p) {
				return false
			}
		}
		return true
	}
}

// status shows an add-on's status and its ManagedClusterAddOns', for failure messages.
func (f *fleet) status(ctx context.Context, name string) string {
	var b strings.Builder
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := f.c.Get(ctx, client.ObjectKey{Name: name}, cma); err == nil {
		for _, p := range cma.Status.InstallProgressions {
			fmt.Fprintf(&b, "progression %s/%s: %s\n", p.Namespace, p.Name, progression(cma, p.Name))
		}
	}
	_, byNS, _ := f.addons(ctx, name)
	for ns, m := range byNS {
		fmt.Fprintf(&b, "mca %s:", ns)
		for _, c := range m.Status.Conditions {
			fmt.Fprintf(&b, " %s=%s/%s", c.Type, c.Status, c.Reason)
		}
		b.WriteString("\n")
	}
	return b.String()
}
