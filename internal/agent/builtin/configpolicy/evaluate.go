package configpolicy

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

// OCM's reasons of an object template's result (config-policy-controller), in the order its
// messages list them.
const (
	reasonFoundExists    = "Resource found as expected"
	reasonCreated        = "K8s creation success"
	reasonUpdated        = "K8s update success"
	reasonDeleted        = "K8s deletion success"
	reasonNotFound       = "Resource not found but should exist"
	reasonNoMatch        = "Resource found but does not match"
	reasonNotFoundWanted = "Resource not found as expected"
	reasonFoundUnwanted  = "Resource found but should not exist"
	reasonError          = "K8s error"
)

var reasonOrder = []string{reasonFoundExists, reasonCreated, reasonUpdated, reasonDeleted, reasonNotFound, reasonNoMatch, reasonNotFoundWanted, reasonFoundUnwanted}

// messages are OCM's: the reason's message template and its condition reason.
var messages = map[string]struct{ format, reason string }{
	reasonFoundExists:    {"%s%s found as specified", "K8s `must have` object already exists"},
	reasonCreated:        {"%s%s was created successfully", reasonCreated},
	reasonUpdated:        {"%s%s was updated successfully", reasonUpdated},
	reasonDeleted:        {"%s%s was deleted successfully", reasonDeleted},
	reasonNotFound:       {"%s%s not found", "K8s does not have a `must have` object"},
	reasonNoMatch:        {"%s%s found but not as specified", "K8s does not have a `must have` object"},
	reasonFoundUnwanted:  {"%s%s found", "K8s has a `must not have` object"},
	reasonNotFoundWanted: {"%s%s missing as expected", "K8s `must not have` object already missing"},
}

// result is one object template's outcome in one namespace ("" for cluster-scoped kinds).
type result struct {
	namespace string
	compliant bool
	reason    string
	names     []string
	// message stands in for the reason's message when reason is reasonError.
	message string
	related []policyv1.RelatedObject
}

// engine evaluates ConfigurationPolicies against a cluster.
type engine struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
	// namespaces lists the cluster's namespaces (namespaceSelector's candidates).
	namespaces func(ctx context.Context) ([]corev1.Namespace, error)
	// pass counts the evaluation passes: onePass lists once per pass.
	pass uint64
}

// onePass makes list answer from its first result until pass changes: every template of a pass
// that selects namespaces reads one list of them, not one each.
func (e *engine) onePass(list func(ctx context.Context) ([]corev1.Namespace, error)) func(ctx context.Context) ([]corev1.Namespace, error) {
	var (
		at   uint64
		have bool
		ns   []corev1.Namespace
	)
	return func(ctx context.Context) ([]corev1.Namespace, error) {
		if have && at == e.pass {
			return ns, nil
		}
		got, err := list(ctx)
		if err != nil {
			return nil, err
		}
		ns, at, have = got, e.pass, true
		return ns, nil
	}
}

// templateOutcome is one object template's status entry and related objects, and the kind it
// checks (none when the template names none the cluster serves).
type templateOutcome struct {
	compliant bool
	reason    string
	message   string
	related   []policyv1.RelatedObject
	// watch is what to watch for the template's drift: its kind, in its one namespace when it
	// checks one.
	watch watchKey
}

// evaluateTemplate checks (and under enforce, puts right) one object template.
func (e *engine) evaluateTemplate(ctx context.Context, cp *policyv1.ConfigurationPolicy, i int, enforce bool) templateOutcome {
	fail := func(format string, args ...any) templateOutcome {
		return templateOutcome{reason: reasonError, message: fmt.Sprintf(format, args...)}
	}
	ot := cp.Spec.ObjectTemplates[i]
	field := fmt.Sprintf("spec.object-templates[%d]", i)
	if ot == nil || len(ot.ObjectDefinition.Raw) == 0 {
		return fail("%s.objectDefinition is empty: give the object's apiVersion, kind and the fields to check", field)
	}
	tmpl := map[string]any{}
	if err := json.Unmarshal(ot.ObjectDefinition.Raw, &tmpl); err != nil {
		return fail("%s.objectDefinition is not an object: %v", field, err)
	}
	u := &unstructured.Unstructured{Object: tmpl}
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil || u.GetAPIVersion() == "" || u.GetKind() == "" {
		return fail("%s.objectDefinition needs apiVersion and kind (it has apiVersion %q, kind %q)", field, u.GetAPIVersion(), u.GetKind())
	}
	mapping, err := e.mapper.RESTMapping(gv.WithKind(u.GetKind()).GroupKind(), gv.Version)
	if err != nil {
		return fail("couldn't find mapping resource with kind %s in %s, please check if you have CRD deployed (%s.objectDefinition)", u.GetKind(), u.GetAPIVersion(), field)
	}
	kind := complianceType(ot.ComplianceType)
	metaKind := kind
	if ot.MetadataComplianceType != "" {
		metaKind = complianceType(ot.MetadataComplianceType)
	}
	c := &check{e: e, res: mapping.Resource, gvk: mapping.GroupVersionKind, tmpl: tmpl, kind: kind, metaKind: metaKind, enforce: enforce, selector: ot.ObjectSelector,
		// A Secret's values are never written into a status.
		recordDiff: ot.RecordDiff != policyv1.RecordDiffNone && ot.RecordDiff != policyv1.RecordDiffLog &&
			(mapping.GroupVersionKind.Group != "" || mapping.GroupVersionKind.Kind != "Secret")}
	namespaces := []string{""}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if namespaces, err = e.selectNamespaces(ctx, u.GetNamespace(), cp.Spec.NamespaceSelector); err != nil {
			return fail("listing the namespaces that spec.namespaceSelector selects: %v", err)
		}
		if len(namespaces) == 0 {
			return fail("namespaced object %s of kind %s has no namespace specified from the policy namespaceSelector nor the object metadata", u.GetName(), u.GetKind())
		}
	}
	var results []result
	for _, ns := range namespaces {
		results = append(results, c.run(ctx, ns, u.GetName()))
	}
	out := summarize(mapping.Resource.Resource, results)
	out.watch = watchKey{GroupVersionResource: mapping.Resource}
	if len(namespaces) == 1 {
		out.watch.Namespace = namespaces[0]
	}
	return out
}

// complianceType lower-cases OCM's spellings (MustHave, Musthave, musthave).
func complianceType(t policyv1.ComplianceType) policyv1.ComplianceType {
	return policyv1.ComplianceType(strings.ToLower(string(t)))
}

// selectNamespaces is the template's namespace, or those namespaceSelector selects: names
// matching an include glob and no exclude glob, and labels matching its selector.
func (e *engine) selectNamespaces(ctx context.Context, named string, sel policyv1.Target) ([]string, error) {
	if named != "" {
		return []string{named}, nil
	}
	if len(sel.Include) == 0 && sel.LabelSelector == nil {
		return nil, nil
	}
	all, err := e.namespaces(ctx)
	if err != nil {
		return nil, err
	}
	ls := labels.Everything()
	if sel.LabelSelector != nil {
		if ls, err = metav1.LabelSelectorAsSelector(sel.LabelSelector); err != nil {
			return nil, fmt.Errorf("spec.namespaceSelector: %w", err)
		}
	}
	var out []string
	for _, ns := range all {
		if selected(ns.Name, sel) && ls.Matches(labels.Set(ns.Labels)) {
			out = append(out, ns.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// selected applies include and exclude globs (no include: every name).
func selected(name string, sel policyv1.Target) bool {
	glob := func(patterns []policyv1.NonEmptyString) bool {
		return slices.ContainsFunc(patterns, func(p policyv1.NonEmptyString) bool {
			ok, err := path.Match(string(p), name)
			return err == nil && ok
		})
	}
	return (len(sel.Include) == 0 || glob(sel.Include)) && !glob(sel.Exclude)
}

// check is one object template's evaluation.
type check struct {
	e              *engine
	res            schema.GroupVersionResource
	gvk            schema.GroupVersionKind
	tmpl           map[string]any
	kind, metaKind policyv1.ComplianceType
	enforce        bool
	selector       *metav1.LabelSelector
	// recordDiff: a mismatched object's related entry carries its differences (properties.diff).
	recordDiff bool
}

// maxDiffLines and maxDiffLine bound the differences recorded for one object.
const (
	maxDiffLines = 20
	maxDiffLine  = 300
)

// diff is how obj differs from the template, field by field, one line each, bounded.
func (c *check) diff(obj *unstructured.Unstructured) string {
	lines := differences(c.tmpl, obj.Object, only(c.kind == policyv1.MustOnlyHave), only(c.metaKind == policyv1.MustOnlyHave), maxDiffLines)
	for i, l := range lines {
		if len(l) > maxDiffLine {
			lines[i] = l[:maxDiffLine] + "..."
		}
	}
	return strings.Join(lines, "\n")
}

func (c *check) client(ns string) dynamic.ResourceInterface {
	if ns == "" {
		return c.e.dyn.Resource(c.res)
	}
	return c.e.dyn.Resource(c.res).Namespace(ns)
}

func (c *check) matches(obj *unstructured.Unstructured) bool {
	ok, _ := matches(c.tmpl, obj.Object, only(c.kind == policyv1.MustOnlyHave), only(c.metaKind == policyv1.MustOnlyHave))
	return ok
}

func (c *check) related(ns, name string, compliant bool, reason string, obj *unstructured.Unstructured, created bool) policyv1.RelatedObject {
	r := policyv1.RelatedObject{
		Object:    policyv1.ObjectResource{APIVersion: c.gvk.GroupVersion().String(), Kind: c.gvk.Kind, Metadata: policyv1.ObjectMetadata{Name: name, Namespace: ns}},
		Compliant: string(policyv1.NonCompliant), Reason: reason,
	}
	if compliant {
		r.Compliant = string(policyv1.Compliant)
	}
	if obj != nil {
		r.Properties = &policyv1.ObjectProperties{UID: string(obj.GetUID())}
		if created {
			r.Properties.CreatedByPolicy = ptr.To(true)
		}
	}
	return r
}

// run evaluates the template in namespace ns: the object named name, or with no name every
// object of the kind there (that objectSelector selects).
func (c *check) run(ctx context.Context, ns, name string) result {
	if name == "" {
		return c.runUnnamed(ctx, ns)
	}
	out := result{namespace: ns, names: []string{name}}
	obj, err := c.client(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		obj = nil
	case err != nil:
		out.reason, out.message = reasonError, fmt.Sprintf("reading %s %s: %v", c.res.Resource, name, err)
		return out
	}
	set := func(compliant bool, reason string, o *unstructured.Unstructured, created bool) result {
		out.compliant, out.reason = compliant, reason
		out.related = []policyv1.RelatedObject{c.related(ns, name, compliant, reason, o, created)}
		return out
	}
	if c.kind == policyv1.MustNotHave {
		if obj == nil || !c.matches(obj) {
			return set(true, reasonNotFoundWanted, nil, false)
		}
		if !c.enforce {
			return set(false, reasonFoundUnwanted, obj, false)
		}
		if err := c.client(ns).Delete(ctx, name, metav1.DeleteOptions{}); client404(err) != nil {
			out.reason, out.message = reasonError, fmt.Sprintf("deleting %s %s: %v", c.res.Resource, name, err)
			return out
		}
		return set(true, reasonDeleted, nil, false)
	}
	if obj == nil {
		if !c.enforce {
			return set(false, reasonNotFound, nil, false)
		}
		want := &unstructured.Unstructured{Object: deepCopy(c.tmpl)}
		delete(want.Object, "status")
		if ns != "" {
			want.SetNamespace(ns)
		}
		created, err := c.client(ns).Create(ctx, want, metav1.CreateOptions{})
		if err != nil {
			out.reason, out.message = reasonError, fmt.Sprintf("creating %s %s: %v", c.res.Resource, name, err)
			return out
		}
		return set(true, reasonCreated, created, true)
	}
	if c.matches(obj) {
		return set(true, reasonFoundExists, obj, false)
	}
	if !c.enforce {
		out := set(false, reasonNoMatch, obj, false)
		if c.recordDiff {
			out.related[0].Properties.Diff = c.diff(obj)
		}
		return out
	}
	next := &unstructured.Unstructured{Object: merge(c.tmpl, obj.Object, only(c.kind == policyv1.MustOnlyHave), only(c.metaKind == policyv1.MustOnlyHave))}
	updated, err := c.client(ns).Update(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		out.reason, out.message = reasonError, fmt.Sprintf("updating %s %s: %v", c.res.Resource, name, err)
		return out
	}
	return set(true, reasonUpdated, updated, false)
}

func (c *check) runUnnamed(ctx context.Context, ns string) result {
	out := result{namespace: ns}
	opts := metav1.ListOptions{}
	if c.selector != nil {
		s, err := metav1.LabelSelectorAsSelector(c.selector)
		if err != nil {
			out.reason, out.message = reasonError, fmt.Sprintf("objectSelector: %v", err)
			return out
		}
		opts.LabelSelector = s.String()
	}
	l, err := c.client(ns).List(ctx, opts)
	if err != nil {
		out.reason, out.message = reasonError, fmt.Sprintf("listing %s: %v", c.res.Resource, err)
		return out
	}
	var matching []*unstructured.Unstructured
	for i := range l.Items {
		if c.matches(&l.Items[i]) {
			matching = append(matching, &l.Items[i])
		}
	}
	for _, o := range matching {
		out.names = append(out.names, o.GetName())
	}
	slices.Sort(out.names)
	switch {
	case c.kind != policyv1.MustNotHave && len(matching) > 0:
		out.compliant, out.reason = true, reasonFoundExists
	case c.kind != policyv1.MustNotHave:
		out.reason = reasonNotFound // an unnamed object cannot be created
	case len(matching) == 0:
		out.compliant, out.reason = true, reasonNotFoundWanted
	case !c.enforce:
		out.reason = reasonFoundUnwanted
	default:
		for _, o := range matching {
			if err := c.client(ns).Delete(ctx, o.GetName(), metav1.DeleteOptions{}); client404(err) != nil {
				out.reason, out.message = reasonError, fmt.Sprintf("deleting %s %s: %v", c.res.Resource, o.GetName(), err)
				return out
			}
		}
		out.compliant, out.reason = true, reasonDeleted
	}
	for _, o := range matching {
		out.related = append(out.related, c.related(ns, o.GetName(), out.compliant, out.reason, o, false))
	}
	return out
}

func client404(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// summarize is OCM's createStatus: the template is compliant when every namespace's result is;
// the message lists the non-compliant results when there are any, else the compliant ones, one
// part per reason in OCM's order, naming the objects and namespaces ("limitranges
// [mem-limit-range] not found in namespace default").
func summarize(resource string, results []result) templateOutcome {
	out := templateOutcome{compliant: true}
	for _, r := range results {
		out.compliant = out.compliant && r.compliant
		out.related = append(out.related, r.related...)
	}
	byReason := map[string][]result{}
	for _, r := range results {
		if r.compliant == out.compliant {
			byReason[r.reason] = append(byReason[r.reason], r)
		}
	}
	order := slices.Clone(reasonOrder)
	for _, r := range slices.Sorted(maps.Keys(byReason)) {
		if !slices.Contains(order, r) {
			order = append(order, r)
		}
	}
	var reasons, parts []string
	for _, reason := range order {
		rs := byReason[reason]
		if len(rs) == 0 {
			continue
		}
		m, known := messages[reason]
		if !known {
			reasons = append(reasons, reason)
			for _, r := range rs {
				parts = append(parts, r.message)
			}
			continue
		}
		reasons = append(reasons, m.reason)
		// Results naming the same objects are told together, with their namespaces.
		nsByNames := map[string][]string{}
		for _, r := range rs {
			names := strings.Join(r.names, ", ")
			if r.namespace != "" {
				nsByNames[names] = append(nsByNames[names], r.namespace)
			} else if _, ok := nsByNames[names]; !ok {
				nsByNames[names] = nil
			}
		}
		for _, names := range slices.Sorted(maps.Keys(nsByNames)) {
			joined := ""
			if names != "" {
				joined = " [" + names + "]"
			}
			msg := fmt.Sprintf(m.format, resource, joined)
			switch nss := nsByNames[names]; {
			case len(nss) == 1:
				msg += " in namespace " + nss[0]
			case len(nss) > 1:
				slices.Sort(nss)
				msg += " in namespaces: " + strings.Join(nss, ", ")
			}
			parts = append(parts, msg)
		}
	}
	out.reason, out.message = strings.Join(reasons, "; "), strings.Join(parts, "; ")
	return out
}

// isConflict: a delete's UID precondition failed (the object was made anew: not the one the
// policy had).
func isConflict(err error) bool { return apierrors.IsConflict(err) }
