//go:build integration

package install

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/charts"
	"github.com/flotilla/flotilla/internal/contract/wellknown"
	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// previousHubChart is a fixture of the hub chart's previous release: version 0.0.9, with an
// object the current chart no longer has.
func previousHubChart(t *testing.T) *chartv2.Chart {
	t.Helper()
	ch, err := charts.Load(charts.Hub)
	if err != nil {
		t.Fatal(err)
	}
	ch.Metadata.Version, ch.Metadata.AppVersion = "0.0.9", "0.0.9"
	ch.Templates = append(ch.Templates, &common.File{Name: "templates/legacy.yaml", Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: flotilla-hub-legacy
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "flotilla-hub.labels" . | nindent 4 }}
data:
  note: "dropped by 0.1.0"
`)})
	return ch
}

// watchCluster records, until stop, every moment the cluster is tainted or not Available.
func watchCluster(t *testing.T, admin client.Client, name string) (stop func() []string) {
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			mc := &clusterv1.ManagedCluster{}
			if err := admin.Get(context.Background(), client.ObjectKey{Name: name}, mc); err == nil {
				var bad []string
				for _, taint := range mc.Spec.Taints {
					bad = append(bad, "taint "+taint.Key)
				}
				if !meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
					bad = append(bad, "not Available")
				}
				if len(bad) > 0 {
					mu.Lock()
					seen = append(seen, time.Now().Format(time.StampMilli)+": "+strings.Join(bad, ", "))
					mu.Unlock()
				}
			}
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	})
	return func() []string {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// TestUpgradeKeepsTheFleet installs the previous hub chart and runs it, joins a spoke and
// applies a work, then upgrades to the current chart as a rolling update does (the new replica
// starts, then the old one stops): the cluster never loses its lease nor gets a taint, the work
// stays applied, the new replica leads and places, the webhook certificate is kept, and what the
// previous version had and this one does not is removed.
func TestUpgradeKeepsTheFleet(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 1})
	hubCluster, spoke := env.Hub, env.Spokes[0]
	admin := env.HubClient(t)
	ctx := context.Background()
	env.DeleteWebhookConfigurationAtEnd(t)
	const cluster = "up-spoke"

	oldVals, oldHealth := hubValues(t)
	oldRendered, err := install.InstallChart(ctx, hubCluster.RESTConfig(), install.Chart{
		Chart: charts.Hub, Loaded: previousHubChart(t), Release: charts.Release{Name: charts.Hub, Namespace: hubNamespace}, Values: oldVals,
	})
	if err != nil {
		t.Fatal(err)
	}
	oldRun := runDeployment(t, hubCluster, deployment(t, oldRendered, "flotilla-hub"), "flotilla-hub-old")
	ready(t, oldRun, "http://127.0.0.1:"+strconv.Itoa(oldHealth)+"/readyz", 90*time.Second)
	caBefore := webhookCA(t, hubCluster)

	if err := registration.EnsureBootstrapIdentity(ctx, hubCluster.Client); err != nil {
		t.Fatal(err)
	}
	bootstrap, err := registration.BootstrapKubeconfig(ctx, hubCluster.Client, hubCluster.RESTConfig(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	agentChart := renderChart(t, charts.Agent, agentNamespace, map[string]any{"clusterName": cluster, "bootstrapKubeconfig": string(bootstrap)})
	applyChart(t, spoke, agentNamespace, agentChart)
	agentRun := runDeployment(t, spoke, deployment(t, agentChart, "flotilla-agent"), "flotilla-agent-up")
	testenv.WaitFor(t, 60*time.Second, "acceptance of "+cluster, func(ctx context.Context) (bool, string, error) {
		res, err := registration.Accept(ctx, admin, hubCluster.Client, cluster, registration.AcceptOptions{Clock: clock.RealClock{}})
		if err != nil {
			return false, err.Error(), nil
		}
		return len(res.Approved()) > 0 || res.PreviouslyApproved(), fmt.Sprintf("%+v", res), nil
	})
	waitClusterNamed(t, admin, cluster, agentRun)
	testenv.Create(t, admin, manifestWork(t, cluster, "up-work", &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "up-hello"},
	}))
	waitWork(t, admin, cluster, "up-work")

	// The upgrade: the chart first, then the rolling update of the Deployment.
	oldLeader := leaseHolder(t, hubCluster)
	watch := watchCluster(t, admin, cluster)
	newVals, newHealth := hubValues(t)
	newRendered, err := install.InstallChart(ctx, hubCluster.RESTConfig(), install.Chart{
		Chart: charts.Hub, Release: charts.Release{Name: charts.Hub, Namespace: hubNamespace}, Values: newVals,
	})
	if err != nil {
		t.Fatal(err)
	}
	newRun := runDeployment(t, hubCluster, deployment(t, newRendered, "flotilla-hub"), "flotilla-hub-new")
	ready(t, newRun, "http://127.0.0.1:"+strconv.Itoa(newHealth)+"/readyz", 90*time.Second)
	stoppedAt := time.Now()
	oldRun.Stop(30 * time.Second)
	newWebhook := newVals["webhook"].(map[string]any)["advertiseAddress"].(string)
	testenv.WaitFor(t, 60*time.Second, "the new replica leads (webhook configuration names it)", func(ctx context.Context) (bool, string, error) {
		vwc, err := hubCluster.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, wellknown.HubWebhookConfiguration, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		url := ptr.Deref(vwc.Webhooks[0].ClientConfig.URL, "")
		return strings.Contains(url, newWebhook), url, nil
	})
	t.Logf("the new replica wrote the webhook configuration %s after the old one stopped", time.Since(stoppedAt).Round(time.Millisecond))
	if got := leaseHolder(t, hubCluster); got == oldLeader || got == "" {
		t.Errorf("the leader Lease is held by %q after the upgrade, want the new replica (the old one was %q)", got, oldLeader)
	}

	// The new leader decides placements; the work applied before the upgrade stays applied.
	const ns = "up-demo"
	testenv.Create(t, admin, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	testenv.Create(t, admin, &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "default"},
	})
	testenv.Create(t, admin, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "after-upgrade"}})
	testenv.WaitFor(t, 60*time.Second, "placement after-upgrade decides "+cluster, func(ctx context.Context) (bool, string, error) {
		var list clusterv1beta1.PlacementDecisionList
		if err := admin.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		for _, d := range list.Items {
			for _, dec := range d.Status.Decisions {
				if dec.ClusterName == cluster {
					return true, "", nil
				}
			}
		}
		return false, fmt.Sprintf("%d decisions", len(list.Items)), nil
	})
	waitWork(t, admin, cluster, "up-work")
	time.Sleep(2 * time.Second) // a few more samples of the cluster after the handover
	if bad := watch(); len(bad) > 0 {
		t.Errorf("during the upgrade the cluster was tainted or unavailable:\n%s", strings.Join(bad, "\n"))
	}

	if got := webhookCA(t, hubCluster); got != caBefore {
		t.Errorf("the upgrade replaced the webhook's certificate authority; it must keep it")
	}
	_, err = hubCluster.Client.CoreV1().ConfigMaps(hubNamespace).Get(ctx, "flotilla-hub-legacy", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the previous version's ConfigMap flotilla-hub-legacy survived the upgrade (err %v)", err)
	}
	d, err := hubCluster.Client.AppsV1().Deployments(hubNamespace).Get(ctx, "flotilla-hub", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Labels[install.VersionLabel]; got != "0.1.0" {
		t.Errorf("the Deployment's version label is %q after the upgrade, want 0.1.0", got)
	}
}

func webhookCA(t *testing.T, c *testenv.Cluster) string {
	t.Helper()
	s, err := c.Client.CoreV1().Secrets(hubNamespace).Get(context.Background(), "flotilla-hub-webhook-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(s.Data["ca.crt"])
}

func leaseHolder(t *testing.T, c *testenv.Cluster) string {
	t.Helper()
	l, err := c.Client.CoordinationV1().Leases(hubNamespace).Get(context.Background(), hub.LeaderElectionID, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

func waitWork(t *testing.T, admin client.Client, ns, name string) {
	t.Helper()
	testenv.WaitFor(t, 60*time.Second, "ManifestWork "+name+" Applied and Available", func(ctx context.Context) (bool, string, error) {
		w := &workv1.ManifestWork{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, w); err != nil {
			return false, "", err
		}
		ok := meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied) && meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkAvailable)
		return ok, fmt.Sprintf("conditions %+v", w.Status.Conditions), nil
	})
}
