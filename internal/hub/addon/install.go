package addon

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/rollout"
	"github.com/flotilla/flotilla/internal/hub/delivery"
)

// placementView is what one reconcile read of one install placement.
type placementView struct {
	addonv1alpha1.PlacementRef
	// Missing: the Placement does not exist. Err: its decisions could not be read.
	Missing bool
	Err     string
	// Placement is the Placement itself (nil when missing).
	Placement *clusterv1beta1.Placement
	// Decided are all clusters it selects; Clusters those this entry serves (a cluster several
	// entries select is served by the last, whose configs and rollout strategy win, as in OCM).
	Decided  []rollout.Cluster
	Clusters []rollout.Cluster
}

// readPlacements reads the install placements of cma (none for Manual) and assigns each selected
// cluster to the last entry that selects it. The lifecycle controller and AllowedConfigs both use
// it, so that they agree on which entry serves a cluster.
func readPlacements(ctx context.Context, c client.Reader, cma *addonv1alpha1.ClusterManagementAddOn) ([]placementView, error) {
	if cma.Spec.InstallStrategy.Type != addonv1alpha1.InstallStrategyPlacements {
		return nil, nil
	}
	views := make([]placementView, len(cma.Spec.InstallStrategy.Placements))
	refused := map[string]*delivery.Refusal{}
	for i, ps := range cma.Spec.InstallStrategy.Placements {
		v := &views[i]
		v.PlacementRef = ps.PlacementRef
		p := &clusterv1beta1.Placement{}
		err := c.Get(ctx, client.ObjectKey{Namespace: ps.Namespace, Name: ps.Name}, p)
		if apierrors.IsNotFound(err) {
			v.Missing = true
			continue
		}
		if err != nil {
			return nil, err
		}
		v.Placement = p
		cs, err := rollout.PlacementClusters(ctx, c, ps.Namespace, ps.Name)
		if err != nil {
			v.Err = err.Error()
			continue
		}
		if v.Decided, err = deliverable(ctx, c, cs, refused); err != nil {
			return nil, err
		}
	}
	owner := map[string]int{}
	for i, v := range views {
		for _, c := range v.Decided {
			owner[c.Name] = i
		}
	}
	for i := range views {
		for _, c := range views[i].Decided {
			if owner[c.Name] == i {
				views[i].Clusters = append(views[i].Clusters, c)
			}
		}
	}
	return views, nil
}

// deliverable drops from cs the clusters the hub puts no add-on on (package delivery: not
// accepted, being deleted, or their namespace terminating), as OCM's add-on manager installs
// nothing on a cluster being deleted. Such a cluster is not part of the rollout either: it would
// hold a place in it that no add-on ever fills. Its add-on, if any, the registration controller
// removes while it empties the namespace; the hub's own, no longer selected, goes here as well.
// refused remembers each cluster's answer across the placements of one reconcile.
func deliverable(ctx context.Context, r client.Reader, cs []rollout.Cluster, refused map[string]*delivery.Refusal) ([]rollout.Cluster, error) {
	out := make([]rollout.Cluster, 0, len(cs))
	for _, c := range cs {
		why, seen := refused[c.Name]
		if !seen {
			var err error
			if why, err = delivery.Check(ctx, r, c.Name); err != nil {
				return nil, err
			}
			refused[c.Name] = why
			if why != nil {
				ctrl.LoggerFrom(ctx).V(1).Info("not installing the add-on on a selected cluster", "cluster", c.Name, "reason", why.Reason)
			}
		}
		if why == nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// strategyOf is entry i's rollout strategy with OCM's default for Progressive: no maxConcurrency
// means the placement's clustersPerDecisionGroup.
func strategyOf(cma *addonv1alpha1.ClusterManagementAddOn, i int, p *clusterv1beta1.Placement) clusterv1alpha1.RolloutStrategy {
	s := *cma.Spec.InstallStrategy.Placements[i].RolloutStrategy.DeepCopy()
	if s.Type != clusterv1alpha1.Progressive {
		return s
	}
	if s.Progressive == nil {
		s.Progressive = &clusterv1alpha1.RolloutProgressive{}
	}
	if mc := s.Progressive.MaxConcurrency; mc.StrVal == "" && mc.IntVal == 0 && p != nil {
		s.Progressive.MaxConcurrency = p.Spec.DecisionStrategy.GroupStrategy.ClustersPerDecisionGroup
	}
	return s
}

// install applies plan: it creates the missing ManagedClusterAddOns, controlled by cma, and
// deletes the hub's own that no placement selects any more. It returns the created ones.
func (r *Reconciler) install(ctx context.Context, cma *addonv1alpha1.ClusterManagementAddOn, plan installPlan) ([]*addonv1alpha1.ManagedClusterAddOn, []error) {
	var created []*addonv1alpha1.ManagedClusterAddOn
	var errs []error
	owner := metav1.NewControllerRef(cma, addonv1alpha1.GroupVersion.WithKind("ClusterManagementAddOn"))
	for _, c := range plan.Create {
		m := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{
			Name: cma.Name, Namespace: c, OwnerReferences: []metav1.OwnerReference{*owner},
		}}
		err := r.Client.Create(ctx, m)
		if apierrors.IsAlreadyExists(err) {
			// Most likely our own create that the cache has not shown yet; its event brings the
			// add-on back here, and a user's would then be reported as a conflict.
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("creating ManagedClusterAddOn %s/%s: %w", c, cma.Name, err))
			continue
		}
		created = append(created, m)
	}
	for _, m := range plan.Remove {
		// The UID precondition keeps a ManagedClusterAddOn made meanwhile under the same name.
		err := r.Client.Delete(ctx, m, client.Preconditions{UID: &m.UID})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("deleting ManagedClusterAddOn %s/%s: %w", m.Namespace, m.Name, err))
		}
	}
	return created, errs
}

// readHashes reads every configuration object in ws and hashes its spec. An object that does not
// exist, whose kind the API server does not serve, or that the hub may not read, gets a problem
// instead of a hash.
func (r *Reconciler) readHashes(ctx context.Context, ws []wantedConfig) hashes {
	h := hashes{hash: map[configKey]string{}, problems: map[configKey]string{}}
	for _, w := range ws {
		k := w.key()
		if _, ok := h.hash[k]; ok {
			continue
		}
		if _, ok := h.problems[k]; ok {
			continue
		}
		hash, problem := r.readHash(ctx, k)
		if problem != "" {
			h.problems[k] = problem
		} else {
			h.hash[k] = hash
		}
	}
	return h
}

// cachedConfigs are the configuration resources (group addon.open-cluster-management.io) the
// lifecycle controller watches as unstructured objects and reads from the manager's cache; the
// hub may list and watch them. Other kinds are read from the API server (the hub may only be
// allowed to get them).
var cachedConfigs = map[string]bool{"addondeploymentconfigs": true, "addontemplates": true}

// cachedConfig is an object of a cached configuration kind, for Watches.
func cachedConfig(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

func (r *Reconciler) readHash(ctx context.Context, k configKey) (hash, problem string) {
	gvr := schema.GroupVersionResource{Group: k.Group, Resource: k.Resource}
	// Add-on kinds are hashed at v1alpha1, as OCM's addon manager reads them, so that a hash does
	// not change with the served version that is preferred; other kinds at their preferred one.
	if k.Group == addonv1alpha1.GroupVersion.Group {
		gvr.Version = addonv1alpha1.GroupVersion.Version
	}
	gvk, err := r.Mapper.KindFor(gvr)
	if err != nil {
		return "", fmt.Sprintf("is not a resource the hub's API server serves (%v): fix the group and resource, or install its CRD", err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	reader := r.Reader
	if cachedConfigs[k.Resource] && k.Group == addonv1alpha1.GroupVersion.Group && r.Cache != nil {
		reader = r.Cache
	}
	err = reader.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Name}, u)
	switch {
	case apierrors.IsNotFound(err):
		return "", "does not exist: create it, or name an existing object"
	case apierrors.IsForbidden(err):
		return "", "the hub may not read: grant the hub's ClusterRole get on " + strings.Fields(k.String())[0] + ", or use a kind it may read"
	case err != nil:
		return "", fmt.Sprintf("could not be read: %v", err)
	}
	hash, err = SpecHash(u)
	if err != nil {
		return "", "has no spec: name an object with a spec"
	}
	return hash, ""
}
