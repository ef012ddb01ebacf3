package addon

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

// woken says whether ch has closed.
func woken(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestSpokeNamespacesWake(t *testing.T) {
	type event struct {
		ns      string
		present bool
	}
	cases := map[string]struct {
		known   []string
		waiting []string
		event   event
		want    bool
	}{
		"a namespace credentials wait for is created": {waiting: []string{"scorer"}, event: event{"scorer", true}, want: true},
		"another namespace is created":                {waiting: []string{"scorer"}, event: event{"other", true}},
		"an update of a namespace that exists":        {known: []string{"scorer"}, waiting: []string{"scorer"}, event: event{"scorer", true}},
		"the default add-on namespace goes":           {known: []string{DefaultInstallNamespace}, event: event{DefaultInstallNamespace, false}, want: true},
		"another namespace goes":                      {known: []string{"other"}, event: event{"other", false}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := &spokeNamespaces{}
			for _, k := range tc.known {
				n.event(k, true)
			}
			for _, w := range tc.waiting {
				n.wait(w)
			}
			ch := n.ready.Changed()
			n.event(tc.event.ns, tc.event.present)
			if got := woken(ch); got != tc.want {
				t.Errorf("woken = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestDefaultNamespaceStep(t *testing.T) {
	theirs := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DefaultInstallNamespace, Labels: map[string]string{"owner": "admin"}}}
	cases := map[string]struct {
		existing   []runtime.Object
		disabled   bool
		wantLabels map[string]string
		wantNone   bool
	}{
		"none: created, labeled as the agent's": {wantLabels: map[string]string{CreatedByLabel: CreatedByAgent}},
		"someone's: left as it is":              {existing: []runtime.Object{theirs}, wantLabels: map[string]string{"owner": "admin"}},
		"disabled: not created":                 {disabled: true, wantNone: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spoke := fake.NewClientset(tc.existing...)
			a := &Agent{opts: Options{DisableDefaultAddOnNamespace: tc.disabled, Log: logr.Discard()}, spoke: spoke}
			if _, err := a.defaultNamespaceStep(context.Background()); err != nil {
				t.Fatal(err)
			}
			ns, err := spoke.CoreV1().Namespaces().Get(context.Background(), DefaultInstallNamespace, metav1.GetOptions{})
			if tc.wantNone {
				if !apierrors.IsNotFound(err) {
					t.Errorf("namespace %s: err = %v, want NotFound", DefaultInstallNamespace, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantLabels, ns.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCredentialsWaitForNamespace: a certificate issued before its install namespace exists is
// stored at the first round after the namespace appears, without a backoff in between (the
// namespace watch wakes the loop; no clock moves here).
func TestCredentialsWaitForNamespace(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(epoch)
	hub := newFakeHub(t)
	mca := &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: "gpu-east", Name: "scorer", Generation: 1},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{Registrations: []addonv1alpha1.RegistrationConfig{
			{SignerName: addonv1alpha1.KubeAPIServerClientSignerName},
		}},
	}
	spoke := fake.NewClientset()
	// As an API server does: no object in a namespace that does not exist.
	spoke.PrependReactor("create", "secrets", func(act clienttesting.Action) (bool, runtime.Object, error) {
		if _, err := spoke.Tracker().Get(corev1.SchemeGroupVersion.WithResource("namespaces"), "", act.GetNamespace()); err != nil {
			return true, nil, apierrors.NewNotFound(corev1.Resource("namespaces"), act.GetNamespace())
		}
		return false, nil, nil
	})
	a, _, step := credentialsLoopFor(t, clk, hub, spoke, mca)
	a.namespaces.setSynced()

	step()
	hub.sign(t, hub.requests(t)[0].Name, epoch, time.Hour)
	if next := step(); next != 2*time.Hour {
		t.Errorf("next round %s while the namespace does not exist, want the resync (2h): the namespace watch wakes the loop", next)
	}
	ready := a.namespaces.ready.Changed()
	if _, err := spoke.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DefaultInstallNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a.namespaces.event(DefaultInstallNamespace, true)
	if !woken(ready) {
		t.Error("the namespace's creation did not wake the credentials loop")
	}
	step()
	if _, err := spoke.CoreV1().Secrets(DefaultInstallNamespace).Get(ctx, "scorer-hub-kubeconfig", metav1.GetOptions{}); err != nil {
		t.Errorf("the Secret is not stored at the first round after its namespace appeared: %v", err)
	}
	if n := len(hub.requests(t)); n != 1 {
		t.Errorf("%d certificate requests, want 1: the certificate issued before the namespace existed is the one stored", n)
	}
}
