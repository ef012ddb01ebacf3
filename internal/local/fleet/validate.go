package fleet

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// Validate returns every problem in the fleet, each with its field path.
func (f *Fleet) Validate() field.ErrorList {
	var errs field.ErrorList
	if f.APIVersion != APIVersion {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), f.APIVersion, "must be "+APIVersion))
	}
	if f.Kind != Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), f.Kind, "must be "+Kind))
	}
	clusters := field.NewPath("clusters")
	switch {
	case len(f.Clusters) == 0:
		errs = append(errs, field.Required(clusters, "list at least one spoke cluster"))
	case len(f.Clusters) > MaxClusters:
		errs = append(errs, field.TooMany(clusters, len(f.Clusters), MaxClusters))
	}
	errs = append(errs, ValidateWith(f.With, field.NewPath("with"))...)
	seen := sets.New[string]()
	for i, c := range f.Clusters {
		p := clusters.Index(i)
		errs = append(errs, c.validate(p)...)
		if seen.Has(c.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		}
		seen.Insert(c.Name)
	}
	return errs
}

// ValidateWith checks a list of extra components (the fleet file's with, dev up's --with).
func ValidateWith(with []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, w := range with {
		if !slices.Contains(KnownWith, w) {
			errs = append(errs, field.NotSupported(p.Index(i), w, KnownWith))
		} else if seen.Has(w) {
			errs = append(errs, field.Duplicate(p.Index(i), w))
		}
		seen.Insert(w)
	}
	return errs
}

func (c *Cluster) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	name := p.Child("name")
	switch c.Name {
	case "":
		errs = append(errs, field.Required(name, "give the cluster a name such as gpu-east"))
	case localk8s.HubName:
		errs = append(errs, field.Invalid(name, c.Name, `"hub" is the hub cluster's name; choose another`))
	default:
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(name, c.Name, msg))
		}
	}
	errs = append(errs, metav1validation.ValidateLabels(c.Labels, p.Child("labels"))...)

	claims := p.Child("claims")
	if len(c.Claims) > MaxClaims {
		errs = append(errs, field.TooMany(claims, len(c.Claims), MaxClaims))
	}
	for k, v := range c.Claims {
		// A claim becomes a ClusterClaim object: its name must be a valid object name.
		for _, msg := range validation.IsDNS1123Subdomain(k) {
			errs = append(errs, field.Invalid(claims.Key(k), k, "claim name: "+msg))
		}
		if len(v) > MaxClaimValueLen {
			errs = append(errs, field.TooLong(claims.Key(k), "", MaxClaimValueLen))
		}
	}

	pools := p.Child("nodePools")
	seen := sets.New[string]()
	for i, np := range c.NodePools {
		pp := pools.Index(i)
		errs = append(errs, np.validate(pp)...)
		if seen.Has(np.Name) {
			errs = append(errs, field.Duplicate(pp.Child("name"), np.Name))
		}
		seen.Insert(np.Name)
	}
	return errs
}

func (np *NodePool) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if np.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "node names are <pool name>-<index>; give the pool a name such as h100"))
	} else {
		// Node names are "<pool>-<index>"; leave room for the index within a DNS label.
		for _, msg := range validation.IsDNS1123Label(np.Name + "-999") {
			errs = append(errs, field.Invalid(p.Child("name"), np.Name, msg))
		}
	}
	if np.Count < 1 || np.Count > MaxNodesPerPool {
		errs = append(errs, field.Invalid(p.Child("count"), np.Count, fmt.Sprintf("must be between 1 and %d", MaxNodesPerPool)))
	}
	if np.GPU != nil {
		gp := p.Child("gpu")
		if np.GPU.Count < 1 || np.GPU.Count > MaxGPUsPerNode {
			errs = append(errs, field.Invalid(gp.Child("count"), np.GPU.Count,
				fmt.Sprintf("GPUs per node must be between 1 and %d; leave gpu out for CPU-only nodes", MaxGPUsPerNode)))
		}
		if np.GPU.Model == "" {
			errs = append(errs, field.Required(gp.Child("model"), "the nvidia.com/gpu.product value, for example NVIDIA-H100-80GB-HBM3"))
		}
		for _, msg := range validation.IsValidLabelValue(np.GPU.Model) {
			errs = append(errs, field.Invalid(gp.Child("model"), np.GPU.Model, "becomes the nvidia.com/gpu.product label: "+msg))
		}
	}
	errs = append(errs, positive(p.Child("cpu"), np.CPU)...)
	errs = append(errs, positive(p.Child("memory"), np.Memory)...)
	errs = append(errs, metav1validation.ValidateLabels(np.Labels, p.Child("labels"))...)
	return errs
}

func positive(p *field.Path, q *resource.Quantity) field.ErrorList {
	if q != nil && q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(p, q.String(), "must be greater than zero")}
	}
	return nil
}
