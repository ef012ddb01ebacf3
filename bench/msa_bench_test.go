//go:build integration

package bench

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/kubeconfig"
	"github.com/flotilla/flotilla/internal/local/devfleet"
	"github.com/flotilla/flotilla/internal/local/fleet"
)

// Parameters of BenchmarkManagedServiceAccountToken.
const (
	msaCountEnv     = "FLOTILLA_BENCH_MSA_COUNT"
	defaultMSACount = 100
	// msaInterval spaces the creations, so that the figure is latency, not a queue.
	msaInterval = 200 * time.Millisecond
)

// BenchmarkManagedServiceAccountToken measures, on a local fleet (`flotilla dev up`: the hub and
// one spoke, each a real API server, with `flotilla hub` and `flotilla agent` as processes), the
// time from creating a ManagedServiceAccount on the hub to its token working on the spoke: the
// token Secret on the hub holds a token with which a SelfSubjectReview on the spoke answers as
// the managed ServiceAccount. 100 ManagedServiceAccounts (FLOTILLA_BENCH_MSA_COUNT), created 200
// ms apart; it reports p50, p99 and max with n, and the same for TokenReported=True on the hub.
//
// `make bench-msa`; about 3 minutes.
func BenchmarkManagedServiceAccountToken(b *testing.B) {
	startRecord(b, "bench-msa")
	if !selected("ManagedServiceAccount") {
		b.Skip("starts a fleet: select it by name (make bench-msa)")
	}
	n := sized(b, msaCountEnv, defaultMSACount, 5)
	param(b, "managedserviceaccounts", n)
	param(b, "interval", msaInterval.String())
	pr := progress{start: time.Now()}
	hub, spoke, cluster := startMSAFleet(b, pr)
	for range b.N {
		usable, reported := runMSATokens(b, pr, hub, spoke, cluster, n)
		reportLatency(b, usable, time.Millisecond, func(stat string) string { return "usable-" + stat })
		reportLatency(b, reported, time.Millisecond, func(stat string) string { return "reported-" + stat })
		pr.printf("token usable on the spoke after creation: %s; TokenReported on the hub: %s", latencySummary(usable), latencySummary(reported))
	}
	report(b, 0, "ns/op")
}

// startMSAFleet starts the hub and one spoke with their flotilla processes and enables the add-on
// managed-serviceaccount on the spoke. It returns the hub's client, the spoke's configuration and
// the spoke's cluster name.
func startMSAFleet(b *testing.B, pr progress) (client.WithWatch, *rest.Config, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fl, err := fleet.Parse("bench", []byte("apiVersion: dev.flotilla.io/v1alpha1\nkind: Fleet\nclusters:\n- name: msa-1\n"))
	if err != nil {
		b.Fatal(err)
	}
	pr.printf("starting a fleet: hub and one spoke, with the flotilla hub and agent")
	dir := b.TempDir()
	st, err := devfleet.Up(ctx, devfleet.UpOptions{StateDir: dir, Fleet: fl, FleetSource: "bench", Binaries: binaries(b),
		Flotilla: buildFlotilla(b), Out: io.Discard, Clock: clock.RealClock{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = devfleet.Down(dir, io.Discard) })
	var hub client.WithWatch
	var spoke *rest.Config
	var cluster string
	for _, c := range st.Clusters {
		cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
		if err != nil {
			b.Fatal(err)
		}
		if c.Role == devfleet.RoleHub {
			// The test's own polls must not queue behind client-go's default 5 requests a second.
			cfg.QPS, cfg.Burst = 1000, 2000
			if hub, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
				b.Fatal(err)
			}
			continue
		}
		spoke, cluster = cfg, c.Name
	}
	if err := hub.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: authv1beta1.AddOnName}}); err != nil {
		b.Fatal(err)
	}
	return hub, spoke, cluster
}

// runMSATokens creates n ManagedServiceAccounts msaInterval apart and returns, for each, the time
// from its creation to its token working on the spoke, and to TokenReported=True on the hub.
func runMSATokens(b *testing.B, pr progress, hub client.WithWatch, spoke *rest.Config, cluster string, n int) (usable, reported []time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ca, err := kubeconfig.CA(spoke)
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, n)
	prefix := fmt.Sprintf("bench-%d", time.Now().UnixNano()%100000)
	for i := range n {
		name := fmt.Sprintf("%s-%03d", prefix, i)
		created := time.Now()
		if err := hub.Create(ctx, &authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name},
			Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{Enabled: true,
				Validity: metav1.Duration{Duration: time.Hour}}}}); err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			u, r, err := waitUsable(ctx, hub, spoke, ca, cluster, name, created)
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			usable, reported = append(usable, u), append(reported, r)
			done := len(usable)
			mu.Unlock()
			if done%20 == 0 || done == n {
				pr.printf("%d of %d tokens usable", done, n)
			}
		})
		time.Sleep(msaInterval)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return usable, reported
}

// waitUsable polls (every 20 ms) until ManagedServiceAccount name reports its token and the token
// authenticates on the spoke as its ServiceAccount, and returns when each was first seen.
func waitUsable(ctx context.Context, hub client.Client, spoke *rest.Config, ca []byte, cluster, name string, created time.Time) (usable, reported time.Duration, err error) {
	want := "system:serviceaccount:open-cluster-management-agent-addon:" + name
	for ctx.Err() == nil && (usable == 0 || reported == 0) {
		if reported == 0 {
			m := &authv1beta1.ManagedServiceAccount{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, m); err == nil &&
				meta.IsStatusConditionTrue(m.Status.Conditions, authv1beta1.ConditionTypeTokenReported) {
				reported = time.Since(created)
			}
		}
		if usable == 0 {
			ok, err := tokenWorks(ctx, hub, spoke, ca, cluster, name, want)
			if err != nil {
				return 0, 0, err
			}
			if ok {
				usable = time.Since(created)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ctx.Err() != nil {
		return 0, 0, fmt.Errorf("ManagedServiceAccount %s/%s: no usable token before the deadline: %w", cluster, name, ctx.Err())
	}
	return usable, reported, nil
}

// tokenWorks says whether the token in Secret cluster/name authenticates on the spoke as want.
func tokenWorks(ctx context.Context, hub client.Client, spoke *rest.Config, ca []byte, cluster, name, want string) (bool, error) {
	s := &corev1.Secret{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, s); err != nil || len(s.Data[corev1.ServiceAccountTokenKey]) == 0 {
		return false, nil
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: spoke.Host, BearerToken: string(s.Data[corev1.ServiceAccountTokenKey]),
		TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		return false, err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	return err == nil && r.Status.UserInfo.Username == want, nil
}
