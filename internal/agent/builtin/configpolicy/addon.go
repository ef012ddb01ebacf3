package configpolicy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/config/crd"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
	"github.com/flotilla/flotilla/internal/install"
)

// Name is the add-on's name, OCM's.
var Name = builtinaddon.ConfigPolicyController.Name

// CRDName is the ConfigurationPolicy CRD the add-on installs on the cluster, as OCM's add-on does.
const CRDName = "configurationpolicies.policy.open-cluster-management.io"

// PruneFinalizer holds a ConfigurationPolicy with pruneObjectBehavior DeleteIfCreated or
// DeleteAll until its objects are deleted (OCM's name).
const PruneFinalizer = "policy.open-cluster-management.io/delete-related-objects"

// DefaultResync is how often every policy is evaluated again without a change of it or of the
// kinds it checks (which are watched): the safety net under the watches.
const DefaultResync = 30 * time.Second

// AddOn is the config-policy-controller built-in add-on.
type AddOn struct {
	// Resync is DefaultResync when zero.
	Resync time.Duration
	// Executor, when set, is the user (system:serviceaccount:NAMESPACE:NAME) the add-on
	// impersonates to read, watch, create, update and delete the objects that the policies'
	// object templates name: inform checks and enforce acts with that account's rights only. The
	// agent chart makes one (flotilla-policy) and binds it what its values grant. Empty: the
	// agent's own identity (the local fleet and tests, where the agent is the spoke's
	// administrator). The ConfigurationPolicies themselves are always the agent's.
	Executor string
}

var _ builtin.AddOn = AddOn{}

// Name implements builtin.AddOn.
func (AddOn) Name() string { return Name }

// Run installs the ConfigurationPolicy CRD on the cluster, then evaluates every
// ConfigurationPolicy when it changes and when its evaluation interval has passed.
func (a AddOn) Run(ctx context.Context, env builtin.Env) error {
	def, err := crd.Named(CRDName)
	if err != nil {
		return err
	}
	if err := ensureCRD(ctx, env, def); err != nil {
		return err
	}
	changed := make(chan struct{}, 1)
	r, err := newRunner(env, a.Executor, changed)
	if err != nil {
		return err
	}
	defer r.watches.stop()
	// Only the cluster's namespace, where the framework keeps the templates (as OCM's controller
	// watches only that namespace): a ConfigurationPolicy someone makes elsewhere on the cluster
	// does not get the add-on's rights.
	r.policies, err = builtin.NewMirror[*policyv1.ConfigurationPolicy](ctx, r.spoke,
		func() client.ObjectList { return &policyv1.ConfigurationPolicyList{} }, changed, &r.own, client.InNamespace(env.ClusterName))
	if err != nil {
		return nil //nolint:nilerr // ctx ended: the add-on stops
	}
	resync := builtin.OrDefault(a.Resync, DefaultResync)
	for {
		wait := resync
		soon, err := r.evaluateAll(ctx, resync)
		if err != nil {
			env.Log.Error(err, "evaluating ConfigurationPolicies; trying again", "after", builtin.RetryAfterError)
			wait = builtin.RetryAfterError
		}
		if soon {
			wait = min(wait, MinWatchGap)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-env.Clock.After(wait):
		}
	}
}

// runner is one run's clients and what it remembers between evaluations.
type runner struct {
	env     builtin.Env
	spoke   client.WithWatch
	e       *engine
	watches *objectWatches
	// last is each policy's last evaluation: generation, time, compliance and the kinds it checks.
	last map[types.UID]evaluation
	// own are the runner's own writes of ConfigurationPolicies: their watch events do not wake it.
	own builtin.OwnWrites
	// policies mirrors the ConfigurationPolicies of the cluster's namespace.
	policies *builtin.Mirror[*policyv1.ConfigurationPolicy]
}

type evaluation struct {
	generation int64
	at         time.Time
	compliant  bool
	resources  []watchKey
}

// ensureCRD installs (or updates) the ConfigurationPolicy CRD on the cluster. An agent installed
// by its chart may not write CRDs: the chart installs this one (crds/), and the add-on uses it
// as it is once it is served.
func ensureCRD(ctx context.Context, env builtin.Env, def *apiextv1.CustomResourceDefinition) error {
	_, err := install.CRDs(ctx, env.Spoke, []*apiextv1.CustomResourceDefinition{def}, install.Options{})
	if err == nil || !apierrors.IsForbidden(err) {
		if err != nil {
			return fmt.Errorf("installing the ConfigurationPolicy CRD on the cluster: %w", err)
		}
		return nil
	}
	cs, cerr := apiextclient.NewForConfig(env.Spoke)
	if cerr != nil {
		return cerr
	}
	cur, gerr := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, CRDName, metav1.GetOptions{})
	if gerr != nil || !install.Served(cur) {
		return fmt.Errorf("the cluster does not serve ConfigurationPolicy and the agent may not install its CRD (%w): "+
			"install the agent with its chart, which brings the CRD, or apply %s as the cluster's administrator", err, CRDName)
	}
	env.Log.V(1).Info("using the ConfigurationPolicy CRD on the cluster as it is: the agent may not update it", "refused", err.Error())
	return nil
}

func newRunner(env builtin.Env, executor string, changed chan<- struct{}) (*runner, error) {
	spoke, err := client.NewWithWatch(env.Spoke, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	// The objects the templates name are read, watched and written as the executor.
	objects := rest.CopyConfig(env.Spoke)
	if executor != "" {
		objects.Impersonate = rest.ImpersonationConfig{UserName: executor}
	}
	dyn, err := dynamic.NewForConfig(objects)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(env.Spoke)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	e := &engine{dyn: dyn, mapper: resettingMapper{mapper}}
	e.namespaces = e.onePass(func(ctx context.Context) ([]corev1.Namespace, error) {
		l := &corev1.NamespaceList{}
		return l.Items, spoke.List(ctx, l)
	})
	md, err := metadata.NewForConfig(objects)
	if err != nil {
		return nil, err
	}
	return &runner{env: env, spoke: spoke, e: e, watches: newObjectWatches(md, changed), last: map[types.UID]evaluation{}}, nil
}

// evaluateAll evaluates each policy that is due, prunes after those being deleted, forgets
// policies that are gone, and watches the kinds the policies check. soon is true when a policy
// waits out MinWatchGap after a change of a kind it checks.
func (r *runner) evaluateAll(ctx context.Context, resync time.Duration) (soon bool, err error) {
	policies := r.policies.Items()
	slices.SortFunc(policies, func(a, b *policyv1.ConfigurationPolicy) int { return strings.Compare(a.Name, b.Name) })
	changed := r.watches.take()
	r.e.pass++ // the namespaces are listed again, once, for this pass
	seen := map[types.UID]bool{}
	kinds := map[watchKey]bool{}
	var errs []string
	for _, cp := range policies {
		seen[cp.UID] = true
		waits, err := r.one(ctx, cp, resync, changed)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s/%s: %v", cp.Namespace, cp.Name, err))
		}
		soon = soon || waits
		for _, key := range r.last[cp.UID].resources {
			kinds[key] = true
		}
	}
	for uid := range r.last {
		if !seen[uid] {
			delete(r.last, uid)
		}
	}
	r.watches.keep(ctx, kinds)
	if soon {
		// Changes not yet acted on are taken again next time.
		for key := range changed {
			r.watches.keepDirty(key)
		}
	}
	if len(errs) > 0 {
		return soon, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return soon, nil
}

// one evaluates cp if it is due; waits is true when a change of a kind it checks is to be acted
// on after MinWatchGap.
func (r *runner) one(ctx context.Context, cp *policyv1.ConfigurationPolicy, resync time.Duration, changed map[watchKey]bool) (waits bool, err error) {
	if !cp.DeletionTimestamp.IsZero() {
		return false, r.prune(ctx, cp)
	}
	pruning := cp.Spec.PruneObjectBehavior == policyv1.PruneDeleteAll || cp.Spec.PruneObjectBehavior == policyv1.PruneDeleteIfCreated
	if pruning && controllerutil.AddFinalizer(cp, PruneFinalizer) {
		base := cp.ResourceVersion
		if err := r.spoke.Update(ctx, cp); err != nil {
			return false, err
		}
		r.own.Wrote(base, cp)
	}
	now := r.env.Clock.Now()
	last := r.last[cp.UID]
	if !due(last, cp, now, resync) {
		if !watchesChanges(last, cp, changed) {
			return false, nil
		}
		if now.Before(last.at.Add(MinWatchGap)) {
			return true, nil
		}
	}
	st, resources := r.evaluate(ctx, cp, now)
	r.last[cp.UID] = evaluation{generation: cp.Generation, at: now, compliant: st.ComplianceState == policyv1.ConfigComplianceState(policyv1.Compliant), resources: resources}
	return false, r.writeStatus(ctx, cp, st)
}

// watchesChanges reports whether cp, evaluated on changes (its interval for its last compliance
// is watch or unset), checks a kind in changed.
func watchesChanges(last evaluation, cp *policyv1.ConfigurationPolicy, changed map[watchKey]bool) bool {
	interval := cp.Spec.EvaluationInterval.NonCompliant
	if last.compliant {
		interval = cp.Spec.EvaluationInterval.Compliant
	}
	if interval != "" && interval != "watch" {
		return false
	}
	for _, key := range last.resources {
		if changed[key] {
			return true
		}
	}
	return false
}

// due reports whether cp is to be evaluated at now: when it changed, and when the interval of
// its last compliance has passed ("watch" or unset: resync; "never": only on a change).
func due(last evaluation, cp *policyv1.ConfigurationPolicy, now time.Time, resync time.Duration) bool {
	if last.at.IsZero() || last.generation != cp.Generation {
		return true
	}
	interval := cp.Spec.EvaluationInterval.NonCompliant
	if last.compliant {
		interval = cp.Spec.EvaluationInterval.Compliant
	}
	every := resync
	switch interval {
	case "", "watch":
	case "never":
		return false
	default:
		if d, err := time.ParseDuration(interval); err == nil && d > 0 {
			every = d
		}
	}
	return !now.Before(last.at.Add(every))
}

// evaluate is cp's status after evaluating (and under enforce, putting right) each template, and
// the kinds its templates check.
func (r *runner) evaluate(ctx context.Context, cp *policyv1.ConfigurationPolicy, now time.Time) (policyv1.ConfigurationPolicyStatus, []watchKey) {
	enforce := strings.EqualFold(string(cp.Spec.RemediationAction), string(policyv1.Enforce))
	st := policyv1.ConfigurationPolicyStatus{LastEvaluated: now.UTC().Format(time.RFC3339), LastEvaluatedGeneration: cp.Generation}
	compliant := true
	var resources []watchKey
	ots, reason, problem := r.e.objectTemplates(ctx, cp)
	if problem != "" {
		// The kinds it checked are still watched: a change there may be what it waits for.
		st.CompliancyDetails = []policyv1.TemplateStatus{detail(templateOutcome{reason: reason, message: problem}, previousCondition(cp, 0), now)}
		st.ComplianceState = policyv1.ConfigComplianceState(policyv1.NonCompliant)
		return st, r.last[cp.UID].resources
	}
	resolved := cp.DeepCopy()
	resolved.Spec.ObjectTemplates = ots
	for i := range ots {
		o := r.e.evaluateTemplate(ctx, resolved, i, enforce)
		if o.watch.Resource != "" {
			resources = append(resources, o.watch)
		}
		compliant = compliant && o.compliant
		st.CompliancyDetails = append(st.CompliancyDetails, detail(o, previousCondition(cp, i), now))
		st.RelatedObjects = append(st.RelatedObjects, keepCreated(o.related, cp.Status.RelatedObjects)...)
	}
	st.ComplianceState = policyv1.ConfigComplianceState(policyv1.NonCompliant)
	if compliant {
		st.ComplianceState = policyv1.ConfigComplianceState(policyv1.Compliant)
	}
	return st, resources
}

func previousCondition(cp *policyv1.ConfigurationPolicy, i int) *policyv1.Condition {
	if i < len(cp.Status.CompliancyDetails) && len(cp.Status.CompliancyDetails[i].Conditions) > 0 {
		return &cp.Status.CompliancyDetails[i].Conditions[0]
	}
	return nil
}

// detail is a template's compliancyDetails entry: a violation or a notification, its time kept
// while the message stays the same.
func detail(o templateOutcome, prev *policyv1.Condition, now time.Time) policyv1.TemplateStatus {
	c := policyv1.Condition{Type: "violation", Status: corev1.ConditionTrue, Reason: o.reason, Message: o.message, LastTransitionTime: metav1.NewTime(now.UTC().Truncate(time.Second))}
	state := policyv1.ConfigComplianceState(policyv1.NonCompliant)
	if o.compliant {
		c.Type, state = "notification", policyv1.ConfigComplianceState(policyv1.Compliant)
	}
	if prev != nil && prev.Type == c.Type && prev.Message == c.Message && prev.Reason == c.Reason {
		c.LastTransitionTime = prev.LastTransitionTime
	}
	return policyv1.TemplateStatus{ComplianceState: state, Conditions: []policyv1.Condition{c}}
}

// keepCreated marks as created by the policy the related objects an earlier evaluation created
// (the same object, by UID): what pruneObjectBehavior DeleteIfCreated deletes.
func keepCreated(related, before []policyv1.RelatedObject) []policyv1.RelatedObject {
	for i := range related {
		p := related[i].Properties
		if p == nil || p.UID == "" || (p.CreatedByPolicy != nil && *p.CreatedByPolicy) {
			continue
		}
		if slices.ContainsFunc(before, func(b policyv1.RelatedObject) bool {
			return b.Properties != nil && b.Properties.UID == p.UID && b.Properties.CreatedByPolicy != nil && *b.Properties.CreatedByPolicy
		}) {
			t := true
			p.CreatedByPolicy = &t
		}
	}
	return related
}

// writeStatus writes st when it differs from cp's status in more than the evaluation's time.
func (r *runner) writeStatus(ctx context.Context, cp *policyv1.ConfigurationPolicy, st policyv1.ConfigurationPolicyStatus) error {
	a, b := cp.Status, st
	a.LastEvaluated, b.LastEvaluated = "", ""
	if equality.Semantic.DeepEqual(a, b) {
		return nil
	}
	base := cp.ResourceVersion
	cp.Status = st
	err := r.spoke.Status().Update(ctx, cp)
	if err == nil {
		r.own.Wrote(base, cp)
	}
	return client.IgnoreNotFound(err)
}

// prune deletes what a policy being deleted asks for (pruneObjectBehavior) and lets it go.
func (r *runner) prune(ctx context.Context, cp *policyv1.ConfigurationPolicy) error {
	if !controllerutil.ContainsFinalizer(cp, PruneFinalizer) {
		return nil
	}
	for _, ro := range cp.Status.RelatedObjects {
		created := ro.Properties != nil && ro.Properties.CreatedByPolicy != nil && *ro.Properties.CreatedByPolicy
		switch {
		case ro.Compliant != string(policyv1.Compliant) || ro.Properties == nil || ro.Properties.UID == "":
			continue // not there, or not what the policy has
		case cp.Spec.PruneObjectBehavior == policyv1.PruneDeleteIfCreated && !created:
			continue
		}
		if err := r.e.deleteRelated(ctx, ro); err != nil {
			return err
		}
	}
	controllerutil.RemoveFinalizer(cp, PruneFinalizer)
	return client.IgnoreNotFound(r.spoke.Update(ctx, cp))
}

// Cleanup lets go of the policies the add-on holds for pruning, without pruning: the add-on is
// switched off, not the policies deleted.
func (AddOn) Cleanup(ctx context.Context, env builtin.Env) error {
	spoke, err := client.New(env.Spoke, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	l := &policyv1.ConfigurationPolicyList{}
	if err := spoke.List(ctx, l, client.InNamespace(env.ClusterName)); err != nil {
		return client.IgnoreNotFound(ignoreNoKind(err))
	}
	for i := range l.Items {
		if controllerutil.RemoveFinalizer(&l.Items[i], PruneFinalizer) {
			if err := spoke.Update(ctx, &l.Items[i]); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}
