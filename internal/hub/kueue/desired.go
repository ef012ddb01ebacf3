package kueue

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/contract/kueueworker"
)

const (
	// ControllerName is the spec.controllerName of the AdmissionChecks this controller serves,
	// OCM's.
	ControllerName = "open-cluster-management.io/placement"
	// DefaultNamespace is Kueue's namespace, where the Placements and kubeconfig Secrets live.
	DefaultNamespace = "kueue-system"
	// ManagedLabel marks the MultiKueueConfigs and MultiKueueClusters the hub writes; the value is
	// ManagedValue. Objects without it are never changed.
	ManagedLabel = "kueue.flotilla.io/managed-by"
	ManagedValue = "flotilla"
	// SecretPrefix starts the name of each cluster's kubeconfig Secret: multikueue-<cluster>.
	SecretPrefix = "multikueue-"
	// SecretPoll is how often a check whose kubeconfig Secrets are missing looks for them again.
	SecretPoll = 2 * time.Second
	// MaxClusters is the most clusters a MultiKueueConfig holds (its CRD's maxItems).
	MaxClusters = 20
)

// Reasons of the Active condition.
const (
	ReasonActive             = "Active"
	ReasonInvalidParameters  = "InvalidParameters"
	ReasonPlacementNotFound  = "PlacementNotFound"
	ReasonNoClusters         = "NoClustersDecided"
	ReasonNameClash          = "NameClash"
	ReasonCredentialsPending = "CredentialsPending"
	// ReasonClusterNotAccepted: a decided cluster gets no credentials from the hub because the
	// hub does not accept it, it is being deleted, or its namespace is terminating.
	ReasonClusterNotAccepted = "ClusterNotAccepted"
	// ReasonClustersLost: every cluster the placement decided is declared lost (DeclaredLost).
	ReasonClustersLost = "ClustersLost"
)

// ParametersError says what is wrong with an AdmissionCheck's spec.parameters and how to fix it,
// or "" when they name a Placement.
func ParametersError(p *kueuev1beta2.AdmissionCheckParametersReference, namespace string) string {
	fix := fmt.Sprintf("set spec.parameters to {apiGroup: %s, kind: Placement, name: <a Placement in namespace %s>}",
		clusterv1beta1.GroupVersion.Group, namespace)
	switch {
	case p == nil:
		return "spec.parameters is missing: " + fix
	case p.APIGroup != clusterv1beta1.GroupVersion.Group:
		return fmt.Sprintf("spec.parameters.apiGroup is %q, not %s: %s", p.APIGroup, clusterv1beta1.GroupVersion.Group, fix)
	case p.Kind != "Placement":
		return fmt.Sprintf("spec.parameters.kind is %q, not Placement: %s", p.Kind, fix)
	case p.Name == "":
		return "spec.parameters.name is empty: " + fix
	}
	return ""
}

// Clusters returns the clusters the placement decided, from its PlacementDecisions: best first
// by score, ties by name, each once (its best score), at most MaxClusters.
func Clusters(decisions []clusterv1beta1.PlacementDecision) []string {
	best := map[string]int64{}
	for i := range decisions {
		for _, d := range decisions[i].Status.Decisions {
			if d.ClusterName == "" {
				continue
			}
			if s, ok := best[d.ClusterName]; !ok || d.Score > s {
				best[d.ClusterName] = d.Score
			}
		}
	}
	names := make([]string, 0, len(best))
	for n := range best {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(best[b], best[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	if len(names) > MaxClusters {
		names = names[:MaxClusters]
	}
	return names
}

// Source is where MultiKueue takes a worker's credentials from.
type Source string

const (
	// SourceClusterProfile: each MultiKueueCluster names the worker's ClusterProfile in the Kueue
	// namespace (spec.clusterSource.clusterProfileRef, Kueue v0.15 and later with its feature
	// gate MultiKueueClusterProfile), and Kueue runs the credentials plugin it has configured for
	// the profile's access provider open-cluster-management (flotilla credentials-plugin
	// --managed-serviceaccount multikueue), which hands it the token of the ManagedServiceAccount
	// kueueworker.ManagedServiceAccount in the worker's namespace. No kubeconfig is written.
	SourceClusterProfile Source = "clusterprofile"
	// SourceSecret: each MultiKueueCluster names the kubeconfig Secret multikueue-<cluster> in the
	// Kueue namespace, which the hub composes from the token the worker's agent reports (for Kueue
	// versions without clusterProfileRef).
	SourceSecret Source = "secret"
)

// ParseSource reads the value of the hub's --kueue-credentials flag.
func ParseSource(v string) (Source, error) {
	switch s := Source(v); s {
	case SourceClusterProfile, SourceSecret:
		return s, nil
	case "":
		return SourceClusterProfile, nil
	}
	return "", fmt.Errorf("--kueue-credentials is %q: use %s (MultiKueueClusters name ClusterProfiles; Kueue v0.15+) or %s (kubeconfig Secrets)",
		v, SourceClusterProfile, SourceSecret)
}

// SecretName is the name of cluster's kubeconfig Secret in the Kueue namespace.
func SecretName(cluster string) string { return SecretPrefix + cluster }

// ClusterSpec is the spec of cluster's MultiKueueCluster: its ClusterProfile of the same name in
// the Kueue namespace, or its kubeconfig Secret.
func ClusterSpec(cluster string, src Source) kueuev1beta2.MultiKueueClusterSpec {
	if src != SourceSecret {
		return kueuev1beta2.MultiKueueClusterSpec{ClusterSource: kueuev1beta2.ClusterSource{
			ClusterProfileRef: &kueuev1beta2.ClusterProfileReference{Name: cluster}}}
	}
	return kueuev1beta2.MultiKueueClusterSpec{ClusterSource: kueuev1beta2.ClusterSource{
		KubeConfig: &kueuev1beta2.KubeConfig{LocationType: kueuev1beta2.SecretLocationType, Location: SecretName(cluster)},
	}}
}

// State is what the controller found for one AdmissionCheck.
type State struct {
	Namespace string
	// ParametersError is ParametersError's answer; the rest is unset when it is not "".
	ParametersError  string
	Placement        string
	PlacementMissing bool
	Clusters         []string
	// Lost are decided clusters the hub declared lost under a fencing Timing (DeclaredLost): they
	// are left out of Clusters, so out of MultiKueue, until they are back.
	Lost []string
	// Clashes name the objects in the way that are not the hub's (kind and name).
	Clashes []string
	// MissingSecrets name the kubeconfig Secrets not found, or not readable when
	// SecretsForbidden.
	MissingSecrets   []string
	SecretsForbidden bool
	// NotAccepted say, one per decided cluster without a kubeconfig Secret, why the hub gives it
	// no credentials (package delivery); those clusters are not in MissingSecrets.
	NotAccepted []string
	// Pending say, on the ClusterProfile path, what each decided cluster's credentials still
	// wait for (its ClusterProfile, its access provider, its ManagedServiceAccount's token).
	Pending []string
}

// Active is the AdmissionCheck's Active condition for s, without LastTransitionTime.
func Active(s State, generation int64) metav1.Condition {
	c := metav1.Condition{Type: kueuev1beta2.AdmissionCheckActive, Status: metav1.ConditionFalse, ObservedGeneration: generation}
	p := fmt.Sprintf("Placement %s/%s", s.Namespace, s.Placement)
	switch {
	case s.ParametersError != "":
		c.Reason, c.Message = ReasonInvalidParameters, s.ParametersError
	case s.PlacementMissing:
		c.Reason = ReasonPlacementNotFound
		c.Message = fmt.Sprintf("%s (spec.parameters.name) not found: create it in namespace %s or name an existing one", p, s.Namespace)
	case len(s.Clusters) == 0 && len(s.Lost) > 0:
		c.Reason = ReasonClustersLost
		c.Message = fmt.Sprintf("every cluster %s decided is declared lost (%s): MultiKueue dispatches nothing until one is back "+
			"or the placement decides another (docs/failover.md)", p, strings.Join(s.Lost, ", "))
	case len(s.Clusters) == 0:
		c.Reason = ReasonNoClusters
		c.Message = fmt.Sprintf("%s has decided no clusters: check its predicates, cluster sets and bindings in namespace %s", p, s.Namespace)
	case len(s.Clashes) > 0:
		c.Reason = ReasonNameClash
		c.Message = fmt.Sprintf("in the way and not the hub's (no label %s=%s), so left alone: %s; delete them, or rename the placement",
			ManagedLabel, ManagedValue, strings.Join(s.Clashes, ", "))
	case s.SecretsForbidden:
		c.Reason = ReasonCredentialsPending
		c.Message = fmt.Sprintf("the hub may not read kubeconfig Secrets %s in namespace %s: grant it get on secrets there with a Role (docs/kueue.md)",
			strings.Join(s.MissingSecrets, ", "), s.Namespace)
	case len(s.NotAccepted) > 0:
		c.Reason = ReasonClusterNotAccepted
		c.Message = fmt.Sprintf("%s decides clusters the hub gives no MultiKueue credentials: %s; "+
			"accept them (spec.hubAcceptsClient: true), or have the placement leave them out",
			p, strings.Join(s.NotAccepted, "; "))
		if len(s.MissingSecrets) > 0 {
			c.Message += fmt.Sprintf("; also waiting for kubeconfig Secrets %s", strings.Join(s.MissingSecrets, ", "))
		}
		if len(s.Pending) > 0 {
			c.Message += "; also waiting for: " + strings.Join(s.Pending, "; ")
		}
	case len(s.Pending) > 0:
		c.Reason = ReasonCredentialsPending
		c.Message = "waiting for: " + strings.Join(s.Pending, "; ")
	case len(s.MissingSecrets) > 0:
		c.Reason = ReasonCredentialsPending
		c.Message = fmt.Sprintf("waiting for kubeconfig Secrets %s (key %s) in namespace %s: the hub writes each from the token "+
			"the cluster's agent reports (built-in add-on %s), unless you write it yourself",
			strings.Join(s.MissingSecrets, ", "), kueuev1beta2.MultiKueueConfigSecretKey, s.Namespace, kueueworker.AddOnName)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonActive
		c.Message = fmt.Sprintf("MultiKueueConfig %s lists %d clusters of %s", s.Placement, len(s.Clusters), p)
		if len(s.Lost) > 0 {
			c.Message += fmt.Sprintf("; left out while declared lost: %s", strings.Join(s.Lost, ", "))
		}
	}
	return c
}
