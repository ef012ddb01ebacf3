//go:build integration

package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/core/queuesim"
	"github.com/flotilla/flotilla/internal/hub/fleetqueue"
	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/local/devfleet"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// phase is one configuration of the hub the trace is replayed on.
type phase struct {
	name string
	// prefix starts its jobs' names, so that the phases' objects never mix.
	prefix string
	// dispatcher runs `flotilla hub` with --kueue-dispatcher.
	dispatcher bool
	mk         localk8s.MultiKueueOptions
}

var (
	phaseDefaults = phase{name: "MultiKueue defaults", prefix: "mk", mk: localk8s.MultiKueueOptions{
		WorkerLostTimeout: devfleet.HubWorkerLostTimeout, RemoteQPS: devfleet.HubRemoteQPS}}
	phaseFlotilla = phase{name: "Flotilla", prefix: "fl", dispatcher: true, mk: localk8s.MultiKueueOptions{
		DispatcherName: kueue.DispatcherName, WorkerLostTimeout: devfleet.HubWorkerLostTimeout, RemoteQPS: devfleet.HubRemoteQPS, FairSharing: true}}
)

// qFleetQueue is phase (b)'s FleetQueue.
const qFleetQueue = "ml"

// configure restarts the hub's Kueue and `flotilla hub` as the phase has them and writes its
// queues on the hub.
func (f *qFleet) configure(b *testing.B, pr progress, ph phase) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	began := time.Now()
	// `flotilla hub` stops first: its binary is also the credentials plugin of Kueue's.
	var args []string
	var binary string
	if f.hubProc != nil {
		binary, args = f.hubProc.Binary(), f.hubArgs
		f.hubProc.Stop(5 * time.Second)
	} else {
		binary, args = stopRecorded(b, f.st, localk8s.HubName, devfleet.HubComponent)
	}
	// Kueue on the hub, reaching the workers through their ClusterProfiles as the hub has them.
	if f.hubKueue != nil {
		f.hubKueue.Stop()
	} else {
		stopRecorded(b, f.st, localk8s.HubName, localk8s.KueueBin)
	}
	mk := ph.mk
	mk.CredentialsPlugin = localk8s.HubPlugin(binary, f.hubCluster)
	k, err := localk8s.StartKueue(ctx, localk8s.KueueOptions{Cluster: f.hubCluster, Binaries: f.kbins, MultiKueue: &mk})
	if err != nil {
		b.Fatal(err)
	}
	f.hubKueue = k
	// `flotilla hub` again, with or without the dispatcher.
	args = slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--kueue-dispatcher" })
	if ph.dispatcher {
		args = append(args, "--kueue-dispatcher")
	}
	f.hubArgs = args
	f.hubProc = restartHub(ctx, b, binary, args, f.hubCluster.Dir)

	// The phase's queues.
	var objs []client.Object
	var queues []string
	if ph.dispatcher {
		fq := &queuev1alpha1.FleetQueue{ObjectMeta: metav1.ObjectMeta{Name: qFleetQueue},
			Spec: queuev1alpha1.FleetQueueSpec{AdmissionCheck: qCheck, Reclaim: os.Getenv(queueReclaimEnv)}}
		for _, tm := range queuesim.DefaultTrace(1, 0).Teams {
			fq.Spec.Teams = append(fq.Spec.Teams, queuev1alpha1.Team{Name: tm.Name, Namespace: qTeam(tm.Name),
				Weight: *resource.NewQuantity(int64(tm.Weight), resource.DecimalSI)})
			queues = append(queues, qFleetQueue+"-"+tm.Name)
		}
		objs = append(objs, fq)
	} else {
		objs = staticQueues()
		queues = []string{qStaticCQ}
	}
	for _, o := range objs {
		if err := f.hub.Create(ctx, o); err != nil {
			b.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	var last string
	err = poll(ctx, 3*time.Minute, func() (bool, error) {
		if ph.dispatcher {
			fq := &queuev1alpha1.FleetQueue{}
			if err := f.hub.Get(ctx, client.ObjectKey{Name: qFleetQueue}, fq); err != nil {
				return false, err
			}
			if !meta.IsStatusConditionTrue(fq.Status.Conditions, queuev1alpha1.ConditionReady) || int(fq.Status.Workers) != len(qWorkers) || len(fq.Status.Models) != len(qWorkers) {
				last = fmt.Sprintf("FleetQueue %s: workers %d, models %+v, conditions %+v", qFleetQueue, fq.Status.Workers, fq.Status.Models, fq.Status.Conditions)
				return false, nil
			}
		}
		for _, q := range queues {
			cq := &kueuev1beta2.ClusterQueue{}
			if err := f.hub.Get(ctx, client.ObjectKey{Name: q}, cq); err != nil {
				last = err.Error()
				return false, client.IgnoreNotFound(err)
			}
			if !meta.IsStatusConditionTrue(cq.Status.Conditions, kueuev1beta2.ClusterQueueActive) {
				last = fmt.Sprintf("ClusterQueue %s not active: %+v", q, cq.Status.Conditions)
				return false, nil
			}
		}
		l := &kueuev1beta2.MultiKueueClusterList{}
		if err := f.hub.List(ctx, l); err != nil {
			return false, err
		}
		active := 0
		for _, c := range l.Items {
			if meta.IsStatusConditionTrue(c.Status.Conditions, kueuev1beta2.MultiKueueClusterActive) {
				active++
			}
		}
		last = fmt.Sprintf("%d of %d MultiKueueClusters active", active, len(qWorkers))
		return active >= len(qWorkers), nil
	})
	if err != nil {
		b.Fatalf("phase %s: the hub's queues did not become active: %v (%s; fleet logs in %s)", ph.name, err, last, f.dir)
	}
	pr.printf("phase %s: hub Kueue (dispatcher %q, fair sharing %t) and flotilla hub (dispatcher %t) restarted, queues %v active, in %s",
		ph.name, ph.mk.DispatcherName, ph.mk.FairSharing, ph.dispatcher, queues, time.Since(began).Round(100*time.Millisecond))
}

// staticQueues are phase (a)'s hub queues, as a MultiKueue user writes them: a flavor per GPU
// model (labeled as the workers' nodes), one ClusterQueue whose quota per flavor is the fleet's
// GPUs of the model, and each team's LocalQueue pointing at it.
func staticQueues() []client.Object {
	var objs []client.Object
	cq := &kueuev1beta2.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: qStaticCQ}, Spec: kueuev1beta2.ClusterQueueSpec{
		NamespaceSelector:       &metav1.LabelSelector{},
		AdmissionChecksStrategy: &kueuev1beta2.AdmissionChecksStrategy{AdmissionChecks: []kueuev1beta2.AdmissionCheckStrategyRule{{Name: kueuev1beta2.AdmissionCheckReference(qCheck)}}},
	}}
	rg := kueuev1beta2.ResourceGroup{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, localk8s.GPUResource}}
	for _, m := range qWorkers.Models() {
		name := "static-" + strings.ToLower(m.Name)
		objs = append(objs, &kueuev1beta2.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: kueuev1beta2.ResourceFlavorSpec{NodeLabels: map[string]string{"nvidia.com/gpu.product": m.Name}}})
		rg.Flavors = append(rg.Flavors, kueuev1beta2.FlavorQuotas{Name: kueuev1beta2.ResourceFlavorReference(name), Resources: []kueuev1beta2.ResourceQuota{
			{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("10000")},
			{Name: corev1.ResourceMemory, NominalQuota: resource.MustParse("100Ti")},
			{Name: localk8s.GPUResource, NominalQuota: *resource.NewQuantity(int64(qWorkers.GPUsOf(m.Name)), resource.DecimalSI)},
		}})
	}
	cq.Spec.ResourceGroups = []kueuev1beta2.ResourceGroup{rg}
	objs = append(objs, cq)
	for _, tm := range queuesim.DefaultTrace(1, 0).Teams {
		objs = append(objs, &kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: qTeam(tm.Name), Name: fleetqueue.DefaultLocalQueue},
			Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: qStaticCQ}})
	}
	return objs
}

// restartHub starts `flotilla hub` (binary with args, as devfleet ran it) as the hub cluster's in hubDir and waits until
// its readiness probe (--health-probe-bind-address) answers.
func restartHub(ctx context.Context, b *testing.B, binary string, args []string, hubDir string) *localk8s.Process {
	b.Helper()
	p, err := localk8s.StartProcess("hub/"+devfleet.HubComponent, binary, args, filepath.Join(hubDir, "logs", devfleet.HubComponent+".log"), false)
	if err != nil {
		b.Fatal(err)
	}
	health := ""
	for i, a := range args {
		if a == "--health-probe-bind-address" && i+1 < len(args) {
			health = args[i+1]
		}
	}
	if err := poll(ctx, time.Minute, func() (bool, error) {
		resp, err := http.Get("http://" + health + "/readyz")
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	}); err != nil {
		b.Fatalf("flotilla hub not ready after its restart: %v", err)
	}
	return p
}

// stopRecorded stops a process devfleet started (found in its state by cluster and component)
// and returns its command line.
func stopRecorded(b *testing.B, st *devfleet.State, cluster, component string) (binary string, args []string) {
	for _, p := range st.Processes {
		if p.Cluster != cluster || p.Component != component {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID))
		if err != nil {
			b.Fatalf("%s/%s (pid %d): %v", cluster, component, p.PID, err)
		}
		parts := strings.Split(string(bytes.TrimRight(cmdline, "\x00")), "\x00")
		// The process leads its session (devfleet starts it detached): signal its group.
		_ = syscall.Kill(-p.PID, syscall.SIGTERM)
		deadline := time.Now().Add(15 * time.Second)
		for localk8s.Running(p.PID, p.Binary) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(-p.PID, syscall.SIGKILL)
			}
			time.Sleep(100 * time.Millisecond)
		}
		return p.Binary, parts[1:]
	}
	b.Fatalf("no %s of %s in the fleet's state", component, cluster)
	return "", nil
}

// qJobSpec is the trace's job j as a Job for its team's LocalQueue: j.Pods pods of j.PerPod GPUs
// of j.Model (any model when empty), each of which kwok completes after j.Duration/compress.
func qJobSpec(prefix string, j queuesim.Job, compress float64) *batchv1.Job {
	run := time.Duration(j.Duration / compress * float64(time.Second)).Round(100 * time.Millisecond)
	w := apitest.MakeJob(qTeam(j.Team), fmt.Sprintf("%s-%03d", prefix, j.ID)).Queue(fleetqueue.DefaultLocalQueue).
		Pods(int32(j.Pods)).GPUs(int64(j.PerPod)).CPU("100m").RunFor(run)
	if j.Model != "" {
		w.Model(j.Model)
	}
	return w.Obj()
}

// clear deletes the phase's jobs, workloads and queues on the hub and the jobs' copies on the
// workers, and waits until no pod of theirs is left.
func (f *qFleet) clear(b *testing.B, pr progress, ph phase) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	began := time.Now()
	background := client.PropagationPolicy(metav1.DeletePropagationBackground)
	var nss []string
	for _, tm := range queuesim.DefaultTrace(1, 0).Teams {
		nss = append(nss, qTeam(tm.Name))
	}
	for _, name := range f.names {
		c := f.ctrl[name]
		for _, ns := range nss {
			if err := c.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(ns), background); err != nil {
				b.Fatal(err)
			}
			if err := c.DeleteAllOf(ctx, &kueuev1beta2.Workload{}, client.InNamespace(ns)); err != nil {
				b.Fatal(err)
			}
		}
	}
	var queues []client.Object
	if ph.dispatcher {
		queues = []client.Object{&queuev1alpha1.FleetQueue{ObjectMeta: metav1.ObjectMeta{Name: qFleetQueue}}}
	} else {
		queues = staticQueues()
	}
	for _, o := range queues {
		if err := f.hub.Delete(ctx, o, background); client.IgnoreNotFound(err) != nil {
			b.Fatal(err)
		}
	}
	var last string
	err := poll(ctx, 3*time.Minute, func() (bool, error) {
		for _, name := range f.names {
			for _, ns := range nss {
				pods, err := f.cs[name].CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					return false, err
				}
				wls := &kueuev1beta2.WorkloadList{}
				if err := f.ctrl[name].List(ctx, wls, client.InNamespace(ns)); err != nil {
					return false, err
				}
				if len(pods.Items)+len(wls.Items) > 0 {
					last = fmt.Sprintf("%s/%s: %d pods, %d workloads left", name, ns, len(pods.Items), len(wls.Items))
					return false, nil
				}
			}
		}
		// The hub's queues gone (Kueue removes its finalizers once nothing uses them), so that
		// the next phase's of the same names are its own.
		lqs := &kueuev1beta2.LocalQueueList{}
		if err := f.hub.List(ctx, lqs); err != nil {
			return false, err
		}
		for _, lq := range lqs.Items {
			if slices.Contains(nss, lq.Namespace) {
				last = fmt.Sprintf("LocalQueue %s/%s left on the hub", lq.Namespace, lq.Name)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		b.Fatalf("clearing phase %s: %v (%s)", ph.name, err, last)
	}
	pr.printf("phase %s cleared: jobs, workloads, pods and hub queues gone in %s", ph.name, time.Since(began).Round(100*time.Millisecond))
}
