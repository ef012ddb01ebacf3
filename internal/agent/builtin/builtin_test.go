package builtin

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/agent/registration"
)

// probe is an add-on that records its runs and cleanups, and fails its run when told.
type probe struct {
	mu       sync.Mutex
	runs     int
	cleanups int
	fail     chan error
}

func (p *probe) Name() string { return "probe" }

func (p *probe) Run(ctx context.Context, _ Env) error {
	p.mu.Lock()
	p.runs++
	p.mu.Unlock()
	select {
	case <-ctx.Done():
		return nil
	case err := <-p.fail:
		return err
	}
}

func (p *probe) Cleanup(context.Context, Env) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleanups++
	return nil
}

func (p *probe) counts() (runs, cleanups int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs, p.cleanups
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestManager(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "east", Name: "probe"}}
	other := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "east", Name: "someone-elses"}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(mca, other).
		WithStatusSubresource(&addonv1alpha1.ManagedClusterAddOn{}).Build()
	hub := &registration.HubClients{Client: c}
	p := &probe{fail: make(chan error)}
	m := NewManager("east", nil, clk, logr.Discard(), p)
	defer m.Stop()
	list := func() []addonv1alpha1.ManagedClusterAddOn {
		l := &addonv1alpha1.ManagedClusterAddOnList{}
		if err := c.List(ctx, l); err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	available := func(name string) metav1.Condition {
		a := &addonv1alpha1.ManagedClusterAddOn{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "east", Name: name}, a); err != nil {
			t.Fatal(err)
		}
		if a.Status.HealthCheck.Mode != addonv1alpha1.HealthCheckModeCustomized {
			t.Errorf("health check mode %q, want Customized", a.Status.HealthCheck.Mode)
		}
		c := meta.FindStatusCondition(a.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
		if c == nil {
			return metav1.Condition{}
		}
		return metav1.Condition{Status: c.Status, Reason: c.Reason, Message: c.Message}
	}

	if _, err := m.Sync(ctx, hub, list()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the add-on to run", func() bool { r, _ := p.counts(); return r == 1 })
	want := metav1.Condition{Status: metav1.ConditionTrue, Reason: ReasonRunning, Message: "built into flotilla agent; running"}
	if diff := cmp.Diff(want, available("probe")); diff != "" {
		t.Errorf("Available (-want +got):\n%s", diff)
	}
	a := &addonv1alpha1.ManagedClusterAddOn{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(other), a); err != nil || len(a.Status.Conditions) > 0 {
		t.Errorf("an add-on that is not built in got status %+v (%v); want it left alone", a.Status, err)
	}

	// The run fails: Available False with the error, and no new run before the backoff.
	p.fail <- errors.New("spoke unreachable")
	waitFor(t, "the run to end", func() bool { return m.snapshot()["probe"].exited() })
	if _, err := m.Sync(ctx, hub, list()); err != nil {
		t.Fatal(err)
	}
	want = metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonFailed,
		Message: "built into flotilla agent; its last run failed: spoke unreachable (it is started again every 10s)"}
	if diff := cmp.Diff(want, available("probe")); diff != "" {
		t.Errorf("Available after a failed run (-want +got):\n%s", diff)
	}
	if r, _ := p.counts(); r != 1 {
		t.Errorf("%d runs before the backoff passed, want 1", r)
	}
	clk.Step(RestartBackoff)
	if _, err := m.Sync(ctx, hub, list()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the add-on to run again", func() bool { r, _ := p.counts(); return r == 2 })

	// New hub credentials: the add-on runs again with them.
	renewed := &registration.HubClients{Client: c}
	if _, err := m.Sync(ctx, renewed, list()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a run with the renewed credentials", func() bool { r, _ := p.counts(); return r == 3 })

	// Switched off: stopped and cleaned up.
	if err := c.Delete(ctx, mca); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Sync(ctx, renewed, list()); err != nil {
		t.Fatal(err)
	}
	if runs, cleanups := p.counts(); runs != 3 || cleanups != 1 || m.snapshot()["probe"] != nil {
		t.Errorf("after the ManagedClusterAddOn went: %d runs, %d cleanups, running %v; want 3, 1, not running", runs, cleanups, m.snapshot()["probe"] != nil)
	}
}
