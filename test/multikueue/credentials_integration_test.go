//go:build integration

package multikueue

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/kueueworker"
	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// runningClock is a fake clock that follows real time, so that the add-ons' waits pass, and that
// a test can also move forward at once.
func runningClock(t *testing.T) *testingclock.FakeClock {
	clk := testingclock.NewFakeClock(time.Now())
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				clk.Step(50 * time.Millisecond)
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return clk
}

// kubeconfigOf reads the kubeconfig the hub composed for cluster; it must be the hub's.
func (f *fleet) kubeconfigOf(ctx context.Context, cluster string) ([]byte, error) {
	s := &corev1.Secret{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: kueue.SecretName(cluster)}, s); err != nil {
		return nil, err
	}
	if s.Labels[kueue.ManagedLabel] != kueue.ManagedValue {
		return nil, fmt.Errorf("Secret %s is not the hub's: labels %v", s.Name, s.Labels)
	}
	return s.Data[kueuev1beta2.MultiKueueConfigSecretKey], nil
}

func tokenOf(t *testing.T, kubeconfig []byte) string {
	t.Helper()
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.AuthInfos {
		return a.Token
	}
	t.Fatal("the kubeconfig has no user")
	return ""
}

// canRunJobs proves the worker's token does what MultiKueue needs: make a Job, list and read
// Workloads, delete the Job.
func canRunJobs(t *testing.T, w kubernetes.Interface, namespace string) {
	t.Helper()
	ctx := context.Background()
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{GenerateName: "mk-", Namespace: namespace}, Spec: batchv1.JobSpec{
		Suspend: ptr.To(true),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	made, err := w.BatchV1().Jobs(namespace).Create(ctx, j, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the worker token may not create a Job: %v", err)
	}
	if _, err := w.BatchV1().Jobs(namespace).Get(ctx, made.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the worker token may not read its Job: %v", err)
	}
	if err := w.BatchV1().Jobs(namespace).Delete(ctx, made.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("the worker token may not delete its Job: %v", err)
	}
	if err := w.Discovery().RESTClient().Get().AbsPath("/apis/kueue.x-k8s.io/v1beta2/namespaces/" + namespace + "/workloads").Do(ctx).Error(); err != nil {
		t.Errorf("the worker token may not list Workloads: %v", err)
	}
}

// canDoNoMore proves the worker's token may do nothing beyond MultiKueue's rules: no Secrets, no
// Nodes, no ConfigMaps, no role for itself (sa is its ServiceAccount).
func canDoNoMore(t *testing.T, cluster string, w kubernetes.Interface, namespace string, sa rbacv1.Subject) {
	t.Helper()
	ctx := context.Background()
	forbidden := map[string]error{
		"delete a Secret": w.CoreV1().Secrets(namespace).Delete(ctx, "x", metav1.DeleteOptions{}),
		"list Secrets": func() error {
			_, err := w.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{})
			return err
		}(),
		"list Nodes": func() error { _, err := w.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); return err }(),
		"make a ConfigMap": func() error {
			_, err := w.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
			return err
		}(),
		"bind itself a role": func() error {
			_, err := w.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "mk-escalate"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects: []rbacv1.Subject{sa}}, metav1.CreateOptions{})
			return err
		}(),
	}
	for what, err := range forbidden {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: the worker token may %s: want Forbidden, got %v", cluster, what, err)
		}
	}
}

func testCredentials(t *testing.T, f *fleet, clk *testingclock.FakeClock) {
	one, two := f.bothWorkers(t, "mk-cred", "kubeconfigs composed")
	ctx := context.Background()

	t.Run("the composed token does what MultiKueue needs on its worker and nothing else", func(t *testing.T) {
		for _, j := range f.joined {
			data, err := f.kubeconfigOf(ctx, j.Name)
			if err != nil {
				t.Fatal(err)
			}
			w := workerClient(t, data)
			namespace := f.env.Namespace(t, j.Spoke)
			canRunJobs(t, w, namespace)
			canDoNoMore(t, j.Name, w, namespace, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: kueueworker.Namespace, Name: kueueworker.ServiceAccount})
		}
	})

	t.Run("an agent may write its own token Secret and nothing else", func(t *testing.T) {
		agent := f.joined[0].Agent.Hub().Current().Client
		own := &corev1.Secret{}
		if err := agent.Get(ctx, client.ObjectKey{Namespace: ns, Name: kueueworker.TokenSecret(one)}, own); err != nil {
			t.Fatalf("%s's agent may not read its token Secret: %v", one, err)
		}
		other := &corev1.Secret{}
		attempts := map[string]error{
			"read the other cluster's token Secret": agent.Get(ctx, client.ObjectKey{Namespace: ns, Name: kueueworker.TokenSecret(two)}, other),
			"overwrite the other cluster's token Secret": agent.Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns,
				Name: kueueworker.TokenSecret(two), ResourceVersion: own.ResourceVersion}, Data: own.Data}),
			"read its own kubeconfig": agent.Get(ctx, client.ObjectKey{Namespace: ns, Name: kueue.SecretName(one)}, other),
			// Issue 19: its token Secret was once named as the kubeconfig of a cluster token-<one>.
			"read the kubeconfig of a cluster named token-" + one: agent.Get(ctx, client.ObjectKey{Namespace: ns, Name: kueue.SecretName("token-" + one)}, other),
			"list Secrets in the Kueue namespace":                 agent.List(ctx, &corev1.SecretList{}, client.InNamespace(ns)),
			"make a Secret in the Kueue namespace":                agent.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mk-agent-made"}}),
			"make a Secret in its own namespace":                  agent.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: one, Name: "mk-agent-made"}}),
		}
		for what, err := range attempts {
			if !apierrors.IsForbidden(err) {
				t.Errorf("%s's agent may %s: want Forbidden, got %v", one, what, err)
			}
		}
	})

	t.Run("the token rotates before it expires", func(t *testing.T) {
		before, err := f.kubeconfigOf(ctx, one)
		if err != nil {
			t.Fatal(err)
		}
		clk.Step(time.Duration(float64(kueueworker.Lifetime) * kueueworker.RefreshFraction))
		var after []byte
		testenv.WaitFor(t, wait, one+"'s kubeconfig to carry a new token", func(ctx context.Context) (bool, string, error) {
			after, err = f.kubeconfigOf(ctx, one)
			return err == nil && tokenOf(t, after) != tokenOf(t, before), "", client.IgnoreNotFound(err)
		})
		canRunJobs(t, workerClient(t, after), f.env.Namespace(t, f.joined[0].Spoke))
	})

	t.Run("a cluster that leaves the placement loses its credentials", func(t *testing.T) {
		data, err := f.kubeconfigOf(ctx, two)
		if err != nil {
			t.Fatal(err)
		}
		old := workerClient(t, data)
		f.label(t, two, map[string]string{"mk-cred": ""})
		f.waitActive(t, "mk-cred", metav1.ConditionTrue, one)
		gone := []client.Object{
			&kueuev1beta2.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: two}},
			&workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: two, Name: kueueworker.WorkName}},
			&addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: two, Name: kueueworker.AddOnName}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: kueue.SecretName(two)}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: kueueworker.TokenSecret(two)}},
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: kueueworker.TokenRole(two)}},
		}
		f.waitGone(t, gone...)
		testenv.WaitFor(t, wait, "the old token of "+two+" to stop working", func(ctx context.Context) (bool, string, error) {
			_, err := old.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
			return apierrors.IsUnauthorized(err), fmt.Sprint(err), nil
		})
	})

	t.Run("a kubeconfig Secret the user wrote is used as it is, with none of the hub's credentials", func(t *testing.T) {
		mine := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: kueue.SecretName(two)},
			Data: map[string][]byte{kueuev1beta2.MultiKueueConfigSecretKey: []byte("the user's own kubeconfig")}}
		testenv.Create(t, f.c, mine)
		f.label(t, two, map[string]string{"mk-cred": "worker"})
		f.waitActive(t, "mk-cred", metav1.ConditionTrue, one, two)
		time.Sleep(3 * time.Second) // time enough for the hub to have delivered credentials, were it to
		got := &corev1.Secret{}
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(mine), got); err != nil {
			t.Fatal(err)
		}
		if string(got.Data[kueuev1beta2.MultiKueueConfigSecretKey]) != "the user's own kubeconfig" || got.Labels[kueue.ManagedLabel] != "" {
			t.Errorf("the user's Secret was changed: labels %v, data %q", got.Labels, got.Data)
		}
		err := f.c.Get(ctx, client.ObjectKey{Namespace: two, Name: kueueworker.WorkName}, &workv1.ManifestWork{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("the hub delivered a ServiceAccount to %s although the user gave its kubeconfig: %v", two, err)
		}
	})
}
