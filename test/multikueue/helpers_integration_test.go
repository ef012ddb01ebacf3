//go:build integration

package multikueue

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// label sets labels on cluster; an empty value removes the label.
func (f *fleet) label(t *testing.T, cluster string, labels map[string]string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := f.c.Get(context.Background(), client.ObjectKey{Name: cluster}, mc); err != nil {
			return err
		}
		if mc.Labels == nil {
			mc.Labels = map[string]string{}
		}
		for k, v := range labels {
			if v == "" {
				delete(mc.Labels, k)
			} else {
				mc.Labels[k] = v
			}
		}
		return f.c.Update(context.Background(), mc)
	})
	if err != nil {
		t.Fatalf("labeling ManagedCluster %s: %v", cluster, err)
	}
}

// placement makes a Placement in the Kueue namespace choosing the clusters labeled match, and
// an AdmissionCheck of OCM's placement controller naming it.
func (f *fleet) placement(t *testing.T, name string, match map[string]string) {
	t.Helper()
	testenv.Create(t, f.c, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: clusterv1beta1.PlacementSpec{
		Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: match}}}},
	}})
	testenv.Create(t, f.c, &kueuev1beta2.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueuev1beta2.AdmissionCheckSpec{ControllerName: kueue.ControllerName, Parameters: &kueuev1beta2.AdmissionCheckParametersReference{
			APIGroup: clusterv1beta1.GroupVersion.Group, Kind: "Placement", Name: name}}})
}

// waitActive waits for the AdmissionCheck's Active condition to have status and the
// MultiKueueConfig of the same name to list clusters (when status is True).
func (f *fleet) waitActive(t *testing.T, name string, status metav1.ConditionStatus, clusters ...string) {
	t.Helper()
	testenv.WaitFor(t, wait, fmt.Sprintf("AdmissionCheck %s Active=%s with clusters %v", name, status, clusters), func(ctx context.Context) (bool, string, error) {
		ac := &kueuev1beta2.AdmissionCheck{}
		if err := f.c.Get(ctx, client.ObjectKey{Name: name}, ac); err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(ac.Status.Conditions, kueuev1beta2.AdmissionCheckActive)
		if c == nil || c.Status != status {
			return false, fmt.Sprintf("%+v", c), nil
		}
		if status != metav1.ConditionTrue {
			return true, "", nil
		}
		cfg := &kueuev1beta2.MultiKueueConfig{}
		if err := f.c.Get(ctx, client.ObjectKey{Name: name}, cfg); err != nil {
			return false, err.Error(), nil
		}
		return fmt.Sprint(cfg.Spec.Clusters) == fmt.Sprint(clusters), fmt.Sprintf("config lists %v", cfg.Spec.Clusters), nil
	})
}

// workerClient is a client of the worker built from the kubeconfig in data.
func workerClient(t *testing.T, data []byte) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatalf("the composed kubeconfig: %v", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// leaseSeconds sets the cluster's lease period and waits until its agent renews at it (the agent
// reads the new period at its next look at the cluster, up to one old period later).
func (f *fleet) leaseSeconds(t *testing.T, cluster string, seconds int32) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := f.c.Get(context.Background(), client.ObjectKey{Name: cluster}, mc); err != nil {
			return err
		}
		mc.Spec.LeaseDurationSeconds = seconds
		return f.c.Update(context.Background(), mc)
	})
	if err != nil {
		t.Fatalf("setting the lease period of %s: %v", cluster, err)
	}
	start := time.Now()
	testenv.WaitFor(t, 2*time.Minute, cluster+"'s agent to renew its lease every "+fmt.Sprint(seconds)+"s", func(ctx context.Context) (bool, string, error) {
		l := &coordinationv1.Lease{}
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.ManagedClusterLeaseName}, l); err != nil {
			return false, "", err
		}
		return ptr.Deref(l.Spec.LeaseDurationSeconds, 0) == seconds, fmt.Sprintf("renews every %ds", ptr.Deref(l.Spec.LeaseDurationSeconds, 0)), nil
	})
	t.Logf("%s's agent renews every %ds, %s after the change", cluster, seconds, time.Since(start).Round(time.Millisecond))
}

// bothWorkers binds both joined clusters, labeled name=worker, into a set of that name, makes
// the Placement and AdmissionCheck name, waits until the check is Active with both, logs how long
// that took (for what) and returns the two clusters' names.
func (f *fleet) bothWorkers(t *testing.T, name, what string) (one, two string) {
	t.Helper()
	one, two = f.joined[0].Name, f.joined[1].Name
	f.bindSet(t, name, map[string]map[string]string{one: {name: "worker"}, two: {name: "worker"}})
	f.placement(t, name, map[string]string{name: "worker"})
	start := time.Now()
	f.waitActive(t, name, metav1.ConditionTrue, one, two)
	t.Logf("both workers' %s %s after the AdmissionCheck was made", what, time.Since(start).Round(time.Millisecond))
	return one, two
}

// waitGone waits until each of objs is gone from the hub.
func (f *fleet) waitGone(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		testenv.WaitFor(t, wait, fmt.Sprintf("%T %s to go", o, client.ObjectKeyFromObject(o)), func(ctx context.Context) (bool, string, error) {
			err := f.c.Get(ctx, client.ObjectKeyFromObject(o), o)
			return apierrors.IsNotFound(err), "", client.IgnoreNotFound(err)
		})
	}
}

// waitWorkersActive waits until Kueue on the hub finds each named worker's MultiKueueCluster
// Active: connected, so MultiKueue can copy workloads there.
func (f *fleet) waitWorkersActive(t *testing.T, timeout time.Duration, names ...string) {
	t.Helper()
	testenv.WaitFor(t, timeout, fmt.Sprintf("Kueue on the hub to find workers %v active", names), func(ctx context.Context) (bool, string, error) {
		for _, name := range names {
			mkc := &kueuev1beta2.MultiKueueCluster{}
			if err := f.c.Get(ctx, client.ObjectKey{Name: name}, mkc); err != nil {
				return false, "", client.IgnoreNotFound(err)
			}
			if c := findCondition(mkc.Status.Conditions, kueuev1beta2.MultiKueueClusterActive); c == nil || c.Status != metav1.ConditionTrue {
				return false, fmt.Sprintf("%s: %+v", name, c), nil
			}
		}
		return true, "", nil
	})
}
