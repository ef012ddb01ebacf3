//go:build integration

package realnodes

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/apitest"
	hubapp "github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/local/devfleet"
	"github.com/flotilla/flotilla/internal/local/fleet"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/realnode"
	"github.com/flotilla/flotilla/internal/local/testenv"

	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// TestFlotillaOnRealNodes installs the hub and an agent from Flotilla's image on real nodes with
// the user's commands: the hub's two replicas run as containers on the hub's node (its webhook
// called through its Service by the API server, which `init` checks), the agent's pod on the
// spoke's node registers through the hub's address, and once accepted the cluster turns
// Available. No Flotilla host process takes part: the fleet runs no hub or agent (`Flotilla` is
// empty), and every Flotilla container's ID is containerd's. Then a ManifestWork's Job runs on
// the spoke's real node and its status comes back as feedback; the resource-usage add-on, run by
// the agent's pod, turns Available; an upgrade and the leader's loss keep the spoke Available.
func TestFlotillaOnRealNodes(t *testing.T) {
	if err := realnode.Check(); err != nil {
		t.Fatal(err) // a machine that cannot run a node fails this test, saying what it lacks
	}
	bins, err := localk8s.FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	coreDNS, err := realnode.FindCoreDNS()
	if err != nil {
		t.Fatal(err)
	}
	ctrllog.SetLogger(logr.Discard())
	dir := t.TempDir()
	archive, ref, flotilla := testenv.FlotillaImage(t, filepath.Join(dir, "image"))
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	state := filepath.Join(dir, "fleet")
	spec := &fleet.Fleet{Clusters: []fleet.Cluster{{Name: "edge", NodePools: []fleet.NodePool{{Name: "cpu", Count: 1}}}}}
	st, err := devfleet.Up(ctx, devfleet.UpOptions{
		StateDir: state, Fleet: spec, FleetSource: "test", Binaries: bins,
		RealNodes: true, CoreDNS: coreDNS, Images: []string{archive}, Out: io.Discard, Clock: clock.RealClock{},
	})
	t.Cleanup(func() {
		if err := devfleet.Down(state, io.Discard); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	hub, edge := kubeconfigOf(t, st, localk8s.HubName), kubeconfigOf(t, st, "edge")

	bootstrap := filepath.Join(dir, "bootstrap.kubeconfig")
	run(ctx, t, flotilla, "init", "--install", "--kubeconfig", hub, "--image", ref, "--image-pull-policy", "Never",
		"--bootstrap-kubeconfig", bootstrap, "--wait", "3m")
	// The spoke's kwok node would take the agent's pod and run nothing: the agent goes to the real node.
	run(ctx, t, flotilla, "join", "--install", "--cluster-name", "edge", "--bootstrap-kubeconfig", bootstrap,
		"--kubeconfig", edge, "--image", ref, "--image-pull-policy", "Never",
		"--set", `nodeSelector.kubernetes\.io/hostname=edge-node`, "--wait", "3m")
	run(ctx, t, flotilla, "accept", "edge", "--kubeconfig", hub, "--wait", "2m") // the agent registers moments after join returns

	hubCfg, err := localk8s.RESTConfigFromKubeconfig(hub)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(hubCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	var mc clusterv1.ManagedCluster
	for {
		err := c.Get(ctx, client.ObjectKey{Name: "edge"}, &mc)
		if err == nil && meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("ManagedCluster edge did not turn Available: %v %+v", err, mc.Status.Conditions)
		}
		time.Sleep(500 * time.Millisecond)
	}

	for _, tc := range []struct {
		kubeconfig, namespace, node string
		want                        int
	}{
		{hub, "open-cluster-management-hub", "hub-node", 2},
		{edge, "open-cluster-management-agent", "edge-node", 1},
	} {
		cfg, err := localk8s.RESTConfigFromKubeconfig(tc.kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		pods, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods(tc.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning || p.Spec.NodeName != tc.node {
				t.Errorf("pod %s/%s is %s on %q, want Running on %s", p.Namespace, p.Name, p.Status.Phase, p.Spec.NodeName, tc.node)
				continue
			}
			for _, cs := range p.Status.ContainerStatuses {
				if !strings.HasPrefix(cs.ContainerID, "containerd://") || cs.Image != ref {
					t.Errorf("pod %s container %s: id %q image %q, want a containerd container of %s", p.Name, cs.Name, cs.ContainerID, cs.Image, ref)
				}
			}
			running++
		}
		if running != tc.want {
			t.Errorf("%d Flotilla pods run in %s on %s, want %d", running, tc.namespace, tc.node, tc.want)
		}
	}

	edgeCfg, err := localk8s.RESTConfigFromKubeconfig(edge)
	if err != nil {
		t.Fatal(err)
	}
	deliverJob(ctx, t, c, edgeCfg, ref)

	// An add-on whose agent is the real agent pod: resource-usage, built into flotilla agent,
	// turns Available and writes its score for the hub's placements.
	run(ctx, t, flotilla, "addon", "enable", "resource-usage", "--clusters", "edge", "--kubeconfig", hub)
	for {
		var a addonv1alpha1.ManagedClusterAddOn
		var score clusterv1alpha1.AddOnPlacementScore
		err := c.Get(ctx, client.ObjectKey{Namespace: "edge", Name: "resource-usage"}, &a)
		if err == nil && meta.IsStatusConditionTrue(a.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable) &&
			c.Get(ctx, client.ObjectKey{Namespace: "edge", Name: clusterv1alpha1.ResourceUsageScoreName}, &score) == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("add-on resource-usage on edge did not turn Available with its score: %v %+v", err, a.Status.Conditions)
		}
		time.Sleep(500 * time.Millisecond)
	}

	hubNet := realnode.Network{Index: realNodeOf(t, st, localk8s.HubName).Index}
	upgradeAndKillLeader(ctx, t, c, hubCfg, edgeCfg, hubNet, func(ref2 string) {
		badInput(ctx, t, flotilla, hub, bootstrap, hubCfg, ref)
		archive2 := testenv.PackFlotillaImage(t, flotilla, filepath.Join(dir, "image2"), ref2)
		if err := realnode.ImportImage(hubNet, archive2); err != nil {
			t.Fatal(err)
		}
		run(ctx, t, flotilla, "init", "--install", "--upgrade", "--kubeconfig", hub, "--image", ref2, "--image-pull-policy", "Never",
			"--bootstrap-kubeconfig", bootstrap, "--wait", "3m")
	})
}

// upgradeAndKillLeader rolls the hub's pods to a new image (upgrade) while watching that the
// spoke never loses Available and its Job is not applied again, then kills the leader's container
// with the runtime's SIGKILL and measures how long the Lease takes to move to the other replica.
func upgradeAndKillLeader(ctx context.Context, t *testing.T, c client.Client, hubCfg, edgeCfg *rest.Config, hubNet realnode.Network, upgrade func(ref2 string)) {
	t.Helper()
	hubCS := kubernetes.NewForConfigOrDie(hubCfg)
	edgeCS := kubernetes.NewForConfigOrDie(edgeCfg)
	before, err := edgeCS.BatchV1().Jobs("default").Get(ctx, "hello-real", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// Watch Available every 200 ms through the upgrade and the leader's loss.
	stop := make(chan struct{})
	lost := make(chan string, 1)
	go func() {
		defer close(lost)
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			var mc clusterv1.ManagedCluster
			if err := c.Get(ctx, client.ObjectKey{Name: "edge"}, &mc); err == nil &&
				!meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
				lost <- fmt.Sprintf("%v", mc.Status.Conditions)
				return
			}
		}
	}()

	const ref2 = "ghcr.io/flotilla/flotilla:test-next"
	upgrade(ref2)
	pods := hubPodsOn(ctx, t, hubCS, ref2)

	// The leader's container killed by its runtime, as a crash or an OOM kill would. The old
	// leader released the Lease when the upgrade stopped it: the new pods take it at their next
	// try, a few seconds later.
	var leader, id string
	for end := time.Now().Add(time.Minute); id == ""; time.Sleep(200 * time.Millisecond) {
		leader = leaseHolder(ctx, t, hubCS)
		for _, p := range pods {
			if strings.HasPrefix(leader, p.Name+"_") {
				id = strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://")
			}
		}
		if id == "" && time.Now().After(end) {
			t.Fatalf("for a minute after the upgrade, the Lease's holder %q is none of the hub's pods %v", leader, podNames(pods))
		}
	}
	killed := time.Now()
	if out, err := exec.CommandContext(ctx, "ctr", "--address", hubNet.RunDir()+"/containerd.sock", "--namespace", "k8s.io",
		"tasks", "kill", "--signal", "SIGKILL", id).CombinedOutput(); err != nil {
		t.Fatalf("killing the leader's container %s: %v: %s", id, err, out)
	}
	for leaseHolder(ctx, t, hubCS) == leader {
		if ctx.Err() != nil {
			t.Fatal("leadership never moved after the leader's container was killed")
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("the leader's container killed; the other replica holds the Lease %.1fs later", time.Since(killed).Seconds())

	close(stop)
	if why, ok := <-lost; ok {
		t.Errorf("cluster edge lost Available during the upgrade or the leader's loss: %s", why)
	}
	after, err := edgeCS.BatchV1().Jobs("default").Get(ctx, "hello-real", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.UID != before.UID || after.Generation != before.Generation {
		t.Errorf("the Job was applied again: uid %s generation %d, before %s generation %d", after.UID, after.Generation, before.UID, before.Generation)
	}
}

// badInput runs the upgrades a user gets wrong on real kubelets, while upgradeAndKillLeader
// watches that the spoke stays Available: an image that was not imported and a hub container
// that crash-loops each fail `flotilla init --install --upgrade` with the pod's own reason, and
// roll the hub back to the pods of ref, which run on. Then the webhook's Service loses its
// endpoints, and the install's webhook check says so.
func badInput(ctx context.Context, t *testing.T, flotilla, hub, bootstrap string, hubCfg *rest.Config, ref string) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(hubCfg)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{{
		name: "an image that was not imported",
		args: []string{"--image", "ghcr.io/flotilla/flotilla:not-imported", "--wait", "10s"},
		want: []string{"image ghcr.io/flotilla/flotilla:not-imported is not on the node and imagePullPolicy is Never"},
	}, {
		name: "a hub container that crash-loops",
		args: []string{"--image", ref, "--set", "extraArgs={--no-such-flag}", "--wait", "30s"},
		want: []string{"CrashLoopBackOff", "unknown flag: --no-such-flag"},
	}} {
		args := append([]string{"init", "--install", "--upgrade", "--kubeconfig", hub, "--image-pull-policy", "Never",
			"--bootstrap-kubeconfig", bootstrap}, tc.args...)
		cmd := exec.CommandContext(ctx, flotilla, args...)
		cmd.Dir = t.TempDir()
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("%s: flotilla init --install --upgrade succeeded:\n%s", tc.name, out)
		}
		for _, w := range append(tc.want, "rolled back: flotilla-hub") {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: the failed upgrade does not say %q:\n%s", tc.name, w, out)
			}
		}
		t.Logf("%s: refused and rolled back in %.1fs:\n%s", tc.name, time.Since(start).Seconds(), out)
		d, err := cs.AppsV1().Deployments("open-cluster-management-hub").Get(ctx, "flotilla-hub", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := d.Spec.Template.Spec.Containers[0]; c.Image != ref || slices.Contains(c.Args, "--no-such-flag") {
			t.Errorf("%s: after the rollback the hub runs image %s with %v, want %s as before", tc.name, c.Image, c.Args, ref)
		}
		hubPodsOn(ctx, t, cs, ref)
	}

	// The webhook's Service selects no pod: the check `flotilla init` ends with names the Service.
	svc, err := cs.CoreV1().Services("open-cluster-management-hub").Get(ctx, "flotilla-hub-webhook", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	selector := svc.Spec.Selector
	svc.Spec.Selector = map[string]string{"app.kubernetes.io/name": "no-such-pod"}
	if _, err := cs.CoreV1().Services(svc.Namespace).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The endpoint slice controller, then the API server's cache of endpoints, follow the
	// selector a moment later; until then the webhook is still called at the old pods.
	want := "Service open-cluster-management-hub/flotilla-hub-webhook has no ready endpoints: no ready pod matches its selector app.kubernetes.io/name=no-such-pod"
	var lastErr error
	for end := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		lastErr = install.WaitWebhook(ctx, hubCfg, 2*time.Second, io.Discard, clock.RealClock{})
		if lastErr != nil && strings.Contains(lastErr.Error(), want) {
			break
		}
		if time.Now().After(end) {
			t.Errorf("webhook check with a Service without endpoints, for a minute: %v, want it to say %q", lastErr, want)
			break
		}
	}
	svc, err = cs.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	if err == nil {
		svc.Spec.Selector = selector
		_, err = cs.CoreV1().Services(svc.Namespace).Update(ctx, svc, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := install.WaitWebhook(ctx, hubCfg, time.Minute, io.Discard, clock.RealClock{}); err != nil {
		t.Fatalf("the webhook with its Service restored: %v", err)
	}
}

// hubPodsOn waits until the hub's pods are exactly its two replicas, both running image and
// ready, with no old pod left terminating, and returns them.
func hubPodsOn(ctx context.Context, t *testing.T, cs kubernetes.Interface, image string) []corev1.Pod {
	t.Helper()
	var last []string
	for {
		pods, err := cs.CoreV1().Pods("open-cluster-management-hub").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=flotilla-hub"})
		if err == nil {
			last = nil
			ok := len(pods.Items) == 2
			for _, p := range pods.Items {
				ready := p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Spec.Containers[0].Image == image &&
					len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].Ready
				ok = ok && ready
				last = append(last, fmt.Sprintf("%s %s %s ready=%v", p.Name, p.Spec.Containers[0].Image, p.Status.Phase, ready))
			}
			if ok {
				return pods.Items
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("the hub's pods never were two ready replicas of %s: %v (%v)", image, last, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func leaseHolder(ctx context.Context, t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	l, err := cs.CoordinationV1().Leases("open-cluster-management-hub").Get(ctx, hubapp.LeaderElectionID, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		t.Fatalf("the hub's Lease: %v %v", l, err)
	}
	return *l.Spec.HolderIdentity
}

func podNames(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func realNodeOf(t *testing.T, st *devfleet.State, cluster string) *devfleet.RealNodeState {
	t.Helper()
	for _, c := range st.Clusters {
		if c.Name == cluster && c.RealNode != nil {
			return c.RealNode
		}
	}
	t.Fatalf("cluster %s has no real node", cluster)
	return nil
}

// A ManifestWork delivers a Job whose container really runs on the spoke's real node; its status
// comes back to the hub as feedback, and the container's own output is there on the spoke.
func deliverJob(ctx context.Context, t *testing.T, c client.Client, edge *rest.Config, image string) {
	t.Helper()
	job := fmt.Sprintf(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"hello-real","namespace":"default"},
"spec":{"backoffLimit":0,"template":{"metadata":{"labels":{"app":"hello-real"}},"spec":{"restartPolicy":"Never",
"nodeSelector":{"kubernetes.io/hostname":"edge-node"},
"containers":[{"name":"hello","image":%q,"imagePullPolicy":"Never","args":["version"]}]}}}}`, image)
	w := apitest.MakeWork("edge", "hello-real").Manifest(job).Config("batch", "jobs", "default", "hello-real").Obj()
	w.Spec.ManifestConfigs[0].FeedbackRules = []workv1.FeedbackRule{{
		Type: workv1.JSONPathsType, JSONPaths: []workv1.JSONPath{{Name: "succeeded", Path: ".status.succeeded"}},
	}}
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	var got workv1.ManifestWork
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), &got); err == nil && succeeded(&got) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the Job's feedback never reported succeeded=1: %+v", got.Status)
		}
		time.Sleep(500 * time.Millisecond)
	}
	cs := kubernetes.NewForConfigOrDie(edge)
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=hello-real"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("the Job's pods on edge: %v, %v", pods, err)
	}
	p := pods.Items[0]
	if p.Spec.NodeName != "edge-node" || !strings.HasPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://") {
		t.Errorf("the Job's pod ran on %q as %q, want a containerd container on edge-node", p.Spec.NodeName, p.Status.ContainerStatuses[0].ContainerID)
	}
	out, err := cs.CoreV1().Pods("default").GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil || !strings.Contains(string(out), "flotilla") {
		t.Errorf("the Job's container output %q (%v): want flotilla's version line", out, err)
	}
}

func succeeded(w *workv1.ManifestWork) bool {
	for _, m := range w.Status.ResourceStatus.Manifests {
		for _, v := range m.StatusFeedbacks.Values {
			if v.Name == "succeeded" && v.Value.Integer != nil && *v.Value.Integer == 1 {
				return true
			}
		}
	}
	return false
}

func kubeconfigOf(t *testing.T, st *devfleet.State, cluster string) string {
	t.Helper()
	for _, c := range st.Clusters {
		if c.Name == cluster {
			return c.Kubeconfig
		}
	}
	t.Fatalf("the fleet has no cluster %s", cluster)
	return ""
}

// run runs the flotilla CLI as a user would and fails the test with its output when it fails.
func run(ctx context.Context, t *testing.T, flotilla string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, flotilla, args...)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("flotilla %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("flotilla %s:\n%s", args[0], out)
}
