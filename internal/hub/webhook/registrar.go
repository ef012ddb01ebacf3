package webhook

import (
	"github.com/flotilla/flotilla/internal/contract/wellknown"

	"context"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// DefaultResync is how often the leader checks the webhook configuration besides watching it.
const DefaultResync = 30 * time.Second

// registrar keeps the webhook configuration naming this replica while the replica leads. Every
// replica serves the webhook, but the API server calls one address, so the configuration belongs
// to the leader: it writes it on becoming leader, once its server answers, and puts it back
// whenever it changes or goes (a watch, and a check every resync period in case a watch event is
// missed). When the leader stops, the configuration stays, naming it, until the next leader
// writes its own.
type registrar struct {
	cs      kubernetes.Interface
	want    *admissionregistrationv1.ValidatingWebhookConfiguration
	started func() error
	clock   clock.WithTicker
	resync  time.Duration
}

var (
	_ manager.Runnable               = (*registrar)(nil)
	_ manager.LeaderElectionRunnable = (*registrar)(nil)
)

// NeedLeaderElection is true: see registrar. Without leader election the hub runs it at start.
func (r *registrar) NeedLeaderElection() bool { return true }

// registerBackoff rides out a server or API server still starting (about a minute in all); after
// that the hub stops, saying why, rather than lead with a configuration that calls nothing.
var registerBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 10, Cap: 10 * time.Second}

// watchRetry is the pause after a watch that ended without an event (closed by the server, or
// an error), so that a failing watch cannot spin.
const watchRetry = time.Second

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=create
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,resourceNames=flotilla-hub,verbs=get;list;watch;update

// Start registers the configuration, then keeps it until ctx ends (leadership lost or the hub
// stopping).
func (r *registrar) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("webhook-registrar")
	var rv string
	err := retry.OnError(registerBackoff, func(error) bool { return ctx.Err() == nil }, func() error {
		if err := r.started(); err != nil {
			return err
		}
		var err error
		rv, err = r.ensure(ctx, log.Info)
		return err
	})
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("registering ValidatingWebhookConfiguration %s: %w", ConfigurationName, err)
	}
	tick := r.clock.NewTicker(r.resync)
	defer tick.Stop()
	for {
		if err := r.wait(ctx, rv, tick.C()); err != nil {
			return nil // ctx ended
		}
		got, err := r.ensure(ctx, log.Info)
		if err != nil {
			// The next event or tick tries again; the webhook keeps serving meanwhile.
			log.Error(err, "keeping the webhook configuration", "name", ConfigurationName)
			rv = ""
			continue
		}
		rv = got
	}
}

// wait returns when the configuration may have changed since resourceVersion rv: a watch event,
// a tick, or a watch that ended. It returns ctx's error when ctx ends. Without rv (the last read
// failed) it waits for the tick alone: a watch from no version would replay the object at once.
func (r *registrar) wait(ctx context.Context, rv string, tick <-chan time.Time) error {
	return waitForChange(ctx, r.clock, r.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Watch, ConfigurationName, rv, tick)
}

// waitForChange returns when the object name may have changed since resourceVersion rv: an event
// of a watch (from watchFn) on it, a tick, or a watch that ended (after watchRetry). It returns
// ctx's error when ctx ends. Without rv it waits for the tick alone.
func waitForChange(ctx context.Context, clk clock.Clock, watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
	name, rv string, tick <-chan time.Time) error {
	var events <-chan watch.Event
	if rv != "" {
		w, err := watchFn(ctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
			ResourceVersion: rv,
		})
		if err == nil {
			defer w.Stop()
			events = w.ResultChan()
		}
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tick:
		return nil
	case ev, ok := <-events:
		if ok && ev.Type != watch.Error {
			return nil
		}
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-clk.After(watchRetry):
		return nil
	}
}

// ensure makes the configuration on the server what r wants, and returns its resourceVersion.
// It writes only when something differs, and says so through logf.
func (r *registrar) ensure(ctx context.Context, logf func(msg string, kv ...any)) (string, error) {
	api := r.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	url := describeAdmission(r.want.Webhooks[0].ClientConfig)
	got, err := api.Get(ctx, r.want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		created, err := api.Create(ctx, r.want.DeepCopy(), metav1.CreateOptions{})
		if err != nil {
			return "", err // AlreadyExists included: the next try updates it
		}
		logf("wrote the webhook configuration", "name", r.want.Name, "url", url)
		return created.ResourceVersion, nil
	}
	if err != nil {
		return "", err
	}
	if equality.Semantic.DeepEqual(got.Webhooks, r.want.Webhooks) && got.Labels[wellknown.PartOfLabel] == wellknown.PartOf {
		return got.ResourceVersion, nil
	}
	if got.Labels == nil {
		got.Labels = map[string]string{}
	}
	got.Labels[wellknown.PartOfLabel] = wellknown.PartOf
	from := "none"
	if len(got.Webhooks) > 0 {
		from = describeAdmission(got.Webhooks[0].ClientConfig)
	}
	got.Webhooks = r.want.DeepCopy().Webhooks
	updated, err := api.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		return "", err
	}
	logf("rewrote the webhook configuration to name this replica", "name", r.want.Name, "url", url, "previousURL", from)
	return updated.ResourceVersion, nil
}
