//go:build integration

package federatedlearning

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/agent/work"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestOpenFLLeavesSpokeNamespace: an OpenFL client goes to a spoke in a namespace named after
// the FederatedLearning's; a spoke that already has that namespace, holding a ConfigMap of its
// own, keeps both when the federation goes. A real work agent applies and removes the client's
// ManifestWork: the namespace is created only when missing (CreateOnly) and orphaned when the
// work goes, so the client Job goes and nothing the spoke had before it.
func TestOpenFLLeavesSpokeNamespace(t *testing.T) {
	f := start(t, "fl-spoke-ns")
	ctx := context.Background()
	j := f.env.JoinSpokes(t)[0]
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: j.Name}}
	testenv.Update(t, f.c, mc, func() {
		if mc.Labels == nil {
			mc.Labels = map[string]string{}
		}
		mc.Labels[clusterv1beta2.ClusterSetLabel] = f.set.Set
	})
	w, err := work.New(work.Options{ClusterName: j.Name, AgentID: "agent-" + j.Name, Hub: j.Agent.Hub(), Spoke: j.Spoke.RESTConfig(),
		Resync: 2 * time.Second, Log: testr.New(t).WithName(j.Name + "-work")})
	if err != nil {
		t.Fatal(err)
	}
	testenv.RunUntilCleanup(t, w.Run)

	// The spoke's own namespace of the FederatedLearning's namespace's name, with its own data.
	spoke := j.Spoke.Client
	ns := f.set.Namespace
	if _, err := spoke.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = spoke.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "site-records"}, Data: map[string]string{"owner": "the spoke"}}
	if _, err := spoke.CoreV1().ConfigMaps(ns).Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	fl := f.openFL("keeps-ns", 1, 30093)
	fl.Spec.Client.Placement.Predicates = nil // no data claim: the joined spoke reports none
	testenv.Create(t, f.c, fl)
	testenv.WaitFor(t, wait, "the client's ManifestWork applied on "+j.Name, func(ctx context.Context) (bool, string, error) {
		w := &workv1.ManifestWork{}
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: j.Name, Name: fl.Namespace + "." + fl.Name + "-client"}, w); err != nil {
			return false, f.state(ctx), client.IgnoreNotFound(err)
		}
		return meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied), fmt.Sprintf("conditions %+v", w.Status.Conditions), nil
	})
	if _, err := spoke.BatchV1().Jobs(ns).Get(ctx, fl.Name+"-client", metav1.GetOptions{}); err != nil {
		t.Fatalf("the client Job on the spoke: %v", err)
	}

	if err := f.c.Delete(ctx, fl); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "the client Job removed from the spoke", func(ctx context.Context) (bool, string, error) {
		j, err := spoke.BatchV1().Jobs(ns).Get(ctx, fl.Name+"-client", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, "", err
		}
		return !j.DeletionTimestamp.IsZero(), "the Job is still there", nil
	})
	// The agent removes its finalizer once it has deleted what the work's deletion deletes.
	testenv.WaitFor(t, wait, "the client's ManifestWork gone", func(ctx context.Context) (bool, string, error) {
		err := f.c.Get(ctx, client.ObjectKey{Namespace: j.Name, Name: fl.Namespace + "." + fl.Name + "-client"}, &workv1.ManifestWork{})
		return apierrors.IsNotFound(err), "", client.IgnoreNotFound(err)
	})
	got, err := spoke.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the spoke's namespace %s after the federation went: %v", ns, err)
	}
	if !got.DeletionTimestamp.IsZero() {
		t.Fatalf("the spoke's namespace %s, which existed before the federation, is being deleted (owners %+v)", ns, got.OwnerReferences)
	}
	if len(got.OwnerReferences) != 0 {
		t.Errorf("the spoke's namespace %s has owner references %+v, want none: it was never the work's", ns, got.OwnerReferences)
	}
	cm, err := spoke.CoreV1().ConfigMaps(ns).Get(ctx, theirs.Name, metav1.GetOptions{})
	if err != nil || cm.Data["owner"] != "the spoke" {
		t.Errorf("the spoke's ConfigMap %s/%s after the federation went: %v %+v", ns, theirs.Name, err, cm)
	}
}
