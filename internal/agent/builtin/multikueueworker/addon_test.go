package multikueueworker

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/contract/kueueworker"
)

// spoke is a fake worker whose API server grants tokens of the given lifetime, numbered.
type spoke struct {
	*fake.Clientset
	issued int
}

func newSpoke(clk *testingclock.FakeClock, lifetime time.Duration) *spoke {
	s := &spoke{Clientset: fake.NewClientset()}
	s.PrependReactor("create", "serviceaccounts", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		s.issued++
		return true, &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{
			Token: fmt.Sprintf("tok-%d", s.issued), ExpirationTimestamp: metav1.NewTime(clk.Now().Add(lifetime))}}, nil
	})
	return s
}

func (s *spoke) serviceAccount(t *testing.T, uid types.UID) {
	t.Helper()
	sas := s.CoreV1().ServiceAccounts(kueueworker.Namespace)
	_ = sas.Delete(context.Background(), kueueworker.ServiceAccount, metav1.DeleteOptions{})
	if _, err := sas.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Namespace: kueueworker.Namespace, Name: kueueworker.ServiceAccount, UID: uid}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

const where = "kueue-system/multikueue-token-gpu-east"

func hubToken(t *testing.T, hub client.Client) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := hub.Get(context.Background(), client.ObjectKey{Namespace: "kueue-system", Name: "multikueue-token-gpu-east"}, s); err != nil {
		t.Fatal(err)
	}
	return string(s.Data[kueueworker.TokenKey])
}

// TestStep walks the add-on through a token's life: waiting for the ServiceAccount, the first
// token, no new token before 80% of its lifetime, the next one after, a new one at once when the
// ServiceAccount is made again, and waiting while the hub's Secret is missing.
func TestStep(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
	sp := newSpoke(clk, time.Hour)
	hub := crfake.NewClientBuilder().WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Namespace: "kueue-system", Name: "multikueue-token-gpu-east"}}).Build()
	env := builtin.Env{ClusterName: "gpu-east", Hub: hub, Spoke: &rest.Config{Host: "https://127.0.0.1:6443"}, Clock: clk, Log: logr.Discard(),
		Annotations: map[string]string{kueueworker.TokenSecretAnnotation: where}}
	a := AddOn{}
	var cur issued
	waiting := false
	step := func(want time.Duration) {
		t.Helper()
		next, err := a.step(context.Background(), env, sp, []byte("ca"), &cur, &waiting)
		if err != nil {
			t.Fatal(err)
		}
		if next != want {
			t.Errorf("next look after %s, want %s", next, want)
		}
	}

	step(waitPoll) // no ServiceAccount yet
	if sp.issued != 0 {
		t.Fatalf("%d tokens requested before the ServiceAccount exists", sp.issued)
	}
	sp.serviceAccount(t, "uid-1")
	step(DefaultCheck)
	clk.Step(47*time.Minute + 45*time.Second)
	step(15 * time.Second) // the refresh is due at 48 minutes, sooner than the next check
	if sp.issued != 1 {
		t.Errorf("%d tokens before 80%% of the first one's lifetime, want 1", sp.issued)
	}
	clk.Step(15 * time.Second)
	step(DefaultCheck)
	sp.serviceAccount(t, "uid-2")
	step(DefaultCheck)
	if diff := cmp.Diff("tok-3", hubToken(t, hub)); diff != "" || sp.issued != 3 {
		t.Errorf("after a refresh and a new ServiceAccount: %d tokens, hub has (-want +got):\n%s", sp.issued, diff)
	}

	// The Secret gone (the hub makes it again): the add-on waits, and writes once it is back.
	if err := hub.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: "multikueue-token-gpu-east"}}); err != nil {
		t.Fatal(err)
	}
	clk.Step(DefaultVerify)
	step(waitPoll)
	if err := hub.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: "multikueue-token-gpu-east"}}); err != nil {
		t.Fatal(err)
	}
	step(DefaultCheck)
	if got := hubToken(t, hub); got != "tok-3" {
		t.Errorf("the Secret made again holds %q, want tok-3", got)
	}
}

func TestBadAnnotation(t *testing.T) {
	for name, v := range map[string]string{"missing": "", "no namespace": "multikueue-token-gpu-east", "empty name": "kueue-system/"} {
		t.Run(name, func(t *testing.T) {
			env := builtin.Env{ClusterName: "gpu-east", Annotations: map[string]string{kueueworker.TokenSecretAnnotation: v}}
			_, err := tokenSecret(env)
			if err == nil || !strings.Contains(err.Error(), "ManagedClusterAddOn gpu-east/multikueue-worker has annotation "+kueueworker.TokenSecretAnnotation) {
				t.Errorf("error %v, want one naming the ManagedClusterAddOn and the annotation", err)
			}
		})
	}
}
