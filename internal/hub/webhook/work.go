package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// WorkGroup is the API group of ManifestWorks, and of the execute-as permission.
const WorkGroup = "work.open-cluster-management.io"

// ManifestWorkPath is where the ManifestWork webhook is served, ManifestWorkWebhookName its name
// in the configuration.
const (
	ManifestWorkPath        = "/validate-manifestworks"
	ManifestWorkWebhookName = "manifestworks.hub.flotilla.io"
)

// MaxWorkloadSize bounds the manifests of one ManifestWork together, in bytes of JSON: OCM's
// 500 KiB, which keeps a work (with its status) well inside etcd's object size limit.
const MaxWorkloadSize = 500 * 1024

// maxWorkDenials bounds how many refusals one answer lists; the rest are counted.
const maxWorkDenials = 10

// ExecutePermission is the permission to create or change, in namespace ns, a ManifestWork
// whose executor is the service account saNamespace/saName: execute-as on manifestworks named
// system:serviceaccount:<saNamespace>:<saName>, OCM's check.
func ExecutePermission(ns, saNamespace, saName string) Permission {
	return Permission{
		Verb: "execute-as", Group: WorkGroup, Resource: "manifestworks", Namespace: ns,
		Name: fmt.Sprintf("system:serviceaccount:%s:%s", saNamespace, saName),
	}
}

// ManifestWorkHandler validates writes to ManifestWorks (ReviewManifestWork).
func ManifestWorkHandler(s *runtime.Scheme, can Authorizer) admission.Handler {
	return handler[workv1.ManifestWork](admission.NewDecoder(s), can, ReviewManifestWork)
}

// specChangedHook turns a webhook built for the cluster group into one for group, which the API
// server calls only for a create or an update that changes spec. For ManifestWorks, agents then
// write finalizers and status (a subresource the rules do not name) without a call, so they keep
// working while no hub answers, and ReviewManifestWork allows such updates anyway; for
// FederatedLearnings, the controller's finalizer and status writes go through likewise.
func specChangedHook(group string, w admissionregistrationv1.ValidatingWebhook) admissionregistrationv1.ValidatingWebhook {
	w = inGroup(group, w)
	w.MatchConditions = []admissionregistrationv1.MatchCondition{{
		Name:       "spec-changed",
		Expression: "request.operation != 'UPDATE' || !has(oldObject.spec) || !has(object.spec) || object.spec != oldObject.spec",
	}}
	return w
}

// ReviewManifestWork decides whether user may write the ManifestWork cur over old (nil when
// creating). It refuses, as OCM's webhook does, a work without manifests, manifests over
// MaxWorkloadSize in all, a manifest that is not an object with apiVersion, kind and
// metadata.name (or that sets generateName), and an executor the user may not act as
// (ExecutePermission, asked only when the executor is new or changed); and, beyond OCM, two
// manifests for the same object and a manifestConfigs entry that names no manifest of the work.
// An update that leaves spec as it was (labels, finalizers, deletion) is always allowed, so an
// agent can finish with a work written before these rules.
func ReviewManifestWork(ctx context.Context, can Authorizer, user authenticationv1.UserInfo, old, cur *workv1.ManifestWork) ([]string, error) {
	if old != nil && equality.Semantic.DeepEqual(old.Spec, cur.Spec) {
		return nil, nil
	}
	subject := fmt.Sprintf("manifestworks %q in namespace %q", cur.Name, cur.Namespace)
	denials := reviewManifests(cur.Spec)
	if cur.Spec.Executor != nil && (old == nil || !equality.Semantic.DeepEqual(old.Spec.Executor, cur.Spec.Executor)) {
		d, err := reviewExecutor(ctx, can, user, cur)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", subject, err)
		}
		denials = append(denials, d...)
	}
	if len(denials) > maxWorkDenials {
		denials = append(denials[:maxWorkDenials], fmt.Sprintf("%d more problems", len(denials)-maxWorkDenials))
	}
	for i := range denials {
		denials[i] = subject + ": " + denials[i]
	}
	return denials, nil
}

// object is what the review needs of one manifest.
type object struct {
	index                 int
	group, kind, ns, name string
	resource              string // guessed from kind: lower case, plural
	label                 string // how refusals name it: manifests[i] (Kind ns/name)
}

func reviewManifests(spec workv1.ManifestWorkSpec) []string {
	manifests := spec.Workload.Manifests
	if len(manifests) == 0 {
		return []string{"spec.workload.manifests is empty: a ManifestWork applies at least one object; add the objects to apply, or delete the ManifestWork"}
	}
	var denials []string
	total, largest, largestAt := 0, 0, 0
	for i, m := range manifests {
		if n := len(m.Raw); n > largest {
			largest, largestAt = n, i
		}
		total += len(m.Raw)
	}
	if total > MaxWorkloadSize {
		denials = append(denials, fmt.Sprintf("spec.workload.manifests hold %d bytes, more than the %d (500 KiB) a ManifestWork may hold "+
			"(the largest is manifests[%d], %d bytes); split the objects across several ManifestWorks", total, MaxWorkloadSize, largestAt, largest))
	}
	var objects []object
	seen := map[string]object{}
	undecodable := false
	for i, m := range manifests {
		o, problem := decodeManifest(i, m.Raw)
		if problem != "" {
			denials = append(denials, problem)
			undecodable = true
			continue
		}
		key := strings.Join([]string{o.group, o.kind, o.ns, o.name}, "/")
		if first, dup := seen[key]; dup {
			denials = append(denials, fmt.Sprintf("%s is the same object as manifests[%d] (same group, kind, namespace and name): "+
				"the agent could apply only one of them; remove one, or merge them", o.label, first.index))
			continue
		}
		seen[key] = o
		objects = append(objects, o)
	}
	if undecodable {
		return denials // the configs may name the manifests that are refused: fix those first
	}
	for j, c := range spec.ManifestConfigs {
		if d := reviewConfig(j, c.ResourceIdentifier, objects); d != "" {
			denials = append(denials, d)
		}
	}
	return denials
}

// decodeManifest reads manifest i, or says why it is not a usable object.
func decodeManifest(i int, raw []byte) (object, string) {
	at := fmt.Sprintf("spec.workload.manifests[%d]", i)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		why := "it is not a JSON object"
		if err != nil {
			why = err.Error()
		}
		return object{}, fmt.Sprintf("%s is not a Kubernetes object (%s); give a whole object with apiVersion, kind and metadata.name", at, why)
	}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	md, _ := m["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	generateName, _ := md["generateName"].(string)
	o := object{index: i, kind: kind, ns: ns, name: name}
	o.label = fmt.Sprintf("%s (%s %s)", at, orUnknown(kind), orUnknown(qualified(ns, name)))
	var missing []string
	for _, f := range []struct{ field, value string }{{"apiVersion", apiVersion}, {"kind", kind}, {"metadata.name", name}} {
		if f.value == "" {
			missing = append(missing, f.field)
		}
	}
	if len(missing) > 0 {
		return o, fmt.Sprintf("%s has no %s: the agent needs them to find and apply the object; set %s (generateName is not supported)",
			o.label, strings.Join(missing, " or "), strings.Join(missing, " and "))
	}
	if generateName != "" {
		return o, fmt.Sprintf("%s sets metadata.generateName %q: the agent must know the object's name to update and delete it; remove generateName", o.label, generateName)
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return o, fmt.Sprintf("%s has apiVersion %q, which is not group/version or version (%v); write it as, for example, apps/v1", o.label, apiVersion, err)
	}
	o.group = gv.Group
	plural, _ := meta.UnsafeGuessKindToResource(gv.WithKind(kind))
	o.resource = plural.Resource
	return o, ""
}

// reviewConfig says why manifestConfigs[j] names no manifest, or "". Name and namespace may use
// * as OCM allows. The hub cannot know the resource (plural) of every kind on the spoke, so an
// entry whose group, namespace and name match a manifest is accepted whatever its resource;
// the resource is only checked to be lower case, which every resource name is.
func reviewConfig(j int, id workv1.ResourceIdentifier, objects []object) string {
	at := fmt.Sprintf("spec.manifestConfigs[%d].resourceIdentifier", j)
	if id.Resource != strings.ToLower(id.Resource) {
		return fmt.Sprintf("%s.resource %q is not a resource name: resources are lower-case plurals, such as %s; write %q",
			at, id.Resource, "deployments", guessResource(id.Group, id.Resource))
	}
	for _, o := range objects {
		if o.group == id.Group && glob(id.Namespace, o.ns) && glob(id.Name, o.name) {
			return ""
		}
	}
	want := fmt.Sprintf("group %q, resource %q, namespace %q, name %q", id.Group, id.Resource, id.Namespace, id.Name)
	hint := ""
	for _, o := range objects {
		if o.name == id.Name || o.resource == id.Resource {
			hint = fmt.Sprintf(" (%s is group %q, resource %q, namespace %q, name %q)", o.label, o.group, o.resource, o.ns, o.name)
			break
		}
	}
	return fmt.Sprintf("%s (%s) names no manifest of the work%s; point it at a manifest by its group, resource, namespace and name, or remove the entry",
		at, want, hint)
}

func guessResource(group, kind string) string {
	r, _ := meta.UnsafeGuessKindToResource(schema.GroupVersionKind{Group: group, Kind: kind})
	return r.Resource
}

// glob matches s against pattern, where * stands for any run of characters.
func glob(pattern, s string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == s
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		k := strings.Index(s, p)
		if k < 0 {
			return false
		}
		s = s[k+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

func reviewExecutor(ctx context.Context, can Authorizer, user authenticationv1.UserInfo, w *workv1.ManifestWork) ([]string, error) {
	sub := w.Spec.Executor.Subject
	if sub == nil || sub.ServiceAccount == nil {
		return []string{"spec.executor names no service account: set subject.type ServiceAccount and subject.serviceAccount " +
			"(namespace and name on the managed cluster), or remove spec.executor to apply as the agent"}, nil
	}
	sa := sub.ServiceAccount
	p := ExecutePermission(w.Namespace, sa.Namespace, sa.Name)
	ok, err := can(ctx, user, p)
	if err != nil {
		return nil, fmt.Errorf("checking whether %s may %s: %w", user.Username, p, err)
	}
	if ok {
		return nil, nil
	}
	return []string{fmt.Sprintf("spec.executor (service account %s/%s) needs permission to %s, since the agent will apply the "+
		"manifests as that service account; %s, or remove spec.executor", sa.Namespace, sa.Name, p, grantHint)}, nil
}

func qualified(ns, name string) string {
	if ns == "" || name == "" {
		return name
	}
	return ns + "/" + name
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// inGroup turns a webhook built for the cluster group into one for group.
func inGroup(group string, w admissionregistrationv1.ValidatingWebhook) admissionregistrationv1.ValidatingWebhook {
	for i := range w.Rules {
		w.Rules[i].APIGroups = []string{group}
	}
	return w
}
