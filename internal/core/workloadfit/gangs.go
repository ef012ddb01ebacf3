package workloadfit

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/gpufit"
)

// FlavorLabels returns the node labels of a Kueue ResourceFlavor on the hub, nil when unknown.
type FlavorLabels func(kueuev1beta2.ResourceFlavorReference) map[string]string

// Gangs is what the workload's pods ask of a worker's extended resources: one gang per resource
// and model, sorted by resource then model; none when the pods ask for no extended resource.
// A pod set's count is the one the hub's Kueue admitted (partial admission may lower it), else
// its spec's. An accelerator's model is the pod set's node selector for the model's label
// (usagev1alpha1.ModelLabels), else that label of the flavor the hub's Kueue assigned to the
// resource (flavors may be nil), else any model.
func Gangs(wl *kueuev1beta2.Workload, flavors FlavorLabels) []gpufit.Gang {
	byKey := map[[2]string]*gpufit.Gang{}
	for _, ps := range wl.Spec.PodSets {
		asg := assignment(wl, ps.Name)
		count := ps.Count
		if asg != nil && asg.Count != nil {
			count = *asg.Count
		}
		for name, per := range podRequests(ps.Template.Spec) {
			res := string(name)
			if !Extended(res) || per.Sign() <= 0 {
				continue
			}
			model := modelOf(res, ps.Template.Spec.NodeSelector, asg, flavors)
			key := [2]string{res, model}
			g := byKey[key]
			if g == nil {
				g = &gpufit.Gang{Resource: res, Model: model}
				byKey[key] = g
			}
			g.PodSets = append(g.PodSets, gpufit.PodSet{Name: string(ps.Name), Count: count, Per: per})
		}
	}
	var out []gpufit.Gang
	for _, g := range byKey {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b gpufit.Gang) int {
		return cmp.Or(strings.Compare(a.Resource, b.Resource), strings.Compare(a.Model, b.Model))
	})
	return out
}

// Extended reports whether a resource name is an extended resource (a domain-prefixed name
// outside kubernetes.io, such as nvidia.com/gpu), which the dispatcher checks on workers.
func Extended(name string) bool {
	domain, _, ok := strings.Cut(name, "/")
	return ok && domain != "kubernetes.io" && !strings.HasSuffix(domain, ".kubernetes.io") && !strings.HasPrefix(name, "requests.")
}

// assignment is the hub's admission of the pod set, or nil.
func assignment(wl *kueuev1beta2.Workload, name kueuev1beta2.PodSetReference) *kueuev1beta2.PodSetAssignment {
	if wl.Status.Admission == nil {
		return nil
	}
	for i := range wl.Status.Admission.PodSetAssignments {
		if a := &wl.Status.Admission.PodSetAssignments[i]; a.Name == name {
			return a
		}
	}
	return nil
}

// modelOf is the accelerator model a pod set's pods ask for of the resource, "" for any.
func modelOf(res string, selector map[string]string, asg *kueuev1beta2.PodSetAssignment, flavors FlavorLabels) string {
	label, ok := usagev1alpha1.ModelLabels[res]
	if !ok {
		return ""
	}
	if m := selector[label]; m != "" {
		return m
	}
	if asg != nil && flavors != nil {
		if f, ok := asg.Flavors[corev1.ResourceName(res)]; ok {
			return flavors(f)[label]
		}
	}
	return ""
}

// podRequests are a pod's requests as the scheduler counts them (resourcehelper.PodRequests:
// its containers' sum or its largest init container, and its overhead). A container that gives
// only a limit of an extended resource asks for that much, as the API server defaults requests
// from limits when the pod is made.
func podRequests(spec corev1.PodSpec) corev1.ResourceList {
	spec = *spec.DeepCopy()
	for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range cs {
			r := &cs[i].Resources
			for name, q := range r.Limits {
				if _, ok := r.Requests[name]; ok || !Extended(string(name)) {
					continue
				}
				if r.Requests == nil {
					r.Requests = corev1.ResourceList{}
				}
				r.Requests[name] = q
			}
		}
	}
	return resourcehelper.PodRequests(&corev1.Pod{Spec: spec}, resourcehelper.PodResourcesOptions{})
}
