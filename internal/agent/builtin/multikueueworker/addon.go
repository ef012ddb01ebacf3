package multikueueworker

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
	"github.com/flotilla/flotilla/internal/contract/kueueworker"
	"github.com/flotilla/flotilla/internal/kubeconfig"
)

// Name is the add-on's name.
var Name = builtinaddon.MultiKueueWorker.Name

// Defaults of AddOn's timings.
const (
	DefaultCheck  = 30 * time.Second
	DefaultVerify = 5 * time.Minute
	// waitPoll is how often the add-on looks for a ServiceAccount that is not there yet.
	waitPoll = time.Second
)

// AddOn is the multikueue-worker built-in add-on.
type AddOn struct {
	// Lifetime is asked of the worker's API server; kueueworker.Lifetime when zero.
	Lifetime time.Duration
	// Check is how often the ServiceAccount is looked at (DefaultCheck when zero); Verify how
	// often the Secret on the hub is (DefaultVerify when zero).
	Check, Verify time.Duration
}

var _ builtin.AddOn = AddOn{}

// Name implements builtin.AddOn.
func (AddOn) Name() string { return Name }

// issued is the token the add-on holds.
type issued struct {
	token     string
	saUID     types.UID
	expires   time.Time
	refreshAt time.Time
	// verified is when the hub's Secret was last seen to hold the token.
	verified time.Time
}

// Run implements builtin.AddOn.
func (a AddOn) Run(ctx context.Context, env builtin.Env) error {
	kube, err := kubernetes.NewForConfig(env.Spoke)
	if err != nil {
		return err
	}
	ca, err := kubeconfig.CA(env.Spoke)
	if err != nil {
		return err
	}
	var cur issued
	waiting := false
	for {
		next, err := a.step(ctx, env, kube, ca, &cur, &waiting)
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-env.Clock.After(next):
		}
	}
}

// step brings the token and its Secret up to date and says when to look again.
func (a AddOn) step(ctx context.Context, env builtin.Env, kube kubernetes.Interface, ca []byte, cur *issued, waiting *bool) (time.Duration, error) {
	sas := kube.CoreV1().ServiceAccounts(kueueworker.Namespace)
	sa, err := sas.Get(ctx, kueueworker.ServiceAccount, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if !*waiting {
			env.Log.Info("waiting for the ServiceAccount the hub delivers in ManifestWork "+kueueworker.WorkName,
				"serviceAccount", kueueworker.Namespace+"/"+kueueworker.ServiceAccount)
		}
		*waiting, *cur = true, issued{}
		return waitPoll, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading ServiceAccount %s/%s on cluster %s: %w", kueueworker.Namespace, kueueworker.ServiceAccount, env.ClusterName, err)
	}
	*waiting = false
	now := env.Clock.Now()
	if cur.token == "" || cur.saUID != sa.UID || !now.Before(cur.refreshAt) {
		life := int64(builtin.OrDefault(a.Lifetime, kueueworker.Lifetime).Seconds())
		tr, err := sas.CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &life}}, metav1.CreateOptions{})
		if err != nil {
			return 0, fmt.Errorf("requesting a token of ServiceAccount %s/%s on cluster %s: %w", kueueworker.Namespace, sa.Name, env.ClusterName, err)
		}
		exp := tr.Status.ExpirationTimestamp.Time
		*cur = issued{token: tr.Status.Token, saUID: sa.UID, expires: exp,
			refreshAt: now.Add(time.Duration(float64(exp.Sub(now)) * kueueworker.RefreshFraction))}
		env.Log.Info("requested a token for MultiKueue", "expires", exp, "next", cur.refreshAt)
	}
	if cur.verified.IsZero() || !now.Before(cur.verified.Add(builtin.OrDefault(a.Verify, DefaultVerify))) {
		key, err := tokenSecret(env)
		if err != nil {
			return 0, err
		}
		ok, err := publish(ctx, env, key, cur, ca)
		if err != nil {
			return 0, err
		}
		if !ok {
			return waitPoll, nil
		}
		cur.verified = now
	}
	next := builtin.OrDefault(a.Check, DefaultCheck)
	if until := cur.refreshAt.Sub(now); until < next {
		next = until
	}
	return max(next, 0), nil
}

// tokenSecret is where the hub wants the token: the add-on's TokenSecretAnnotation.
func tokenSecret(env builtin.Env) (client.ObjectKey, error) {
	v := env.Annotations[kueueworker.TokenSecretAnnotation]
	ns, name, ok := strings.Cut(v, "/")
	if !ok || ns == "" || name == "" {
		return client.ObjectKey{}, fmt.Errorf("ManagedClusterAddOn %s/%s has annotation %s=%q, not <namespace>/<name> of a Secret: "+
			"the hub sets it when a Kueue AdmissionCheck chooses the cluster; switch the add-on on that way, not by hand",
			env.ClusterName, Name, kueueworker.TokenSecretAnnotation, v)
	}
	return client.ObjectKey{Namespace: ns, Name: name}, nil
}

// publish makes the hub's Secret hold cur. It reports false, and writes nothing, while the
// Secret is not there or the agent may not read it yet (the hub makes both a moment apart).
func publish(ctx context.Context, env builtin.Env, key client.ObjectKey, cur *issued, ca []byte) (bool, error) {
	s := &corev1.Secret{}
	err := env.Hub.Get(ctx, key, s)
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		env.Log.V(1).Info("waiting for the hub to make the token Secret and let this agent write it", "secret", key, "reason", err.Error())
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading Secret %s on the hub: %w", key, err)
	}
	want := map[string][]byte{kueueworker.TokenKey: []byte(cur.token), kueueworker.CAKey: ca,
		kueueworker.ServerKey: []byte(env.Spoke.Host)}
	expires := cur.expires.UTC().Format(time.RFC3339)
	if sameData(s.Data, want) && s.Annotations[kueueworker.ExpiresAnnotation] == expires {
		return true, nil
	}
	s.Data = want
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[kueueworker.ExpiresAnnotation] = expires
	if err := env.Hub.Update(ctx, s); err != nil {
		return false, fmt.Errorf("writing the MultiKueue token to Secret %s on the hub: %w", key, err)
	}
	return true, nil
}

func sameData(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if !bytes.Equal(a[k], v) {
			return false
		}
	}
	return true
}

// Cleanup implements builtin.AddOn. It has nothing to remove: the hub deletes the token Secret
// and the ServiceAccount (and with it every token) when the cluster stops being a worker, which
// is when it switches the add-on off.
func (AddOn) Cleanup(context.Context, builtin.Env) error { return nil }
