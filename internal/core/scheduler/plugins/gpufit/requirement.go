package gpufit

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// Annotation is the Placement annotation that states a GPU requirement: comma-separated
// key=value pairs with the keys resource (default nvidia.com/gpu), model (default: any model),
// perNode, nodes and total.
const Annotation = "placement.flotilla.io/gpu"

// AnnotationField is the annotation's path in the Placement, as errors name it.
const AnnotationField = `metadata.annotations["` + Annotation + `"]`

// Requirement is a parsed GPU requirement.
type Requirement struct {
	// Resource is the resource counted, such as nvidia.com/gpu.
	Resource string
	// Model is the accelerator model; "" is any model (the figures over every node).
	Model string
	// PerNode and Nodes ask for Nodes nodes with at least PerNode free each; Nodes is 0 when
	// there is no such requirement.
	PerNode resource.Quantity
	Nodes   int32
	// Total asks for at least this much free over all the nodes; zero when not asked.
	Total resource.Quantity
}

// Gang reports whether the requirement asks for nodes with an amount free each.
func (r Requirement) Gang() bool { return r.Nodes > 0 }

// What names what is counted: the model when one is asked for, else the resource.
func (r Requirement) What() string {
	if r.Model != "" {
		return r.Model
	}
	return r.Resource
}

// String gives the requirement back in the annotation's syntax, keys in a fixed order.
func (r Requirement) String() string {
	var parts []string
	if r.Resource != usagev1alpha1.ResourceNvidiaGPU {
		parts = append(parts, "resource="+r.Resource)
	}
	if r.Model != "" {
		parts = append(parts, "model="+r.Model)
	}
	if r.Gang() {
		parts = append(parts, "perNode="+r.PerNode.String(), "nodes="+strconv.Itoa(int(r.Nodes)))
	}
	if !r.Total.IsZero() {
		parts = append(parts, "total="+r.Total.String())
	}
	return strings.Join(parts, ",")
}

// keys are the annotation's keys, in the order errors list them.
var keys = []string{"resource", "model", "perNode", "nodes", "total"}

// Parse parses the annotation's value. A *framework.ConfigError names the annotation, the key
// and what to write instead.
func Parse(value string) (Requirement, error) {
	req := Requirement{Resource: usagev1alpha1.ResourceNvidiaGPU}
	bad := func(format string, args ...any) (Requirement, error) {
		return Requirement{}, &framework.ConfigError{Field: AnnotationField, Message: fmt.Sprintf(format, args...) +
			`; write comma-separated key=value pairs such as "model=NVIDIA-H100-80GB-HBM3,perNode=8,nodes=4" or "total=32"`}
	}
	seen := map[string]bool{}
	hasPerNode := false
	for _, part := range strings.Split(value, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return bad("%q has an empty item", value)
		}
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok {
			return bad("%q is not key=value (keys: %s)", part, strings.Join(keys, ", "))
		}
		if seen[k] {
			return bad("key %s is given twice", k)
		}
		seen[k] = true
		switch k {
		case "resource":
			if v == "" {
				return bad("key resource is empty; give a resource name such as nvidia.com/gpu, or leave the key out")
			}
			req.Resource = v
		case "model":
			if v == "" {
				return bad("key model is empty; give a model such as NVIDIA-H100-80GB-HBM3 (the nodes' nvidia.com/gpu.product label), or leave the key out for any model")
			}
			req.Model = v
		case "perNode", "total":
			q, err := resource.ParseQuantity(v)
			if err != nil || q.Sign() <= 0 {
				return bad("key %s is %q; it must be a positive amount such as 8", k, v)
			}
			if k == "total" {
				req.Total = q
			} else {
				req.PerNode, hasPerNode = q, true
			}
		case "nodes":
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n <= 0 {
				return bad("key nodes is %q; it must be a positive whole number of nodes such as 4", v)
			}
			req.Nodes = int32(n)
		default:
			return bad("unknown key %q (keys: %s)", k, strings.Join(keys, ", "))
		}
	}
	switch {
	case hasPerNode && req.Nodes == 0:
		req.Nodes = 1
	case !hasPerNode && req.Nodes > 0:
		req.PerNode = resource.MustParse("1")
	case !hasPerNode && req.Total.IsZero():
		return bad("%q asks for nothing; add perNode=<amount on one node>, nodes=<number of nodes> or total=<amount in all>", value)
	}
	return req, nil
}

// FromPlacement returns the requirement the annotations state, and whether they state one.
func FromPlacement(annotations map[string]string) (Requirement, bool, error) {
	v, ok := annotations[Annotation]
	if !ok {
		return Requirement{}, false, nil
	}
	req, err := Parse(v)
	return req, err == nil, err
}
