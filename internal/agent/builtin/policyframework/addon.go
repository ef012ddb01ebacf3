package policyframework

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// Name is the add-on's name, OCM's.
var Name = builtinaddon.GovernancePolicyFramework.Name

// DefaultResync is how often everything is synced without a change.
const DefaultResync = 30 * time.Second

// noKind is the problem of every template while the cluster serves no ConfigurationPolicy.
const noKind = "the cluster does not serve ConfigurationPolicy (policy.open-cluster-management.io/v1): " +
	"enable the add-on config-policy-controller on this cluster, which installs and evaluates it"

// AddOn is the governance-policy-framework built-in add-on.
type AddOn struct {
	// Resync is DefaultResync when zero.
	Resync time.Duration
}

var _ builtin.AddOn = AddOn{}

// Name implements builtin.AddOn.
func (AddOn) Name() string { return Name }

// Run keeps, in the cluster's namespace on the cluster, the ConfigurationPolicies of the
// replicated policies in the cluster's namespace on the hub, and reports their results in the
// replicated policies' status, on every change on either side.
func (a AddOn) Run(ctx context.Context, env builtin.Env) error {
	hub, err := client.NewWithWatch(env.HubConfig, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	spoke, err := client.NewWithWatch(env.Spoke, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	changed := make(chan struct{}, 1)
	s := &syncer{env: env, hub: hub, spoke: spoke, reported: map[string]int64{}, changed: changed}
	s.policies, err = builtin.NewMirror[*policyv1.Policy](ctx, hub, func() client.ObjectList { return &policyv1.PolicyList{} },
		changed, &s.own, client.InNamespace(env.ClusterName))
	if err != nil {
		return nil //nolint:nilerr // ctx ended: the add-on stops
	}
	resync := builtin.OrDefault(a.Resync, DefaultResync)
	for {
		wait := resync
		if err := s.sync(ctx); err != nil {
			env.Log.Error(err, "syncing policies; trying again", "after", builtin.RetryAfterError)
			wait = builtin.RetryAfterError
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-env.Clock.After(wait):
		}
	}
}

type syncer struct {
	env   builtin.Env
	hub   client.Client
	spoke client.WithWatch
	// reported is, by policy/template, the template generation whose result was last reported.
	reported map[string]int64
	// own are the add-on's own writes: their watch events do not start a sync.
	own builtin.OwnWrites
	// changed wakes the loop: the mirrors signal it.
	changed chan<- struct{}
	// policies mirrors the cluster's namespace on the hub; configPolicies the cluster's namespace
	// on the cluster, once the cluster serves ConfigurationPolicy.
	policies       *builtin.Mirror[*policyv1.Policy]
	configPolicies *builtin.Mirror[*policyv1.ConfigurationPolicy]
	// namespaceMade is set once the cluster's namespace is known to exist on the cluster.
	namespaceMade bool
}

// sync makes the cluster's ConfigurationPolicies those of the hub's policies and reports. Both
// sides are read from mirrors.
func (s *syncer) sync(ctx context.Context) error {
	ns := s.env.ClusterName
	policies := slices.DeleteFunc(s.policies.Items(), func(p *policyv1.Policy) bool { return !p.IsReplicated() })
	// The oldest first (a template name belongs to the policy that had it first), then by name.
	slices.SortFunc(policies, func(a, b *policyv1.Policy) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	existing, served, err := s.existing(ctx, ns)
	if err != nil {
		return err
	}
	if served && len(policies) > 0 {
		if err := s.ensureNamespace(ctx, ns); err != nil {
			return err
		}
	}
	copies := make(map[string]*policyv1.Policy, len(policies))
	for _, p := range policies {
		copies[p.Name] = p
	}
	taken, kept := map[string]string{}, map[string]bool{}
	evaluated := map[string]bool{} // policy/template keys of s.reported still on the cluster
	var errs []error
	for _, p := range policies {
		ts := templates(p, ns, taken)
		names, results := make([]string, len(ts)), make([]observed, len(ts))
		// The generations this report tells the hub of: remembered once it is written, so a
		// report that fails (a Conflict) still counts them as news when it is tried again.
		news := map[string]int64{}
		for j, t := range ts {
			names[j] = t.name
			deps := checkDependencies(p, j, copies, existing)
			switch {
			case t.problem != "":
				results[j] = problem(t.problem)
			case !served:
				results[j] = problem(noKind)
			case deps.invalid != "":
				results[j] = problem(deps.invalid)
			case len(deps.pending) > 0:
				// Not on the cluster until its dependencies are met (taken off if it was).
				results[j] = pendingResult(deps.pending)
			default:
				kept[t.name] = true
				cur, err := s.apply(ctx, t.object, existing[t.name])
				if err != nil {
					errs = append(errs, err)
					results[j] = problem(err.Error())
					continue
				}
				results[j] = observe(cur)
				key := p.Name + "/" + t.name
				evaluated[key] = true
				if results[j].evaluated != 0 && s.reported[key] != results[j].evaluated {
					results[j].fresh = s.reported[key] != 0 // the first seen after a start is not news
					news[key] = results[j].evaluated
				}
			}
		}
		if err := s.report(ctx, p, names, results); err != nil {
			errs = append(errs, err)
			continue
		}
		maps.Copy(s.reported, news)
	}
	for key := range s.reported {
		if !evaluated[key] {
			delete(s.reported, key) // its policy or template went
		}
	}
	for name, cp := range existing {
		if !kept[name] && cp.Labels[builtinaddon.Label] == Name {
			if err := s.spoke.Delete(ctx, cp); client.IgnoreNotFound(err) != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// existing is the ConfigurationPolicies in ns on the cluster, by name; served is false while the
// cluster does not serve the kind. Once it does, they are mirrored until ctx (the run's) ends
// (the first time, a list finds out whether it is served).
func (s *syncer) existing(ctx context.Context, ns string) (map[string]*policyv1.ConfigurationPolicy, bool, error) {
	if s.configPolicies == nil {
		l := &policyv1.ConfigurationPolicyList{}
		if err := s.spoke.List(ctx, l, client.InNamespace(ns)); meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, false, nil
		} else if err != nil {
			return nil, false, fmt.Errorf("listing ConfigurationPolicies on the cluster: %w", err)
		}
		m, err := builtin.NewMirror[*policyv1.ConfigurationPolicy](ctx, s.spoke,
			func() client.ObjectList { return &policyv1.ConfigurationPolicyList{} }, s.changed, &s.own, client.InNamespace(ns))
		if err != nil {
			return nil, false, err
		}
		s.configPolicies = m
	}
	out := map[string]*policyv1.ConfigurationPolicy{}
	for _, cp := range s.configPolicies.Items() {
		out[cp.Name] = cp
	}
	return out, true, nil
}

// ensureNamespace makes the cluster's namespace on the cluster, where its policies' templates
// live (as OCM's framework does).
// Once it exists it is not asked for again until a write there finds it gone.
func (s *syncer) ensureNamespace(ctx context.Context, ns string) error {
	if s.namespaceMade {
		return nil
	}
	err := s.spoke.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{builtinaddon.Label: Name}}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s on the cluster: %w", ns, err)
	}
	s.namespaceMade = true
	return nil
}

// apply creates want, or updates cur to it; a ConfigurationPolicy the add-on did not make is
// left alone and reported.
func (s *syncer) apply(ctx context.Context, want, cur *policyv1.ConfigurationPolicy) (*policyv1.ConfigurationPolicy, error) {
	if cur == nil {
		err := s.spoke.Create(ctx, want)
		switch {
		case apierrors.IsAlreadyExists(err):
			// Made by the last pass and not yet in the mirror (or made by someone else: the next
			// pass, with it in the mirror, says so). Its event brings the next pass.
			return want, nil
		case apierrors.IsNotFound(err):
			s.namespaceMade = false // its namespace was deleted: made again next time
		}
		if err != nil {
			return nil, fmt.Errorf("creating ConfigurationPolicy %s/%s on the cluster: %w", want.Namespace, want.Name, err)
		}
		s.own.Note(want)
		return want, nil
	}
	if cur.Labels[builtinaddon.Label] != Name {
		return nil, fmt.Errorf("ConfigurationPolicy %s/%s exists on the cluster and was not made by the add-on %s (no label %s=%s): "+
			"it is neither taken over nor reported on; delete it, or rename the template", cur.Namespace, cur.Name, Name, builtinaddon.Label, Name)
	}
	if equality.Semantic.DeepEqual(cur.Spec, want.Spec) && reflect.DeepEqual(cur.Labels, want.Labels) && reflect.DeepEqual(cur.Annotations, want.Annotations) {
		return cur, nil
	}
	next := cur.DeepCopy()
	next.Spec, next.Labels, next.Annotations = want.Spec, want.Labels, want.Annotations
	// A patch without a resourceVersion: the config-policy-controller writes the status meanwhile.
	if err := s.spoke.Patch(ctx, next, client.MergeFrom(cur)); err != nil {
		return nil, fmt.Errorf("updating ConfigurationPolicy %s/%s on the cluster: %w", next.Namespace, next.Name, err)
	}
	s.own.Wrote(cur.ResourceVersion, next)
	return next, nil
}

// report writes p's status on the hub when it changed.
func (s *syncer) report(ctx context.Context, p *policyv1.Policy, names []string, results []observed) error {
	st := policyStatus(p, names, results, s.env.Clock.Now())
	if equality.Semantic.DeepEqual(p.Status, st) {
		return nil
	}
	next := p.DeepCopy()
	next.Status = st
	// A patch without a resourceVersion: the status is the add-on's alone (p is what it last wrote,
	// the mirror's Items), while the hub rewrites the spec meanwhile, which would refuse an update.
	if err := s.hub.Status().Patch(ctx, next, client.MergeFrom(p)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("reporting policy %s/%s: %w", p.Namespace, p.Name, err)
	} else if err == nil {
		s.own.Wrote(p.ResourceVersion, next)
	}
	return nil
}

// Cleanup deletes the ConfigurationPolicies the add-on made on the cluster.
func (AddOn) Cleanup(ctx context.Context, env builtin.Env) error {
	spoke, err := client.New(env.Spoke, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	err = spoke.DeleteAllOf(ctx, &policyv1.ConfigurationPolicy{}, client.InNamespace(env.ClusterName), client.MatchingLabels{builtinaddon.Label: Name})
	if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
