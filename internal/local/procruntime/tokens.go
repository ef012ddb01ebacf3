package procruntime

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// Token lifetimes the kubelet and the API server use.
const (
	// defaultTokenSeconds is a projected token's lifetime when expirationSeconds is unset.
	defaultTokenSeconds = 3600
	// automountTokenSeconds is the lifetime the API server's admission gives the automounted
	// token (3607, which it recognizes as "automounted").
	automountTokenSeconds = 3607
)

// tokenSpec is one service-account token file that is renewed while the container runs.
type tokenSpec struct {
	namespace      string
	serviceAccount string
	spec           authenticationv1.TokenRequestSpec
	// Set once written:
	path    string
	mode    os.FileMode
	renewAt time.Time
}

// tokens requests a container's tokens and renews them at 80% of their lifetime, as the kubelet.
type tokens struct {
	client kubernetes.Interface
	clock  clock.PassiveClock

	mu   sync.Mutex
	list []*tokenSpec
}

func (t *tokens) add(ts *tokenSpec) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.list = append(t.list, ts)
}

// request asks the API server for a token for ts and sets when it is due for renewal.
func (t *tokens) request(ctx context.Context, ts *tokenSpec) ([]byte, error) {
	req := &authenticationv1.TokenRequest{Spec: *ts.spec.DeepCopy()}
	out, err := t.client.CoreV1().ServiceAccounts(ts.namespace).CreateToken(ctx, ts.serviceAccount, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", ts.namespace, ts.serviceAccount, err)
	}
	if out.Status.Token == "" {
		return nil, fmt.Errorf("requesting a token for ServiceAccount %s/%s: the API server returned no token", ts.namespace, ts.serviceAccount)
	}
	ttl := time.Duration(defaultTokenSeconds) * time.Second
	if s := out.Spec.ExpirationSeconds; s != nil {
		ttl = time.Duration(*s) * time.Second
	} else if s := ts.spec.ExpirationSeconds; s != nil {
		ttl = time.Duration(*s) * time.Second
	}
	exp := out.Status.ExpirationTimestamp.Time
	if exp.IsZero() {
		exp = t.clock.Now().Add(ttl)
	}
	ts.renewAt = exp.Add(-ttl / 5)
	return []byte(out.Status.Token), nil
}

// renew requests a new token for each token file that is due and rewrites the file. It returns
// the first error and renews the others anyway.
func (t *tokens) renew(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var first error
	now := t.clock.Now()
	for _, ts := range t.list {
		if now.Before(ts.renewAt) {
			continue
		}
		data, err := t.request(ctx, ts)
		if err == nil {
			err = writeFileAtomic(ts.path, data, ts.mode)
		}
		if err != nil && first == nil {
			first = fmt.Errorf("renewing token %s: %w", ts.path, err)
		}
	}
	return first
}

// tokenFile requests the token of a projected serviceAccountToken source for the pod's service
// account, bound to the pod when the pod has a uid.
func (s *start) tokenFile(ctx context.Context, files map[string]file, src *corev1.ServiceAccountTokenProjection, def os.FileMode, field string) error {
	secs := int64(defaultTokenSeconds)
	if src.ExpirationSeconds != nil {
		secs = *src.ExpirationSeconds
	}
	var audiences []string
	if src.Audience != "" {
		audiences = []string{src.Audience}
	}
	data, ts, err := s.token(ctx, audiences, secs)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return addFile(files, src.Path, file{data: data, mode: def, token: ts}, field)
}

func (s *start) token(ctx context.Context, audiences []string, secs int64) ([]byte, *tokenSpec, error) {
	ts := &tokenSpec{
		namespace:      s.pod.Namespace,
		serviceAccount: serviceAccountName(&s.pod.Spec),
		spec:           authenticationv1.TokenRequestSpec{Audiences: audiences, ExpirationSeconds: &secs},
	}
	if s.pod.UID != "" {
		ts.spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: s.pod.Name, UID: s.pod.UID}
	}
	data, err := s.tokens.request(ctx, ts)
	if err != nil {
		return nil, nil, err
	}
	return data, ts, nil
}
