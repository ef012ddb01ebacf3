//go:build integration

package addontemplate

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/agent/addon"
	"github.com/flotilla/flotilla/internal/hub/addontemplate"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestOCMAddOnWithoutItsNamespace installs a template add-on as OCM's add-ons are written: its
// manifests put the agent in open-cluster-management-agent-addon and do not create that
// namespace, which OCM's klusterlet makes on every managed cluster.
//
//   - With the agent's default, the namespace is there: the add-on's work applies and its hub
//     credentials are stored.
//   - With --disable-default-addon-namespace (OCM's opt-out), the work fails with the API
//     server's "not found", as in OCM; once an administrator creates the namespace, the
//     credentials are stored at once. The agent runs with backoffs and a resync of 10 minutes, so
//     only its namespace watch can store them within the wait.
func TestOCMAddOnWithoutItsNamespace(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 3, CRDs: true})
	all := joinAll(t, env)
	hub := env.HubClient(t)
	ctx := context.Background()
	withDefault, optedOut := all[0], all[1]
	for _, j := range []struct {
		j       *joined
		disable bool
	}{{withDefault, false}, {optedOut, true}} {
		ad, err := addon.New(addon.Options{
			ClusterName: j.j.Name, AgentID: "agent-" + j.j.Name, Hub: j.j.Reg.Hub(), Spoke: j.j.Spoke.RESTConfig(),
			DisableDefaultAddOnNamespace: j.disable, Poll: 200 * time.Millisecond,
			InitialBackoff: 10 * time.Minute, MaxBackoff: 10 * time.Minute, Resync: 10 * time.Minute,
			Log: testr.New(t).WithName(j.j.Name + "-addon"),
		})
		if err != nil {
			t.Fatal(err)
		}
		testenv.RunUntilCleanup(t, ad.Run)
	}

	const name = "ocm-style"
	deploy := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name + "-agent", Namespace: agentNS},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "quay.io/flotilla/" + name + ":v1"}}},
			},
		},
	}
	raw, err := json.Marshal(deploy)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Create(t, hub, &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: name + "-v1"},
		Spec: addonv1alpha1.AddOnTemplateSpec{AddonName: name, Registration: kubeClient(),
			AgentSpec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}}}})
	testenv.Create(t, hub, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyManual},
			SupportedConfigs: []addonv1alpha1.ConfigMeta{{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonGroup, Resource: "addontemplates"},
				DefaultConfig: &addonv1alpha1.ConfigReferent{Name: name + "-v1"}}},
		}})
	enable(t, hub, name, withDefault.Name)
	enable(t, hub, name, optedOut.Name)
	secret := name + "-hub-kubeconfig"

	t.Run("the agent made the namespace: the work applies and the credentials are stored", func(t *testing.T) {
		ns, err := withDefault.Spoke.Client.CoreV1().Namespaces().Get(ctx, agentNS, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("namespace %s on %s: %v", agentNS, withDefault.Name, err)
		}
		if got := ns.Labels[addon.CreatedByLabel]; got != addon.CreatedByAgent {
			t.Errorf("namespace %s has label %s=%q, want %q", agentNS, addon.CreatedByLabel, got, addon.CreatedByAgent)
		}
		waitAddOn(t, hub, withDefault.Name, name, "ManifestApplied", isTrue(addonv1alpha1.ManagedClusterAddOnManifestApplied))
		waitSpokeSecret(t, withDefault, secret)
	})

	t.Run("opted out: the work fails as in OCM, and the credentials come the moment the namespace does", func(t *testing.T) {
		testenv.WaitFor(t, wait, "the work on "+optedOut.Name+" failing for the missing namespace", func(ctx context.Context) (bool, string, error) {
			w := &workv1.ManifestWork{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: optedOut.Name, Name: addontemplate.WorkName(name)}, w); err != nil {
				return false, "", client.IgnoreNotFound(err)
			}
			c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)
			if c == nil {
				return false, "no Applied", nil
			}
			return c.Status == metav1.ConditionFalse && strings.Contains(c.Message, agentNS) && strings.Contains(c.Message, "not found"), c.Message, nil
		})
		if _, err := optedOut.Spoke.Client.CoreV1().Secrets(agentNS).Get(ctx, secret, metav1.GetOptions{}); err == nil {
			t.Fatalf("Secret %s/%s stored without its namespace", agentNS, secret)
		}
		if _, err := optedOut.Spoke.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agentNS}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitSpokeSecret(t, optedOut, secret)
		waitAddOn(t, hub, optedOut.Name, name, "ManifestApplied", isTrue(addonv1alpha1.ManagedClusterAddOnManifestApplied))
	})
}

// waitSpokeSecret waits for the add-on's credentials Secret in agentNS on the spoke.
func waitSpokeSecret(t *testing.T, j *joined, name string) {
	t.Helper()
	testenv.WaitFor(t, wait, "Secret "+agentNS+"/"+name+" on "+j.Name, func(ctx context.Context) (bool, string, error) {
		s, err := j.Spoke.Client.CoreV1().Secrets(agentNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), client.IgnoreNotFound(err)
		}
		return len(s.Data[addon.KubeconfigKey]) > 0, "no kubeconfig yet", nil
	})
}
