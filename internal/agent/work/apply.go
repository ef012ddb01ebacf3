package work

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// DefaultFieldManager is the field manager of server-side apply when the work names none, as OCM's.
const DefaultFieldManager = "work-agent"

// Reasons of a manifest's Applied condition.
const (
	ReasonApplied = "AppliedManifestComplete"
	ReasonFailed  = "AppliedManifestFailed"
	// ReasonConflictWithWork: another work applied the object with other content.
	ReasonConflictWithWork = "ConflictWithWork"
	// ReasonConflictWithFieldManager: server-side apply without force found fields of another manager.
	ReasonConflictWithFieldManager = "ConflictWithFieldManager"
	// ReasonWaitingForCRD: the work's CRD for this kind is not Established yet.
	ReasonWaitingForCRD = "WaitingForCRD"
	ReasonReadOnly      = "ReadOnly"
	ReasonNotFound      = "ResourceNotFound"
	ReasonInvalid       = "InvalidManifest"
)

// outcome is what applying one manifest did.
type outcome struct {
	Meta workv1.ManifestResourceMeta
	// Live is the object on the spoke after the apply, nil when there is none.
	Live *unstructured.Unstructured
	// Applied is the manifest's Applied condition (no times set).
	Applied metav1.Condition
	// Record is set when the object is this work's to remove later.
	Record *workv1.AppliedManifestResourceMeta
	// Retry asks for another round soon (waiting for a CRD).
	Retry bool
	// Transient says the apply failed for a reason that passes (the spoke did not answer, or
	// answered that it is busy): the work is tried again with a backoff.
	Transient bool
	// Config is the manifest's manifestConfig, nil when it has none.
	Config *workv1.ManifestConfigOption
	// Stale says a cached round could not settle this manifest (see step.cached): the work needs a
	// full round.
	Stale bool
}

// applier applies manifests to the spoke with the agent's identity or an executor's.
type applier struct {
	mapper meta.ResettableRESTMapper
	agent  dynamic.Interface
	config *rest.Config
	// defaultUser is who applies and removes what works without an executor carry, and removes
	// every work's objects (Options.DefaultExecutor); "" is the agent, as OCM's.
	defaultUser string

	mu        sync.Mutex
	executors map[string]dynamic.Interface
}

func newApplier(cfg *rest.Config, mapper meta.ResettableRESTMapper) (*applier, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &applier{mapper: mapper, agent: dyn, config: cfg, executors: map[string]dynamic.Interface{}}, nil
}

// executorUser is the user name a work's executor acts as, "" for the agent itself.
func executorUser(e *workv1.ManifestWorkExecutor) string {
	if e == nil || e.Subject == nil || e.Subject.Type != workv1.ExecutorSubjectTypeServiceAccount || e.Subject.ServiceAccount == nil {
		return ""
	}
	sa := e.Subject.ServiceAccount
	return "system:serviceaccount:" + sa.Namespace + ":" + sa.Name
}

// serviceAccountUser splits system:serviceaccount:NAMESPACE:NAME.
func serviceAccountUser(user string) (ns, name string, ok bool) {
	rest, found := strings.CutPrefix(user, "system:serviceaccount:")
	ns, name, ok = strings.Cut(rest, ":")
	return ns, name, found && ok && ns != "" && name != "" && !strings.Contains(name, ":")
}

// applyUser is who applies work's manifests: its executor, else the default executor, else
// the agent ("").
func (a *applier) applyUser(work *workv1.ManifestWork) string {
	if u := executorUser(work.Spec.Executor); u != "" {
		return u
	}
	return a.defaultUser
}

// removeUser is who removes what work applied: in OCM's mode the agent, whatever the executor
// (as OCM's agent does); in the restricted mode whoever applied it.
func (a *applier) removeUser(work *workv1.ManifestWork) string {
	if a.defaultUser == "" {
		return ""
	}
	return a.applyUser(work)
}

// client returns the dynamic client that acts as user (the agent when "").
func (a *applier) client(user string) (dynamic.Interface, error) {
	if user == "" {
		return a.agent, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.executors[user]; ok {
		return c, nil
	}
	cfg := rest.CopyConfig(a.config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	a.executors[user] = c
	return c, nil
}

// mapping finds the resource of gvk, refreshing discovery once when the kind is unknown (a CRD
// may have been created since).
func (a *applier) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		a.mapper.Reset()
		m, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return m, err
}

// configFor returns the manifestConfig that names the resource, or nil.
func configFor(cfgs []workv1.ManifestConfigOption, m workv1.ManifestResourceMeta) *workv1.ManifestConfigOption {
	for i, c := range cfgs {
		id := c.ResourceIdentifier
		if id.Group == m.Group && id.Resource == m.Resource && id.Name == m.Name && id.Namespace == m.Namespace {
			return &cfgs[i]
		}
	}
	return nil
}

func failed(reason, msg string) metav1.Condition {
	return metav1.Condition{Type: workv1.ManifestApplied, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
}

func applied(reason, msg string) metav1.Condition {
	return metav1.Condition{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, Reason: reason, Message: msg}
}

// applyRequest is one manifest to apply.
type applyRequest struct {
	Manifest manifest
	Configs  []workv1.ManifestConfigOption
	// User is the executor to act as, "" for the agent.
	User string
	// Owner marks what this work applies; OwnerName is its name.
	Owner types.UID
	// OwnerName is the AppliedManifestWork's name.
	OwnerName string
	// HubHash names the hub, to tell its works in owner names.
	HubHash string
	// CRDs lists the kinds whose CRD this work applies: true while it is not Established yet.
	CRDs map[schema.GroupKind]bool
	// Cached reads the object from the API server's cache and writes nothing (step.cached).
	Cached bool
}

// apply applies one manifest and says what happened; a failure is the manifest's alone.
func (a *applier) apply(ctx context.Context, req applyRequest) outcome {
	m := req.Manifest
	out := outcome{Meta: workv1.ManifestResourceMeta{Ordinal: int32(m.Ordinal)}}
	if m.Err != nil {
		out.Applied = failed(ReasonInvalid, m.Err.Error())
		return out
	}
	obj := m.Obj.DeepCopy()
	gvk := obj.GroupVersionKind()
	out.Meta.Group, out.Meta.Version, out.Meta.Kind = gvk.Group, gvk.Version, gvk.Kind
	out.Meta.Name, out.Meta.Namespace = obj.GetName(), obj.GetNamespace()
	waiting := func() outcome {
		out.Applied = failed(ReasonWaitingForCRD, fmt.Sprintf("waiting for the CustomResourceDefinition of %s to be Established", gvk.GroupKind()))
		out.Retry = true
		return out
	}
	pending, defined := req.CRDs[gvk.GroupKind()]
	if pending {
		return waiting()
	}
	mapping, err := a.mapping(gvk)
	if meta.IsNoMatchError(err) && defined {
		return waiting() // Established, not yet in the API server's discovery
	}
	if err != nil {
		out.Applied, out.Transient = failed(ReasonFailed, err.Error()), transient(err)
		return out
	}
	out.Meta.Resource = mapping.Resource.Resource
	out.Config = configFor(req.Configs, out.Meta)
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	if namespaced && obj.GetNamespace() == "" {
		out.Applied = failed(ReasonInvalid, fmt.Sprintf("manifest %d (%s %s) is namespaced: set metadata.namespace", m.Ordinal, gvk.Kind, obj.GetName()))
		return out
	}
	if !namespaced {
		obj.SetNamespace("")
		out.Meta.Namespace = ""
	}
	dyn, err := a.client(req.User)
	if err != nil {
		out.Applied = failed(ReasonFailed, err.Error())
		return out
	}
	var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
	if namespaced {
		ri = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	strategy := workv1.UpdateStrategyTypeUpdate
	var ssa *workv1.ServerSideApplyConfig
	if out.Config != nil && out.Config.UpdateStrategy != nil && out.Config.UpdateStrategy.Type != "" {
		strategy, ssa = out.Config.UpdateStrategy.Type, out.Config.UpdateStrategy.ServerSideApply
	}
	s := step{ri: ri, desired: obj, owner: ownerRef(req.OwnerName, req.Owner), hubHash: req.HubHash, cached: req.Cached}
	var cond metav1.Condition
	switch strategy {
	case workv1.UpdateStrategyTypeReadOnly:
		cond = s.readOnly(ctx)
	case workv1.UpdateStrategyTypeCreateOnly:
		cond = s.createOnly(ctx)
	case workv1.UpdateStrategyTypeServerSideApply:
		cond = s.serverSide(ctx, ssa)
	case workv1.UpdateStrategyTypeUpdate:
		cond = s.update(ctx)
	default:
		cond = failed(ReasonInvalid, fmt.Sprintf("manifestConfigs: updateStrategy.type %q is not one of Update, CreateOnly, ServerSideApply, ReadOnly", strategy))
	}
	out.Applied, out.Live, out.Transient, out.Stale = cond, s.live, transient(s.err), s.stale
	if s.live != nil && hasOwner(s.live.GetOwnerReferences(), req.Owner) {
		out.Record = &workv1.AppliedManifestResourceMeta{
			Group: out.Meta.Group, Version: out.Meta.Version, Resource: out.Meta.Resource,
			Name: out.Meta.Name, Namespace: out.Meta.Namespace, UID: string(s.live.GetUID()),
		}
	}
	return out
}

// step applies one object with one strategy and keeps the live object it ends with.
type step struct {
	ri      dynamic.ResourceInterface
	desired *unstructured.Unstructured
	owner   metav1.OwnerReference
	hubHash string
	live    *unstructured.Unstructured
	// err is the last error of the API server, nil when none.
	err error
	// cached makes the step read from the API server's watch cache (resourceVersion "0": no etcd
	// read) and write nothing. A work whose spec the agent has applied is looked at again every
	// resync for its status; most of the time its objects are as it left them and the round
	// writes nothing, so the reads need not be the latest. When the cached object is missing, or
	// differs so that the step would write, the step stops and says stale: the work then gets a
	// full round, which decides on fresh reads.
	cached bool
	stale  bool
}

// canWrite reports whether the step may write; a cached step may not, and is stale instead.
func (s *step) canWrite() bool {
	if s.cached {
		s.stale = true
	}
	return !s.cached
}

// Success messages of the Applied condition: one per strategy, whatever the round did, so that
// a round that finds the object as the last one left it changes nothing in the status.
const (
	msgApplied    = "Apply manifest complete"
	msgCreateOnly = "created; not updated afterwards (updateStrategy CreateOnly)"
)

// fail records err and returns the failed Applied condition with the API server's message.
func (s *step) fail(err error) metav1.Condition {
	s.err = err
	return failed(ReasonFailed, err.Error())
}

func (s *step) get(ctx context.Context) (bool, metav1.Condition) {
	var opts metav1.GetOptions
	if s.cached {
		opts.ResourceVersion = "0"
	}
	live, err := s.ri.Get(ctx, s.desired.GetName(), opts)
	if s.cached && err != nil {
		// Not found in the cache, or no answer: a full round finds out.
		s.stale = true
		return false, metav1.Condition{Reason: "Stale"}
	}
	if apierrors.IsNotFound(err) {
		return false, metav1.Condition{}
	}
	if err != nil {
		return false, s.fail(err)
	}
	s.live = live
	return true, metav1.Condition{}
}

func (s *step) create(ctx context.Context, msg string) metav1.Condition {
	if !s.canWrite() {
		return metav1.Condition{}
	}
	obj := s.desired.DeepCopy()
	refs, _ := withOwner(obj.GetOwnerReferences(), s.owner)
	obj.SetOwnerReferences(refs)
	obj.SetResourceVersion("")
	live, err := s.ri.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return s.fail(err)
	}
	s.live = live
	return applied(ReasonApplied, msg)
}

func (s *step) readOnly(ctx context.Context) metav1.Condition {
	found, cond := s.get(ctx)
	if cond.Reason != "" {
		return cond
	}
	if !found {
		return failed(ReasonNotFound, fmt.Sprintf("%s %q not found on the cluster (updateStrategy ReadOnly only reads it)", s.desired.GetKind(), s.desired.GetName()))
	}
	return applied(ReasonReadOnly, "read, not applied (updateStrategy ReadOnly)")
}

func (s *step) createOnly(ctx context.Context) metav1.Condition {
	found, cond := s.get(ctx)
	if cond.Reason != "" {
		return cond
	}
	if !found {
		return s.create(ctx, msgCreateOnly)
	}
	return applied(ReasonApplied, msgCreateOnly)
}

// conflictWithWork is the condition when other works own the live object and this work would
// change it.
func (s *step) conflictWithWork(others []string) metav1.Condition {
	works := make([]string, len(others))
	for i, o := range others {
		works[i] = workOfApplied(s.hubHash, o)
	}
	return failed(ReasonConflictWithWork, fmt.Sprintf("%s %q is owned by ManifestWork %s with other content; "+
		"make the works agree on it or remove it from one of them", s.desired.GetKind(), s.desired.GetName(), strings.Join(works, ", ")))
}

func (s *step) update(ctx context.Context) metav1.Condition {
	found, cond := s.get(ctx)
	if cond.Reason != "" {
		return cond
	}
	if !found {
		return s.create(ctx, msgApplied)
	}
	same := matches(s.desired, s.live)
	refs := s.live.GetOwnerReferences()
	if others := otherOwners(refs, s.owner.UID); len(others) > 0 && !same {
		return s.conflictWithWork(others)
	}
	refs, added := withOwner(refs, s.owner)
	if same && !added {
		return applied(ReasonApplied, msgApplied)
	}
	if !s.canWrite() {
		return metav1.Condition{}
	}
	if same {
		// Another work, or someone, made it as this work says: the work only takes its share of
		// ownership, and leaves fields it does not set (immutable ones among them) alone.
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"ownerReferences": refs, "resourceVersion": s.live.GetResourceVersion(),
		}})
		if err != nil {
			return failed(ReasonInvalid, err.Error())
		}
		live, err := s.ri.Patch(ctx, s.desired.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			return s.fail(err)
		}
		s.live = live
		return applied(ReasonApplied, msgApplied)
	}
	obj := s.desired.DeepCopy()
	obj.SetLabels(mergeMaps(s.live.GetLabels(), obj.GetLabels()))
	obj.SetAnnotations(mergeMaps(s.live.GetAnnotations(), obj.GetAnnotations()))
	obj.SetOwnerReferences(refs)
	obj.SetFinalizers(s.live.GetFinalizers())
	obj.SetResourceVersion(s.live.GetResourceVersion())
	if _, ok := obj.Object["status"]; !ok {
		if st, ok := s.live.Object["status"]; ok {
			obj.Object["status"] = st
		}
	}
	live, err := s.ri.Update(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		return s.fail(err)
	}
	s.live = live
	return applied(ReasonApplied, msgApplied)
}

func (s *step) serverSide(ctx context.Context, cfg *workv1.ServerSideApplyConfig) metav1.Condition {
	found, cond := s.get(ctx)
	if cond.Reason != "" {
		return cond
	}
	manager, force := DefaultFieldManager, false
	if cfg != nil {
		force = cfg.Force
		if cfg.FieldManager != "" {
			manager = cfg.FieldManager
		}
	}
	obj := s.desired.DeepCopy()
	obj.SetOwnerReferences([]metav1.OwnerReference{s.owner})
	obj.SetResourceVersion("")
	obj.SetManagedFields(nil)
	delete(obj.Object, "status")
	if found && cfg != nil {
		// Fields the work leaves to the spoke once they are there.
		for _, f := range cfg.IgnoreFields {
			for _, p := range append(append([]string(nil), f.JSONPaths...), f.JSONPointers...) {
				if hasPath(s.live.Object, p) {
					removePath(obj.Object, p)
				}
			}
		}
	}
	msg := "applied with server-side apply as " + manager
	if found && matches(obj, s.live) && hasOwner(s.live.GetOwnerReferences(), s.owner.UID) && managedBy(s.live, manager) {
		return applied(ReasonApplied, msg)
	}
	if !s.canWrite() {
		return metav1.Condition{}
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return failed(ReasonInvalid, err.Error())
	}
	live, err := s.ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: manager, Force: &force})
	if apierrors.IsConflict(err) {
		return failed(ReasonConflictWithFieldManager, err.Error())
	}
	if err != nil {
		return s.fail(err)
	}
	s.live = live
	return applied(ReasonApplied, msg)
}

// transient reports whether err passes by itself: the spoke did not answer (no API status at all),
// or answered that it is busy or failed inside. Refusals (invalid, forbidden, not found, conflict,
// unknown kind) stay until something changes, and are looked at again at the resync.
func transient(err error) bool {
	if err == nil || meta.IsNoMatchError(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err)
}

func managedBy(obj *unstructured.Unstructured, manager string) bool {
	for _, f := range obj.GetManagedFields() {
		if f.Manager == manager && f.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

func mergeMaps(base, over map[string]string) map[string]string {
	if len(base) == 0 && len(over) == 0 {
		return nil
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
