package dynamicscoring

import (
	"context"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dsv1alpha1 "github.com/flotilla/flotilla/api/dynamicscoring/v1alpha1"
	"github.com/flotilla/flotilla/internal/egress"
)

// Defaults of the health check.
const (
	// DefaultCheckInterval is the check interval of a scorer without scoring.params.interval
	// (OCM contrib's hub checks every 30 s).
	DefaultCheckInterval = 30 * time.Second
	// DefaultCheckTimeout bounds each request of a check.
	DefaultCheckTimeout = 5 * time.Second
	// DefaultNamespace is where the hub accepts DynamicScorers unless told otherwise: the
	// hub's own namespace, which only its administrator writes.
	DefaultNamespace = "open-cluster-management-hub"
)

// Recorder emits events (events.k8s.io); the manager's GetEventRecorder gives one.
type Recorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...interface{})
}

// ScorerReconciler health-checks DynamicScorers every interval.
type ScorerReconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
	// Namespace is the only namespace whose DynamicScorers the hub checks and agents run
	// (DefaultNamespace when ""): whoever may create a DynamicScorer makes the hub and every
	// agent send requests, with tokens, where it points, and takes a score name.
	Namespace string
	// AllowLocal lets scorers' URLs reach loopback and link-local addresses (a local fleet,
	// tests); see internal/egress.
	AllowLocal bool
	// HTTP makes the checks; egress.Client with DefaultCheckTimeout when nil.
	HTTP *http.Client
	// Recorder emits events; the manager's is taken when nil.
	Recorder Recorder

	mu sync.Mutex
	// last is when each scorer was last checked, and at which generation; an entry goes with
	// its scorer.
	last map[types.NamespacedName]checked
}

type checked struct {
	uid        types.UID
	at         time.Time
	generation int64
	reason     string
}

var _ reconcile.Reconciler = (*ScorerReconciler)(nil)

// ControllerName names the health check controller and its events.
const ControllerName = "dynamic-scoring"

// SetupWithManager registers the controller. Status writes do not trigger it: it runs on spec
// changes and every interval.
func (r *ScorerReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.HTTP == nil {
		r.HTTP = httpClient(DefaultCheckTimeout, r.AllowLocal)
	}
	if r.Namespace == "" {
		r.Namespace = DefaultNamespace
	}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	r.last = map[types.NamespacedName]checked{}
	return ctrl.NewControllerManagedBy(mgr).Named("dynamicscorer-health").
		// Checks wait on the network (up to DefaultCheckTimeout each): a slow scorer must not
		// hold up the others.
		WithOptions(controller.Options{MaxConcurrentReconciles: 8}).
		For(&dsv1alpha1.DynamicScorer{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}

// httpClient is the checks' client: no redirects, no metadata address, and no loopback or
// link-local address unless allowLocal.
func httpClient(timeout time.Duration, allowLocal bool) *http.Client {
	return egress.Client(timeout, allowLocal, nil)
}

// CheckInterval is how often a scorer is checked: its scoring interval, else
// DefaultCheckInterval.
func CheckInterval(s *dsv1alpha1.DynamicScorer) time.Duration {
	if c := s.Status.LastSyncedConfig; c != nil && s.Spec.ConfigSyncMode == dsv1alpha1.ConfigSyncModeFull && c.Scoring.Params.Interval > 0 {
		return time.Duration(c.Scoring.Params.Interval) * time.Second
	}
	if sc := s.Spec.Scoring; sc != nil && sc.Params != nil && sc.Params.Interval > 0 {
		return time.Duration(sc.Params.Interval) * time.Second
	}
	return DefaultCheckInterval
}

// +kubebuilder:rbac:groups=dynamic-scoring.open-cluster-management.io,resources=dynamicscorers,verbs=get;list;watch
// +kubebuilder:rbac:groups=dynamic-scoring.open-cluster-management.io,resources=dynamicscorers/status,verbs=update;patch
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch;update

// Reconcile checks the scorer when its interval has passed or its spec changed, and writes the
// status when it changed.
func (r *ScorerReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	s := &dsv1alpha1.DynamicScorer{}
	if err := r.Client.Get(ctx, req.NamespacedName, s); err != nil {
		if apierrors.IsNotFound(err) {
			r.mu.Lock()
			delete(r.last, req.NamespacedName)
			r.mu.Unlock()
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if s.Namespace != r.namespace() {
		// Not checked: a GET from the hub is itself what a scorer elsewhere must not get.
		return reconcile.Result{}, r.refuse(ctx, s)
	}
	every := CheckInterval(s)
	now := r.Clock.Now()
	r.mu.Lock()
	last, ok := r.last[req.NamespacedName]
	r.mu.Unlock()
	ok = ok && last.uid == s.UID // a scorer deleted and made again is checked afresh
	if ok && last.generation == s.Generation && now.Sub(last.at) < every {
		return reconcile.Result{RequeueAfter: last.at.Add(every).Sub(now)}, nil
	}
	h := Check(ctx, r.HTTP, s, r.AllowLocal)
	if h.Status == dsv1alpha1.ScorerHealthActive {
		// A scorer the agents cannot run is not Active: the event says which field to set.
		probe := s.DeepCopy()
		if h.Synced != nil {
			probe.Status.LastSyncedConfig = h.Synced
		}
		if _, err := Summarize(probe); err != nil {
			h.Status, h.Reason, h.Message = dsv1alpha1.ScorerHealthInactive, ReasonConfigInvalid, err.Error()
		}
	}
	r.mu.Lock()
	r.last[req.NamespacedName] = checked{uid: s.UID, at: now, generation: s.Generation, reason: h.Reason}
	r.mu.Unlock()
	newReason := !ok || last.reason != h.Reason
	orig := s.DeepCopy()
	s.Status.HealthStatus = h.Status
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: dsv1alpha1.ConditionAccepted, Status: metav1.ConditionTrue,
		Reason: ReasonAccepted, ObservedGeneration: s.Generation, LastTransitionTime: metav1.NewTime(now),
		Message: "the scorer is in the namespace the hub accepts DynamicScorers from"})
	if h.Synced != nil {
		s.Status.LastSyncedConfig = h.Synced
	}
	changed := !equality.Semantic.DeepEqual(orig.Status, s.Status)
	if changed {
		if err := r.Client.Status().Patch(ctx, s, client.MergeFrom(orig)); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	// An event when the health or the reason of a failure changes, not at every check.
	switch {
	case h.Status == dsv1alpha1.ScorerHealthActive && orig.Status.HealthStatus != h.Status:
		r.Recorder.Eventf(s, nil, "Normal", ReasonScorerActive, "HealthCheck", "the scorer answers its health check; agents run it")
	case h.Status != dsv1alpha1.ScorerHealthActive && (changed || newReason):
		r.Recorder.Eventf(s, nil, "Warning", h.Reason, "HealthCheck", "%s; agents stop running it until it is Active", h.Message)
	}
	return reconcile.Result{RequeueAfter: CheckInterval(s)}, nil
}
